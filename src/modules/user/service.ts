// Users of the platform: visibility (the working corporation's members; everyone for `*`),
// create/update/delete, status, passwords and their reset keys, two-factor, permissions.
import { randomBytes } from "node:crypto";
import { clientOf } from "../../db/rows";
import { and, eq, inArray, lt, ne, type SQLWrapper } from "drizzle-orm";
import type { WriteScope } from "../../core/store";
import { auditBy } from "../../core/audit";
import type { AppContext } from "../../core/context";
import { PERMISSIONS_TOPIC, SUPER_PERMISSION } from "../../core/permissions";
import type { Principal } from "../../core/principal";
import { publishUserSessions, type SessionRow, type UserFlags } from "../../core/sessions";
import { passwordResetKeys, users } from "../../db/platform/schema";
import type { PlatformDb } from "../../db/sqlite";
import { newId, sha256Hex } from "../../lib/ids";
import { listRows, type ListParams, type Page } from "../../db/list";
import { conflict, forbidden, invalid, notFound } from "../../lib/problem";
import { nowIso, toIso } from "../../lib/time";
import { matchingStep, newTotpSecret, otpauthUri, twoFactorInvalid } from "./totp";
import { insertMember, isMember, isMemberElsewhere, memberIdsOf } from "../membership/service";
import type { Permissions, User, UserCreate, UserUpdate } from "./model";
import { userView, type UserRow } from "./view";

export const RESET_KEY_TTL_MS = 60 * 60_000;

/** Where a public row's request came from (no one is signed in): its audit entry's fields. */
export interface RequestOrigin {
  ip: string;
  requestId: string | null;
}

const HIDDEN = ["password_hash", "two_factor_secret", "two_factor_pending", "two_factor_last_step"];
const LIST_SPEC = { q: [users.name, users.email, users.login], hidden: HIDDEN };

// ---- the users table, for this module and others (in the caller's read or transaction) ---------

export async function findUser(db: PlatformDb, id: string): Promise<UserRow | undefined> {
  return await db.select().from(users).where(eq(users.id, id)).get();
}

export async function findUserByLogin(db: PlatformDb, login: string): Promise<UserRow | undefined> {
  return await db.select().from(users).where(eq(users.login, login)).get();
}

/**
 * A user's flags for the kernel's session check (src/core/sessions.ts), on every authenticated
 * request: one cached statement (booleans stay 0/1, as the guard compares them).
 */
export async function userFlags(db: PlatformDb, userId: string): Promise<UserFlags | null> {
  return await clientOf(db).query<UserFlags, [string]>("SELECT status, super_admin, login FROM users WHERE id = ?1").get(userId);
}

export async function setPasswordHash(tx: PlatformDb, userId: string, passwordHash: string): Promise<void> {
  await tx.update(users).set({ password_hash: passwordHash }).where(eq(users.id, userId)).run();
}

/**
 * Accepts a TOTP time step once: true when it is newer than the last accepted one, which it then
 * becomes. The conditional UPDATE lets only one of two requests racing with one code win.
 */
export async function consumeTotpStep(tx: PlatformDb, userId: string, step: number): Promise<boolean> {
  const { changes } = await clientOf(tx)
    .query("UPDATE users SET two_factor_last_step = ?2 WHERE id = ?1 AND (two_factor_last_step IS NULL OR two_factor_last_step < ?2)")
    .run(userId, step);
  return changes === 1;
}

export async function userExists(db: PlatformDb, id: string): Promise<boolean> {
  return !!(await db.select({ id: users.id }).from(users).where(eq(users.id, id)).get());
}

/** Users by the list convention, among the ids of `memberIds` (a subquery: a corporation's members). */
export async function listUsersAmong(db: PlatformDb, memberIds: SQLWrapper, query: ListParams): Promise<Page<User>> {
  return userPage(db, await listRows(db, users, LIST_SPEC, query, (row: UserRow) => row, [inArray(users.id, memberIds)]));
}

/** A page of user rows as users (each view reads the user's corporations, which listRows' synchronous view cannot). */
async function userPage(db: PlatformDb, page: Page<UserRow>): Promise<Page<User>> {
  const items: User[] = [];
  for (const row of page.items) items.push(await userView(db, row));
  return { ...page, items };
}

