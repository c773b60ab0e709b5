// Corporations: the platform rows (corporations, corp_services; members through the membership
// module) and their databases.
import { copyFileSync, existsSync, mkdirSync, renameSync, unlinkSync } from "node:fs";
import { clientOf } from "../../db/rows";
import { join } from "node:path";
import { and, count, eq, inArray, sql } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import type { Principal } from "../../core/principal";
import { PERMISSIONS_TOPIC } from "../../core/permissions";
import { corpServices, corporations } from "../../db/platform/schema";
import type { PlatformDb } from "../../db/sqlite";
import { newId } from "../../lib/ids";
import { listRows, type ListParams } from "../../db/list";
import { conflict, invalid, notFound } from "../../lib/problem";
import { isValidTimeZone } from "../../lib/time";
import { CORPS_TOPIC, type CorpLookups, type CorpRow } from "../../core/corp-cache";
import { actionsByFeature, builtinServiceIds, featureIdsOf, featureSummaries, serviceExists, serviceSummaries } from "../catalog/service";
import { serverExists } from "../server/service";
import { removeUserFromCorpWorkgroups, revokeServiceInCorp } from "../workgroup/service";
import { listUsersAmong, userExists } from "../user/service";
import { insertMember, isMember, memberIdsOf, removeMember, serviceEnabled } from "../membership/service";
import type { CORP_STATUSES, CorpCheck, CorpTree, Corporation, CorporationInput } from "./model";

export type CorpStatus = (typeof CORP_STATUSES)[number];

export function corpView(row: CorpRow): Corporation {
  return { ...row };
}

function checkTimezone(timezone: string): void {
  if (!isValidTimeZone(timezone)) throw invalid("timezone", "is not an IANA time zone name");
}

// ---- what other modules read of the corporation tables -----------------------------------------

/** How many corporations live on a server (the server module's corp_count). */
export async function corpCountOnServer(db: PlatformDb, serverId: string): Promise<number> {
  return (await db.select({ n: count() }).from(corporations).where(eq(corporations.server_id, serverId)).get())!.n;
}

/** Corporations per server id. */
export async function corpCountsByServer(db: PlatformDb): Promise<Map<string, number>> {
  return new Map(
    (
      await db
        .select({ id: corporations.server_id, n: count() })
        .from(corporations)
        .groupBy(corporations.server_id)
        .all()
    ).map((r) => [r.id, r.n]),
  );
}

export type CorpRef = { id: string; auth_name: string; server_id: string; status: string };

/** Every corporation, by id (database maintenance, backups). */
export async function allCorpRefs(db: PlatformDb): Promise<CorpRef[]> {
  return await db
    .select({ id: corporations.id, auth_name: corporations.auth_name, server_id: corporations.server_id, status: corporations.status })
    .from(corporations)
    .orderBy(corporations.id)
    .all();
}

/** Corporations whose outbox and webhook queue the dispatcher works (MAINTENANCE and NEEDS_UPDATE are left alone). */
export async function dispatchableCorpIds(db: PlatformDb): Promise<string[]> {
  const rows = await clientOf(db).query<{ id: string }, []>("SELECT id FROM corporations WHERE status IN ('ENABLED', 'BLOCKED')").all();
  return rows.map((c) => c.id);
}

/** Every corporation's id (the metric collector schedules them at start-up). */
export async function allCorpIds(db: PlatformDb): Promise<string[]> {
  const rows = await clientOf(db).query<{ id: string }, []>("SELECT id FROM corporations").all();
  return rows.map((c) => c.id);
}

/**
 * The corporation rows the kernel's cache (src/core/corp-cache.ts) asks for: by id and by
 * auth_name, on the read connection it hands in. Raw cached statements: a miss of that cache
 * happens at most once per corporation and change, but RADIUS names corporations on every request.
 */
