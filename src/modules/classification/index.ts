// Classification rows of Core: flags that products carry and contracts are tagged with.
// Deleting one removes it from products and contract flags (ON DELETE CASCADE).
import { eq } from "drizzle-orm";
import { Elysia, t, type Static } from "elysia";
import type { AppContext } from "../../context";
import type { TenantDb } from "../../db/sqlite";
import { classifications } from "../../db/tenant/schema";
import { created, noContent } from "../../lib/http";
import { listRows } from "../../lib/list";
import { conflict, notFound } from "../../lib/problem";
import { IdParams, ListOf, ListQuery, Opt, Uuid } from "../../lib/schemas";
import { authGuard } from "../auth/guard";
import type { Db } from "../registry-common";

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

function find(db: TenantDb, by: { id?: string; name?: string }): ClassificationRow {
  const row = by.id !== undefined
    ? db.select().from(classifications).where(eq(classifications.id, by.id)).get()
    : db.select().from(classifications).where(eq(classifications.name, by.name!)).get();
  if (!row) throw notFound("Classification");
  return row;
}

function checkName(db: TenantDb, name: string, exceptId: string | null) {
  const other = db.select({ id: classifications.id }).from(classifications).where(eq(classifications.name, name)).get();
  if (other && other.id !== exceptId) throw conflict("A classification with this name already exists");
}

function update(db: TenantDb, current: ClassificationRow, body: ClassificationInput) {
  return db.transaction(
    (tx) => {
      checkName(tx as unknown as TenantDb, body.name, current.id);
      return tx
        .update(classifications)
        .set({ name: body.name, description: body.description ?? null, color: body.color ?? null })
        .where(eq(classifications.id, current.id))
        .returning()
        .get();
    },
    { behavior: "immediate" },
  );
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
    .put("/classification/name/:name", ({ tenantDb, params, body }) => view(update(tenantDb, find(tenantDb, { name: params.name }), body)), {
      auth: "platform.core",
      params: NameParams,
      body: ClassificationInput,
      response: { 200: Classification },
      detail: { summary: "Update a classification by name (may rename)" },
    })
    .delete(
      "/classification/name/:name",
      ({ tenantDb, params, set }) => {
        const row = find(tenantDb, { name: params.name });
        tenantDb.delete(classifications).where(eq(classifications.id, row.id)).run();
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
    .put("/classification/:id", ({ tenantDb, params, body }) => view(update(tenantDb, find(tenantDb, { id: params.id }), body)), {
      auth: "platform.core",
      params: IdParams,
      body: ClassificationInput,
      response: { 200: Classification },
      detail: { summary: "Update a classification by id" },
    })
    .delete(
      "/classification/:id",
      ({ tenantDb, params, set }) => {
        find(tenantDb, { id: params.id });
        tenantDb.delete(classifications).where(eq(classifications.id, params.id)).run();
        noContent(set);
      },
      { auth: "platform.core", params: IdParams, detail: { summary: "Delete a classification by id (also from products and contract flags)" } },
    );
}
