// Workgroups of a corporation: members, and the services and features granted to them. Every
// change here changes someone's permissions, so each one drops the permission cache after its
// COMMIT. The one permission query (routes.md, "Permission computation") is here too.
import { and, asc, eq, inArray, ne, sql, type SQLWrapper } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { PERMISSIONS_TOPIC, type PermissionRows } from "../../core/permissions";
import type { PlatformDb } from "../../db/sqlite";
import { actions, corpServices, features, services, workgroupFeatures, workgroupMembers, workgroupServices, workgroups } from "../../db/platform/schema";
import { conflict, notFound } from "../../lib/problem";
import { listRows, type ListParams } from "../../db/list";
import type { Principal } from "../../core/principal";
import { featureServiceId, menuFeatures, serviceExists } from "../catalog/service";
import { isMember, serviceEnabled } from "../membership/service";
import { findUser } from "../user/service";
import type { Workgroup, WorkgroupInput } from "./model";

export type WorkgroupRow = typeof workgroups.$inferSelect;

/** A user's permission in one corporation, as the grants of their workgroups give it. */
/** The permission query's two statements, prepared once per connection (a miss runs both). */
function permissionStatements(db: PlatformDb) {
  const user = sql.placeholder("user");
  const corp = sql.placeholder("corp");
  const admin = db
    .selectDistinct({ identifier: services.identifier })
    .from(workgroupMembers)
    .innerJoin(workgroups, and(eq(workgroups.id, workgroupMembers.workgroup_id), eq(workgroups.corp_id, corp)))
    .innerJoin(workgroupServices, eq(workgroupServices.workgroup_id, workgroups.id))
    .innerJoin(services, eq(services.id, workgroupServices.service_id))
    .innerJoin(corpServices, and(eq(corpServices.corp_id, corp), eq(corpServices.service_id, services.id)))
    .where(eq(workgroupMembers.user_id, user))
    .orderBy(asc(services.identifier))
    .prepare();
  // The one query of granted actions: `allow` and the per-service view both come from it.
  const allow = db
    .selectDistinct({ identifier: services.identifier, action: actions.action })
    .from(workgroupMembers)
    .innerJoin(workgroups, and(eq(workgroups.id, workgroupMembers.workgroup_id), eq(workgroups.corp_id, corp)))
    .innerJoin(workgroupFeatures, eq(workgroupFeatures.workgroup_id, workgroups.id))
    .innerJoin(features, eq(features.id, workgroupFeatures.feature_id))
    .innerJoin(services, eq(services.id, features.service_id))
    .innerJoin(actions, eq(actions.feature_id, features.id))
    .innerJoin(corpServices, and(eq(corpServices.corp_id, corp), eq(corpServices.service_id, services.id)))
    .where(eq(workgroupMembers.user_id, user))
    .orderBy(asc(actions.action), asc(services.identifier))
    .prepare();
  return { admin, allow };
}
const prepared = new WeakMap<PlatformDb, ReturnType<typeof permissionStatements>>();

/**
 * The permission query: the services granted to the user's workgroups in the corporation, and the
 * actions of the granted features; only services enabled for the corporation count.
 */