export const corpLookups: CorpLookups = {
  byId: (db, id) => clientOf(db).query<CorpRow, [string]>("SELECT * FROM corporations WHERE id = ?1").get(id),
  byAuthName: (db, authName) => clientOf(db).query<CorpRow, [string]>("SELECT * FROM corporations WHERE auth_name = ?1").get(authName),
};

/** Corporations per status (the metrics gauge). */
export async function corpCountsByStatus(db: PlatformDb): Promise<{ status: string; n: number }[]> {
  return await db.select({ status: corporations.status, n: count() }).from(corporations).groupBy(corporations.status).all();
}

/** Moves corporations to another server (a restore puts every database on the built-in one). */
export async function moveCorpsToServer(db: PlatformDb, corpIds: string[], serverId: string): Promise<void> {
  if (corpIds.length) await db.update(corporations).set({ server_id: serverId }).where(inArray(corporations.id, corpIds)).run();
}

/** Sets a corporation's status; the caller invalidates the corporation cache after the commit. */
export async function writeCorpStatus(tx: PlatformDb, id: string, status: CorpStatus): Promise<void> {
  await tx.update(corporations).set({ status }).where(eq(corporations.id, id)).run();
}

/** The given services (by identifier) with their features (by name) and actions. */
async function catalogTree(db: PlatformDb, serviceIds: string[]): Promise<CorpTree["services"]> {
  const list = await serviceSummaries(db, serviceIds);
  const feats = await featureSummaries(db, list.map((s) => s.id));
  const actions = await actionsByFeature(db, feats.map((f) => f.id));
  return list.map((s) => ({
    ...s,
    features: feats.filter((f) => f.service_id === s.id).map((f) => ({ id: f.id, name: f.name, actions: actions.get(f.id) ?? [] })),
  }));
}

// ---- corporations ------------------------------------------------------------------------------

async function corpRow(db: PlatformDb, id: string): Promise<CorpRow> {
  const row = await db.select().from(corporations).where(eq(corporations.id, id)).get();
  if (!row) throw notFound("Corporation");
  return row;
}

/**
 * Creates a corporation on its server (the built-in one by default) with every built-in service
 * enabled, then creates and migrates its database. The database file is made after the platform
 * commit, and a failure there removes the platform row again.
 */
/** The columns a create or an update sets from its body (the time zone checked by the caller). */
function corpColumns(input: CorporationInput, timezone: string) {
  return {
    auth_name: input.auth_name,
    company_name: input.company_name,
    trade_name: input.trade_name ?? null,
    doc_identity: input.doc_identity ?? null,
    email: input.email ?? null,
    noc_email: input.noc_email ?? null,
    phone: input.phone ?? null,
    timezone,
  };
}

/** The audit log's entry for a change to corporation `corpId` by `p`; `target` says what in it changed. */
function audit(ctx: AppContext, p: Principal, action: string, corpId: string, target: string = corpId): Promise<void> {
  return ctx.audit.record({ action, outcome: "success", actor_user_id: p.userId, corp_id: corpId, target, ip: p.ip, request_id: p.requestId });
}

/** POST /api/corp: the corporation, created by an administrator (audited). */
export async function createCorporationBy(ctx: AppContext, p: Principal, input: CorporationInput): Promise<CorpRow> {
  const row = await createCorporation(ctx, input);
  await audit(ctx, p, "corp.create", row.id);
  return row;
}

