// The auth module's tables: safe IP ranges, linked external identities, remembered 2FA devices and
// login-failure counters. Every function takes the caller's handle (a read's `db` or a write's
// `tx`); the logic around them (login.ts, lockout.ts, safe-ip.ts, two-factor.ts, oidc.ts) goes
// through ctx.store.
import { and, eq, gt, lt, type SQL } from "drizzle-orm";
import { clientOf } from "../../db/rows";
import { externalIdentities, rememberedDevices, safeIpRanges } from "../../db/platform/schema";
import type { PlatformDb } from "../../db/sqlite";
import { listRows, type ListParams } from "../../db/list";
import { toIso } from "../../lib/time";

const DAY_MS = 24 * 60 * 60_000;

// ---- safe IP ranges ----------------------------------------------------------------------------

export type SafeIpRangeRow = typeof safeIpRanges.$inferSelect;

/** Every range of every corporation, or of one (the per-request check keeps them all in memory). */
export async function allSafeIpRanges(db: PlatformDb, corpId?: string): Promise<{ id: string; corp_id: string; range: string }[]> {
  const q = db.select({ id: safeIpRanges.id, corp_id: safeIpRanges.corp_id, range: safeIpRanges.range }).from(safeIpRanges);
  return await (corpId === undefined ? q : q.where(eq(safeIpRanges.corp_id, corpId))).all();
}

const RANGE_LIST = { q: [safeIpRanges.range, safeIpRanges.description], hidden: ["corp_id"], extraKeys: ["domain"] };

/** A page of ranges: of one corporation, or of all (`corpId` null). */
export function listSafeIpRanges(db: PlatformDb, query: ListParams, corpId: string | null) {
  const where: SQL[] = corpId === null ? [] : [eq(safeIpRanges.corp_id, corpId)];
  return listRows(db, safeIpRanges, RANGE_LIST, query, (row: SafeIpRangeRow) => row, where);
}

/** The range when it belongs to the corporation. */
export async function findSafeIpRange(db: PlatformDb, corpId: string, id: string): Promise<SafeIpRangeRow | undefined> {
  const row = await db.select().from(safeIpRanges).where(eq(safeIpRanges.id, id)).get();
  return row && row.corp_id === corpId ? row : undefined;
}

export async function safeIpRangeTaken(db: PlatformDb, corpId: string, range: string): Promise<boolean> {
  return !!(await db
    .select({ id: safeIpRanges.id })
    .from(safeIpRanges)
    .where(and(eq(safeIpRanges.corp_id, corpId), eq(safeIpRanges.range, range)))
    .get());
}

export async function insertSafeIpRange(tx: PlatformDb, corpId: string, range: string, description: string | null): Promise<SafeIpRangeRow> {
  return await tx.insert(safeIpRanges).values({ corp_id: corpId, range, description }).returning().get();
}

export async function deleteSafeIpRange(tx: PlatformDb, id: string): Promise<void> {
  await tx.delete(safeIpRanges).where(eq(safeIpRanges.id, id)).run();
}

// ---- external identities -----------------------------------------------------------------------

export type ExternalIdentityRow = typeof externalIdentities.$inferSelect;

export async function findExternalIdentity(db: PlatformDb, provider: "google" | "microsoft", subject: string): Promise<ExternalIdentityRow | undefined> {
  return await db
    .select()
    .from(externalIdentities)
    .where(and(eq(externalIdentities.provider, provider), eq(externalIdentities.subject, subject)))
    .get();
}

/** Links (provider, subject) to the user unless it is linked already; returns the link as it stands. */
export async function linkExternalIdentity(tx: PlatformDb, provider: "google" | "microsoft", subject: string, email: string | null, userId: string): Promise<ExternalIdentityRow> {
  await tx.insert(externalIdentities).values({ provider, subject, email, user_id: userId }).onConflictDoNothing().run();
  return (await findExternalIdentity(tx, provider, subject))!;
}

// ---- remembered devices ------------------------------------------------------------------------

/** Stores a remembered device (its cookie's hash); expired ones of anybody go on the way. */
export async function insertRememberedDevice(tx: PlatformDb, userId: string, tokenHash: string, expiresAt: string, now: string): Promise<void> {
  await tx.delete(rememberedDevices).where(lt(rememberedDevices.expires_at, now)).run();
  await tx.insert(rememberedDevices).values({ user_id: userId, token_hash: tokenHash, expires_at: expiresAt }).run();
}

export async function deviceRemembered(db: PlatformDb, userId: string, tokenHash: string, now: string): Promise<boolean> {
  return !!(await db
    .select({ id: rememberedDevices.id })
    .from(rememberedDevices)
    .where(and(eq(rememberedDevices.token_hash, tokenHash), eq(rememberedDevices.user_id, userId), gt(rememberedDevices.expires_at, now)))
    .get());
}

