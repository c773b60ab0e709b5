// The public rows' per-IP limit in cluster mode: the same fixed-window count as lib/rate-limit.ts,
// kept in the platform database (rate_limit_windows, auth/service.ts) so that every app node
// counts against one limit. Windows are aligned on the clock (floor(now / window)), so nodes agree
// on a window without talking; each request is one upsert in a non-durable write without the
// platform's writer lock (a crash may forget a few counts, which only lets a client retry sooner). Once a key is over the limit, this
// node refuses it from memory until the window ends: a flood costs no database write.
import type { PlatformDoor } from "../../core/store";
import type { Limiter } from "../../lib/rate-limit";
import { rateLimited } from "../../lib/problem";
import { countRateLimitHit } from "./service";

export class SharedRateLimiter implements Limiter {
  /** Keys over the limit, until the end of their window (epoch ms). */
  private refused = new Map<string, number>();

  constructor(
    private door: PlatformDoor,
    readonly limit: number,
    readonly windowMs: number,
    private now: () => number,
  ) {}

  async hit(key: string): Promise<void> {
    const now = this.now();
    const until = this.refused.get(key);
    if (until !== undefined) {
      if (now < until) throw rateLimited((until - now) / 1000);
      this.refused.delete(key);
    }
    const start = Math.floor(now / this.windowMs) * this.windowMs;
    // One upsert is atomic alone: no platform writer lock, so a flood of hits does not queue every
    // other platform write (logins, sessions) of every node behind it.
    const count = await this.door.write((tx) => countRateLimitHit(tx, key, start), { durable: false, exclusive: false });
    if (count > this.limit) {
      const end = start + this.windowMs;
      if (this.refused.size > 100_000) this.sweep(now);
      this.refused.set(key, end);
      throw rateLimited((end - now) / 1000);
    }
  }

  private sweep(now: number): void {
    for (const [k, until] of this.refused) if (until <= now) this.refused.delete(k);
  }
}