export async function createCorporation(ctx: AppContext, input: CorporationInput, memberUserId?: string): Promise<CorpRow> {
  const timezone = input.timezone ?? "UTC";
  checkTimezone(timezone);
  const serverId = input.server_id ?? ctx.builtinServerId;
  const id = newId();
  await ctx.store.platform.write(async (tx, w) => {
    if (!(await serverExists(tx, serverId))) throw invalid("server_id", "unknown server");
    if (await tx.select({ id: corporations.id }).from(corporations).where(eq(corporations.auth_name, input.auth_name)).get()) {
      throw conflict(`auth_name '${input.auth_name}' is taken`);
    }
    await tx.insert(corporations)
      .values({ id, ...corpColumns(input, timezone), server_id: serverId })
      .run();
    const builtins = await builtinServiceIds(tx);
    if (builtins.length) await tx.insert(corpServices).values(builtins.map((s) => ({ corp_id: id, service_id: s }))).run();
    if (memberUserId) await insertMember(tx, id, memberUserId);
    w.record({ type: "corp", id, action: "create", before: null, after: await corpRow(tx, id), corpId: id });
    await ctx.changes.publish(tx, w, PERMISSIONS_TOPIC, "*");
  });
  try {
    await ctx.tenants.migrateLive(id);
  } catch (err) {
    ctx.tenants.close(id);
    await ctx.store.platform.write(async (tx, w) => {
      await tx.delete(corporations).where(eq(corporations.id, id)).run();
      await ctx.changes.publish(tx, w, PERMISSIONS_TOPIC, "*");
    });
    // The server's directory went away or became unwritable since it was registered.
    ctx.logger.error("creating a corporation database failed", { corp_id: id, server_id: serverId, error: String(err) });
    throw conflict(`The corporation's database could not be created on its server: ${err instanceof Error ? err.message : String(err)}`);
  }
  return (await ctx.corps.get(id))!;
}

/** The corporation or 404. Reads the database, not the cache: these are administrative reads. */
export function getCorp(ctx: AppContext, id: string): Promise<CorpRow> {
  return ctx.store.platform.read((db) => corpRow(db, id));
}

export function getCorpByAuthName(ctx: AppContext, authName: string): Promise<CorpRow> {
  return ctx.store.platform.read(async (db) => {
    const row = await db.select().from(corporations).where(eq(corporations.auth_name, authName)).get();
    if (!row) throw notFound("Corporation");
    return row;
  });
}

export function listCorps(ctx: AppContext, query: ListParams) {
  return ctx.store.platform.read((db) =>
    listRows(db, corporations, { q: [corporations.auth_name, corporations.company_name, corporations.trade_name] }, query, (row: CorpRow) => corpView(row)),
  );
}

/**
 * PUT replaces every writable field. server_id is immutable: left out it stays, another value
 * is 409 (moving a database between servers is an operator's file operation, not an API call).
 */
export async function updateCorporation(ctx: AppContext, p: Principal, id: string, input: CorporationInput): Promise<CorpRow> {
  const timezone = input.timezone ?? "UTC";
  const updated = await ctx.store.platform.write(async (tx, w) => {
    const current = await corpRow(tx, id);
    checkTimezone(timezone);
    if (input.server_id && input.server_id !== current.server_id) throw conflict("server_id cannot change");
    const clash = await tx
      .select({ id: corporations.id })
      .from(corporations)
      .where(and(eq(corporations.auth_name, input.auth_name), sql`${corporations.id} <> ${id}`))
      .get();
    if (clash) throw conflict(`auth_name '${input.auth_name}' is taken`);
    await tx.update(corporations)
      .set(corpColumns(input, timezone))
      .where(eq(corporations.id, id))
      .run();
    await ctx.changes.publish(tx, w, CORPS_TOPIC, id);
    const after = await corpRow(tx, id);
    w.record({ type: "corp", id, action: "update", before: current, after, corpId: id });
    return after;
  });
  await audit(ctx, p, "corp.update", updated.id);
  return updated;
}

export async function setCorpStatus(ctx: AppContext, p: Principal, id: string, status: CorpStatus): Promise<CorpRow> {
  const changed = await ctx.store.platform.write(async (tx, w) => {
    const before = await corpRow(tx, id);
    await writeCorpStatus(tx, id, status);
    await ctx.changes.publish(tx, w, CORPS_TOPIC, id);
    const after = await corpRow(tx, id);
    w.record({ type: "corp", id, action: "status", before, after, corpId: id });
    return after;
  });
  await audit(ctx, p, "corp.status_change", changed.id, `status=${status}`);
  return changed;
}

