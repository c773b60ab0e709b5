// The service's own operations (routes.md, Network operations additions): its background jobs
// (Job: schedule, last pass, a pass on demand; the registry is ctx.jobs, src/core/jobs.ts) and the
// doctor (DoctorCheck: the checks of `corpadmin doctor`, doctor.ts).
import { Elysia, t } from "elysia";
import type { AppContext } from "../../core/context";
import { ArrayOf } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { runDoctor } from "./doctor";
import { DoctorCheck, Job, JobParams } from "./model";

export function operationsRoutes(ctx: AppContext) {
  return new Elysia({ name: "system-operations", prefix: "/api/system", tags: ["System"] })
    .use(authGuard(ctx))
    .get("/jobs", async () => ({ items: await ctx.jobs.list() }), {
      auth: "*",
      response: { 200: ArrayOf(Job) },
      detail: {
        summary: "List the service's jobs",
        description: "Every background job, its schedule and its last pass (start, finish, outcome, error), kept in the platform database; in cluster mode with the node that holds it.",
      },
    })
    .post(
      "/jobs/:name/run",
      async ({ params, set }) => {
        const job = await ctx.jobs.runNow(params.name);
        set.status = 202;
        return job;
      },
      {
        auth: "*",
        params: JobParams,
        response: { 202: Job },
        detail: {
          summary: "Run a job now",
          description:
            "Starts one pass and answers at once (202, running). 409: a pass is running; in cluster mode also when another node holds the job's lease (the detail names it: ask that node). 404: no such job.",
        },
      },
    )
    .get("/doctor", async () => ({ checks: await runDoctor(ctx) }), {
      auth: "*",
      response: { 200: t.Object({ checks: t.Array(DoctorCheck) }) },
      detail: {
        summary: "Check the installation",
        description:
          "The checks of `corpadmin doctor` (which can also repair file modes with --fix): data directory owner and modes, free disk, WAL sizes, last backup age, webhooks, quiet NAS, stale sessions, egress policy, FreeRADIUS's reach of /api/isp/radius/authorize at the public URL, PRAGMA quick_check of every database, NTP when systemd reports it; in cluster mode the clock against the database's. Each: ok, warn or fail, a detail and the fix.",
      },
    });
}
