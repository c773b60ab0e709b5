// Workgroups of a corporation: members, and the services and features granted to them. Every
// change here changes someone's permissions, so each one drops the permission cache at once.
import { and, asc, eq, inArray, ne, type SQLWrapper } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import type { PlatformDb } from "../../db/sqlite";
import { corpServices, features, services, users, workgroupFeatures, workgroupMembers, workgroupServices, workgroups } from "../../db/platform/schema";
import { conflict, notFound } from "../../lib/problem";
import type { Principal } from "../../core/principal";
import { isMember } from "../auth/login";
import type { Workgroup, WorkgroupInput } from "./model";

export type WorkgroupRow = typeof workgroups.$inferSelect;
type PlatformTx = Parameters<Parameters<PlatformDb["transaction"]>[0]>[0];

export function workgroupView(ctx: AppContext, row: WorkgroupRow): Workgroup {
  const db = ctx.platform;
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    corp_id: row.corp_id,
    user_ids: db.select({ id: workgroupMembers.user_id }).from(workgroupMembers).where(eq(workgroupMembers.workgroup_id, row.id)).orderBy(asc(workgroupMembers.user_id)).all().map((r) => r.id),
    service_ids: db.select({ id: workgroupServices.service_id }).from(workgroupServices).where(eq(workgroupServices.workgroup_id, row.id)).orderBy(asc(workgroupServices.service_id)).all().map((r) => r.id),
    feature_ids: db.select({ id: workgroupFeatures.feature_id }).from(workgroupFeatures).where(eq(workgroupFeatures.workgroup_id, row.id)).orderBy(asc(workgroupFeatures.feature_id)).all().map((r) => r.id),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The workgroup when it belongs to the working corporation (any for `*`); else 404. */
export function visibleWorkgroup(ctx: AppContext, p: Principal, id: string): WorkgroupRow {
  const row = ctx.platform.select().from(workgroups).where(eq(workgroups.id, id)).get();
  if (!row || (row.corp_id !== p.corpId && !p.superAdmin)) throw notFound("Workgroup");
  return row;
}

function assertNameFree(ctx: AppContext, corpId: string, name: string, exceptId?: string): void {
  const cond = and(eq(workgroups.corp_id, corpId), eq(workgroups.name, name), exceptId ? ne(workgroups.id, exceptId) : undefined);
  if (ctx.platform.select({ id: workgroups.id }).from(workgroups).where(cond).get()) throw conflict(`A workgroup named '${name}' already exists`);
}

export function createWorkgroup(ctx: AppContext, corpId: string, input: WorkgroupInput): WorkgroupRow {
  assertNameFree(ctx, corpId, input.name);
  return ctx.platform.insert(workgroups).values({ corp_id: corpId, name: input.name, description: input.description ?? null }).returning().get();
}

export function updateWorkgroup(ctx: AppContext, row: WorkgroupRow, input: WorkgroupInput): WorkgroupRow {
  assertNameFree(ctx, row.corp_id, input.name, row.id);
  return ctx.platform.update(workgroups).set({ name: input.name, description: input.description ?? null }).where(eq(workgroups.id, row.id)).returning().get()!;
}

export function deleteWorkgroup(ctx: AppContext, row: WorkgroupRow): void {
  ctx.platform.delete(workgroups).where(eq(workgroups.id, row.id)).run();
  ctx.permissions.invalidate();
}

function serviceEnabled(ctx: AppContext, corpId: string, serviceId: string): boolean {
  return !!ctx.platform
    .select({ s: corpServices.service_id })
    .from(corpServices)
    .where(and(eq(corpServices.corp_id, corpId), eq(corpServices.service_id, serviceId)))
    .get();
}

export function addMember(ctx: AppContext, row: WorkgroupRow, userId: string): void {
  if (!ctx.platform.select({ id: users.id }).from(users).where(eq(users.id, userId)).get()) throw notFound("User");
  if (!isMember(ctx, userId, row.corp_id)) throw conflict("The user is not a member of the workgroup's corporation");
  ctx.platform.insert(workgroupMembers).values({ workgroup_id: row.id, user_id: userId }).onConflictDoNothing().run();
  ctx.permissions.invalidate();
}

export function removeMember(ctx: AppContext, row: WorkgroupRow, userId: string): void {
  const gone = ctx.platform.delete(workgroupMembers).where(and(eq(workgroupMembers.workgroup_id, row.id), eq(workgroupMembers.user_id, userId))).returning().all();
  if (gone.length === 0) throw notFound("Member");
  ctx.permissions.invalidate();
}

export function grantService(ctx: AppContext, row: WorkgroupRow, serviceId: string): void {
  if (!ctx.platform.select({ id: services.id }).from(services).where(eq(services.id, serviceId)).get()) throw notFound("Service");
  if (!serviceEnabled(ctx, row.corp_id, serviceId)) throw conflict("The service is not enabled for the corporation");
  ctx.platform.insert(workgroupServices).values({ workgroup_id: row.id, service_id: serviceId }).onConflictDoNothing().run();
  ctx.permissions.invalidate();
}

export function revokeService(ctx: AppContext, row: WorkgroupRow, serviceId: string): void {
  const gone = ctx.platform.delete(workgroupServices).where(and(eq(workgroupServices.workgroup_id, row.id), eq(workgroupServices.service_id, serviceId))).returning().all();
  if (gone.length === 0) throw notFound("Service grant");
  ctx.permissions.invalidate();
}

export function grantFeature(ctx: AppContext, row: WorkgroupRow, featureId: string): void {
  const feature = ctx.platform.select({ service_id: features.service_id }).from(features).where(eq(features.id, featureId)).get();
  if (!feature) throw notFound("Feature");
  if (!serviceEnabled(ctx, row.corp_id, feature.service_id)) throw conflict("The feature's service is not enabled for the corporation");
  ctx.platform.insert(workgroupFeatures).values({ workgroup_id: row.id, feature_id: featureId }).onConflictDoNothing().run();
  ctx.permissions.invalidate();
}

export function revokeFeature(ctx: AppContext, row: WorkgroupRow, featureId: string): void {
  const gone = ctx.platform.delete(workgroupFeatures).where(and(eq(workgroupFeatures.workgroup_id, row.id), eq(workgroupFeatures.feature_id, featureId))).returning().all();
  if (gone.length === 0) throw notFound("Feature grant");
  ctx.permissions.invalidate();
}

/** Takes a user out of every workgroup of a corporation (in the caller's transaction: the membership ends). */
export function removeUserFromCorpWorkgroups(tx: PlatformTx, corpId: string, userId: string): void {
  tx.delete(workgroupMembers)
    .where(and(eq(workgroupMembers.user_id, userId), inArray(workgroupMembers.workgroup_id, corpWorkgroups(tx, corpId))))
    .run();
}

/**
 * Drops a service's grant, and the grants of its features (`featureIds`, a subquery of the
 * catalog's), from every workgroup of a corporation (in the caller's transaction: the service is disabled).
 */
export function revokeServiceInCorp(tx: PlatformTx, corpId: string, serviceId: string, featureIds: SQLWrapper): void {
  const ids = corpWorkgroups(tx, corpId);
  tx.delete(workgroupServices)
    .where(and(eq(workgroupServices.service_id, serviceId), inArray(workgroupServices.workgroup_id, ids)))
    .run();
  tx.delete(workgroupFeatures)
    .where(and(inArray(workgroupFeatures.feature_id, featureIds), inArray(workgroupFeatures.workgroup_id, ids)))
    .run();
}

const corpWorkgroups = (db: PlatformTx, corpId: string) => db.select({ id: workgroups.id }).from(workgroups).where(eq(workgroups.corp_id, corpId));
