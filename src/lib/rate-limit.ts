// A fixed-window counter per key (client IP): the public rows (start, login, OIDC exchange,
// corporation check, password reset-key and reset) allow 60 requests a minute per IP. In memory
// here (one process: SQLite); in cluster mode the auth module puts a limiter whose counters are
// in the shared database in its place (modules/auth/shared-rate-limit.ts), so that every app node
// counts against the same limit.
import { rateLimited } from "./problem";

/** The public rows' window. */
export const PUBLIC_AUTH_WINDOW_MS = 60_000;

/** Counts one request for a key; throws 429 with Retry-After once the key's window is full. */
export interface Limiter {
  readonly limit: number;
  readonly windowMs: number;
  /** Synchronous in memory; a promise when the count is kept in a database. */
  hit(key: string): void | Promise<void>;
}

export class RateLimiter implements Limiter {
  private windows = new Map<string, { start: number; count: number }>();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private now: () => number = Date.now,
  ) {}

  /** Counts one request for `key`; throws 429 with Retry-After once the window is full. */
  hit(key: string): void {
    const now = this.now();
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      if (this.windows.size > 100_000) this.sweep(now);
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    if (++w.count > this.limit) throw rateLimited((w.start + this.windowMs - now) / 1000);
  }

  private sweep(now: number): void {
    for (const [k, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(k);
  }
}
