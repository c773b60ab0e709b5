// Authentication rows of routes.md: login, logout, credentials, refresh, change of corporation,
// the OIDC exchange and link, and the safe IP ranges of each domain.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { ListOf, ListQuery, ProblemSchema } from "../../lib/schemas";
import { forbidden, notFound, Problem, unauthorized } from "../../lib/problem";
import type { CorpRow } from "../../core/corp-cache";
import { clientOf, credentialsOf, issueCredentials, loadUser } from "./credentials";
import { authGuard, requestIdOf } from "../../http/guard";
import { checkExternalLogin, checkLogin, checkTokenIssue, invalidCredentials, memberOf, onlyCorpOf } from "./login";
import {
  ChangeCorpBody,
  Credentials,
  DomainIdParams,
  DomainParams,
  ExternalIdentity,
  LoginBody,
  OidcExchangeBody,
  OidcLinkBody,
  OidcParams,
  SafeIpBody,
  SafeIpRange,
} from "./model";
import { linkedUserId, linkIdentity, oidcOf } from "./oidc";
import { addRange, domainCorp, listRanges, removeRange, safeIpsOf } from "./safe-ip";
import { forgetDevices } from "./service";
import { SharedRateLimiter } from "./shared-rate-limit";
import { DEVICE_COOKIE, setDeviceCookie } from "./two-factor";

/**
 * The audit reason of a failure: the problem's slug (`invalid-credentials`, `corp-blocked`, ...).
 * A 429 inside these handlers is the lockout (the per-IP limit answers before any handler runs).
 */
const problemSlug = (err: unknown) => (err instanceof Problem ? (err.status === 429 ? "locked" : err.slug) : "error");

