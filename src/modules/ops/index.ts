// Operations inside the running service: GET /metrics and the backup rows of the API
// (backup-routes.ts); their work is in service.ts, backup.ts, backup-service.ts and jobs.ts (audit
// log retention, scheduled backup). (The CLI side lives in src/cli/.)
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { BackupLock } from "./backup";
import { backupRoutes } from "./backup-routes";
import { registerOpsJobs } from "./jobs";
import { metricsAccess, registerCollectors } from "./service";

export { recordRequest } from "./service";

export function opsModule(ctx: AppContext) {
  const refreshDatabaseFacts = registerCollectors(ctx);
  // One backup at a time: the scheduled one and POST /api/backup.
  const backupLock = new BackupLock();
  registerOpsJobs(ctx, backupLock);
  const mayScrape = metricsAccess(ctx);
  return new Elysia({ name: "ops" }).use(backupRoutes(ctx, backupLock)).get(
    "/metrics",
    async ({ request, server }) => {
      mayScrape(request, server?.requestIP(request)?.address ?? null);
      await refreshDatabaseFacts();
      return new Response(ctx.serviceMetrics.render(), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" } });
    },
    // Not part of the API contract: an operator endpoint outside /api.
    { detail: { hide: true } },
  );
}
