import type { AppContext } from "../../core/context";
import type { Engine } from "../../db/registry";
import { ping } from "../../db/sqlite";
import { unavailable } from "../../lib/problem";
import { VERSION } from "../../version";


/** ok while the platform database answers on its read connection (no write lock: it is polled). */
export async function health(ctx: AppContext): Promise<{ status: "ok"; version: string; engine: Engine }> {
  try {
    // A cached statement (Drizzle's db.get(sql`...`) compiles its text on every call).
    await ctx.store.platform.read(ping);
  } catch {
    throw unavailable("The platform database is not reachable", 5);
  }
  return { status: "ok", version: VERSION, engine: ctx.tenants.engine };
}
