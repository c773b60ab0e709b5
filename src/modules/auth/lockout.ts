// Lockout (routes.md, "Lock and rate limits"): 5 consecutive failures for one (corporation,
// login) lock it for 15 minutes. Attempts on one key are admitted only as far as the remaining
// allowance goes, so parallel wrong logins cannot all be evaluated before the fifth failure is
// counted: the sixth always sees the lock. The counters live in the platform database
// (login_failures, auth/service.ts).
import type { PlatformDoor } from "../../core/store";
import { rateLimited } from "../../lib/problem";
import { toIso } from "../../lib/time";
import { clearLoginFailures, countLoginFailure, forgetIdleLoginFailures, loginFailureRow } from "./service";

export const MAX_FAILURES = 5;
export const LOCK_MS = 15 * 60_000;

export class Lockout {
  private inFlight = new Map<string, number>();
  private waiting = new Map<string, (() => void)[]>();
  private lastPrune = 0;

  constructor(
    private door: PlatformDoor,
    private now: () => number,
  ) {}

  /**
   * Runs one login attempt on a key. Attempts run side by side only while the attempts in flight
   * plus the failures already counted stay below the limit, so that even if every admitted attempt
   * fails, no more than MAX_FAILURES are evaluated before the lock. One user logging in from many
   * clients is not serialised behind a single password hash; a key close to its lock is.
   */
  async serialize<T>(corpId: string, login: string, fn: () => Promise<T>): Promise<T> {
    const key = `${corpId}\u0000${login}`;
    for (;;) {
      if ((this.inFlight.get(key) ?? 0) === 0) break;
      const counted = await this.counted(corpId, login);
      // Attempts in flight are read again after the await: admission is decided in one turn.
      const busy = this.inFlight.get(key) ?? 0;
      if (busy === 0 || busy + counted < MAX_FAILURES) break;
      await new Promise<void>((resolve) => {
        const list = this.waiting.get(key);
        if (list) list.push(resolve);
        else this.waiting.set(key, [resolve]);
      });
    }
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left === 0) this.inFlight.delete(key);
      else this.inFlight.set(key, left);
      const waiters = this.waiting.get(key);
      this.waiting.delete(key);
      for (const wake of waiters ?? []) wake();
    }
  }

  /** Failures counted toward the lock now (an expired lock counts as none). */
  private async counted(corpId: string, login: string): Promise<number> {
    const row = await this.door.read((db) => loginFailureRow(db, corpId, login));
    if (!row) return 0;
    if (row.locked_until && Date.parse(row.locked_until) <= this.now()) return 0;
    return row.failures;
  }

  /** 429 with Retry-After while the key is locked. */
  async assertOpen(corpId: string, login: string): Promise<void> {
    const row = await this.door.read((db) => loginFailureRow(db, corpId, login));
    if (!row?.locked_until) return;
    const left = Date.parse(row.locked_until) - this.now();
    if (left > 0) throw rateLimited(left / 1000, "Too many failed logins; try again later");
  }

  /** Counts a failure; true when this one set the lock. */
  async failure(corpId: string, login: string): Promise<boolean> {
    const now = this.now();
    // Counters idle for a day are forgotten, so guessed logins cannot grow the table forever.
    const prune = now - this.lastPrune > 60_000;
    if (prune) this.lastPrune = now;
    const row = await this.door.write(async (tx) => {
      if (prune) await forgetIdleLoginFailures(tx, now);
      return countLoginFailure(tx, corpId, login, toIso(now), toIso(now + LOCK_MS), MAX_FAILURES);
    });
    // Attempts on a locked key are refused before counting, so the count meets the limit only once.
    return row?.locked_until != null && row.failures === MAX_FAILURES;
  }

  async success(corpId: string, login: string): Promise<void> {
    await this.door.write((tx) => clearLoginFailures(tx, corpId, login));
  }
}
