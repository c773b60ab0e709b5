// Authentication rows of routes.md: login, logout, credentials, refresh, change of corporation.
import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { ProblemSchema } from "../../lib/schemas";
import { notFound, forbidden } from "../../lib/problem";
import { credentialsOf, issueCredentials, loadUser } from "./credentials";
import { authGuard } from "./guard";
import { checkLogin, checkTokenIssue, isMember } from "./login";
import { ChangeCorpBody, Credentials, LoginBody } from "./model";

export function authModule(ctx: AppContext) {
  return new Elysia({ name: "auth", prefix: "/api", tags: ["Authentication"] })
    .use(authGuard(ctx))
    .post(
      "/login",
      async ({ body, request, server }) => {
        const ip = ctx.clientIp(request, server?.requestIP(request)?.address ?? null);
        const { user, corp } = await checkLogin(ctx, body, ip);
        return issueCredentials(ctx, user, corp.id);
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
        const user = loadUser(ctx, principal.userId!);
        checkTokenIssue(ctx, user, principal.corp, principal.ip);
        ctx.sessions.revoke(principal.sessionId!);
        return issueCredentials(ctx, user, principal.corpId);
      },
      { auth: "token", response: { 200: Credentials }, detail: { summary: "Refresh: a new token; the old session is revoked" } },
    )
    .post(
      "/auth/corp",
      async ({ principal, body }) => {
        const user = loadUser(ctx, principal.userId!);
        const corp = ctx.corps.find(body.corp);
        if (!corp && user.super_admin) throw notFound("Corporation");
        if (!corp || (!user.super_admin && !isMember(ctx, user.id, corp.id))) throw forbidden("Not a member of that corporation");
        checkTokenIssue(ctx, user, corp, principal.ip);
        ctx.sessions.revoke(principal.sessionId!);
        return issueCredentials(ctx, user, corp.id);
      },
      {
        auth: "token",
        body: ChangeCorpBody,
        response: { 200: Credentials },
        detail: { summary: "Change the working corporation and reset the token" },
      },
    );
}
