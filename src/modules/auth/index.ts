// Authentication rows of routes.md: login, logout, credentials, refresh, change of corporation,
// the OIDC exchange and link, and the safe IP ranges of each domain.
import { Elysia, type Cookie } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { ListOf, ListQuery, ProblemSchema } from "../../lib/schemas";
import { unauthorized } from "../../lib/problem";
import { clientOf, credentialsOf, loadUser } from "./credentials";
import { authGuard, requestIdOf } from "../../http/guard";
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
import { addRange, domainCorp, listRanges, removeRange, safeIpsOf } from "./safe-ip";
import { forgetDevices } from "./service";
import { changeCorp, exchangeIdToken, linkIdToken, logIn, logOut, refresh, type SignIn } from "./session-service";
import { SharedRateLimiter } from "./shared-rate-limit";
import { DEVICE_COOKIE, setDeviceCookie } from "./two-factor";

/** What a sign-in request carries besides its body: who asks, its request id, its device cookie. */
function signInOf(
  request: Request,
  server: { requestIP(r: Request): { address: string } | null } | null,
  cookie: Record<string, Cookie<unknown>>,
  set: { headers: unknown },
  ctx: AppContext,
): SignIn {
  const ip = ctx.clientIp(request, server?.requestIP(request)?.address ?? null);
  return {
    client: { ...clientOf(ip, request), ip },
    requestId: requestIdOf(set),
    deviceCookie: cookie[DEVICE_COOKIE]?.value,
    rememberDevice: (deviceToken) => setDeviceCookie(ctx, cookie, request, deviceToken),
  };
}

export function authModule(ctx: AppContext) {
  // A new password or two-factor turned off: the devices remembered on the old ones are forgotten.
  ctx.credentialWatchers.push(forgetDevices);
  // Several app nodes share one database: they count the per-IP limit there (a request's hit is
  // read from ctx.publicAuthLimiter by the guard, so the swap holds for every module's public rows).
  if (ctx.tenants.sharedByNodes) {
    const { limit, windowMs } = ctx.publicAuthLimiter;
    ctx.publicAuthLimiter = new SharedRateLimiter(ctx.store.platform, limit, windowMs, ctx.now);
  }
  const safeIps = safeIpsOf(ctx);
  // A token carried to another network is useless: every request re-checks the ranges. The check
  // is synchronous once the ranges are in memory (the first turn after start-up).
  ctx.authChecks.push((p) => {
    if (p.kind === "user") return safeIps.check(p.corpId, p.ip, p.superAdmin);
  });
  return new Elysia({ name: "auth", prefix: "/api", tags: ["Authentication"] })
    .use(authGuard(ctx))
    .post(
      "/login",
      ({ body, request, server, cookie, set }) => logIn(ctx, body, signInOf(request, server, cookie, set, ctx)),
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
        await logOut(ctx, principal);
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
      ({ principal, request }) => refresh(ctx, principal, clientOf(principal.ip, request)),
      { auth: "token", response: { 200: Credentials }, detail: { summary: "Refresh: a new token; the old session is revoked" } },
    )
    .post(
      "/auth/corp",
      ({ principal, body, request }) => changeCorp(ctx, principal, body.corp, clientOf(principal.ip, request)),
      {
        auth: "token",
        body: ChangeCorpBody,
        response: { 200: Credentials },
        detail: { summary: "Change the working corporation and reset the token" },
      },
    )
    .post(
      "/auth/oidc/:provider/exchange",
      ({ params, body, request, server, cookie, set }) => exchangeIdToken(ctx, params.provider, body, signInOf(request, server, cookie, set, ctx)),
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
      ({ params, body, principal }) => linkIdToken(ctx, principal, params.provider, body.id_token),
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
        return created(set, `/api/auth/safe-ip/${corp.auth_name}`, await addRange(ctx, principal, corp, body.range, body.description));
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
        await removeRange(ctx, principal, corp, params.id);
        noContent(set);
      },
      { auth: "platform.auth", params: DomainIdParams, detail: { summary: "Remove a safe IP range from a domain" } },
    );
}
