// Authentication rows of routes.md: login, logout, credentials, refresh, change of corporation.
import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { ProblemSchema } from "../../lib/schemas";
import { notFound, forbidden, Problem } from "../../lib/problem";
import { credentialsOf, issueCredentials, loadUser } from "./credentials";
import { authGuard } from "./guard";
import { checkLogin, checkTokenIssue, isMember } from "./login";
import { ChangeCorpBody, Credentials, LoginBody } from "./model";

/** The audit reason of a failure: the problem's slug (`invalid-credentials`, `rate-limited`, ...). */
const problemSlug = (err: unknown) => (err instanceof Problem ? err.slug : "error");

export function authModule(ctx: AppContext) {
  return new Elysia({ name: "auth", prefix: "/api", tags: ["Authentication"] })
    .use(authGuard(ctx))
    .post(
      "/login",
      async ({ body, request, server }) => {
        const ip = ctx.clientIp(request, server?.requestIP(request)?.address ?? null);
        let checked: Awaited<ReturnType<typeof checkLogin>>;
        try {
          checked = await checkLogin(ctx, body, ip);
        } catch (err) {
          // The attempted login name is the target (never the password or the 2FA code).
          const corpId = ctx.corps.find(body.corp)?.id ?? null;
          ctx.audit.record({ action: "auth.login", outcome: "failure", reason: problemSlug(err), target: body.login, corp_id: corpId, ip });
          throw err;
        }
        const { user, corp } = checked;
        const credentials = await issueCredentials(ctx, user, corp.id);
        ctx.audit.record({ action: "auth.login", outcome: "success", actor_user_id: user.id, target: user.login, corp_id: corp.id, ip });
        return credentials;
      },
      {
        publicAuth: true,
        body: LoginBody,
        response: { 200: Credentials, 403: ProblemSchema },
        detail: { summary: "Log in and obtain a token" },
      },
    )
    .delete(
      "/logout",
      ({ principal, set }) => {
        ctx.sessions.revoke(principal.sessionId!);
        ctx.audit.record({ action: "auth.logout", outcome: "success", actor_user_id: principal.userId, corp_id: principal.corpId, ip: principal.ip });
        set.status = 204;
      },
      { auth: "token", detail: { summary: "Log out: revoke the token's session" } },
    )
    .get(
      "/auth/credentials",
      async ({ principal, request }) => {
        const session = ctx.sessions.live(principal.sessionId!)!;
        const token = request.headers.get("authorization")!.slice(7).trim();
        const expiresIn = Math.max(0, Math.floor((Date.parse(session.expires_at) - Date.now()) / 1000));
        return credentialsOf(ctx, loadUser(ctx, principal.userId!), principal.corpId, token, expiresIn);
      },
      { auth: "token", response: { 200: Credentials }, detail: { summary: "Show the caller's credentials" } },
    )
    .get(
      "/auth/refresh",
      async ({ principal }) => {
        const audit = { action: "auth.refresh", actor_user_id: principal.userId, corp_id: principal.corpId, ip: principal.ip };
        const user = loadUser(ctx, principal.userId!);
        try {
          checkTokenIssue(ctx, user, principal.corp, principal.ip);
        } catch (err) {
          ctx.audit.record({ ...audit, outcome: "failure", reason: problemSlug(err) });
          throw err;
        }
        ctx.sessions.revoke(principal.sessionId!);
        const credentials = await issueCredentials(ctx, user, principal.corpId);
        ctx.audit.record({ ...audit, outcome: "success" });
        return credentials;
      },
      { auth: "token", response: { 200: Credentials }, detail: { summary: "Refresh: a new token; the old session is revoked" } },
    )
    .post(
      "/auth/corp",
      async ({ principal, body }) => {
        const user = loadUser(ctx, principal.userId!);
        const corp = ctx.corps.find(body.corp);
        // target: the corporation asked for (its id when it exists); corp_id: the one being left.
        const audit = { action: "auth.corp_change", actor_user_id: user.id, corp_id: principal.corpId, target: corp?.id ?? body.corp, ip: principal.ip };
        try {
          if (!corp && user.super_admin) throw notFound("Corporation");
          if (!corp || (!user.super_admin && !isMember(ctx, user.id, corp.id))) throw forbidden("Not a member of that corporation");
          checkTokenIssue(ctx, user, corp, principal.ip);
        } catch (err) {
          ctx.audit.record({ ...audit, outcome: "failure", reason: problemSlug(err) });
          throw err;
        }
        ctx.sessions.revoke(principal.sessionId!);
        const credentials = await issueCredentials(ctx, user, corp.id);
        ctx.audit.record({ ...audit, outcome: "success" });
        return credentials;
      },
      {
        auth: "token",
        body: ChangeCorpBody,
        response: { 200: Credentials },
        detail: { summary: "Change the working corporation and reset the token" },
      },
    );
}
