// Users of the platform: visibility (the working corporation's members; everyone for `*`),
// create/update/delete, status, passwords and their reset keys, two-factor, permissions.
import { randomBytes } from "node:crypto";
import { and, eq, inArray, lt, ne } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { corpMembers, passwordResetKeys, users } from "../../db/platform/schema";
import { writeTx } from "../../db/sqlite";
import { newId, sha256Hex } from "../../lib/ids";
import { conflict, forbidden, invalid, notFound } from "../../lib/problem";
import { nowIso, toIso } from "../../lib/time";
import type { Principal } from "../../core/principal";
import { isMember } from "../auth/login";
import { consumeCode, forgetDevices, newTotpSecret, otpauthUri, twoFactorInvalid } from "../auth/two-factor";
import type { Permissions, UserCreate, UserUpdate } from "./model";
import type { UserRow } from "./view";

export const RESET_KEY_TTL_MS = 60 * 60_000;

export function findUser(ctx: AppContext, id: string): UserRow | undefined {
  return ctx.platform.select().from(users).where(eq(users.id, id)).get();
}

/** The user, when the caller may see them: themself, a member of the working corporation, or anyone for `*`. */
export function visibleUser(ctx: AppContext, p: Principal, row: UserRow | undefined): UserRow {
  if (!row) throw notFound("User");
  if (p.superAdmin || p.userId === row.id || isMember(ctx, row.id, p.corpId)) return row;
  throw notFound("User");
}

/**
 * Changes to someone else's account need `*` when it reaches beyond the working corporation: a
 * platform administrator, or a member of another corporation (a new e-mail address or password
 * set here would open that corporation too).
 */
export function assertMayManage(ctx: AppContext, p: Principal, row: UserRow): void {
  if (p.superAdmin || p.userId === row.id) return;
  if (row.super_admin) throw forbidden("Only a platform administrator may change a platform administrator");
  if (memberElsewhere(ctx, row.id, p.corpId)) throw forbidden("The user also belongs to another corporation; only a platform administrator may change the account");
}

function memberElsewhere(ctx: AppContext, userId: string, corpId: string): boolean {
  return !!ctx.platform
    .select({ c: corpMembers.corp_id })
    .from(corpMembers)
    .where(and(eq(corpMembers.user_id, userId), ne(corpMembers.corp_id, corpId)))
    .get();
}

/** The working corporation's members, as a sub-select for list filters. */
export function membersOf(ctx: AppContext, corpId: string) {
  return inArray(users.id, ctx.platform.select({ id: corpMembers.user_id }).from(corpMembers).where(eq(corpMembers.corp_id, corpId)));
}

function loginTaken(ctx: AppContext, login: string, exceptId?: string): boolean {
  const where = exceptId ? and(eq(users.login, login), ne(users.id, exceptId)) : eq(users.login, login);
  return !!ctx.platform.select({ id: users.id }).from(users).where(where).get();
}

export async function createUser(ctx: AppContext, p: Principal, input: UserCreate): Promise<UserRow> {
  if (input.super_admin && !p.superAdmin) throw forbidden("Only a platform administrator may create a platform administrator");
  if (loginTaken(ctx, input.login)) throw conflict(`login '${input.login}' is taken`);
  const password_hash = await ctx.passwords.hash(input.password);
  const id = newId();
  writeTx(ctx.platform, (tx) => {
    if (tx.select({ id: users.id }).from(users).where(eq(users.login, input.login)).get()) throw conflict(`login '${input.login}' is taken`);
    tx.insert(users).values({ id, name: input.name, email: input.email, login: input.login, password_hash, super_admin: !!input.super_admin }).run();
    tx.insert(corpMembers).values({ corp_id: p.corpId, user_id: id }).run();
  });
  ctx.permissions.invalidate();
  return findUser(ctx, id)!;
}