export function authModule(ctx: AppContext) {
  // A new password or two-factor turned off: the devices remembered on the old ones are forgotten.
  ctx.credentialWatchers.push(forgetDevices);
  // Several app nodes share one database: they count the per-IP limit there (a request's hit is
  // read from ctx.publicAuthLimiter by the guard, so the swap holds for every module's public rows).
  if (ctx.tenants.engine === "postgres") {
    const { limit, windowMs } = ctx.publicAuthLimiter;
    ctx.publicAuthLimiter = new SharedRateLimiter(ctx.store.platform, limit, windowMs, ctx.now);
  }
  const safeIps = safeIpsOf(ctx);
  // A token carried to another network is useless: every request re-checks the ranges. The check
  // is synchronous once the ranges are in memory (the first turn after start-up).
  ctx.authChecks.push((p) => {
    if (p.kind === "user") return safeIps.check(p.corpId, p.ip, p.superAdmin);
  });
  const oidc = oidcOf(ctx);

  return new Elysia({ name: "auth", prefix: "/api", tags: ["Authentication"] })
    .use(authGuard(ctx))
    .post(
      "/login",
      async ({ body, request, server, cookie, set }) => {
        const ip = ctx.clientIp(request, server?.requestIP(request)?.address ?? null);
        const request_id = requestIdOf(set);
        let checked: Awaited<ReturnType<typeof checkLogin>>;
        try {
          checked = await checkLogin(ctx, body, ip, cookie[DEVICE_COOKIE]?.value);
        } catch (err) {
          // The attempted login name is the target (never the password or the 2FA code).
          const corpId = (await ctx.corps.find(body.corp))?.id ?? null;
          await ctx.audit.record({ action: "auth.login", outcome: "failure", reason: problemSlug(err), target: body.login, corp_id: corpId, ip, request_id });
          throw err;
        }
        const { user, corp, deviceToken } = checked;
        if (deviceToken) setDeviceCookie(ctx, cookie, request, deviceToken);
        if (deviceToken) await ctx.audit.record({ action: "auth.device_remember", outcome: "success", actor_user_id: user.id, target: user.login, corp_id: corp.id, ip, request_id });
        const credentials = await issueCredentials(ctx, user, corp.id, clientOf(ip, request));
        await ctx.audit.record({ action: "auth.login", outcome: "success", actor_user_id: user.id, target: user.login, corp_id: corp.id, ip, request_id });
        return credentials;
      },
      {
        publicAuth: true,
        body: LoginBody,
        response: { 200: Credentials, 403: ProblemSchema, 429: ProblemSchema },
        detail: { summary: "Log in and obtain a token" },
      },
    )
    .delete(
      "/logout",
      async ({ principal, set }) => {
        await ctx.sessions.revoke(principal.sessionId!);
        await ctx.audit.record({ action: "auth.logout", outcome: "success", actor_user_id: principal.userId, corp_id: principal.corpId, ip: principal.ip, request_id: principal.requestId });
        set.status = 204;
      },
      { auth: "token", detail: { summary: "Log out: revoke the token's session" } },
    )
    .get(
      "/auth/credentials",
      async ({ principal, request }) => {
        // Revoked since the guard read it (a logout racing this request): the token is refused.
        const session = await ctx.sessions.live(principal.sessionId!);
        if (!session) throw unauthorized("The session has ended");
        const token = request.headers.get("authorization")!.slice(7).trim();
        const expiresIn = Math.max(0, Math.floor((Date.parse(session.expires_at) - Date.now()) / 1000));
        return credentialsOf(ctx, await loadUser(ctx, principal.userId!), principal.corpId, token, expiresIn);
      },
      { auth: "token", response: { 200: Credentials }, detail: { summary: "Show the caller's credentials" } },
    )
    .get(
      "/auth/refresh",
      async ({ principal, request }) => {
        const audit = { action: "auth.refresh", actor_user_id: principal.userId, corp_id: principal.corpId, ip: principal.ip, request_id: principal.requestId };
        const user = await loadUser(ctx, principal.userId!);
        try {
          await checkTokenIssue(ctx, user, principal.corp, principal.ip);
        } catch (err) {
          await ctx.audit.record({ ...audit, outcome: "failure", reason: problemSlug(err) });
          throw err;
        }
        // Revoked since the guard read it (a logout racing this request): no new token comes of it.
        if (!(await ctx.sessions.revoke(principal.sessionId!))) throw unauthorized("The session has ended");
        const credentials = await issueCredentials(ctx, user, principal.corpId, clientOf(principal.ip, request));
        await ctx.audit.record({ ...audit, outcome: "success" });
        return credentials;
      },
      { auth: "token", response: { 200: Credentials }, detail: { summary: "Refresh: a new token; the old session is revoked" } },
    )
    .post(
      "/auth/corp",
      async ({ principal, body, request }) => {
        const user = await loadUser(ctx, principal.userId!);
        const corp = await ctx.corps.find(body.corp);
        // target: the corporation asked for (its id when it exists); corp_id: the one being left.
        const audit = { action: "auth.corp_change", actor_user_id: user.id, corp_id: principal.corpId, target: corp?.id ?? body.corp, ip: principal.ip, request_id: principal.requestId };
        try {
          if (!corp && user.super_admin) throw notFound("Corporation");
          if (!corp || (!user.super_admin && !(await memberOf(ctx, user.id, corp.id)))) throw forbidden("Not a member of that corporation");
          await checkTokenIssue(ctx, user, corp, principal.ip);
        } catch (err) {
          await ctx.audit.record({ ...audit, outcome: "failure", reason: problemSlug(err) });
          throw err;
        }
        if (!(await ctx.sessions.revoke(principal.sessionId!))) throw unauthorized("The session has ended");
        const credentials = await issueCredentials(ctx, user, corp.id, clientOf(principal.ip, request));
        await ctx.audit.record({ ...audit, outcome: "success" });
        return credentials;
      },
      {
        auth: "token",
        body: ChangeCorpBody,
        response: { 200: Credentials },
        detail: { summary: "Change the working corporation and reset the token" },
      },
    )
    .post(
      "/auth/oidc/:provider/exchange",
      async ({ params, body, request, server, cookie, set }) => {
        oidc.provider(params.provider);
        const ip = ctx.clientIp(request, server?.requestIP(request)?.address ?? null);
        const request_id = requestIdOf(set);
        // target: the provider, then `provider:subject` once the ID token is verified (never the token).
        const audit = { action: "auth.oidc_exchange", target: params.provider, corp_id: (body.corp && (await ctx.corps.find(body.corp))?.id) || null, ip, request_id };
        let checked: Awaited<ReturnType<typeof checkExternalLogin>>;
        try {
          const token = await oidc.verify(params.provider, body.id_token);
          audit.target = `${token.provider}:${token.subject}`;
          const linkedUser = await linkedUserId(ctx, token);
          if (!linkedUser) throw invalidCredentials();
          let corp: CorpRow;
          if (body.corp) {
            const found = await ctx.corps.find(body.corp);
            if (!found) throw invalidCredentials();
            corp = found;
          } else corp = await onlyCorpOf(ctx, linkedUser);
          audit.corp_id = corp.id;
          const twoFactor = { code: body.two_factor_code, remember: body.remember_device, deviceCookie: cookie[DEVICE_COOKIE]?.value };
          checked = await checkExternalLogin(ctx, linkedUser, corp, ip, twoFactor);
        } catch (err) {
          await ctx.audit.record({ ...audit, outcome: "failure", reason: problemSlug(err) });
          throw err;
        }
        const { user, corp, deviceToken } = checked;
        if (deviceToken) setDeviceCookie(ctx, cookie, request, deviceToken);
        if (deviceToken) await ctx.audit.record({ action: "auth.device_remember", outcome: "success", actor_user_id: user.id, target: user.login, corp_id: corp.id, ip, request_id });
        const credentials = await issueCredentials(ctx, user, corp.id, clientOf(ip, request));
        await ctx.audit.record({ ...audit, outcome: "success", actor_user_id: user.id });
        return credentials;
      },
      {
        publicAuth: true,
        params: OidcParams,
        body: OidcExchangeBody,
        response: { 200: Credentials, 403: ProblemSchema, 404: ProblemSchema, 429: ProblemSchema },
        detail: { summary: "Exchange an ID token of an external provider for a token of the service", security: [] },
      },
    )
    .post(
      "/auth/oidc/:provider/link",
      async ({ params, body, principal }) => {
        oidc.provider(params.provider);
        const audit = { action: "auth.oidc_link", actor_user_id: principal.userId, corp_id: principal.corpId, target: params.provider, ip: principal.ip, request_id: principal.requestId };
        let linked: Awaited<ReturnType<typeof linkIdentity>>;
        try {
          const token = await oidc.verify(params.provider, body.id_token);
          audit.target = `${token.provider}:${token.subject}`;
          if (token.provider === "google" && !token.emailVerified) throw forbidden("The account's e-mail address is not verified");
          linked = await linkIdentity(ctx, principal.userId!, token);
        } catch (err) {
          await ctx.audit.record({ ...audit, outcome: "failure", reason: problemSlug(err) });
          throw err;
        }
        // Already linked to the caller: nothing changed, nothing to record.
        if (linked.changed) await ctx.audit.record({ ...audit, outcome: "success" });
        return linked.link;
      },
      {
        auth: "token",
        params: OidcParams,
        body: OidcLinkBody,
        response: { 200: ExternalIdentity },
        detail: { summary: "Link a verified account of the provider to the caller" },
      },
    )
    .get(
      "/auth/safe-ip",
      ({ query }) => listRanges(ctx, query, null, (query as Record<string, unknown>).domain),
      { auth: "*", query: ListQuery, response: { 200: ListOf(SafeIpRange) }, detail: { summary: "List all safe IP ranges" } },
    )
    .get(
      "/auth/safe-ip/:domain",
      async ({ params, query, principal }) => listRanges(ctx, query, await domainCorp(ctx, principal, params.domain)),
      {
        auth: "platform.auth",
        params: DomainParams,
        query: ListQuery,
        response: { 200: ListOf(SafeIpRange) },
        detail: { summary: "List the safe IP ranges of a domain" },
      },
    )
    .post(
      "/auth/safe-ip/:domain",
      async ({ params, body, principal, set }) => {
        const corp = await domainCorp(ctx, principal, params.domain);
        const range = await addRange(ctx, corp, body.range, body.description);
        await ctx.audit.record({ action: "auth.safe_ip_add", outcome: "success", actor_user_id: principal.userId, corp_id: corp.id, target: range.range, ip: principal.ip, request_id: principal.requestId });
        return created(set, `/api/auth/safe-ip/${corp.auth_name}`, range);
      },
      {
        auth: "platform.auth",
        params: DomainParams,
        body: SafeIpBody,
        response: { 200: SafeIpRange },
        detail: { summary: "Add a safe IP range to a domain" },
      },
    )
    .delete(
      "/auth/safe-ip/:domain/:id",
      async ({ params, principal, set }) => {
        const corp = await domainCorp(ctx, principal, params.domain);
        const range = await removeRange(ctx, corp, params.id);
        await ctx.audit.record({ action: "auth.safe_ip_remove", outcome: "success", actor_user_id: principal.userId, corp_id: corp.id, target: range.range, ip: principal.ip, request_id: principal.requestId });
        noContent(set);
      },
      { auth: "platform.auth", params: DomainIdParams, detail: { summary: "Remove a safe IP range from a domain" } },
    );
}
