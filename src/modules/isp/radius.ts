// The FreeRADIUS rlm_rest rows: authorize and accounting (the work is in radius-service.ts).
// rlm_rest maps the HTTP status to a module code (FINDINGS.md): 200 with attributes → updated,
// 204 → ok, 401 → reject, 404 → notfound, 5xx → fail (accounting: no response, so the NAS retries).
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import type { AttemptLog } from "./jobs";
import { AccountingBodySchema, AuthorizeQuery, AuthorizeReply } from "./model";
import { radiusCaller, type RadiusCaller } from "./radius-auth";
import { account, authorize } from "./radius-service";

export function radiusRoutes(ctx: AppContext, attempts: AttemptLog) {
  const callers = new WeakMap<Request, RadiusCaller>();
  // Authentication runs in transform, before validation: without a credential it is 401 whatever
  // the request holds.
  const authenticate = async ({ request }: { request: Request }) => void callers.set(request, await radiusCaller(ctx, request));

  return new Elysia({ name: "isp-radius", prefix: "/api/isp/radius", tags: ["ISP"] })
    .get("/authorize", ({ request, query }) => authorize(callers.get(request)!, query, attempts), {
      transform: authenticate,
      query: AuthorizeQuery,
      response: { 200: AuthorizeReply },
      detail: {
        summary: "FreeRADIUS rlm_rest authorize: check a PPPoE user against the contract's connection settings and return the reply attributes",
        description:
          "HTTP Basic `<corp auth_name>:<NAS secret>` or `X-Api-Key`; the NAS is the one registered at nas_ip. 200: the NAS's layout rendered for the contract, plus `control:Cleartext-Password` when no password was sent (CHAP). 401: reject. 404: unknown user name.",
        security: [{ nasBasic: [] }, { apiKey: [] }],
      },
    })
    .post(
      "/accounting",
      async ({ request, body, set }) => {
        await account(callers.get(request)!, body);
        set.status = 204;
      },
      {
        transform: authenticate,
        body: AccountingBodySchema,
        detail: {
          summary: "FreeRADIUS rlm_rest accounting: record Start, Interim-Update and Stop",
          description:
            "HTTP Basic `<corp auth_name>:<NAS secret>` or `X-Api-Key`; the NAS is the one registered at NAS-IP-Address. A repeated record (same session, status and Acct-Session-Time) is ignored; an Acct-Session-Id the NAS reuses after a restart is a new session.",
          security: [{ nasBasic: [] }, { apiKey: [] }],
        },
      },
    );
}