/** A filesystem-safe UTC timestamp: 20250131T120000123Z. */
function fileStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:.]/g, "");
}

function moveFile(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (err) {
    // A server directory on another filesystem cannot be renamed across: copy, then remove.
    if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
    copyFileSync(from, to);
    unlinkSync(from);
  }
}

/**
 * Deletes a corporation: its platform rows (memberships, enabled services, and through ON DELETE
 * CASCADE its workgroups with their members and grants, safe IP ranges and QR slugs), its
 * sessions, and its database, which is moved to DATA_DIR/deleted/<id>-<timestamp>.db rather than
 * erased, so an operator's mistake can be undone by hand. Once the row is gone no request can open
 * the database again (its path is no longer known); the handle is closed once the operations in
 * flight on it are done, and the file moved without an await after that.
 */
export async function deleteCorporation(ctx: AppContext, p: Principal, id: string): Promise<{ movedTo: string | null }> {
  const dbPath = await ctx.store.platform.write(async (tx, w) => {
    w.record({ type: "corp", id, action: "delete", before: await corpRow(tx, id), after: null, corpId: id });
    // PostgreSQL has no file: closeWhenIdle below deletes the corporation's rows instead.
    const path = ctx.tenants.fileOf(id);
    await tx.delete(corporations).where(eq(corporations.id, id)).run();
    await ctx.changes.publish(tx, w, CORPS_TOPIC, id);
    await ctx.changes.publish(tx, w, PERMISSIONS_TOPIC, "*");
    return path;
  });
  // Operations in flight on its database (reads and writes of requests that began before the
  // delete, writes queued) finish first; none can start now that its row is gone.
  await ctx.tenants.closeWhenIdle(id);
  const moved = dbPath === null ? { movedTo: null } : moveDatabase(ctx, id, dbPath);
  await ctx.sessions.revokeAllInCorp(id);
  await audit(ctx, p, "corp.delete", id);
  return moved;
}

function moveDatabase(ctx: AppContext, id: string, dbPath: string): { movedTo: string | null } {
  ctx.tenants.close(id);
  if (!existsSync(dbPath)) return { movedTo: null };
  const deletedDir = join(ctx.config.dataDir, "deleted");
  const target = join(deletedDir, `${id}-${fileStamp(ctx.now())}.db`);
  try {
    mkdirSync(deletedDir, { recursive: true });
    for (const suffix of ["", "-wal", "-shm"]) {
      if (existsSync(dbPath + suffix)) moveFile(dbPath + suffix, target + suffix);
    }
  } catch (err) {
    // The corporation is gone either way; its file stays where it was, still recoverable.
    ctx.logger.error("moving a deleted corporation's database failed", { corp_id: id, path: dbPath, error: String(err) });
    return { movedTo: null };
  }
  ctx.logger.info("corporation deleted; database moved", { corp_id: id, to: target });
  return { movedTo: target };
}

// ---- members -----------------------------------------------------------------------------------

export function listCorpUsers(ctx: AppContext, corpId: string, query: ListParams) {
  return ctx.store.platform.read(async (db) => {
    await corpRow(db, corpId);
    return listUsersAmong(db, memberIdsOf(db, corpId), query);
  });
}

/** Adds a member; adding one already there changes nothing. */
export async function addCorpUser(ctx: AppContext, p: Principal, corpId: string, userId: string): Promise<void> {
  await ctx.store.platform.write(async (tx, w) => {
    await corpRow(tx, corpId);
    if (!(await userExists(tx, userId))) throw notFound("User");
    const field = `members.${userId}`;
    w.record({ type: "corp", id: corpId, action: "member", before: { [field]: await isMember(tx, userId, corpId) }, after: { [field]: true }, corpId });
    await insertMember(tx, corpId, userId);
    await ctx.changes.publish(tx, w, PERMISSIONS_TOPIC, "*");
  });
  await audit(ctx, p, "corp.user_add", corpId, `user=${userId}`);
}

