// Corporations: the platform rows and their databases.
import { copyFileSync, existsSync, mkdirSync, renameSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { and, eq, inArray, sql } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import {
  corpMembers,
  corpServices,
  corporations,
  features,
  servers,
  services,
  users,
} from "../../db/platform/schema";
import { writeTx } from "../../db/sqlite";
import { newId } from "../../lib/ids";
import { listRows, type ListParams } from "../../lib/list";
import { conflict, invalid, notFound } from "../../lib/problem";
import { isValidTimeZone } from "../../lib/time";
import type { CorpRow } from "../../core/corp-cache";
import { actionsByFeature, featureIdsOf, getServiceRow } from "../catalog/service";
import { findUser } from "../user/service";
import { removeUserFromCorpWorkgroups, revokeServiceInCorp } from "../workgroup/service";
import { userView } from "../user/view";
import type { CORP_STATUSES, CorpCheck, CorpTree, Corporation, CorporationInput } from "./model";

export type CorpStatus = (typeof CORP_STATUSES)[number];

export function corpView(row: CorpRow): Corporation {
  return { ...row };
}

function checkTimezone(timezone: string): void {
  if (!isValidTimeZone(timezone)) throw invalid("timezone", "is not an IANA time zone name");
}

/**
 * Creates a corporation on its server (the built-in one by default) with every built-in service
 * enabled, then creates and migrates its database. `tx` work is synchronous; the database file is
 * made after the platform commit, and a failure there removes the platform row again.
 */
export function createCorporation(ctx: AppContext, input: CorporationInput, memberUserId?: string): CorpRow {
  const timezone = input.timezone ?? "UTC";
  checkTimezone(timezone);
  const serverId = input.server_id ?? ctx.builtinServerId;
  if (!ctx.platform.select({ id: servers.id }).from(servers).where(eq(servers.id, serverId)).get()) {
    throw invalid("server_id", "unknown server");
  }
  const id = newId();
  ctx.platform.transaction(
    (tx) => {
      if (tx.select({ id: corporations.id }).from(corporations).where(eq(corporations.auth_name, input.auth_name)).get()) {
        throw conflict(`auth_name '${input.auth_name}' is taken`);
      }
      tx.insert(corporations)
        .values({
          id,
          auth_name: input.auth_name,
          company_name: input.company_name,
          trade_name: input.trade_name ?? null,
          doc_identity: input.doc_identity ?? null,
          email: input.email ?? null,
          phone: input.phone ?? null,
          timezone,
          server_id: serverId,
        })
        .run();
      const builtins = tx.select({ id: services.id }).from(services).where(eq(services.builtin, true)).all();
      if (builtins.length) tx.insert(corpServices).values(builtins.map((s) => ({ corp_id: id, service_id: s.id }))).run();
      if (memberUserId) tx.insert(corpMembers).values({ corp_id: id, user_id: memberUserId }).run();
    },
    { behavior: "immediate" },
  );
  try {
    ctx.tenants.migrate(id);
  } catch (err) {
    ctx.tenants.close(id);
    ctx.platform.delete(corporations).where(eq(corporations.id, id)).run();
    // The server's directory went away or became unwritable since it was registered.
    ctx.logger.error("creating a corporation database failed", { corp_id: id, server_id: serverId, error: String(err) });
    throw conflict(`The corporation's database could not be created on its server: ${err instanceof Error ? err.message : String(err)}`);
  }
  ctx.permissions.invalidate();
  return ctx.corps.get(id)!;
}

/** The corporation or 404. Reads the database, not the cache: these are administrative reads. */
export function getCorp(ctx: AppContext, id: string): CorpRow {
  const row = ctx.platform.select().from(corporations).where(eq(corporations.id, id)).get();
  if (!row) throw notFound("Corporation");
  return row;
}

export function getCorpByAuthName(ctx: AppContext, authName: string): CorpRow {
  const row = ctx.platform.select().from(corporations).where(eq(corporations.auth_name, authName)).get();
  if (!row) throw notFound("Corporation");
  return row;
}

export function listCorps(ctx: AppContext, query: ListParams) {
  return listRows(
    ctx.platform,
    corporations,
    { q: [corporations.auth_name, corporations.company_name, corporations.trade_name] },
    query,
    (row: CorpRow) => corpView(row),
  );
}

/**
 * PUT replaces every writable field. server_id is immutable: left out it stays, another value
 * is 409 (moving a database between servers is an operator's file operation, not an API call).
 */
export function updateCorporation(ctx: AppContext, id: string, input: CorporationInput): CorpRow {
  const current = getCorp(ctx, id);
  const timezone = input.timezone ?? "UTC";
  checkTimezone(timezone);
  if (input.server_id && input.server_id !== current.server_id) throw conflict("server_id cannot change");
  writeTx(ctx.platform, (tx) => {
    const clash = tx
      .select({ id: corporations.id })
      .from(corporations)
      .where(and(eq(corporations.auth_name, input.auth_name), sql`${corporations.id} <> ${id}`))
      .get();
    if (clash) throw conflict(`auth_name '${input.auth_name}' is taken`);
    tx.update(corporations)
      .set({
        auth_name: input.auth_name,
        company_name: input.company_name,
        trade_name: input.trade_name ?? null,
        doc_identity: input.doc_identity ?? null,
        email: input.email ?? null,
        phone: input.phone ?? null,
        timezone,
      })
      .where(eq(corporations.id, id))
      .run();
  });
  ctx.corps.invalidate(id);
  return getCorp(ctx, id);
}

export function setCorpStatus(ctx: AppContext, id: string, status: CorpStatus): CorpRow {
  getCorp(ctx, id);
  ctx.platform.update(corporations).set({ status }).where(eq(corporations.id, id)).run();
  ctx.corps.invalidate(id);
  return getCorp(ctx, id);
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
 * Deletes a corporation: its platform rows (memberships, workgroups and their grants, enabled
 * services, safe IP ranges and QR slugs go by ON DELETE CASCADE), its sessions, and its database,
 * which is moved to DATA_DIR/deleted/<id>-<timestamp>.db rather than erased, so an operator's
 * mistake can be undone by hand. Everything here is synchronous: no other request can reopen the
 * database between closing its handle and moving the file.
 */
export function deleteCorporation(ctx: AppContext, id: string): { movedTo: string | null } {
  getCorp(ctx, id);
  const dbPath = ctx.tenants.pathOf(id);
  writeTx(ctx.platform, (tx) => {
    tx.delete(corporations).where(eq(corporations.id, id)).run();
  });
  ctx.sessions.revokeAllInCorp(id);
  ctx.corps.invalidate(id);
  ctx.permissions.invalidate();
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

/** The user ids that are members of a corporation, as a subquery. */
const membersOf = (corpId: string) => sql`(SELECT ${corpMembers.user_id} FROM ${corpMembers} WHERE ${corpMembers.corp_id} = ${corpId})`;

export function listCorpUsers(ctx: AppContext, corpId: string, query: ListParams) {
  getCorp(ctx, corpId);
  return listRows(
    ctx.platform,
    users,
    { q: [users.name, users.email, users.login], hidden: ["password_hash", "two_factor_secret", "two_factor_pending", "two_factor_last_step"] },
    query,
    (row: typeof users.$inferSelect) => userView(ctx.platform, row),
    [sql`${users.id} IN ${membersOf(corpId)}`],
  );
}

function requireUser(ctx: AppContext, userId: string): void {
  if (!findUser(ctx.platform, userId)) throw notFound("User");
}

/** Adds a member; adding one already there changes nothing. */
export function addCorpUser(ctx: AppContext, corpId: string, userId: string): void {
  getCorp(ctx, corpId);
  requireUser(ctx, userId);
  ctx.platform.insert(corpMembers).values({ corp_id: corpId, user_id: userId }).onConflictDoNothing().run();
  ctx.permissions.invalidate();
}

/** Removes a member, also from the corporation's workgroups, and ends their sessions working there. */
export function removeCorpUser(ctx: AppContext, corpId: string, userId: string): void {
  getCorp(ctx, corpId);
  requireUser(ctx, userId);
  writeTx(ctx.platform, (tx) => {
    const removed = tx
      .delete(corpMembers)
      .where(and(eq(corpMembers.corp_id, corpId), eq(corpMembers.user_id, userId)))
      .returning({ u: corpMembers.user_id })
      .all();
    if (!removed.length) throw notFound("Membership");
    removeUserFromCorpWorkgroups(ctx.platform, corpId, userId);
  });
  ctx.sessions.revokeUserInCorp(userId, corpId);
  ctx.permissions.invalidate();
}

/** The service must exist (404 "Service" otherwise). */
const requireService = (ctx: AppContext, serviceId: string): void => void getServiceRow(ctx.platform, serviceId);

/** Enables a service for the corporation; enabling one already enabled changes nothing. */
export function addCorpService(ctx: AppContext, corpId: string, serviceId: string): void {
  getCorp(ctx, corpId);
  requireService(ctx, serviceId);
  ctx.platform.insert(corpServices).values({ corp_id: corpId, service_id: serviceId }).onConflictDoNothing().run();
  ctx.permissions.invalidate();
}

/** Disables a service; its grants to the corporation's workgroups (service and features) go too. */
export function removeCorpService(ctx: AppContext, corpId: string, serviceId: string): void {
  getCorp(ctx, corpId);
  requireService(ctx, serviceId);
  writeTx(ctx.platform, (tx) => {
    const removed = tx
      .delete(corpServices)
      .where(and(eq(corpServices.corp_id, corpId), eq(corpServices.service_id, serviceId)))
      .returning({ s: corpServices.service_id })
      .all();
    if (!removed.length) throw notFound("Service of the corporation");
    revokeServiceInCorp(ctx.platform, corpId, serviceId, featureIdsOf(ctx.platform, serviceId));
  });
  ctx.permissions.invalidate();
}

/** The services enabled for the corporation with their features and actions. */
export function corpTree(ctx: AppContext, corpId: string): CorpTree {
  getCorp(ctx, corpId);
  const enabled = ctx.platform
    .select({ id: services.id, identifier: services.identifier, name: services.name })
    .from(corpServices)
    .innerJoin(services, eq(services.id, corpServices.service_id))
    .where(eq(corpServices.corp_id, corpId))
    .orderBy(services.identifier)
    .all();
  const feats = enabled.length
    ? ctx.platform
        .select({ id: features.id, service_id: features.service_id, name: features.name })
        .from(features)
        .where(inArray(features.service_id, enabled.map((s) => s.id)))
        .orderBy(features.name, features.id)
        .all()
    : [];
  const actions = actionsByFeature(ctx.platform, feats.map((f) => f.id));
  return {
    services: enabled.map((s) => ({
      ...s,
      features: feats.filter((f) => f.service_id === s.id).map((f) => ({ id: f.id, name: f.name, actions: actions.get(f.id) ?? [] })),
    })),
  };
}

export function corpCheck(ctx: AppContext, authName: string): CorpCheck {
  const row = ctx.platform
    .select({ status: corporations.status })
    .from(corporations)
    .where(eq(corporations.auth_name, authName))
    .get();
  return { auth_name: authName, exists: !!row, status: row?.status ?? null, usable: row?.status === "ENABLED" };
}
