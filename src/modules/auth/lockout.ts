// Lockout (routes.md, "Lock and rate limits"): 5 consecutive failures for one (corporation,
// login) lock it for 15 minutes. Attempts on one key are admitted only as far as the remaining
// allowance goes, so parallel wrong logins cannot all be evaluated before the fifth failure is
// counted: the sixth always sees the lock. The counters live in the platform database.
import type { Database } from "bun:sqlite";
import { rateLimited } from "../../lib/problem";
import { toIso } from "../../lib/time";

export const MAX_FAILURES = 5;
export const LOCK_MS = 15 * 60_000;
const PRUNE_AFTER_MS = 24 * 60 * 60_000;

interface FailureRow {
  failures: number;
  locked_until: string | null;
}

export class Lockout {
  private inFlight = new Map<string, number>();
  private waiting = new Map<string, (() => void)[]>();
  private readStmt;
  private failStmt;
  private resetStmt;
  private pruneStmt;
  private lastPrune = 0;

  constructor(
    sqlite: Database,
    private now: () => number,
  ) {
    this.readStmt = sqlite.query<FailureRow, [string, string]>("SELECT failures, locked_until FROM login_failures WHERE corp_id = ?1 AND login = ?2");
    // An expired lock starts a fresh count; the fifth failure sets the lock.
    this.failStmt = sqlite.query<FailureRow, [string, string, string, string, number]>(`
      INSERT INTO login_failures (corp_id, login, failures, locked_until, updated_at)
      VALUES (?1, ?2, 1, CASE WHEN ?5 <= 1 THEN ?4 END, ?3)
      ON CONFLICT (corp_id, login) DO UPDATE SET
        failures = CASE WHEN locked_until IS NOT NULL AND locked_until <= ?3 THEN 1 ELSE failures + 1 END,
        locked_until = CASE
          WHEN (CASE WHEN locked_until IS NOT NULL AND locked_until <= ?3 THEN 1 ELSE failures + 1 END) >= ?5 THEN ?4
          ELSE NULL END,
        updated_at = ?3
      RETURNING failures, locked_until`);
    this.resetStmt = sqlite.query("DELETE FROM login_failures WHERE corp_id = ?1 AND login = ?2");
    // Counters idle for a day are forgotten, so guessed logins cannot grow the table forever.
    this.pruneStmt = sqlite.query("DELETE FROM login_failures WHERE updated_at < ?1 AND (locked_until IS NULL OR locked_until < ?2)");
  }

  /**
   * Runs one login attempt on a key. Attempts run side by side only while the attempts in flight
   * plus the failures already counted stay below the limit, so that even if every admitted attempt
   * fails, no more than MAX_FAILURES are evaluated before the lock. One user logging in from many
   * clients is not serialised behind a single password hash; a key close to its lock is.
   */
  async serialize<T>(corpId: string, login: string, fn: () => Promise<T>): Promise<T> {
    const key = `${corpId}\u0000${login}`;
    for (;;) {
      const busy = this.inFlight.get(key) ?? 0;
      if (busy === 0 || busy + this.counted(corpId, login) < MAX_FAILURES) break;
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
  private counted(corpId: string, login: string): number {
    const row = this.readStmt.get(corpId, login);
    if (!row) return 0;
    if (row.locked_until && Date.parse(row.locked_until) <= this.now()) return 0;
    return row.failures;
  }

  /** 429 with Retry-After while the key is locked. */
  assertOpen(corpId: string, login: string): void {
    const row = this.readStmt.get(corpId, login);
    if (!row?.locked_until) return;
    const left = Date.parse(row.locked_until) - this.now();
    if (left > 0) throw rateLimited(left / 1000, "Too many failed logins; try again later");
  }

  /** Counts a failure; true when this one set the lock. */
  failure(corpId: string, login: string): boolean {
    const now = this.now();
    if (now - this.lastPrune > 60_000) {
      this.lastPrune = now;
      this.pruneStmt.run(toIso(now - PRUNE_AFTER_MS), toIso(now));
    }
    const row = this.failStmt.get(corpId, login, toIso(now), toIso(now + LOCK_MS), MAX_FAILURES);
    // Attempts on a locked key are refused before counting, so the count meets the limit only once.
    return row?.locked_until != null && row.failures === MAX_FAILURES;
  }

  success(corpId: string, login: string): void {
    this.resetStmt.run(corpId, login);
  }
}
