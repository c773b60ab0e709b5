// A user's sessions (routes.md, Operator additions): list the live ones, revoke one. The caller
// sees their own; a holder of platform.user those of the working corporation's members, in that
// corporation; `*` every session of anyone.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { noContent } from "../../lib/http";
import { ArrayOf } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { sessionSchemas } from "./model";
import { revokeSession, visibleSessions } from "./service";

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
        await revokeSession(ctx, principal, params.id, params.sessionId);
        noContent(set);
      },
      {
        auth: { guard: "platform.user", self: "id" },
        params: SessionParams,
        detail: { summary: "Revoke one session: its token is refused at once (unknown or already revoked: 404)" },
      },
    );
}
