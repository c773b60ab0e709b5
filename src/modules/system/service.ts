import { sql } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { unavailable } from "../../lib/problem";
import { VERSION } from "../../version";

const PING = sql`SELECT 1`;

/** ok while the platform database answers on its read connection (no write lock: it is polled). */
export async function health(ctx: AppContext): Promise<{ status: "ok"; version: string }> {
  try {
    await ctx.store.platform.read((db) => db.get(PING));
  } catch {
    throw unavailable("The platform database is not reachable", 5);
  }
  return { status: "ok", version: VERSION };
}
