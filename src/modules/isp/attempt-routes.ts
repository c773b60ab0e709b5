// The RADIUS authorize attempt list (the work is in attempt-service.ts; the log is in jobs.ts).
import { Elysia } from "elysia";
import { ListOf } from "../../lib/schemas";
import type { authGuard } from "../../http/guard";
import { listAttempts } from "./attempt-service";
import type { AttemptLog } from "./jobs";
import { RadiusLogSchemas } from "./model";

const { AttemptListQuery, RadiusAttempt } = RadiusLogSchemas;

export function attemptRoutes(log: AttemptLog, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-radius-attempts", prefix: "/api/isp/radius", tags: ["ISP"] })
    .use(guard)
    .get(
      "/attempts",
      async ({ tenant, query }) => {
        // What the list shows is complete up to the request.
        await log.flush(tenant);
        return listAttempts(tenant, query);
      },
      {
        auth: "platform.isp",
        query: AttemptListQuery,
        response: { 200: ListOf(RadiusAttempt) },
        detail: {
          summary: "List recent RADIUS authorize attempts (default sort -at)",
          description: "Filters: outcome (accept, reject, notfound), username, nas_id, from/to on at. Kept --radius-attempt-retention-days (default 30). No password is ever stored.",
        },
      },
    );
}
