// The login pipeline (routes.md, "Login checks", in this order):
//   1. lock (429)                     — failure counters per (corporation, login), lockout.ts
//   2. login, password, membership    — 403 invalid-credentials, never saying which part was wrong
//   3. user status                    — 403 account-inactive
//   4. corporation gate               — 403 corp-blocked / 503
//   5. safe IP ranges                 — 403 ip-not-allowed, safe-ip.ts
//   6. two-factor                     — 403 two-factor-required / two-factor-invalid, two-factor.ts
// Steps 3–5 also guard every other way of getting a token (refresh, change of corporation), and
// the OIDC exchange runs 1 and 3–6 once its ID token has named the user.
import { and, eq } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { corpMembers, users } from "../../db/platform/schema";
import { forbidden } from "../../lib/problem";
import type { UserRow } from "../user/view";
import type { CorpRow } from "../../core/corp-cache";
import { corpGate } from "./guard";
import { Lockout } from "./lockout";
import type { LoginBody } from "./model";
import { safeIpsOf } from "./safe-ip";
import { checkTwoFactor, type TwoFactorInput } from "./two-factor";

export const invalidCredentials = () => forbidden("Invalid login, password or corporation", "invalid-credentials");

export function isMember(ctx: AppContext, userId: string, corpId: string): boolean {
  return !!ctx.platform
    .select({ u: corpMembers.user_id })
    .from(corpMembers)
    .where(and(eq(corpMembers.corp_id, corpId), eq(corpMembers.user_id, userId)))
    .get();
}

const lockouts = new WeakMap<AppContext, Lockout>();
export function lockoutOf(ctx: AppContext): Lockout {
  let l = lockouts.get(ctx);
  if (!l) lockouts.set(ctx, (l = new Lockout(ctx.platform.$client, ctx.now)));
  return l;
}

/** Counts a failed attempt; the one that locks the (corporation, login) is an audit event. */
function countFailure(ctx: AppContext, corpId: string, login: string, ip: string): void {
  if (lockoutOf(ctx).failure(corpId, login)) ctx.audit.record({ action: "auth.lockout", outcome: "success", corp_id: corpId, target: login, ip, reason: "too-many-failures" });
}

/** Checks 3–5: may this user hold a token working in this corporation, from this address? */
export function checkTokenIssue(ctx: AppContext, user: UserRow, corp: CorpRow, ip: string): void {
  if (!user.status) throw forbidden("The account is inactive", "account-inactive");
  corpGate(corp, user.super_admin);
  safeIpsOf(ctx).assert(corp.id, ip, user.super_admin);
}

export interface LoginResult {
  user: UserRow;
  corp: CorpRow;
  /** A new `corpadmin_device` cookie value when the device is to be remembered. */
  deviceToken: string | null;
}

/** Checks 3–6 for a user whose credentials and membership are already proven, inside the lock. */
function finishLogin(ctx: AppContext, user: UserRow, corp: CorpRow, ip: string, twoFactor: TwoFactorInput, login: string): LoginResult {
  const lock = lockoutOf(ctx);
  checkTokenIssue(ctx, user, corp, ip);
  const deviceToken = checkTwoFactor(ctx, user, twoFactor, () => countFailure(ctx, corp.id, login, ip));
  lock.success(corp.id, login);
  return { user, corp, deviceToken };
}

/** The password login: returns the user and corporation a token may be issued for. */
export async function checkLogin(ctx: AppContext, body: LoginBody, ip: string, deviceCookie?: unknown): Promise<LoginResult> {
  const corp = ctx.corps.find(body.corp);
  if (!corp) {
    await ctx.passwords.verifyDummy(body.password);
    throw invalidCredentials();
  }
  const lock = lockoutOf(ctx);
  return lock.serialize(corp.id, body.login, async () => {
    lock.assertOpen(corp.id, body.login);
    const user = ctx.platform.select().from(users).where(eq(users.login, body.login)).get();
    // Always spend one password verification, so timing does not tell which part was wrong.
    const passwordOk = user ? await ctx.passwords.verify(body.password, user.password_hash) : await ctx.passwords.verifyDummy(body.password);
    if (!user || !passwordOk || (!user.super_admin && !isMember(ctx, user.id, corp.id))) {
      countFailure(ctx, corp.id, body.login, ip);
      throw invalidCredentials();
    }
    if (ctx.passwords.needsRehash(user.password_hash)) {
      const password_hash = await ctx.passwords.hash(body.password);
      ctx.platform.update(users).set({ password_hash }).where(eq(users.id, user.id)).run();
    }
    const twoFactor = { code: body.two_factor_code, remember: body.remember_device, deviceCookie };
    return finishLogin(ctx, user, corp, ip, twoFactor, body.login);
  });
}

/** The OIDC exchange, once the ID token named `userId`: the same lock and checks 3–6. */
export async function checkExternalLogin(ctx: AppContext, userId: string, corp: CorpRow, ip: string, twoFactor: TwoFactorInput): Promise<LoginResult> {
  const found = ctx.platform.select().from(users).where(eq(users.id, userId)).get();
  if (!found) throw invalidCredentials();
  const lock = lockoutOf(ctx);
  return lock.serialize(corp.id, found.login, async () => {
    lock.assertOpen(corp.id, found.login);
    // Read again inside the lock: a racing 2FA step or status change must be seen.
    const user = ctx.platform.select().from(users).where(eq(users.id, userId)).get();
    if (!user) throw invalidCredentials();
    if (!user.super_admin && !isMember(ctx, user.id, corp.id)) {
      countFailure(ctx, corp.id, user.login, ip);
      throw invalidCredentials();
    }
    return finishLogin(ctx, user, corp, ip, twoFactor, user.login);
  });
}
