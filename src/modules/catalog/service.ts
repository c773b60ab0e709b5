// The platform catalog: services, their features and the actions that make up a feature, and the
// application menu built over them. Every change here can change somebody's permission, so each
// one drops the permission cache after its COMMIT.
import { and, asc, eq, inArray } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { actions, features, menus, services } from "../../db/platform/schema";
import type { PlatformDb } from "../../db/sqlite";
import type { WriteScope } from "../../core/store";
import { newId } from "../../lib/ids";
import { listRows, type ListParams } from "../../db/list";
import { conflict, invalid, notFound } from "../../lib/problem";
import { PERMISSIONS_TOPIC, type PermissionSets } from "../../core/permissions";
import type { Action, ActionInput, Feature, FeatureInput, FeatureUpload, Menu, MenuInput, MenuNode, Service, ServiceInput } from "./model";

type ServiceRow = typeof services.$inferSelect;
type FeatureRow = typeof features.$inferSelect;
type MenuRow = typeof menus.$inferSelect;

export const serviceView = (row: ServiceRow): Service => ({ ...row });
export const actionView = (row: typeof actions.$inferSelect): Action => ({ ...row });
export const menuView = (row: MenuRow): Menu => ({ ...row });

/** The actions of many features at once, each list in creation order. */
export async function actionsByFeature(db: PlatformDb, featureIds: string[]): Promise<Map<string, Action[]>> {
  const out = new Map<string, Action[]>();
  if (!featureIds.length) return out;
  const rows = await db.select().from(actions).where(inArray(actions.feature_id, featureIds)).orderBy(asc(actions.id)).all();
  for (const r of rows) {
    let list = out.get(r.feature_id);
    if (!list) out.set(r.feature_id, (list = []));
    list.push(actionView(r));
  }
  return out;
}

async function featureViews(db: PlatformDb, rows: FeatureRow[]): Promise<Feature[]> {
  const acts = await actionsByFeature(db, rows.map((r) => r.id));
  return rows.map((r) => ({ ...r, actions: acts.get(r.id) ?? [] }));
}

/** Every node drops its permission sets once the write has committed. */
const dropPermissions = (ctx: AppContext, tx: PlatformDb, w: WriteScope) => ctx.changes.publish(tx, w, PERMISSIONS_TOPIC, "*");

// ---- services ----------------------------------------------------------------------------------

/** The service row; 404 "Service" when there is none. */
export async function getServiceRow(db: PlatformDb, id: string): Promise<ServiceRow> {
  const row = await db.select().from(services).where(eq(services.id, id)).get();
  if (!row) throw notFound("Service");
  return row;
}

export async function serviceExists(db: PlatformDb, id: string): Promise<boolean> {
  return !!(await db.select({ id: services.id }).from(services).where(eq(services.id, id)).get());
}

/** The service a feature belongs to; undefined when the feature does not exist. */
export async function featureServiceId(db: PlatformDb, featureId: string): Promise<string | undefined> {
  return (await db.select({ service_id: features.service_id }).from(features).where(eq(features.id, featureId)).get())?.service_id;
}

/** The built-in services' ids (a new corporation starts with them enabled). */
export async function builtinServiceIds(db: PlatformDb): Promise<string[]> {
  return (await db.select({ id: services.id }).from(services).where(eq(services.builtin, true)).all()).map((r) => r.id);
}

/** Id, identifier and name of the given services, by identifier (a corporation's service tree). */
export async function serviceSummaries(db: PlatformDb, ids: string[]): Promise<{ id: string; identifier: string; name: string }[]> {
  if (!ids.length) return [];
  return await db.select({ id: services.id, identifier: services.identifier, name: services.name }).from(services).where(inArray(services.id, ids)).orderBy(asc(services.identifier)).all();
}

/** Id, service and name of the features of the given services, by name then id. */
export async function featureSummaries(db: PlatformDb, serviceIds: string[]): Promise<{ id: string; service_id: string; name: string }[]> {
  if (!serviceIds.length) return [];
  return await db
    .select({ id: features.id, service_id: features.service_id, name: features.name })
    .from(features)
    .where(inArray(features.service_id, serviceIds))
    .orderBy(asc(features.name), asc(features.id))
    .all();
}

export function listServices(ctx: AppContext, query: ListParams) {
  return ctx.store.platform.read((db) => listRows(db, services, { q: [services.identifier, services.name] }, query, serviceView));
}

async function featuresOfService(db: PlatformDb, serviceId: string): Promise<Feature[]> {
  const rows = await db.select().from(features).where(eq(features.service_id, serviceId)).orderBy(asc(features.id)).all();
  return featureViews(db, rows);
}