export function updateUser(ctx: AppContext, p: Principal, row: UserRow, input: UserUpdate): UserRow {
  const superAdmin = !!input.super_admin;
  if (superAdmin !== row.super_admin && !p.superAdmin) throw forbidden("Only a platform administrator may change super_admin");
  if (row.builtin && !superAdmin) throw conflict("The built-in user stays a platform administrator");
  if (loginTaken(ctx, input.login, row.id)) throw conflict(`login '${input.login}' is taken`);
  ctx.platform
    .update(users)
    .set({ name: input.name, email: input.email, login: input.login, super_admin: superAdmin })
    .where(eq(users.id, row.id))
    .run();
  return findUser(ctx, row.id)!;
}

export function deleteUser(ctx: AppContext, p: Principal, row: UserRow): void {
  if (row.id === p.userId) throw conflict("You cannot delete yourself");
  if (row.builtin) throw conflict("The built-in user cannot be deleted");
  if (!p.superAdmin && memberElsewhere(ctx, row.id, p.corpId)) throw conflict("The user is a member of another corporation");
  assertMayManage(ctx, p, row);
  ctx.sessions.revokeAllOfUser(row.id);
  // Memberships, workgroup links, sessions, identities, devices and keys go by ON DELETE CASCADE.
  ctx.platform.delete(users).where(eq(users.id, row.id)).run();
  ctx.permissions.invalidate();
}

export function setStatus(ctx: AppContext, p: Principal, row: UserRow, status: boolean): UserRow {
  if (!status) {
    if (row.id === p.userId) throw conflict("You cannot inactivate yourself");
    if (row.builtin) throw conflict("The built-in user cannot be inactivated");
  }
  ctx.platform.update(users).set({ status }).where(eq(users.id, row.id)).run();
  if (!status) ctx.sessions.revokeAllOfUser(row.id);
  return findUser(ctx, row.id)!;
}

/** Sets a new password; the user's sessions (but `keepSession`) and remembered devices end. */
async function storePassword(ctx: AppContext, userId: string, password: string, keepSession?: string): Promise<void> {
  const password_hash = await ctx.passwords.hash(password);
  ctx.platform.update(users).set({ password_hash }).where(eq(users.id, userId)).run();
  ctx.sessions.revokeAllOfUser(userId, keepSession);
  forgetDevices(ctx, userId);
}

export async function changePassword(ctx: AppContext, p: Principal, row: UserRow, current: string | null | undefined, next: string): Promise<void> {
  const self = p.userId === row.id;
  if (self) {
    if (!current) throw invalid("current_password", "is required to change your own password");
    if (!(await ctx.passwords.verify(current, row.password_hash))) throw forbidden("The current password is wrong");
  }
  await storePassword(ctx, row.id, next, self ? (p.sessionId ?? undefined) : undefined);
}

/**
 * Creates a single-use key (1 hour) and e-mails it. Unknown logins get the same answer in the
 * same time: the lookup, the write and the mail all happen after the answer has gone out.
 */
export function createResetKey(ctx: AppContext, login: string): void {
  setTimeout(() => {
    try {
      issueResetKey(ctx, login);
    } catch (err) {
      ctx.logger.error("password reset key not created", { error: String(err) });
    }
  }, 0);
}

function issueResetKey(ctx: AppContext, login: string): void {
  const user = ctx.platform.select().from(users).where(eq(users.login, login)).get();
  if (!user) return;
  const key = randomBytes(32).toString("base64url");
  const now = ctx.now();
  const expires = now + RESET_KEY_TTL_MS;
  // Spent and expired keys are worthless; keep the table small.
  ctx.platform.delete(passwordResetKeys).where(lt(passwordResetKeys.expires_at, toIso(now))).run();
  ctx.platform.insert(passwordResetKeys).values({ user_id: user.id, key_hash: sha256Hex(key), expires_at: toIso(expires) }).run();
  void ctx.mailer.send({
    to: user.email,
    subject: "corpadmin password reset",
    text:
      `A password reset was requested for the login ${user.login}.\n\n` +
      `Reset key: ${key}\n\n` +
      `The key works once, until ${toIso(expires)}. If you did not ask for it, ignore this message.\n`,
  });
}