/** Removes a member, also from the corporation's workgroups, and ends their sessions working there. */
export async function removeCorpUser(ctx: AppContext, p: Principal, corpId: string, userId: string): Promise<void> {
  await ctx.store.platform.write(async (tx, w) => {
    await corpRow(tx, corpId);
    if (!(await userExists(tx, userId))) throw notFound("User");
    if (!(await removeMember(tx, corpId, userId))) throw notFound("Membership");
    w.record({ type: "corp", id: corpId, action: "member", before: { [`members.${userId}`]: true }, after: { [`members.${userId}`]: false }, corpId });
    await removeUserFromCorpWorkgroups(tx, corpId, userId);
    await ctx.changes.publish(tx, w, PERMISSIONS_TOPIC, "*");
  });
  await ctx.sessions.revokeUserInCorp(userId, corpId);
  await audit(ctx, p, "corp.user_remove", corpId, `user=${userId}`);
}

// ---- services ----------------------------------------------------------------------------------

/** Enables a service for the corporation; enabling one already enabled changes nothing. */
export async function addCorpService(ctx: AppContext, p: Principal, corpId: string, serviceId: string): Promise<void> {
  await ctx.store.platform.write(async (tx, w) => {
    await corpRow(tx, corpId);
    if (!(await serviceExists(tx, serviceId))) throw notFound("Service");
    const field = `services.${serviceId}`;
    w.record({ type: "corp", id: corpId, action: "service", before: { [field]: await serviceEnabled(tx, corpId, serviceId) }, after: { [field]: true }, corpId });
    await tx.insert(corpServices).values({ corp_id: corpId, service_id: serviceId }).onConflictDoNothing().run();
    await ctx.changes.publish(tx, w, PERMISSIONS_TOPIC, "*");
  });
  await audit(ctx, p, "corp.service_add", corpId, `service=${serviceId}`);
}

/** Disables a service; its grants to the corporation's workgroups (service and features) go too. */
export async function removeCorpService(ctx: AppContext, p: Principal, corpId: string, serviceId: string): Promise<void> {
  await ctx.store.platform.write(async (tx, w) => {
    await corpRow(tx, corpId);
    if (!(await serviceExists(tx, serviceId))) throw notFound("Service");
    const removed = await tx
      .delete(corpServices)
      .where(and(eq(corpServices.corp_id, corpId), eq(corpServices.service_id, serviceId)))
      .returning({ s: corpServices.service_id })
      .all();
    if (!removed.length) throw notFound("Service of the corporation");
    w.record({ type: "corp", id: corpId, action: "service", before: { [`services.${serviceId}`]: true }, after: { [`services.${serviceId}`]: false }, corpId });
    await revokeServiceInCorp(tx, corpId, serviceId, featureIdsOf(tx, serviceId));
    await ctx.changes.publish(tx, w, PERMISSIONS_TOPIC, "*");
  });
  await audit(ctx, p, "corp.service_remove", corpId, `service=${serviceId}`);
}

/** The services enabled for the corporation with their features and actions. */
export function corpTree(ctx: AppContext, corpId: string): Promise<CorpTree> {
  return ctx.store.platform.read(async (db) => {
    await corpRow(db, corpId);
    const enabled = await db.select({ id: corpServices.service_id }).from(corpServices).where(eq(corpServices.corp_id, corpId)).all();
    return { services: await catalogTree(db, enabled.map((s) => s.id)) };
  });
}

export function corpCheck(ctx: AppContext, authName: string): Promise<CorpCheck> {
  return ctx.store.platform.read(async (db) => {
    const row = await db.select({ status: corporations.status }).from(corporations).where(eq(corporations.auth_name, authName)).get();
    return { auth_name: authName, exists: !!row, status: row?.status ?? null, usable: row?.status === "ENABLED" };
  });
}