/** The ids of a service's features, as a subquery (a disabled service's grants go with them). */
export function featureIdsOf(db: PlatformDb, serviceId: string) {
  return db.select({ id: features.id }).from(features).where(eq(features.service_id, serviceId));
}

export function getService(ctx: AppContext, id: string): Promise<Service & { features: Feature[] }> {
  return ctx.store.platform.read(async (db) => ({ ...serviceView(await getServiceRow(db, id)), features: await featuresOfService(db, id) }));
}

async function identifierTaken(tx: PlatformDb, identifier: string, exceptId?: string): Promise<boolean> {
  const row = await tx.select({ id: services.id }).from(services).where(eq(services.identifier, identifier)).get();
  return !!row && row.id !== exceptId;
}

export function createService(ctx: AppContext, input: ServiceInput): Promise<Service> {
  return ctx.store.platform.write(async (tx, w) => {
    if (await identifierTaken(tx, input.identifier)) throw conflict(`identifier '${input.identifier}' is taken`);
    const id = newId();
    await tx.insert(services).values({ id, identifier: input.identifier, name: input.name, description: input.description ?? null }).run();
    const row = await getServiceRow(tx, id);
    w.record({ type: "service", id, action: "create", before: null, after: row });
    return serviceView(row);
  });
}

export function updateService(ctx: AppContext, id: string, input: ServiceInput): Promise<Service> {
  return ctx.store.platform.write(async (tx, w) => {
    const current = await getServiceRow(tx, id);
    if (current.builtin && input.identifier !== current.identifier) throw conflict("A built-in service keeps its identifier");
    if (await identifierTaken(tx, input.identifier, id)) throw conflict(`identifier '${input.identifier}' is taken`);
    await tx.update(services).set({ identifier: input.identifier, name: input.name, description: input.description ?? null }).where(eq(services.id, id)).run();
    // The identifier is what `admin` lists hold.
    await dropPermissions(ctx, tx, w);
    const row = await getServiceRow(tx, id);
    w.record({ type: "service", id, action: "update", before: current, after: row });
    return serviceView(row);
  });
}

/** Features, actions, grants and corporations' enablement go with it (ON DELETE CASCADE). */
export function deleteService(ctx: AppContext, id: string): Promise<void> {
  return ctx.store.platform.write(async (tx, w) => {
    const row = await getServiceRow(tx, id);
    if (row.builtin) throw conflict("A built-in service cannot be deleted");
    await tx.delete(services).where(eq(services.id, id)).run();
    w.record({ type: "service", id, action: "delete", before: row, after: null });
    await dropPermissions(ctx, tx, w);
  });
}

/**
 * Upserts the service's features by name and their actions by action string, in one
 * transaction; nothing is removed. A description or action name left out keeps its stored value.
 */
export function uploadFeatures(ctx: AppContext, serviceId: string, upload: FeatureUpload): Promise<Feature[]> {
  return ctx.store.platform.write(async (tx, w) => {
    await getServiceRow(tx, serviceId);
    for (const f of upload.features) {
      let feature = await tx
        .select({ id: features.id })
        .from(features)
        .where(and(eq(features.service_id, serviceId), eq(features.name, f.name)))
        .get();
      const before = feature ? await featureSnapshot(tx, feature.id) : null;
      if (!feature) {
        feature = { id: newId() };
        await tx.insert(features).values({ id: feature.id, service_id: serviceId, name: f.name, description: f.description ?? null }).run();
      } else if (f.description !== undefined) {
        await tx.update(features).set({ description: f.description }).where(eq(features.id, feature.id)).run();
      }
      for (const a of f.actions) {
        const existing = await tx
          .select({ id: actions.id })
          .from(actions)
          .where(and(eq(actions.feature_id, feature.id), eq(actions.action, a.action)))
          .get();
        if (!existing) await tx.insert(actions).values({ feature_id: feature.id, action: a.action, name: a.name ?? null }).run();
        else if (a.name !== undefined) await tx.update(actions).set({ name: a.name }).where(eq(actions.id, existing.id)).run();
      }
      w.record({ type: "feature", id: feature.id, action: before ? "update" : "create", before, after: await featureSnapshot(tx, feature.id) });
    }
    await dropPermissions(ctx, tx, w);
    return featuresOfService(tx, serviceId);
  });
}

// ---- features ----------------------------------------------------------------------------------

async function getFeatureRow(db: PlatformDb, id: string): Promise<FeatureRow> {
  const row = await db.select().from(features).where(eq(features.id, id)).get();
  if (!row) throw notFound("Feature");
  return row;
}

const featureOf = async (db: PlatformDb, id: string): Promise<Feature> => (await featureViews(db, [await getFeatureRow(db, id)]))[0];