/** Has the service been started (is there any user at all)? (the start row) */
export async function anyUserExists(db: PlatformDb): Promise<boolean> {
  return !!(await db.select({ id: users.id }).from(users).limit(1).get());
}

/** The first user, the built-in platform administrator (the start row, in its transaction). */
export async function insertBuiltinUser(tx: PlatformDb, user: { id: string; name: string; email: string; login: string; password_hash: string }): Promise<UserRow> {
  return await tx.insert(users).values({ ...user, super_admin: true, builtin: true }).returning().get();
}

/** Deletes a user row in the caller's transaction (a failed start takes its built-in user back). */
export async function deleteUserRow(tx: PlatformDb, id: string): Promise<void> {
  await tx.delete(users).where(eq(users.id, id)).run();
}

/** Logins by user id, of the users that still exist (the audit list names its actors). */
export async function loginsOf(db: PlatformDb, ids: string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await db.select({ id: users.id, login: users.login }).from(users).where(inArray(users.id, ids)).all();
  return new Map(rows.map((u) => [u.id, u.login]));
}

/** Retention: deletes at most `limit` used or expired reset keys; returns how many went. */
export async function prunePasswordResetKeys(db: PlatformDb, now: number, limit: number): Promise<number> {
  const { changes } = await clientOf(db)
    .query(
      "DELETE FROM password_reset_keys WHERE rowid IN (SELECT rowid FROM password_reset_keys WHERE used_at IS NOT NULL OR expires_at < ?1 LIMIT ?2)",
    )
    .run(toIso(now), limit);
  return changes;
}

// ---- visibility --------------------------------------------------------------------------------

/** The user, when the caller may see them: themself, a member of the working corporation, or anyone for `*`. */
async function visibleUser(db: PlatformDb, p: Principal, row: UserRow | undefined): Promise<UserRow> {
  if (!row) throw notFound("User");
  if (p.superAdmin || p.userId === row.id || (await isMember(db, row.id, p.corpId))) return row;
  throw notFound("User");
}

/**
 * Changes to someone else's account need `*` when it reaches beyond the working corporation: a
 * platform administrator, or a member of another corporation (a new e-mail address or password
 * set here would open that corporation too).
 */
async function assertMayManage(db: PlatformDb, p: Principal, row: UserRow): Promise<void> {
  if (p.superAdmin || p.userId === row.id) return;
  if (row.super_admin) throw forbidden("Only a platform administrator may change a platform administrator");
  if (await isMemberElsewhere(db, row.id, p.corpId)) throw forbidden("The user also belongs to another corporation; only a platform administrator may change the account");
}

/** The user in `id` when the caller may see and change them (404, 403 otherwise). */
async function manageableUser(db: PlatformDb, p: Principal, id: string): Promise<UserRow> {
  const row = await visibleUser(db, p, await findUser(db, id));
  await assertMayManage(db, p, row);
  return row;
}

export function listUsers(ctx: AppContext, p: Principal, query: ListParams) {
  return ctx.store.platform.read(async (db) =>
    userPage(db, await listRows(db, users, LIST_SPEC, query, (row: UserRow) => row, p.superAdmin ? [] : [inArray(users.id, memberIdsOf(db, p.corpId))])),
  );
}

export function getUser(ctx: AppContext, p: Principal, id: string): Promise<User> {
  return ctx.store.platform.read(async (db) => userView(db, await visibleUser(db, p, await findUser(db, id))));
}

export function getUserByLogin(ctx: AppContext, p: Principal, login: string): Promise<User> {
  return ctx.store.platform.read(async (db) => userView(db, await visibleUser(db, p, await findUserByLogin(db, login))));
}

/** The user the caller may see and change (for a change that needs work before its write: a password). */
export function getManageableUser(ctx: AppContext, p: Principal, id: string): Promise<UserRow> {
  return ctx.store.platform.read((db) => manageableUser(db, p, id));
}

// ---- changes -----------------------------------------------------------------------------------

/** A user's change in the history (core/history.ts: the password and 2FA secrets as ********; the 2FA step is no change of the record). */
function recordUser(w: WriteScope, action: string, before: UserRow | null | undefined, after: UserRow | null | undefined): void {
  const shape = (r: UserRow | null | undefined) => (r ? { ...r, two_factor_last_step: undefined } : null);
  w.record({ type: "user", id: (after ?? before)!.id, action, before: shape(before), after: shape(after) });
}

