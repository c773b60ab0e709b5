// Housekeeping of the databases (see housekeeping.ts): no routes, only the background job,
// started with the app's jobs and stopped before the databases close.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { Housekeeping } from "./housekeeping";

export function retentionModule(ctx: AppContext) {
  const housekeeping = new Housekeeping(ctx);
  let stop: (() => Promise<void>) | null = null;
  /** A pass, failed when a database could not be pruned (the report names them). */
  const pass = async () => {
    const report = await housekeeping.runOnce();
    const failed = report.databases.filter((d) => d.error);
    if (failed.length) throw new Error(`not pruned: ${failed.map((d) => `${d.database} (${d.error})`).join("; ")}`);
    return report;
  };
  // In cluster mode one node prunes the shared database.
  ctx.jobs.add(
    {
      name: "housekeeping",
      start: () => void (stop = housekeeping.start(() => ctx.jobs.track("housekeeping", pass))),
      stop: () => stop?.(),
      runOnce: pass,
    },
    { singleNode: true, schedule: "hourly (checked every minute); PRAGMA optimize daily", everyMs: 3_600_000 },
  );
  return new Elysia({ name: "retention" });
}
