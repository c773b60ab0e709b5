// A fixed-window counter per key (client IP), in memory: the public rows (start, login, OIDC
// exchange, corporation check, password reset-key and reset) allow 60 requests a minute per IP.
import { rateLimited } from "./problem";

export class RateLimiter {
  private windows = new Map<string, { start: number; count: number }>();

  constructor(
    private limit: number,
    private windowMs: number,
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