export async function loadPermissions(db: PlatformDb, userId: string, corpId: string): Promise<PermissionRows> {
  let stmts = prepared.get(db);
  if (!stmts) prepared.set(db, (stmts = permissionStatements(db)));
  const params = { user: userId, corp: corpId };
  const admin = (await stmts.admin.all(params)).map((r) => r.identifier);
  const rows = await stmts.allow.all(params);
  const allow: string[] = [];
  const byService = new Map<string, string[]>();
  // Ordered by action: `allow` is the distinct actions in SQL order, each service's list too.
  for (const r of rows) {
    if (allow[allow.length - 1] !== r.action) allow.push(r.action);
    const list = byService.get(r.identifier);
    if (list) list.push(r.action);
    else byService.set(r.identifier, [r.action]);
  }
  // Identifiers are ASCII (SERVICE_IDENTIFIER_PATTERN): JavaScript's order is SQLite's.
  const granted = new Map([...byService].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { admin, allow, granted };
}

/** The identifiers of the services enabled for a corporation, in order. */
export async function enabledServiceIds(db: PlatformDb, corpId: string): Promise<string[]> {
  const rows = await db
    .select({ identifier: services.identifier })
    .from(corpServices)
    .innerJoin(services, eq(services.id, corpServices.service_id))
    .where(eq(corpServices.corp_id, corpId))
    .orderBy(asc(services.identifier))
    .all();
  return rows.map((r) => r.identifier);
}

export async function workgroupView(db: PlatformDb, row: WorkgroupRow): Promise<Workgroup> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    corp_id: row.corp_id,
    user_ids: (await db.select({ id: workgroupMembers.user_id }).from(workgroupMembers).where(eq(workgroupMembers.workgroup_id, row.id)).orderBy(asc(workgroupMembers.user_id)).all()).map((r) => r.id),
    service_ids: (await db.select({ id: workgroupServices.service_id }).from(workgroupServices).where(eq(workgroupServices.workgroup_id, row.id)).orderBy(asc(workgroupServices.service_id)).all()).map((r) => r.id),
    feature_ids: (await db.select({ id: workgroupFeatures.feature_id }).from(workgroupFeatures).where(eq(workgroupFeatures.workgroup_id, row.id)).orderBy(asc(workgroupFeatures.feature_id)).all()).map((r) => r.id),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export async function findWorkgroup(db: PlatformDb, id: string): Promise<WorkgroupRow | undefined> {
  return await db.select().from(workgroups).where(eq(workgroups.id, id)).get();
}

/** The workgroup when it belongs to the working corporation (any for `*`); else 404. */
async function visibleWorkgroup(db: PlatformDb, p: Principal, id: string): Promise<WorkgroupRow> {
  const row = await findWorkgroup(db, id);
  if (!row || (row.corp_id !== p.corpId && !p.superAdmin)) throw notFound("Workgroup");
  return row;
}

async function assertNameFree(db: PlatformDb, corpId: string, name: string, exceptId?: string): Promise<void> {
  const cond = and(eq(workgroups.corp_id, corpId), eq(workgroups.name, name), exceptId ? ne(workgroups.id, exceptId) : undefined);
  if (await db.select({ id: workgroups.id }).from(workgroups).where(cond).get()) throw conflict(`A workgroup named '${name}' already exists`);
}

/** Who changed whose permissions: `target` names the workgroup and, for a link, what it links. */
function audit(ctx: AppContext, p: Principal, action: string, row: { id: string; corp_id: string }, link = ""): Promise<void> {
  return ctx.audit.record({ action, outcome: "success", actor_user_id: p.userId, corp_id: row.corp_id, target: `workgroup=${row.id}${link}`, ip: p.ip, request_id: p.requestId });
}

export function listWorkgroups(ctx: AppContext, corpId: string, query: ListParams) {
  return ctx.store.platform.read(async (db) => {
    // Rows first: a workgroup's view reads its grants, which listRows' synchronous view cannot.
    const page = await listRows(db, workgroups, { q: [workgroups.name] }, query, (row: WorkgroupRow) => row, [eq(workgroups.corp_id, corpId)]);
    const items: Workgroup[] = [];
    for (const row of page.items) items.push(await workgroupView(db, row));
    return { ...page, items };
  });
}

export function getWorkgroup(ctx: AppContext, p: Principal, id: string): Promise<Workgroup> {
  return ctx.store.platform.read(async (db) => workgroupView(db, await visibleWorkgroup(db, p, id)));
}

export async function createWorkgroup(ctx: AppContext, p: Principal, input: WorkgroupInput): Promise<Workgroup> {
  const corpId = p.corpId;
  const view = await ctx.store.platform.write(async (tx, w) => {
    await assertNameFree(tx, corpId, input.name);
    const row = await tx.insert(workgroups).values({ corp_id: corpId, name: input.name, description: input.description ?? null }).returning().get();
    const view = await workgroupView(tx, row);
    w.record({ type: "workgroup", id: row.id, action: "create", before: null, after: view, corpId });
    return view;
  });
  await audit(ctx, p, "workgroup.create", view);
  return view;
}

export async function updateWorkgroup(ctx: AppContext, p: Principal, id: string, input: WorkgroupInput): Promise<Workgroup> {
  const view = await ctx.store.platform.write(async (tx, w) => {
    const row = await visibleWorkgroup(tx, p, id);
    await assertNameFree(tx, row.corp_id, input.name, row.id);
    const updated = (await tx.update(workgroups).set({ name: input.name, description: input.description ?? null }).where(eq(workgroups.id, row.id)).returning().get())!;
    const view = await workgroupView(tx, updated);
    w.record({ type: "workgroup", id: row.id, action: "update", before: row, after: updated, corpId: row.corp_id });
    return view;
  });
  await audit(ctx, p, "workgroup.update", view);
  return view;
}

/**
 * One change of a visible workgroup, in one transaction: `change` runs on the workgroup (404
 * when the caller may not see it); the permission cache is dropped after the COMMIT, then the
 * audit log gets `verb` (its target the workgroup and `link`).
 */
async function changeWorkgroup(
  ctx: AppContext,
  p: Principal,
  id: string,
  action: string,
  verb: string,
  link: string,
  change: (tx: PlatformDb, row: WorkgroupRow) => Promise<void>,
): Promise<void> {
  const changed = await ctx.store.platform.write(async (tx, w) => {
    const row = await visibleWorkgroup(tx, p, id);
    // Its memberships and grants are part of its view: the history compares those.
    const before = await workgroupView(tx, row);
    await change(tx, row);
    const now = await findWorkgroup(tx, row.id);
    w.record({ type: "workgroup", id: row.id, action, before, after: now ? await workgroupView(tx, now) : null, corpId: row.corp_id });
    await ctx.changes.publish(tx, w, PERMISSIONS_TOPIC, "*");
    return row;
  });
  await audit(ctx, p, verb, changed, link);
}

/** Memberships and grants go with it (ON DELETE CASCADE). */
export function deleteWorkgroup(ctx: AppContext, p: Principal, id: string): Promise<void> {
  return changeWorkgroup(ctx, p, id, "delete", "workgroup.delete", "", async (tx, row) => {
    await tx.delete(workgroups).where(eq(workgroups.id, row.id)).run();
  });
}

export function addMember(ctx: AppContext, p: Principal, id: string, userId: string): Promise<void> {
  return changeWorkgroup(ctx, p, id, "member", "workgroup.member_add", ` user=${userId}`, async (tx, row) => {
    if (!(await findUser(tx, userId))) throw notFound("User");
    if (!(await isMember(tx, userId, row.corp_id))) throw conflict("The user is not a member of the workgroup's corporation");
    await tx.insert(workgroupMembers).values({ workgroup_id: row.id, user_id: userId }).onConflictDoNothing().run();
  });
}

export function removeMember(ctx: AppContext, p: Principal, id: string, userId: string): Promise<void> {
  return changeWorkgroup(ctx, p, id, "member", "workgroup.member_remove", ` user=${userId}`, async (tx, row) => {
    const gone = await tx.delete(workgroupMembers).where(and(eq(workgroupMembers.workgroup_id, row.id), eq(workgroupMembers.user_id, userId))).returning().all();
    if (gone.length === 0) throw notFound("Member");
  });
}

export function grantService(ctx: AppContext, p: Principal, id: string, serviceId: string): Promise<void> {
  return changeWorkgroup(ctx, p, id, "grant", "workgroup.service_grant", ` service=${serviceId}`, async (tx, row) => {
    if (!(await serviceExists(tx, serviceId))) throw notFound("Service");
    if (!(await serviceEnabled(tx, row.corp_id, serviceId))) throw conflict("The service is not enabled for the corporation");
    await tx.insert(workgroupServices).values({ workgroup_id: row.id, service_id: serviceId }).onConflictDoNothing().run();
  });
}

export function revokeService(ctx: AppContext, p: Principal, id: string, serviceId: string): Promise<void> {
  return changeWorkgroup(ctx, p, id, "grant", "workgroup.service_revoke", ` service=${serviceId}`, async (tx, row) => {
    const gone = await tx.delete(workgroupServices).where(and(eq(workgroupServices.workgroup_id, row.id), eq(workgroupServices.service_id, serviceId))).returning().all();
    if (gone.length === 0) throw notFound("Service grant");
  });
}

export function grantFeature(ctx: AppContext, p: Principal, id: string, featureId: string): Promise<void> {
  return changeWorkgroup(ctx, p, id, "grant", "workgroup.feature_grant", ` feature=${featureId}`, async (tx, row) => {
    const serviceId = await featureServiceId(tx, featureId);
    if (!serviceId) throw notFound("Feature");
    if (!(await serviceEnabled(tx, row.corp_id, serviceId))) throw conflict("The feature's service is not enabled for the corporation");
    await tx.insert(workgroupFeatures).values({ workgroup_id: row.id, feature_id: featureId }).onConflictDoNothing().run();
  });
}

export function revokeFeature(ctx: AppContext, p: Principal, id: string, featureId: string): Promise<void> {
  return changeWorkgroup(ctx, p, id, "grant", "workgroup.feature_revoke", ` feature=${featureId}`, async (tx, row) => {
    const gone = await tx.delete(workgroupFeatures).where(and(eq(workgroupFeatures.workgroup_id, row.id), eq(workgroupFeatures.feature_id, featureId))).returning().all();
    if (gone.length === 0) throw notFound("Feature grant");
  });
}

/** Grants features to a workgroup (in the caller's transaction); grants already there stay. */
/**
 * Grants a workgroup the features of a menu and of all its descendants (the catalog names them).
 * All or nothing: when a feature's service is not enabled for the workgroup's corporation, nothing
 * is granted (409).
 */
export async function assignMenuToWorkgroup(ctx: AppContext, p: Principal, menuId: string, workgroupId: string): Promise<Workgroup> {
  const assigned = await ctx.store.platform.write(async (tx, w) => {
    const feats = await menuFeatures(tx, menuId);
    const wg = await findWorkgroup(tx, workgroupId);
    if (!wg) throw notFound("Workgroup");
    const before = await workgroupView(tx, wg);
    if (feats.length) {
      const enabled = new Map<string, boolean>();
      for (const f of feats) {
        let on = enabled.get(f.service_id);
        if (on === undefined) enabled.set(f.service_id, (on = await serviceEnabled(tx, wg.corp_id, f.service_id)));
        if (!on) throw conflict(`The service '${f.identifier}' of feature '${f.name}' is not enabled for the workgroup's corporation`);
      }
      await grantFeatures(tx, workgroupId, feats.map((f) => f.id));
      await ctx.changes.publish(tx, w, PERMISSIONS_TOPIC, "*");
    }
    const after = await workgroupView(tx, (await findWorkgroup(tx, workgroupId))!);
    w.record({ type: "workgroup", id: workgroupId, action: "grant", before, after, corpId: wg.corp_id });
    return after;
  });
  await audit(ctx, p, "workgroup.menu_assign", assigned, ` menu=${menuId}`);
  return assigned;
}

async function grantFeatures(tx: PlatformDb, workgroupId: string, featureIds: string[]): Promise<void> {
  if (featureIds.length) await tx.insert(workgroupFeatures).values(featureIds.map((feature_id) => ({ workgroup_id: workgroupId, feature_id }))).onConflictDoNothing().run();
}

/** Takes a user out of every workgroup of a corporation (in the caller's transaction: the membership ends). */
export async function removeUserFromCorpWorkgroups(tx: PlatformDb, corpId: string, userId: string): Promise<void> {
  await tx.delete(workgroupMembers)
    .where(and(eq(workgroupMembers.user_id, userId), inArray(workgroupMembers.workgroup_id, corpWorkgroups(tx, corpId))))
    .run();
}

/**
 * Drops a service's grant, and the grants of its features (`featureIds`, a subquery of the
 * catalog's), from every workgroup of a corporation (in the caller's transaction: the service is disabled).
 */
export async function revokeServiceInCorp(tx: PlatformDb, corpId: string, serviceId: string, featureIds: SQLWrapper): Promise<void> {
  const ids = corpWorkgroups(tx, corpId);
  await tx.delete(workgroupServices)
    .where(and(eq(workgroupServices.service_id, serviceId), inArray(workgroupServices.workgroup_id, ids)))
    .run();
  await tx.delete(workgroupFeatures)
    .where(and(inArray(workgroupFeatures.feature_id, featureIds), inArray(workgroupFeatures.workgroup_id, ids)))
    .run();
}

const corpWorkgroups = (db: PlatformDb, corpId: string) => db.select({ id: workgroups.id }).from(workgroups).where(eq(workgroups.corp_id, corpId));
