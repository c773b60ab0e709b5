// Obtaining and giving up tokens (login, logout, refresh, change of corporation, the OIDC exchange
// and link): the checks of login.ts, the session, and each one's entry in the audit log. The
// routes (index.ts) hand over what the request carries and set the device cookie.
import type { AppContext } from "../../core/context";
import { auditBy } from "../../core/audit";
import type { CorpRow } from "../../core/corp-cache";
import type { Principal } from "../../core/principal";
import type { SessionClient } from "../../core/sessions";
import { forbidden, notFound, Problem, unauthorized } from "../../lib/problem";
import { issueCredentials, loadUser } from "./credentials";
import { checkExternalLogin, checkLogin, checkTokenIssue, invalidCredentials, memberOf, onlyCorpOf, type LoginResult } from "./login";
import type { Credentials, LoginBody, OidcExchangeBody } from "./model";
import { linkedUserId, linkIdentity, oidcOf } from "./oidc";

/**
 * The audit reason of a failure: the problem's slug (`invalid-credentials`, `corp-blocked`, ...).
 * A 429 inside these flows is the lockout (the per-IP limit answers before any handler runs).
 */
const failureReason = (err: unknown) => (err instanceof Problem ? (err.status === 429 ? "locked" : err.slug) : "error");

/** A sign-in request: who asks (address, user agent), its request id, its remembered-device cookie. */
export interface SignIn {
  client: SessionClient & { ip: string };
  requestId: string | null;
  deviceCookie: unknown;
  /** Sets the `corpadmin_device` cookie when the device is to be remembered. */
  rememberDevice: (deviceToken: string) => void;
}

/** A checked login's token: the device remembered first (audited), then the session. */
async function signedIn(ctx: AppContext, checked: LoginResult, from: SignIn): Promise<Credentials> {
  const { user, corp, deviceToken } = checked;
  if (deviceToken) {
    from.rememberDevice(deviceToken);
    await ctx.audit.record({ action: "auth.device_remember", outcome: "success", actor_user_id: user.id, target: user.login, corp_id: corp.id, ip: from.client.ip, request_id: from.requestId });
  }
  return issueCredentials(ctx, user, corp.id, from.client);
}

/** POST /api/login. The attempted login name is the audit target (never the password or the code). */
export async function logIn(ctx: AppContext, body: LoginBody, from: SignIn): Promise<Credentials> {
  const { ip } = from.client;
  let checked: LoginResult;
  try {
    checked = await checkLogin(ctx, body, ip, from.deviceCookie);
  } catch (err) {
    const corpId = (await ctx.corps.find(body.corp))?.id ?? null;
    await ctx.audit.record({ action: "auth.login", outcome: "failure", reason: failureReason(err), target: body.login, corp_id: corpId, ip, request_id: from.requestId });
    throw err;
  }
  const credentials = await signedIn(ctx, checked, from);
  const { user, corp } = checked;
  await ctx.audit.record({ action: "auth.login", outcome: "success", actor_user_id: user.id, target: user.login, corp_id: corp.id, ip, request_id: from.requestId });
  return credentials;
}

/** DELETE /api/logout: the token's session ends. */
export async function logOut(ctx: AppContext, p: Principal): Promise<void> {
  await ctx.sessions.revoke(p.sessionId!);
  await ctx.audit.record({ ...auditBy(p), action: "auth.logout", outcome: "success" });
}

/**
 * The caller's session replaced by a new one working in `corp` (the checks passed): revoked since
 * the guard read it (a logout racing this request), no new token comes of it.
 */
async function replaceSession(ctx: AppContext, p: Principal, user: Awaited<ReturnType<typeof loadUser>>, corpId: string, client: SessionClient): Promise<Credentials> {
  if (!(await ctx.sessions.revoke(p.sessionId!))) throw unauthorized("The session has ended");
  return issueCredentials(ctx, user, corpId, client);
}

/** GET /api/auth/refresh: a new token in the same corporation; the old session is revoked. */
export async function refresh(ctx: AppContext, p: Principal, client: SessionClient): Promise<Credentials> {
  const audit = { ...auditBy(p), action: "auth.refresh" };
  const user = await loadUser(ctx, p.userId!);
  await ctx.audit.failureOf(audit, () => checkTokenIssue(ctx, user, p.corp, p.ip), failureReason);
  const credentials = await replaceSession(ctx, p, user, p.corpId, client);
  await ctx.audit.record({ ...audit, outcome: "success" });
  return credentials;
}

/** POST /api/auth/corp. Audit target: the corporation asked for (its id when it exists); corp_id: the one being left. */
export async function changeCorp(ctx: AppContext, p: Principal, asked: string, client: SessionClient): Promise<Credentials> {
  const user = await loadUser(ctx, p.userId!);
  const corp = await ctx.corps.find(asked);
  const audit = { ...auditBy(p), action: "auth.corp_change", target: corp?.id ?? asked };
  const to = await ctx.audit.failureOf(
    audit,
    async () => {
      if (!corp && user.super_admin) throw notFound("Corporation");
      if (!corp || (!user.super_admin && !(await memberOf(ctx, user.id, corp.id)))) throw forbidden("Not a member of that corporation");
      await checkTokenIssue(ctx, user, corp, p.ip);
      return corp;
    },
    failureReason,
  );
  const credentials = await replaceSession(ctx, p, user, to.id, client);
  await ctx.audit.record({ ...audit, outcome: "success" });
  return credentials;
}

/**
 * POST /api/auth/oidc/{provider}/exchange. Audit target: the provider, then `provider:subject`
 * once the ID token is verified (never the token).
 */
export async function exchangeIdToken(ctx: AppContext, provider: string, body: OidcExchangeBody, from: SignIn): Promise<Credentials> {
  const oidc = oidcOf(ctx);
  oidc.provider(provider);
  const audit = { action: "auth.oidc_exchange", target: provider, corp_id: (body.corp && (await ctx.corps.find(body.corp))?.id) || null, ip: from.client.ip, request_id: from.requestId };
  const checked = await ctx.audit.failureOf(
    audit,
    async () => {
      const token = await oidc.verify(provider, body.id_token);
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
      const twoFactor = { code: body.two_factor_code, remember: body.remember_device, deviceCookie: from.deviceCookie };
      return checkExternalLogin(ctx, linkedUser, corp, from.client.ip, twoFactor);
    },
    failureReason,
  );
  const credentials = await signedIn(ctx, checked, from);
  await ctx.audit.record({ ...audit, outcome: "success", actor_user_id: checked.user.id });
  return credentials;
}

/** POST /api/auth/oidc/{provider}/link. Already linked to the caller: nothing changed, nothing recorded. */
export async function linkIdToken(ctx: AppContext, p: Principal, provider: string, idToken: string) {
  const oidc = oidcOf(ctx);
  oidc.provider(provider);
  const audit = { ...auditBy(p), action: "auth.oidc_link", target: provider };
  const linked = await ctx.audit.failureOf(
    audit,
    async () => {
      const token = await oidc.verify(provider, idToken);
      audit.target = `${token.provider}:${token.subject}`;
      if (token.provider === "google" && !token.emailVerified) throw forbidden("The account's e-mail address is not verified");
      return linkIdentity(ctx, p.userId!, token);
    },
    failureReason,
  );
  if (linked.changed) await ctx.audit.record({ ...audit, outcome: "success" });
  return linked.link;
}
