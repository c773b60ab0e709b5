// Lockout (routes.md, "Lock and rate limits"): 5 consecutive failures for one (corporation,
// login) lock it for 15 minutes. The counters live in the platform database (login_failures,
// auth/service.ts), and every attempt counts its failure there BEFORE the password is evaluated
// (a reservation, in one platform write that first refuses a locked key): so however many
// attempts run at once, on however many app nodes sharing the database, at most MAX_FAILURES
// are evaluated before the lock, and the sixth sees it. An attempt that turns out not to be a
// failure gives its reservation back (a refusal that is not a wrong credential: inactive account,
// blocked corporation, ...) or clears the count (a success). A node that crashes mid-attempt
// leaves the failure counted: a lock too early, never one too late.
import type { PlatformDoor } from "../../core/store";
import { rateLimited } from "../../lib/problem";
import { toIso } from "../../lib/time";
import { clearLoginFailures, countLoginFailure, forgetIdleLoginFailures, loginFailureRow, returnLoginFailure } from "./service";

export const MAX_FAILURES = 5;
export const LOCK_MS = 15 * 60_000;

/** One admitted attempt: its failure is counted already. */
export interface Attempt {
  /** The attempt failed (a wrong password or code): the counted failure stands; true when it set the lock. */
  failed(): boolean;
  /** The attempt succeeded: the count is cleared. */
  succeeded(): Promise<void>;
}

export class Lockout {
  /** Admitted attempts in flight on this node, per key. */
  private inFlight = new Map<string, number>();
  private waiting = new Map<string, (() => void)[]>();
  private lastPrune = 0;

  constructor(
    private door: PlatformDoor,
    private now: () => number,
  ) {}

  /**
   * Runs one login attempt on a key once its failure is reserved, or throws 429 while the key is
   * locked. A key locked by a reservation of an attempt still in flight on this node waits for
   * that attempt (it may succeed and clear the count); one locked by another node's answers 429
   * at once. When `fn` throws without having called `failed()` or `succeeded()`, the reservation
   * is given back.
   */
  async attempt<T>(corpId: string, login: string, fn: (a: Attempt) => Promise<T>): Promise<T> {
    const key = `${corpId}\u0000${login}`;
    let locks: boolean;
    for (;;) {
      const r = await this.reserve(corpId, login);
      if ("locks" in r) {
        locks = r.locks;
        break;
      }
      if (!this.inFlight.get(key)) throw rateLimited(r.lockedForMs / 1000, "Too many failed logins; try again later");
      await new Promise<void>((resolve) => {
        const list = this.waiting.get(key);
        if (list) list.push(resolve);
        else this.waiting.set(key, [resolve]);
      });
    }
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    let settled = false;
    const attempt: Attempt = {
      failed: () => {
        settled = true;
        return locks;
      },
      succeeded: async () => {
        settled = true;
        await this.door.write((tx) => clearLoginFailures(tx, corpId, login));
      },
    };
    try {
      return await fn(attempt);
    } catch (err) {
      // Should the database refuse this too, the failure stays counted (the safe side) and the
      // attempt's own error is what the client gets.
      if (!settled) await this.door.write((tx) => returnLoginFailure(tx, corpId, login, MAX_FAILURES)).catch(() => {});
      throw err;
    } finally {
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left === 0) this.inFlight.delete(key);
      else this.inFlight.set(key, left);
      const waiters = this.waiting.get(key);
      this.waiting.delete(key);
      for (const wake of waiters ?? []) wake();
    }
  }

  /** Counts a failure unless the key is locked: one platform write (one writer across nodes). */
  private async reserve(corpId: string, login: string): Promise<{ lockedForMs: number } | { locks: boolean }> {
    const now = this.now();
    // Counters idle for a day are forgotten, so guessed logins cannot grow the table forever.
    const prune = now - this.lastPrune > 60_000;
    if (prune) this.lastPrune = now;
    return await this.door.write(async (tx) => {
      if (prune) await forgetIdleLoginFailures(tx, now);
      const row = await loginFailureRow(tx, corpId, login);
      const left = row?.locked_until ? Date.parse(row.locked_until) - now : 0;
      if (left > 0) return { lockedForMs: left };
      const counted = await countLoginFailure(tx, corpId, login, toIso(now), toIso(now + LOCK_MS), MAX_FAILURES);
      // Locked keys are refused before counting, so the count meets the limit only once.
      return { locks: counted?.locked_until != null && counted.failures === MAX_FAILURES };
    });
  }
}
