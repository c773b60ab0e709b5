// The service's background jobs (routes.md, Network operations additions: Job): their schedule
// and last pass, and a pass on demand; the registry is ctx.jobs (src/core/jobs.ts).
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { ArrayOf } from "../../lib/schemas";
import { authGuard } from "../auth/guard";
import { Job, JobParams } from "./model";

export function jobRoutes(ctx: AppContext) {
  return new Elysia({ name: "system-jobs", prefix: "/api/system", tags: ["System"] })
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
    );
}
