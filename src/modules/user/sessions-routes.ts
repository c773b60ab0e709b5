// A user's sessions (routes.md, Operator additions): list the live ones, revoke one. The caller
// sees their own; a holder of platform.user those of the working corporation's members, in that
// corporation; `*` every session of anyone.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { noContent } from "../../lib/http";
import { forbidden, notFound } from "../../lib/problem";
import { ArrayOf } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { sessionSchemas } from "./model";
import { visibleSessions } from "./service";

const { UserSession, UserIdParams, SessionParams } = sessionSchemas;

export function userSessionRoutes(ctx: AppContext) {
  // Mounted by the user module, whose /api prefix it takes.
  return new Elysia({ name: "user-sessions", tags: ["User"] })
    .use(authGuard(ctx))
    .get(
      "/user/:id/sessions",
      async ({ params, principal }) => ({ items: (await visibleSessions(ctx, principal, params.id)).sessions.map((s) => ({ ...s, current: s.id === principal.sessionId })) }),
      {
        auth: { guard: "platform.user", self: "id" },
        params: UserIdParams,
        response: { 200: ArrayOf(UserSession) },
        detail: { summary: "List a user's live sessions (newest first)" },
      },
    )
    .delete(
      "/user/:id/sessions/:sessionId",
      async ({ params, principal, set }) => {
        const { user, sessions } = await visibleSessions(ctx, principal, params.id);
        const session = sessions.find((s) => s.id === params.sessionId);
        if (!session) throw notFound("Session");
        if (!principal.superAdmin && principal.userId !== params.id && user.super_admin) {
          throw forbidden("Only a platform administrator may end a platform administrator's session");
        }
        await ctx.sessions.revoke(session.id);
        await ctx.audit.record({ action: "user.session_revoke", outcome: "success", actor_user_id: principal.userId, corp_id: principal.corpId, target: params.id, ip: principal.ip, request_id: principal.requestId });
        noContent(set);
      },
      {
        auth: { guard: "platform.user", self: "id" },
        params: SessionParams,
        detail: { summary: "Revoke one session: its token is refused at once (unknown or already revoked: 404)" },
      },
    );
}