/** The feature with its actions as the history compares it (core/history.ts); null when absent. */
async function featureSnapshot(db: PlatformDb, id: string): Promise<Feature | null> {
  const row = await db.select().from(features).where(eq(features.id, id)).get();
  return row ? (await featureViews(db, [row]))[0] : null;
}

export function getFeature(ctx: AppContext, id: string): Promise<Feature> {
  return ctx.store.platform.read((db) => featureOf(db, id));
}

export function listFeatures(ctx: AppContext, query: ListParams) {
  return ctx.store.platform.read(async (db) => {
    const page = await listRows(db, features, { q: [features.name] }, query, (r: FeatureRow) => r);
    return { ...page, items: await featureViews(db, page.items) };
  });
}

async function checkFeatureInput(tx: PlatformDb, input: FeatureInput, exceptId?: string): Promise<void> {
  if (!(await serviceExists(tx, input.service_id))) throw invalid("service_id", "unknown service");
  const clash = await tx
    .select({ id: features.id })
    .from(features)
    .where(and(eq(features.service_id, input.service_id), eq(features.name, input.name)))
    .get();
  if (clash && clash.id !== exceptId) throw conflict(`The service already has a feature named '${input.name}'`);
}

export function createFeature(ctx: AppContext, input: FeatureInput): Promise<Feature> {
  return ctx.store.platform.write(async (tx, w) => {
    await checkFeatureInput(tx, input);
    const id = newId();
    await tx.insert(features).values({ id, service_id: input.service_id, name: input.name, description: input.description ?? null }).run();
    const view = await featureOf(tx, id);
    w.record({ type: "feature", id, action: "create", before: null, after: view });
    return view;
  });
}

export function updateFeature(ctx: AppContext, id: string, input: FeatureInput): Promise<Feature> {
  return ctx.store.platform.write(async (tx, w) => {
    const before = await featureOf(tx, id);
    await checkFeatureInput(tx, input, id);
    await tx.update(features).set({ service_id: input.service_id, name: input.name, description: input.description ?? null }).where(eq(features.id, id)).run();
    // Moving a feature to another service changes which corporations it counts in.
    await dropPermissions(ctx, tx, w);
    const after = await featureOf(tx, id);
    w.record({ type: "feature", id, action: "update", before, after });
    return after;
  });
}

/** Actions and grants go with it; menus pointing at it keep going without a feature. */
export function deleteFeature(ctx: AppContext, id: string): Promise<void> {
  return ctx.store.platform.write(async (tx, w) => {
    const before = await featureOf(tx, id);
    await tx.delete(features).where(eq(features.id, id)).run();
    w.record({ type: "feature", id, action: "delete", before, after: null });
    await dropPermissions(ctx, tx, w);
  });
}

export function addAction(ctx: AppContext, featureId: string, input: ActionInput): Promise<Feature> {
  return ctx.store.platform.write(async (tx, w) => {
    const before = await featureOf(tx, featureId);
    const clash = await tx
      .select({ id: actions.id })
      .from(actions)
      .where(and(eq(actions.feature_id, featureId), eq(actions.action, input.action)))
      .get();
    if (clash) throw conflict(`The feature already has the action '${input.action}'`);
    await tx.insert(actions).values({ feature_id: featureId, action: input.action, name: input.name ?? null }).run();
    await dropPermissions(ctx, tx, w);
    const after = await featureOf(tx, featureId);
    w.record({ type: "feature", id: featureId, action: "actions", before, after });
    return after;
  });
}

export function removeAction(ctx: AppContext, featureId: string, actionId: string): Promise<void> {
  return ctx.store.platform.write(async (tx, w) => {
    const before = await featureOf(tx, featureId);
    const removed = await tx
      .delete(actions)
      .where(and(eq(actions.id, actionId), eq(actions.feature_id, featureId)))
      .returning({ id: actions.id })
      .all();
    if (!removed.length) throw notFound("Action");
    w.record({ type: "feature", id: featureId, action: "actions", before, after: await featureOf(tx, featureId) });
    await dropPermissions(ctx, tx, w);
  });
}

// ---- menus -------------------------------------------------------------------------------------

async function getMenuRow(db: PlatformDb, id: string): Promise<MenuRow> {
  const row = await db.select().from(menus).where(eq(menus.id, id)).get();
  if (!row) throw notFound("Menu");
  return row;
}

/**
 * Creates a menu (no id) or replaces one (id given: every field as sent, left out null or 0).
 * A parent must exist and must not be the menu itself or one of its descendants.
 */
