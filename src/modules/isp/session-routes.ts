// RADIUS session routes (the operator's "who is online" and "kick this session") and a contract's
// disconnect-all; the work is in session-service.ts and dynamic-auth.ts.
import { Elysia, t } from "elysia";
import type { AppContext } from "../../core/context";
import { IdParams, ListOf } from "../../lib/schemas";
import type { authGuard } from "../../http/guard";
import { disconnectContract, disconnectSession, type Actor } from "./dynamic-auth";
import { RadiusLogSchemas } from "./model";

const { DisconnectResult, RadiusSession, SessionListQuery } = RadiusLogSchemas;
import { getSession, listSessions } from "./session-service";

export function sessionRoutes(ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  const actorOf = (principal: { corpId: string; userId: string | null; ip: string }): Actor => ({ corpId: principal.corpId, userId: principal.userId, ip: principal.ip, cause: null });

  return new Elysia({ name: "isp-session", prefix: "/api", tags: ["ISP"] })
    .use(guard)
    .get("/isp/session", ({ tenant, query }) => listSessions(tenant, query, ctx.now()), {
      auth: "platform.isp",
      query: SessionListQuery,
      response: { 200: ListOf(RadiusSession) },
      detail: {
        summary: "List RADIUS sessions (default sort -started_at)",
        description:
          "Filters: state (online, stale: no record for 3 interim intervals or 15 min, closed), contract_id, nas_id, username, pop_id (the NAS's POP), pool_id (open sessions whose framed address is in the pool's network; an unknown pool finds none), and from/to: sessions overlapping that interval (who had an address at a time). Plus the list convention's q, sort and field filters.",
      },
    })
    .get("/isp/session/:id", ({ tenant, params }) => getSession(tenant, params.id, ctx.now()), {
      auth: "platform.isp",
      params: IdParams,
      response: { 200: RadiusSession },
      detail: { summary: "Show a RADIUS session" },
    })
    .post("/isp/session/:id/disconnect", ({ tenant, params, principal }) => disconnectSession(ctx, tenant, params.id, actorOf(principal)), {
      auth: "platform.isp",
      params: IdParams,
      response: { 200: DisconnectResult },
      detail: {
        summary: "Send an RFC 5176 Disconnect-Request for the session to its NAS",
        description: "3 attempts, 2 s apart; a NAK (with its Error-Cause) or a timeout is still 200 with that outcome. 409: the session has stopped. 400: the NAS has no secret stored (set it again). Audited as isp.disconnect.",
      },
    })
    .post("/contract/:id/disconnect", ({ tenant, params, principal }) => disconnectContract(ctx, tenant, params.id, actorOf(principal)), {
      auth: "platform.contract",
      params: IdParams,
      response: { 200: t.Object({ items: t.Array(DisconnectResult) }) },
      detail: {
        summary: "Disconnect every online session of the contract",
        description:
          "Also done by the service when the contract leaves ACTIVE; a change of what the NAS's layout renders for it (speeds, pools, addresses) sends a CoA-Request with the re-rendered attributes instead. 400: a session's NAS has no secret stored.",
        tags: ["Contract"],
      },
    });
}