async function loginTaken(db: PlatformDb, login: string, exceptId?: string): Promise<boolean> {
  const where = exceptId ? and(eq(users.login, login), ne(users.id, exceptId)) : eq(users.login, login);
  return !!(await db.select({ id: users.id }).from(users).where(where).get());
}

export async function createUser(ctx: AppContext, p: Principal, input: UserCreate): Promise<User> {
  if (input.super_admin && !p.superAdmin) throw forbidden("Only a platform administrator may create a platform administrator");
  // Checked before the (slow) hash too, so that a taken login answers at once.
  if (await ctx.store.platform.read((db) => loginTaken(db, input.login))) throw conflict(`login '${input.login}' is taken`);
  const password_hash = await ctx.passwords.hash(input.password);
  const user = await ctx.store.platform.write(async (tx, w) => {
    if (await loginTaken(tx, input.login)) throw conflict(`login '${input.login}' is taken`);
    const id = newId();
    await tx.insert(users).values({ id, name: input.name, email: input.email, login: input.login, password_hash, super_admin: !!input.super_admin }).run();
    await insertMember(tx, p.corpId, id);
    await ctx.changes.publish(tx, w, PERMISSIONS_TOPIC, "*");
    const row = (await findUser(tx, id))!;
    recordUser(w, "create", null, row);
    return userView(tx, row);
  });
  await ctx.audit.record({ ...auditBy(p), action: "user.create", outcome: "success", target: user.id });
  if (user.super_admin) await ctx.audit.record({ ...auditBy(p), action: "user.super_admin_grant", outcome: "success", target: user.id });
  return user;
}

/** Audited as an update, and as a grant or revocation when super_admin changed. */
export async function updateUser(ctx: AppContext, p: Principal, id: string, input: UserUpdate): Promise<User> {
  const { before, user } = await ctx.store.platform.write(async (tx, w) => {
    const row = await manageableUser(tx, p, id);
    const superAdmin = !!input.super_admin;
    if (superAdmin !== row.super_admin && !p.superAdmin) throw forbidden("Only a platform administrator may change super_admin");
    if (row.builtin && !superAdmin) throw conflict("The built-in user stays a platform administrator");
    if (await loginTaken(tx, input.login, row.id)) throw conflict(`login '${input.login}' is taken`);
    await tx.update(users).set({ name: input.name, email: input.email, login: input.login, super_admin: superAdmin }).where(eq(users.id, row.id)).run();
    // The guard reads super_admin with the session, which nodes keep (core/sessions.ts).
    if (superAdmin !== row.super_admin) await publishUserSessions(ctx.changes, tx, w, row.id);
    const after = (await findUser(tx, row.id))!;
    recordUser(w, "update", row, after);
    return { before: row, user: await userView(tx, after) };
  });
  await ctx.audit.record({ ...auditBy(p), action: "user.update", outcome: "success", target: user.id });
  if (user.super_admin !== before.super_admin)
    await ctx.audit.record({ ...auditBy(p), action: user.super_admin ? "user.super_admin_grant" : "user.super_admin_revoke", outcome: "success", target: user.id });
  return user;
}

export async function deleteUser(ctx: AppContext, p: Principal, id: string): Promise<void> {
  await ctx.store.platform.write(async (tx, w) => {
    const row = await visibleUser(tx, p, await findUser(tx, id));
    if (row.id === p.userId) throw conflict("You cannot delete yourself");
    if (row.builtin) throw conflict("The built-in user cannot be deleted");
    if (!p.superAdmin && (await isMemberElsewhere(tx, row.id, p.corpId))) throw conflict("The user is a member of another corporation");
    await assertMayManage(tx, p, row);
    // Memberships, workgroup links, sessions, identities, devices and keys go by ON DELETE CASCADE.
    await tx.delete(users).where(eq(users.id, row.id)).run();
    recordUser(w, "delete", row, null);
    await ctx.changes.publish(tx, w, PERMISSIONS_TOPIC, "*");
    // The sessions' rows go with the user; the nodes that keep them drop them.
    await publishUserSessions(ctx.changes, tx, w, row.id);
  });
  await ctx.audit.record({ ...auditBy(p), action: "user.delete", outcome: "success", target: id });
}

