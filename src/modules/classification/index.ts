// Classification rows of Core: flags that products carry and contracts are tagged with.
// Deleting one removes it from products and contract flags (ON DELETE CASCADE). Products show
// their classifications' names and contracts their flags' names, so a rename or a delete changes
// those records as GET returns them: each fires its *_AFTER_UPDATE in the same transaction.
import { eq } from "drizzle-orm";
import { Elysia, t, type Static } from "elysia";
import type { AppContext } from "../../core/context";
import type { TenantDb } from "../../db/sqlite";
import { classifications } from "../../db/tenant/schema";
import { created, noContent } from "../../lib/http";
import { listRows } from "../../lib/list";
import { conflict, notFound } from "../../lib/problem";
import { IdParams, ListOf, ListQuery, Opt, Uuid } from "../../lib/schemas";
import { nowIso } from "../../lib/time";
import { authGuard } from "../auth/guard";
import type { Principal } from "../../core/principal";
import { getContractView, touchContractsFlaggedAs } from "../contract/service";
import { findProduct, productView, touchProductsClassifiedAs } from "../product/service";
import { commit, type Db, type Tx } from "../registry-common";
import type { EventGroup } from "../../core/events";

export const ClassificationInput = t.Object({
  name: t.String({ pattern: "^[^/]{1,64}$" }),
  description: Opt(t.String({ maxLength: 500 })),
  color: Opt(t.String({ pattern: "^#[0-9A-Fa-f]{6}$" })),
});
type ClassificationInput = Static<typeof ClassificationInput>;

const NullableText = t.Union([t.String(), t.Null()]);
export const Classification = t.Object({ id: Uuid, name: t.String(), description: NullableText, color: NullableText, created_at: t.String(), updated_at: t.String() });
type ClassificationRow = typeof classifications.$inferSelect;

const view = (r: ClassificationRow) => ({ id: r.id, name: r.name, description: r.description, color: r.color, created_at: r.created_at, updated_at: r.updated_at });
const NameParams = t.Object({ name: t.String({ minLength: 1, maxLength: 64 }) });
const LIST = { q: [classifications.name] };

/** Ids of classification names, in the given order; the unknown ones are reported by index. */
export function classificationIds(db: Db, names: string[]): { ids: string[]; unknown: number[] } {
  const ids: string[] = [];
  const unknown: number[] = [];
  names.forEach((name, i) => {
    const row = db.select({ id: classifications.id }).from(classifications).where(eq(classifications.name, name)).get();
    if (row) ids.push(row.id);
    else unknown.push(i);
  });
  return { ids, unknown };
}

function find(db: Db, by: { id?: string; name?: string }): ClassificationRow {
  const row = by.id !== undefined
    ? db.select().from(classifications).where(eq(classifications.id, by.id)).get()
    : db.select().from(classifications).where(eq(classifications.name, by.name!)).get();
  if (!row) throw notFound("Classification");
  return row;
}

function checkName(db: Db, name: string, exceptId: string | null) {
  const other = db.select({ id: classifications.id }).from(classifications).where(eq(classifications.name, name)).get();
  if (other && other.id !== exceptId) throw conflict("A classification with this name already exists");
}

type Emit = (type: EventGroup, id: string, data: (tx: Tx) => unknown) => void;

/**
 * The products and contracts showing a classification get a new `updated_at` and one UPDATE
 * event each, carrying their view once the change is done (the events are built after it).
 * Call before the change: a delete's cascade removes the links that find them.
 */
function touchHolders(tx: Tx, emit: Emit, classificationId: string, timeZone: string): void {
  const at = nowIso();
  const productIds = touchProductsClassifiedAs(tx, classificationId, at);
  const contractIds = touchContractsFlaggedAs(tx, classificationId, at);
  for (const id of productIds) emit("PRODUCT_AFTER_UPDATE", id, (t) => productView(t, findProduct(t, id)!));
  for (const id of contractIds) emit("CONTRACT_AFTER_UPDATE", id, (t) => getContractView(t, id, timeZone));
}

function update(ctx: AppContext, db: TenantDb, principal: Principal, by: { id?: string; name?: string }, body: ClassificationInput) {
  return commit(ctx, db, principal.corpId, (tx, emit) => {
    const current = find(tx, by);
    checkName(tx, body.name, current.id);
    // Description and color are not part of any product's or contract's view.
    if (body.name !== current.name) touchHolders(tx, emit, current.id, principal.corp.timezone);
    return tx
      .update(classifications)
      .set({ name: body.name, description: body.description ?? null, color: body.color ?? null })
      .where(eq(classifications.id, current.id))
      .returning()
      .get();
  });
}

function remove(ctx: AppContext, db: TenantDb, principal: Principal, by: { id?: string; name?: string }) {
  commit(ctx, db, principal.corpId, (tx, emit) => {
    const row = find(tx, by);
    touchHolders(tx, emit, row.id, principal.corp.timezone);
    tx.delete(classifications).where(eq(classifications.id, row.id)).run();
  });
}

export function classificationModule(ctx: AppContext) {
  return new Elysia({ name: "classification", prefix: "/api", tags: ["Core"] })
    .use(authGuard(ctx))
    .get("/classification", ({ tenantDb, query }) => listRows(tenantDb, classifications, LIST, query, view), {
      auth: "platform.core",
      query: ListQuery,
      response: { 200: ListOf(Classification) },
      detail: { summary: "List classifications" },
    })
    .post(
      "/classification",
      ({ tenantDb, body, set }) => {
        checkName(tenantDb, body.name, null);
        const row = tenantDb.insert(classifications).values({ name: body.name, description: body.description ?? null, color: body.color ?? null }).returning().get();
        return created(set, "/api/classification", view(row));
      },
      { auth: "platform.core", body: ClassificationInput, response: { 200: Classification }, detail: { summary: "Create a classification" } },
    )
    .get("/classification/name/:name", ({ tenantDb, params }) => view(find(tenantDb, { name: params.name })), {
      auth: "platform.core",
      params: NameParams,
      response: { 200: Classification },
      detail: { summary: "Get a classification by name" },
    })
    .put("/classification/name/:name", ({ tenantDb, principal, params, body }) => view(update(ctx, tenantDb, principal, { name: params.name }, body)), {
      auth: "platform.core",
      params: NameParams,
      body: ClassificationInput,
      response: { 200: Classification },
      detail: { summary: "Update a classification by name (may rename)" },
    })
    .delete(
      "/classification/name/:name",
      ({ tenantDb, principal, params, set }) => {
        remove(ctx, tenantDb, principal, { name: params.name });
        noContent(set);
      },
      { auth: "platform.core", params: NameParams, detail: { summary: "Delete a classification by name (also from products and contract flags)" } },
    )
    .get("/classification/:id", ({ tenantDb, params }) => view(find(tenantDb, { id: params.id })), {
      auth: "platform.core",
      params: IdParams,
      response: { 200: Classification },
      detail: { summary: "Get a classification by id" },
    })
    .put("/classification/:id", ({ tenantDb, principal, params, body }) => view(update(ctx, tenantDb, principal, { id: params.id }, body)), {
      auth: "platform.core",
      params: IdParams,
      body: ClassificationInput,
      response: { 200: Classification },
      detail: { summary: "Update a classification by id" },
    })
    .delete(
      "/classification/:id",
      ({ tenantDb, principal, params, set }) => {
        remove(ctx, tenantDb, principal, { id: params.id });
        noContent(set);
      },
      { auth: "platform.core", params: IdParams, detail: { summary: "Delete a classification by id (also from products and contract flags)" } },
    );
}
