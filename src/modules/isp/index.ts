// ISP rows of routes.md: manufacturers, POPs, RADIUS attributes, layouts, pools and NAS, plus
// the FreeRADIUS rlm_rest endpoints, RADIUS sessions and authorize attempts. One routes file per
// record type (`<record>.ts`), its work in `<record>-service.ts`, schemas in model.ts and the
// background work (attempt log, contract watcher) in jobs.ts, the NAS health job in nas-health.ts.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import type { EdgeRoutes } from "../../lib/edge";
import { authGuard } from "../../http/guard";
import { attemptRoutes } from "./attempt-routes";
import { FairUseJob, FairUseMarks } from "./fair-use";
import { AttemptLog, watchContracts } from "./jobs";
import { contractNetworkHook } from "./network-service";
import { layoutRoutes } from "./layout-routes";
import { manufacturerRoutes } from "./manufacturer-routes";
import { nasRoutes } from "./nas-routes";
import { networkRoutes } from "./network-routes";
import { NasHealthJob } from "./nas-health";
import { poolRoutes } from "./pool-routes";
import { popRoutes } from "./pop-routes";
import { cityUsedByPop } from "./pop-service";
import { radiusRoutes } from "./radius-routes";
import { radiusAttributeRoutes } from "./radius-attribute-routes";
import { sessionRoutes } from "./session-routes";
import { usageRoutes } from "./usage-routes";

export function ispModule(ctx: AppContext, edge?: EdgeRoutes) {
  ctx.usedBy.city.push(cityUsedByPop);
  const guard = authGuard(ctx);
  const attempts = new AttemptLog(ctx);
  // One node at a time in cluster mode: the sweep; the marks are checked where they were made.
  const fairUseJob = ctx.jobs.add(new FairUseJob(ctx), {
    singleNode: true,
    schedule: `every ${ctx.dispatchTuning.fairUseSweepMs / 1000} s, and ${ctx.dispatchTuning.fairUseCheckMs / 1000} s after accounting`,
    everyMs: ctx.dispatchTuning.fairUseSweepMs,
  });
  const fairUse = new FairUseMarks(ctx, fairUseJob);
  watchContracts(ctx, fairUse);
  ctx.contractNetwork = contractNetworkHook;
  // One node at a time in cluster mode: an announcement (event, quiet_since) is made once.
  const health = ctx.jobs.add(new NasHealthJob(ctx), {
    singleNode: true,
    schedule: `every ${ctx.dispatchTuning.nasHealthMs / 1000} s`,
    everyMs: ctx.dispatchTuning.nasHealthMs,
  });
  return new Elysia({ name: "isp" })
    .use(manufacturerRoutes(ctx, guard))
    .use(popRoutes(ctx, guard))
    .use(radiusAttributeRoutes(ctx, guard))
    .use(layoutRoutes(ctx, guard))
    .use(poolRoutes(ctx, guard))
    .use(nasRoutes(ctx, guard, health))
    .use(radiusRoutes(ctx, attempts, health, fairUse, edge))
    .use(attemptRoutes(attempts, guard))
    .use(sessionRoutes(ctx, guard))
    .use(usageRoutes(ctx, guard))
    .use(networkRoutes(ctx, guard, fairUse));
}