export async function setStatus(ctx: AppContext, p: Principal, id: string, status: boolean): Promise<User> {
  const user = await ctx.store.platform.write(async (tx, w) => {
    const row = await manageableUser(tx, p, id);
    if (!status) {
      if (row.id === p.userId) throw conflict("You cannot inactivate yourself");
      if (row.builtin) throw conflict("The built-in user cannot be inactivated");
    }
    await tx.update(users).set({ status }).where(eq(users.id, row.id)).run();
    if (status !== row.status) await publishUserSessions(ctx.changes, tx, w, row.id);
    const after = (await findUser(tx, row.id))!;
    recordUser(w, "status", row, after);
    return userView(tx, after);
  });
  if (!status) await ctx.sessions.revokeAllOfUser(id);
  await ctx.audit.record({ ...auditBy(p), action: status ? "user.activate" : "user.inactivate", outcome: "success", target: user.id });
  return user;
}

/** Stores a password hash; the user's sessions (but `keepSession`) and remembered devices end. */
async function storePassword(ctx: AppContext, userId: string, passwordHash: string, keepSession?: string): Promise<void> {
  await ctx.store.platform.write(async (tx, w) => {
    const before = await findUser(tx, userId);
    await setPasswordHash(tx, userId, passwordHash);
    await credentialsChanged(ctx, tx, userId);
    recordUser(w, "password", before, await findUser(tx, userId));
  });
  await ctx.sessions.revokeAllOfUser(userId, keepSession);
}

/** A user the caller may manage (else 404/403, not audited); the change audited either way. */
export async function changePassword(ctx: AppContext, p: Principal, id: string, current: string | null | undefined, next: string): Promise<void> {
  const row = await getManageableUser(ctx, p, id);
  const audit = { ...auditBy(p), action: "user.password_change", target: row.id };
  await ctx.audit.failureOf(audit, async () => {
    const self = p.userId === row.id;
    if (self) {
      if (!current) throw invalid("current_password", "is required to change your own password");
      if (!(await ctx.passwords.verify(current, row.password_hash))) throw forbidden("The current password is wrong");
    }
    await storePassword(ctx, row.id, await ctx.passwords.hash(next), self ? (p.sessionId ?? undefined) : undefined);
  });
  await ctx.audit.record({ ...audit, outcome: "success" });
}

/**
 * Creates a single-use key (1 hour) and e-mails it. Unknown logins get the same answer in the
 * same time: the lookup, the write and the mail all happen after the answer has gone out. The
 * audit entry is the same whether the login exists or not: the log must not become an oracle.
 */
export async function createResetKey(ctx: AppContext, login: string, from: RequestOrigin): Promise<void> {
  setTimeout(() => {
    issueResetKey(ctx, login).catch((err) => ctx.logger.error("password reset key not created", { error: String(err) }));
  }, 0);
  await ctx.audit.record({ action: "user.password_reset_request", outcome: "requested", target: login, ip: from.ip, request_id: from.requestId });
}

async function issueResetKey(ctx: AppContext, login: string): Promise<void> {
  const key = randomBytes(32).toString("base64url");
  const now = ctx.now();
  const expires = now + RESET_KEY_TTL_MS;
  const user = await ctx.store.platform.write(async (tx) => {
    const user = await findUserByLogin(tx, login);
    if (!user) return null;
    // Spent and expired keys are worthless; keep the table small.
    await tx.delete(passwordResetKeys).where(lt(passwordResetKeys.expires_at, toIso(now))).run();
    await tx.insert(passwordResetKeys).values({ user_id: user.id, key_hash: sha256Hex(key), expires_at: toIso(expires) }).run();
    return user;
  });
  if (!user) return;
  void ctx.mailer.send({
    to: user.email,
    subject: "corpadmin password reset",
    text:
      `A password reset was requested for the login ${user.login}.\n\n` +
      `Reset key: ${key}\n\n` +
      `The key works once, until ${toIso(expires)}. If you did not ask for it, ignore this message.\n`,
  });
}

/** Resets the password a key was issued for; audited as a success on that user, or a failure. */
export async function resetPassword(ctx: AppContext, key: string, password: string, from: RequestOrigin): Promise<void> {
  const audit = { action: "user.password_reset", ip: from.ip, request_id: from.requestId };
  const userId = await ctx.audit.failureOf(audit, () => resetWithKey(ctx, key, password));
  await ctx.audit.record({ ...audit, outcome: "success", target: userId });
}

