// A user's sessions (routes.md, Operator additions): list the live ones, revoke one. The caller
// sees their own; a holder of platform.user those of the working corporation's members, in that
// corporation; `*` every session of anyone.
import { Elysia, t } from "elysia";
import type { AppContext } from "../../core/context";
import { noContent } from "../../lib/http";
import { forbidden, notFound } from "../../lib/problem";
import { ArrayOf, Nullable, Uuid } from "../../lib/schemas";
import { authGuard } from "../auth/guard";
import type { Principal } from "../../core/principal";
import type { SessionRow } from "../../core/sessions";
import { findUser, visibleUser } from "./service";

export const UserSession = t.Object({
  id: Uuid,
  user_id: Uuid,
  corp_id: Uuid,
  created_at: t.String(),
  last_seen_at: Nullable(t.String({ description: "last authenticated request (to the minute)" })),
  expires_at: t.String(),
  ip: Nullable(t.String()),
  user_agent: Nullable(t.String()),
  current: t.Boolean({ description: "the session of the token making this request" }),
});

const SessionParams = t.Object({ id: Uuid, sessionId: Uuid });

/** The live sessions of the user in `id` that the caller may see. */
function visibleSessions(ctx: AppContext, p: Principal, userId: string): SessionRow[] {
  const row = visibleUser(ctx, p, findUser(ctx, userId));
  const all = ctx.sessions.listLive(row.id);
  return p.superAdmin || p.userId === row.id ? all : all.filter((s) => s.corp_id === p.corpId);
}

export function userSessionRoutes(ctx: AppContext) {
  // Mounted by the user module, whose /api prefix it takes.
  return new Elysia({ name: "user-sessions", tags: ["User"] })
    .use(authGuard(ctx))
    .get(
      "/user/:id/sessions",
      ({ params, principal }) => ({ items: visibleSessions(ctx, principal, params.id).map((s) => ({ ...s, current: s.id === principal.sessionId })) }),
      {
        auth: { guard: "platform.user", self: "id" },
        params: t.Object({ id: Uuid }),
        response: { 200: ArrayOf(UserSession) },
        detail: { summary: "List a user's live sessions (newest first)" },
      },
    )
    .delete(
      "/user/:id/sessions/:sessionId",
      ({ params, principal, set }) => {
        const session = visibleSessions(ctx, principal, params.id).find((s) => s.id === params.sessionId);
        if (!session) throw notFound("Session");
        if (!principal.superAdmin && principal.userId !== params.id && findUser(ctx, params.id)?.super_admin) {
          throw forbidden("Only a platform administrator may end a platform administrator's session");
        }
        ctx.sessions.revoke(session.id);
        ctx.audit.record({ action: "user.session_revoke", outcome: "success", actor_user_id: principal.userId, corp_id: principal.corpId, target: params.id, ip: principal.ip, request_id: principal.requestId });
        noContent(set);
      },
      {
        auth: { guard: "platform.user", self: "id" },
        params: SessionParams,
        detail: { summary: "Revoke one session: its token is refused at once (unknown or already revoked: 404)" },
      },
    );
}
