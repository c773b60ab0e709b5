// The FreeRADIUS rlm_rest rows: authorize and accounting (the work is in radius-service.ts).
// rlm_rest maps the HTTP status to a module code (FINDINGS.md): 200 with attributes → updated,
// 204 → ok, 401 → reject, 404 → notfound, 5xx → fail (accounting: no response, so the NAS retries).
import { Elysia } from "elysia";
import type { Static } from "elysia";
import type { AppContext } from "../../core/context";
import type { EdgeRoutes } from "../../lib/edge";
import type { FairUseMarks } from "./fair-use";
import type { NasHealthJob } from "./nas-health";
import type { AttemptLog } from "./jobs";
import { AccountingBodySchema, AuthorizeQuery, AuthorizeReply } from "./model";
import { radiusCaller, type RadiusCaller } from "./radius-auth";
import { account, authorize } from "./radius-service";

const AUTHORIZE_LIMITS = { username: [1, 253], password: [0, 253], nas_ip: [1, 64] } as const;

/**
 * The authorize query when it is the plain form rlm_rest sends, which AuthorizeQuery accepts as it
 * is: username and nas_ip, maybe password, each once, percent-encoded, within their lengths. null
 * for anything else (a repeated or unknown key, `+`, bad escapes, out of bounds), which the Elysia
 * route's schema judges.
 */
export function plainAuthorizeQuery(url: string): Static<typeof AuthorizeQuery> | null {
  const at = url.indexOf("?");
  if (at < 0) return null;
  const search = url.slice(at + 1);
  if (search.includes("+") || search.includes("#")) return null;
  const out: Record<string, string> = {};
  for (const pair of search.split("&")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) return null;
    const key = pair.slice(0, eq);
    const limits = AUTHORIZE_LIMITS[key as keyof typeof AUTHORIZE_LIMITS];
    if (!limits || key in out) return null;
    let value: string;
    try {
      value = decodeURIComponent(pair.slice(eq + 1));
    } catch {
      return null;
    }
    if (value.length < limits[0] || value.length > limits[1]) return null;
    out[key] = value;
  }
  if (out.username === undefined || out.nas_ip === undefined) return null;
  return out as Static<typeof AuthorizeQuery>;
}

export function radiusRoutes(ctx: AppContext, attempts: AttemptLog, health: NasHealthJob, fairUse: FairUseMarks, edge?: EdgeRoutes) {
  const callers = new WeakMap<Request, RadiusCaller>();
  // Authentication runs in transform, before validation: without a credential it is 401 whatever
  // the request holds.
  const authenticate = async ({ request }: { request: Request }) => void callers.set(request, await radiusCaller(ctx, request));

  // The server answers authorize from Bun's router (src/lib/edge.ts): the same authentication,
  // then the same work, without Elysia's lifecycle. A query other than the plain form rlm_rest
  // sends goes to the route below, whose schema answers it.
  edge?.get("/api/isp/radius/authorize", (request) => {
    const query = plainAuthorizeQuery(request.url);
    if (!query) return null;
    return radiusCaller(ctx, request)
      .then((caller) => authorize(caller, query, attempts))
      .then((reply) => Response.json(reply));
  });

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
        const caller = callers.get(request)!;
        const contractId = await account(caller, body, ctx.changes);
        health.watch(caller.corp.id);
        if (contractId) fairUse.mark(caller.corp.id, contractId);
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