export function saveMenu(ctx: AppContext, input: MenuInput): Promise<{ menu: Menu; created: boolean }> {
  const id = input.id ?? newId();
  const created = !input.id;
  return ctx.store.platform.write(async (tx, w) => {
    const before = created ? null : ((await tx.select().from(menus).where(eq(menus.id, id)).get()) ?? null);
    if (!created && !before) throw notFound("Menu");
    const parentId = input.parent_id ?? null;
    if (parentId) {
      const parents = new Map((await tx.select({ id: menus.id, parent_id: menus.parent_id }).from(menus).all()).map((m) => [m.id, m.parent_id]));
      if (!parents.has(parentId)) throw invalid("parent_id", "unknown menu");
      // Walk up from the new parent: meeting the menu itself means the change would close a loop.
      for (let at: string | null | undefined = parentId, steps = 0; at; at = parents.get(at), steps++) {
        if (at === id || steps > parents.size) throw invalid("parent_id", "would make the menu its own ancestor");
      }
    }
    if (input.feature_id && !(await tx.select({ id: features.id }).from(features).where(eq(features.id, input.feature_id)).get())) {
      throw invalid("feature_id", "unknown feature");
    }
    const values = {
      parent_id: parentId,
      name: input.name,
      icon: input.icon ?? null,
      url: input.url ?? null,
      position: input.position ?? 0,
      feature_id: input.feature_id ?? null,
    };
    if (created) await tx.insert(menus).values({ id, ...values }).run();
    else await tx.update(menus).set(values).where(eq(menus.id, id)).run();
    const row = await getMenuRow(tx, id);
    w.record({ type: "menu", id, action: created ? "create" : "update", before, after: row });
    return { menu: menuView(row), created };
  });
}

/** Does the caller's permission cover every action of the feature? (the menu's `allowed`) */
function covers(p: PermissionSets, serviceIdentifier: string | null, acts: Action[]): boolean {
  if (p.admin.has("*") || p.allow.has("*")) return true;
  if (serviceIdentifier && p.admin.has(serviceIdentifier)) return true;
  return acts.every((a) => p.allow.has(a.action));
}

/** The whole menu forest, siblings by position, each node with its feature's actions and `allowed`. */
export function menuTree(ctx: AppContext, permission: PermissionSets): Promise<MenuNode[]> {
  return ctx.store.platform.read(async (db) => {
    const rows = await db.select().from(menus).orderBy(asc(menus.position), asc(menus.id)).all();
    const featureIds = [...new Set(rows.map((r) => r.feature_id).filter((f): f is string => !!f))];
    const acts = await actionsByFeature(db, featureIds);
    const serviceOf = new Map(
      featureIds.length
        ? (
            await db
              .select({ id: features.id, identifier: services.identifier })
              .from(features)
              .innerJoin(services, eq(services.id, features.service_id))
              .where(inArray(features.id, featureIds))
              .all()
          ).map((r) => [r.id, r.identifier])
        : [],
    );
    const nodes = new Map<string, MenuNode>();
    for (const r of rows) {
      const a = r.feature_id ? acts.get(r.feature_id) ?? [] : [];
      const allowed = r.feature_id ? covers(permission, serviceOf.get(r.feature_id) ?? null, a) : true;
      nodes.set(r.id, { ...menuView(r), actions: a, allowed, children: [] });
    }
    const roots: MenuNode[] = [];
    for (const r of rows) {
      const node = nodes.get(r.id)!;
      const parent = r.parent_id ? nodes.get(r.parent_id) : undefined;
      if (parent) parent.children.push(node);
      else roots.push(node);
    }
    return roots;
  });
}

/**
 * The features of a menu and of all its descendants, each with its service (404 "Menu" when the
 * menu is not there): what assigning the menu to a workgroup grants (workgroup/service.ts).
 */
export async function menuFeatures(db: PlatformDb, menuId: string): Promise<{ id: string; name: string; service_id: string; identifier: string }[]> {
  await getMenuRow(db, menuId);
  const all = await db.select({ id: menus.id, parent_id: menus.parent_id, feature_id: menus.feature_id }).from(menus).all();
  const children = new Map<string, string[]>();
  for (const m of all) if (m.parent_id) children.set(m.parent_id, [...(children.get(m.parent_id) ?? []), m.id]);
  const byId = new Map(all.map((m) => [m.id, m]));
  const featureIds = new Set<string>();
  const stack = [menuId];
  const seen = new Set<string>();
  while (stack.length) {
    const at = stack.pop()!;
    if (seen.has(at)) continue;
    seen.add(at);
    const f = byId.get(at)?.feature_id;
    if (f) featureIds.add(f);
    stack.push(...(children.get(at) ?? []));
  }
  if (!featureIds.size) return [];
  return db
    .select({ id: features.id, name: features.name, service_id: features.service_id, identifier: services.identifier })
    .from(features)
    .innerJoin(services, eq(services.id, features.service_id))
    .where(inArray(features.id, [...featureIds]))
    .all();
}