/** Forgets every remembered device of the user (in the caller's transaction). */
export async function forgetDevices(tx: PlatformDb, userId: string): Promise<void> {
  await tx.delete(rememberedDevices).where(eq(rememberedDevices.user_id, userId)).run();
}

/** Retention: deletes at most `limit` expired devices; returns how many went. */
export async function pruneRememberedDevices(db: PlatformDb, now: number, limit: number): Promise<number> {
  const { changes } = await clientOf(db)
    .query("DELETE FROM remembered_devices WHERE rowid IN (SELECT rowid FROM remembered_devices WHERE expires_at < ?1 LIMIT ?2)")
    .run(toIso(now), limit);
  return changes;
}

// ---- login failures ----------------------------------------------------------------------------

export interface LoginFailureRow {
  failures: number;
  locked_until: string | null;
}

export async function loginFailureRow(db: PlatformDb, corpId: string, login: string): Promise<LoginFailureRow | null> {
  return await clientOf(db).query<LoginFailureRow, [string, string]>("SELECT failures, locked_until FROM login_failures WHERE corp_id = ?1 AND login = ?2").get(corpId, login);
}

/** Counts a failure at `now`: an expired lock starts a fresh count; the `max`th failure sets the lock until `lockUntil`. */
export async function countLoginFailure(tx: PlatformDb, corpId: string, login: string, now: string, lockUntil: string, max: number): Promise<LoginFailureRow | null> {
  return await clientOf(tx)
    .query<LoginFailureRow, [string, string, string, string, number]>(
      `INSERT INTO login_failures (corp_id, login, failures, locked_until, updated_at)
      VALUES (?1, ?2, 1, CASE WHEN ?5 <= 1 THEN ?4 END, ?3)
      ON CONFLICT (corp_id, login) DO UPDATE SET
        failures = CASE WHEN locked_until IS NOT NULL AND locked_until <= ?3 THEN 1 ELSE failures + 1 END,
        locked_until = CASE
          WHEN (CASE WHEN locked_until IS NOT NULL AND locked_until <= ?3 THEN 1 ELSE failures + 1 END) >= ?5 THEN ?4
          ELSE NULL END,
        updated_at = ?3
      RETURNING failures, locked_until`,
    )
    .get(corpId, login, now, lockUntil, max);
}

/**
 * Gives back a failure counted ahead of an attempt that turned out not to be one: one fewer, and
 * no lock when fewer than `max` are left (the lock was that reservation's).
 */
export async function returnLoginFailure(tx: PlatformDb, corpId: string, login: string, max: number): Promise<void> {
  await clientOf(tx)
    .query(
      `UPDATE login_failures SET failures = failures - 1, locked_until = CASE WHEN failures - 1 < ?3 THEN NULL ELSE locked_until END
      WHERE corp_id = ?1 AND login = ?2 AND failures > 0`,
    )
    .run(corpId, login, max);
}

export async function clearLoginFailures(tx: PlatformDb, corpId: string, login: string): Promise<void> {
  await clientOf(tx).query("DELETE FROM login_failures WHERE corp_id = ?1 AND login = ?2").run(corpId, login);
}

/** The lockout's own pruning: counters idle for a day are forgotten unless they still lock. */
export async function forgetIdleLoginFailures(tx: PlatformDb, now: number): Promise<void> {
  await clientOf(tx).query("DELETE FROM login_failures WHERE updated_at < ?1 AND (locked_until IS NULL OR locked_until < ?2)").run(toIso(now - DAY_MS), toIso(now));
}

/** Retention: the same rule, at most `limit` counters; returns how many went. */
export async function pruneLoginFailures(db: PlatformDb, now: number, limit: number): Promise<number> {
  const { changes } = await clientOf(db)
    .query(
      "DELETE FROM login_failures WHERE rowid IN (SELECT rowid FROM login_failures WHERE updated_at < ?1 AND (locked_until IS NULL OR locked_until < ?3) LIMIT ?2)",
    )
    .run(toIso(now - DAY_MS), limit, toIso(now));
  return changes;
}

/** Counts one request of `key` in the window starting at `windowStart` (epoch ms); the window's count so far. */
export async function countRateLimitHit(tx: PlatformDb, key: string, windowStart: number): Promise<number> {
  const row = await clientOf(tx)
    .query<{ count: number }, [string, number]>(
      `INSERT INTO rate_limit_windows (key, window_start, count) VALUES (?1, ?2, 1)
      ON CONFLICT (key, window_start) DO UPDATE SET count = count + 1
      RETURNING count`,
    )
    .get(key, windowStart);
  return row!.count;
}

/** Housekeeping: at most `limit` windows that started before `before` (epoch ms: they ended); returns how many went. */
export async function pruneRateLimitWindows(db: PlatformDb, before: number, limit: number): Promise<number> {
  const { changes } = await clientOf(db)
    .query("DELETE FROM rate_limit_windows WHERE rowid IN (SELECT rowid FROM rate_limit_windows WHERE window_start < ?1 LIMIT ?2)")
    .run(before, limit);
  return changes;
}
