// The login pipeline (routes.md, "Login checks", in this order):
//   1. lock (429)                     — failure counters per (corporation, login), lockout.ts: the
//                                       attempt's failure is counted here, before 2; it stands for
//                                       a wrong password or code, is cleared by a success, and is
//                                       given back for any other refusal
//   2. login, password, membership    — 403 invalid-credentials, never saying which part was wrong
//   3. user status                    — 403 account-inactive
//   4. corporation gate               — 403 corp-blocked / 503
//   5. safe IP ranges                 — 403 ip-not-allowed, safe-ip.ts
//   6. two-factor                     — 403 two-factor-required / two-factor-invalid, two-factor.ts
// Steps 3–5 also guard every other way of getting a token (refresh, change of corporation), and
// the OIDC exchange runs 1 and 3–6 once its ID token has named the user.
import type { AppContext } from "../../core/context";
import { forbidden, invalid } from "../../lib/problem";
import { corpIdsOfUser, isMember } from "../membership/service";
import { findUser, findUserByLogin, setPasswordHash } from "../user/service";
import type { UserRow } from "../user/view";
import type { CorpRow } from "../../core/corp-cache";
import { corpGate } from "../../http/guard";
import { Lockout, type Attempt } from "./lockout";
import type { LoginBody } from "./model";
import { safeIpsOf } from "./safe-ip";
import { checkTwoFactor, type TwoFactorInput } from "./two-factor";

export const invalidCredentials = () => forbidden("Invalid login, password or corporation", "invalid-credentials");

/** Is the user a member of the corporation? (a read of its own) */
export function memberOf(ctx: AppContext, userId: string, corpId: string): Promise<boolean> {
  return ctx.store.platform.read((db) => isMember(db, userId, corpId));
}

/** The user's only corporation, for an exchange that names none. */
export async function onlyCorpOf(ctx: AppContext, userId: string): Promise<CorpRow> {
  const ids = await ctx.store.platform.read((db) => corpIdsOfUser(db, userId, 2));
  if (ids.length !== 1) throw invalid("corp", "is required: the account works in more than one corporation, or none");
  return (await ctx.corps.get(ids[0]))!;
}

const lockouts = new WeakMap<AppContext, Lockout>();
export function lockoutOf(ctx: AppContext): Lockout {
  let l = lockouts.get(ctx);
  if (!l) lockouts.set(ctx, (l = new Lockout(ctx.store.platform, ctx.now)));
  return l;
}

/** The attempt failed: its counted failure stands; the one that locks the (corporation, login) is an audit event. */
async function countFailure(ctx: AppContext, attempt: Attempt, corpId: string, login: string, ip: string): Promise<void> {
  if (attempt.failed()) await ctx.audit.record({ action: "auth.lockout", outcome: "success", corp_id: corpId, target: login, ip, reason: "too-many-failures" });
}

/** Checks 3–5: may this user hold a token working in this corporation, from this address? */
export async function checkTokenIssue(ctx: AppContext, user: UserRow, corp: CorpRow, ip: string): Promise<void> {
  if (!user.status) throw forbidden("The account is inactive", "account-inactive");
  corpGate(corp, user.super_admin);
  await safeIpsOf(ctx).assert(corp.id, ip, user.super_admin);
}

export interface LoginResult {
  user: UserRow;
  corp: CorpRow;
  /** A new `corpadmin_device` cookie value when the device is to be remembered. */
  deviceToken: string | null;
}

/** Checks 3–6 for a user whose credentials and membership are already proven, inside the attempt. */
async function finishLogin(ctx: AppContext, attempt: Attempt, user: UserRow, corp: CorpRow, ip: string, twoFactor: TwoFactorInput, login: string): Promise<LoginResult> {
  await checkTokenIssue(ctx, user, corp, ip);
  const deviceToken = await checkTwoFactor(ctx, user, twoFactor, () => countFailure(ctx, attempt, corp.id, login, ip));
  await attempt.succeeded();
  return { user, corp, deviceToken };
}

/** The password login: returns the user and corporation a token may be issued for. */
export async function checkLogin(ctx: AppContext, body: LoginBody, ip: string, deviceCookie?: unknown): Promise<LoginResult> {
  const corp = await ctx.corps.find(body.corp);
  if (!corp) {
    await ctx.passwords.verifyDummy(body.password);
    throw invalidCredentials();
  }
  return lockoutOf(ctx).attempt(corp.id, body.login, async (attempt) => {
    const user = await ctx.store.platform.read((db) => findUserByLogin(db, body.login));
    // Always spend one password verification, so timing does not tell which part was wrong.
    const passwordOk = user ? await ctx.passwords.verify(body.password, user.password_hash) : await ctx.passwords.verifyDummy(body.password);
    if (!user || !passwordOk || (!user.super_admin && !(await memberOf(ctx, user.id, corp.id)))) {
      await countFailure(ctx, attempt, corp.id, body.login, ip);
      throw invalidCredentials();
    }
    if (ctx.passwords.needsRehash(user.password_hash)) {
      const password_hash = await ctx.passwords.hash(body.password);
      await ctx.store.platform.write((tx) => setPasswordHash(tx, user.id, password_hash));
    }
    const twoFactor = { code: body.two_factor_code, remember: body.remember_device, deviceCookie };
    return finishLogin(ctx, attempt, user, corp, ip, twoFactor, body.login);
  });
}

/** The OIDC exchange, once the ID token named `userId`: the same lock and checks 3–6. */
export async function checkExternalLogin(ctx: AppContext, userId: string, corp: CorpRow, ip: string, twoFactor: TwoFactorInput): Promise<LoginResult> {
  const found = await ctx.store.platform.read((db) => findUser(db, userId));
  if (!found) throw invalidCredentials();
  return lockoutOf(ctx).attempt(corp.id, found.login, async (attempt) => {
    // Read again inside the attempt: a racing 2FA step or status change must be seen.
    const user = await ctx.store.platform.read((db) => findUser(db, userId));
    if (!user) throw invalidCredentials();
    if (!user.super_admin && !(await memberOf(ctx, user.id, corp.id))) {
      await countFailure(ctx, attempt, corp.id, user.login, ip);
      throw invalidCredentials();
    }
    return finishLogin(ctx, attempt, user, corp, ip, twoFactor, user.login);
  });
}