/** Returns the id of the user whose password was reset. */
export async function resetPassword(ctx: AppContext, key: string, password: string): Promise<string> {
  const keyHash = sha256Hex(key);
  const row = ctx.platform.select().from(passwordResetKeys).where(eq(passwordResetKeys.key_hash, keyHash)).get();
  const badKey = () => invalid("key", "is unknown, used or expired");
  if (!row || row.used_at !== null || row.expires_at <= toIso(ctx.now())) throw badKey();
  const password_hash = await ctx.passwords.hash(password);
  const claimed = ctx.platform.$client
    .query("UPDATE password_reset_keys SET used_at = ?2 WHERE id = ?1 AND used_at IS NULL")
    .run(row.id, nowIso());
  if (claimed.changes !== 1) throw badKey();
  ctx.platform.update(users).set({ password_hash }).where(eq(users.id, row.user_id)).run();
  ctx.sessions.revokeAllOfUser(row.user_id);
  forgetDevices(ctx, row.user_id);
  // The other keys of the user were asked for the same purpose; they die with this one.
  ctx.platform.delete(passwordResetKeys).where(and(eq(passwordResetKeys.user_id, row.user_id), ne(passwordResetKeys.id, row.id))).run();
  return row.user_id;
}

export function startTwoFactor(ctx: AppContext, row: UserRow): { secret: string; otpauth_uri: string } {
  if (row.two_factor_secret) throw conflict("Two-factor authentication is already enabled");
  const secret = newTotpSecret();
  ctx.platform.update(users).set({ two_factor_pending: secret }).where(eq(users.id, row.id)).run();
  return { secret, otpauth_uri: otpauthUri(secret, row.login) };
}

export function confirmTwoFactor(ctx: AppContext, row: UserRow, code: number | string): UserRow {
  if (row.two_factor_secret) throw conflict("Two-factor authentication is already enabled");
  if (!row.two_factor_pending) throw conflict("No pending secret: enable without a code first");
  if (!consumeCode(ctx, row.id, row.two_factor_pending, code)) throw twoFactorInvalid();
  ctx.platform
    .update(users)
    .set({ two_factor_secret: row.two_factor_pending, two_factor_pending: null })
    .where(eq(users.id, row.id))
    .run();
  return findUser(ctx, row.id)!;
}

/** Removes the secret and the remembered devices (disable with a code, or reset by an admin). */
export function clearTwoFactor(ctx: AppContext, userId: string): UserRow {
  ctx.platform.update(users).set({ two_factor_secret: null, two_factor_pending: null, two_factor_last_step: null }).where(eq(users.id, userId)).run();
  forgetDevices(ctx, userId);
  return findUser(ctx, userId)!;
}

export function disableTwoFactor(ctx: AppContext, row: UserRow, code: number | string): UserRow {
  if (!row.two_factor_secret) throw conflict("Two-factor authentication is not enabled");
  if (!consumeCode(ctx, row.id, row.two_factor_secret, code)) throw twoFactorInvalid();
  return clearTwoFactor(ctx, row.id);
}

/** Global lists and, per service identifier, whether it is administered and which actions are allowed. */
export function permissionsOf(ctx: AppContext, row: UserRow, corpId: string): Permissions {
  const sets = ctx.permissions.get(row.id, corpId, row.super_admin);
  const lists = sets.lists;
  const services: Permissions["services"] = {};
  if (row.super_admin) {
    for (const identifier of ctx.permissions.enabledServices(corpId)) services[identifier] = { admin: true, allow: [] };
  } else {
    for (const identifier of lists.admin) services[identifier] = { admin: true, allow: [] };
    for (const [identifier, actions] of sets.granted) (services[identifier] ??= { admin: false, allow: [] }).allow.push(...actions);
  }
  return { user_id: row.id, corp: corpId, admin: [...lists.admin], allow: [...lists.allow], services };
}