/** Returns the id of the user whose password was reset. */
async function resetWithKey(ctx: AppContext, key: string, password: string): Promise<string> {
  const keyHash = sha256Hex(key);
  const badKey = () => invalid("key", "is unknown, used or expired");
  const usable = (row: typeof passwordResetKeys.$inferSelect | undefined) => !!row && row.used_at === null && row.expires_at > toIso(ctx.now());
  const found = await ctx.store.platform.read((db) => db.select().from(passwordResetKeys).where(eq(passwordResetKeys.key_hash, keyHash)).get());
  if (!usable(found)) throw badKey();
  const password_hash = await ctx.passwords.hash(password);
  const userId = await ctx.store.platform.write(async (tx, w) => {
    // Claimed in the transaction: of two resets racing with one key, one wins.
    const row = await tx.select().from(passwordResetKeys).where(eq(passwordResetKeys.key_hash, keyHash)).get();
    if (!row || !usable(row)) throw badKey();
    await tx.update(passwordResetKeys).set({ used_at: nowIso() }).where(eq(passwordResetKeys.id, row.id)).run();
    const before = await findUser(tx, row.user_id);
    await setPasswordHash(tx, row.user_id, password_hash);
    await credentialsChanged(ctx, tx, row.user_id);
    recordUser(w, "password", before, await findUser(tx, row.user_id));
    // The other keys of the user were asked for the same purpose; they die with this one.
    await tx.delete(passwordResetKeys).where(and(eq(passwordResetKeys.user_id, row.user_id), ne(passwordResetKeys.id, row.id))).run();
    return row.user_id;
  });
  await ctx.sessions.revokeAllOfUser(userId);
  return userId;
}

// ---- two-factor --------------------------------------------------------------------------------

/** The user a self-service row names: deleted since the guard let the request in, it is 404. */
async function presentUser(tx: PlatformDb, userId: string): Promise<UserRow> {
  const row = await findUser(tx, userId);
  if (!row) throw notFound("User");
  return row;
}

export function startTwoFactor(ctx: AppContext, userId: string): Promise<{ secret: string; otpauth_uri: string }> {
  return ctx.store.platform.write(async (tx) => {
    const row = await presentUser(tx, userId);
    if (row.two_factor_secret) throw conflict("Two-factor authentication is already enabled");
    const secret = newTotpSecret();
    await tx.update(users).set({ two_factor_pending: secret }).where(eq(users.id, row.id)).run();
    return { secret, otpauth_uri: otpauthUri(secret, row.login) };
  });
}

export async function confirmTwoFactor(ctx: AppContext, p: Principal, userId: string, code: number | string): Promise<User> {
  const audit = { ...auditBy(p), action: "user.two_factor_enable", target: userId };
  const user = await ctx.audit.failureOf(audit, () => ctx.store.platform.write(async (tx, w) => {
    const row = await presentUser(tx, userId);
    if (row.two_factor_secret) throw conflict("Two-factor authentication is already enabled");
    if (!row.two_factor_pending) throw conflict("No pending secret: enable without a code first");
    const step = matchingStep(row.two_factor_pending, code, ctx.now());
    // A wrong code is refused whole: nothing of this write stays (the step was not moved either).
    if (step === null || !(await consumeTotpStep(tx, row.id, step))) throw twoFactorInvalid();
    await tx.update(users).set({ two_factor_secret: row.two_factor_pending, two_factor_pending: null }).where(eq(users.id, row.id)).run();
    const after = (await findUser(tx, row.id))!;
    recordUser(w, "two-factor", row, after);
    return userView(tx, after);
  }));
  await ctx.audit.record({ ...audit, outcome: "success" });
  return user;
}

/** Tells ctx.credentialWatchers (in the caller's transaction) that the user's credentials changed. */
async function credentialsChanged(ctx: AppContext, tx: PlatformDb, userId: string): Promise<void> {
  for (const watcher of ctx.credentialWatchers) await watcher(tx, userId);
}

/** Removes the secret and the remembered devices (in the caller's transaction). */
async function clearTwoFactor(ctx: AppContext, tx: PlatformDb, userId: string): Promise<void> {
  await tx.update(users).set({ two_factor_secret: null, two_factor_pending: null, two_factor_last_step: null }).where(eq(users.id, userId)).run();
  await credentialsChanged(ctx, tx, userId);
}

