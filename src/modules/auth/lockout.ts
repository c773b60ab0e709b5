// Lockout (routes.md, "Lock and rate limits"): 5 consecutive failures for one (corporation,
// login) lock it for 15 minutes. Attempts on one key run one after another, so parallel wrong
// logins cannot all be evaluated before the fifth failure is counted: the sixth always sees the
// lock. The counters live in the platform database and survive restarts.
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
  private tails = new Map<string, Promise<void>>();
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

  /** Runs `fn` after every earlier attempt on the same key has finished. */
  async serialize<T>(corpId: string, login: string, fn: () => Promise<T>): Promise<T> {
    const key = `${corpId}\u0000${login}`;
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
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