export async function disableTwoFactor(ctx: AppContext, p: Principal, userId: string, code: number | string): Promise<User> {
  const audit = { ...auditBy(p), action: "user.two_factor_disable", target: userId };
  const user = await ctx.audit.failureOf(audit, () => ctx.store.platform.write(async (tx, w) => {
    const row = await presentUser(tx, userId);
    if (!row.two_factor_secret) throw conflict("Two-factor authentication is not enabled");
    const step = matchingStep(row.two_factor_secret, code, ctx.now());
    if (step === null || !(await consumeTotpStep(tx, row.id, step))) throw twoFactorInvalid();
    await clearTwoFactor(ctx, tx, row.id);
    const after = (await findUser(tx, row.id))!;
    recordUser(w, "two-factor", row, after);
    return userView(tx, after);
  }));
  await ctx.audit.record({ ...audit, outcome: "success" });
  return user;
}

/** Reset by an administrator (lost authenticator). */
export async function resetTwoFactor(ctx: AppContext, p: Principal, id: string): Promise<User> {
  const user = await ctx.store.platform.write(async (tx, w) => {
    const row = await manageableUser(tx, p, id);
    await clearTwoFactor(ctx, tx, row.id);
    const after = (await findUser(tx, row.id))!;
    recordUser(w, "two-factor", row, after);
    return userView(tx, after);
  });
  await ctx.audit.record({ ...auditBy(p), action: "user.two_factor_reset", outcome: "success", target: user.id });
  return user;
}

// ---- permissions and sessions ------------------------------------------------------------------

/** Global lists and, per service identifier, whether it is administered and which actions are allowed. */
export async function permissionsOf(ctx: AppContext, p: Principal, id: string, corpIdAsked: string | undefined): Promise<Permissions> {
  const corpId = corpIdAsked ?? p.corpId;
  const row = await ctx.store.platform.read(async (db) => visibleUser(db, p, await findUser(db, id)));
  if (corpId !== p.corpId && !(await ctx.corps.get(corpId))) throw notFound("Corporation");
  return ctx.store.platform.read(async (db) => {
    if (corpId !== p.corpId) {
      const selfMember = p.userId === row.id && (await isMember(db, row.id, corpId));
      if (!p.superAdmin && !selfMember) throw forbidden("Only a platform administrator, or the user as a member, may see another corporation");
    }
    const services: Permissions["services"] = {};
    if (row.super_admin) {
      for (const identifier of await ctx.permissions.readIn(db).enabledServices(corpId)) services[identifier] = { admin: true, allow: [] };
      return { user_id: row.id, corp: corpId, admin: [...SUPER_PERMISSION.admin], allow: [...SUPER_PERMISSION.allow], services };
    }
    const granted = await ctx.permissions.readIn(db).load(row.id, corpId);
    for (const identifier of granted.admin) services[identifier] = { admin: true, allow: [] };
    for (const [identifier, actions] of granted.granted) (services[identifier] ??= { admin: false, allow: [] }).allow.push(...actions);
    return { user_id: row.id, corp: corpId, admin: granted.admin, allow: granted.allow, services };
  });
}

/** The live sessions of the user in `id` that the caller may see, with the user's row. */
export async function visibleSessions(ctx: AppContext, p: Principal, id: string): Promise<{ user: UserRow; sessions: SessionRow[] }> {
  const user = await ctx.store.platform.read(async (db) => visibleUser(db, p, await findUser(db, id)));
  const all = await ctx.sessions.listLive(user.id);
  return { user, sessions: p.superAdmin || p.userId === user.id ? all : all.filter((s) => s.corp_id === p.corpId) };
}

/**
 * Revokes one of a user's sessions the principal may see (404 otherwise): its token is refused at
 * once. Only a platform administrator ends a platform administrator's session (403).
 */
export async function revokeSession(ctx: AppContext, principal: Principal, userId: string, sessionId: string): Promise<void> {
  const { user, sessions } = await visibleSessions(ctx, principal, userId);
  const session = sessions.find((s) => s.id === sessionId);
  if (!session) throw notFound("Session");
  if (!principal.superAdmin && principal.userId !== userId && user.super_admin) {
    throw forbidden("Only a platform administrator may end a platform administrator's session");
  }
  await ctx.sessions.revoke(session.id);
  await ctx.audit.record({ ...auditBy(principal), action: "user.session_revoke", outcome: "success", target: userId });
}
