// The classifications table. Products show their classifications' names and contracts their
// flags' names, so a rename or a delete changes those records as GET returns them: each gets a new
// `updated_at` (through its owner's service), fires its *_AFTER_UPDATE and gets its Change in the history,
// in the same transaction.
// Deleting a classification removes it from products and contract flags (ON DELETE CASCADE).
import { eq } from "drizzle-orm";
import type { ClassificationHolders } from "../../core/context";
import type { TenantDoor, TenantWriteScope } from "../../core/store";
import type { TenantDb } from "../../db/sqlite";
import { classifications } from "../../db/tenant/schema";
import { listRows, type ListParams } from "../../db/list";
import { conflict, notFound } from "../../lib/problem";
import { clientOf } from "../../db/rows";
import type { Classification, ClassificationInput } from "./model";

type ClassificationRow = typeof classifications.$inferSelect;

const view = (r: ClassificationRow): Classification => ({ id: r.id, name: r.name, description: r.description, color: r.color, created_at: r.created_at, updated_at: r.updated_at });
const LIST = { q: [classifications.name] };

/** Ids of classification names, in the given order; the unknown ones are reported by index. */
export async function classificationIds(db: TenantDb, names: string[]): Promise<{ ids: string[]; unknown: number[] }> {
  const ids: string[] = [];
  const unknown: number[] = [];
  for (const [i, name] of names.entries()) {
    const row = await db.select({ id: classifications.id }).from(classifications).where(eq(classifications.name, name)).get();
    if (row) ids.push(row.id);
    else unknown.push(i);
  }
  return { ids, unknown };
}

/** The names of these classifications, sorted (SQLite's BINARY order), in one statement. */
export async function classificationNames(db: TenantDb, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  return (
    await clientOf(db)
      .query<{ name: string }, [string]>("SELECT name FROM classifications WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY name")
      .all(JSON.stringify(ids))
  ).map((r) => r.name);
}

async function find(db: TenantDb, by: { id?: string; name?: string }): Promise<ClassificationRow> {
  const row = by.id !== undefined
    ? await db.select().from(classifications).where(eq(classifications.id, by.id)).get()
    : await db.select().from(classifications).where(eq(classifications.name, by.name!)).get();
  if (!row) throw notFound("Classification");
  return row;
}

async function checkName(db: TenantDb, name: string, exceptId: string | null) {
  const other = await db.select({ id: classifications.id }).from(classifications).where(eq(classifications.name, name)).get();
  if (other && other.id !== exceptId) throw conflict("A classification with this name already exists");
}

function listClassificationsIn(db: TenantDb, query: ListParams) {
  return listRows(db, classifications, LIST, query, view);
}

async function showClassificationIn(db: TenantDb, by: { id?: string; name?: string }): Promise<Classification> {
  return view(await find(db, by));
}

/** Creates a classification (no event: classifications have none). */
async function createClassificationIn(tx: TenantDb, w: TenantWriteScope, body: ClassificationInput): Promise<Classification> {
  await checkName(tx, body.name, null);
  const row = await tx.insert(classifications).values({ name: body.name, description: body.description ?? null, color: body.color ?? null }).returning().get();
  w.record({ type: "classification", id: row.id, action: "create", before: null, after: row });
  return view(row);
}

/**
 * The products and contracts showing a classification get a new `updated_at` and one UPDATE
 * event each, carrying their view once the change is done (the events are built after it).
 * Call before the change: a delete's cascade removes the links that find them.
 */
async function touchHolders(tx: TenantDb, w: TenantWriteScope, holders: ClassificationHolders[], classificationId: string, timeZone: string): Promise<() => Promise<void>> {
  const steps: (() => Promise<void>)[] = [];
  for (const holder of holders) steps.push(await holder(tx, w, classificationId, timeZone));
  // Once the rename or delete is done: each holder's Change, as its GET shows it (one per record
  // whose view changed, like the events).
  return async () => {
    for (const step of steps) await step();
  };
}

async function updateClassificationIn(tx: TenantDb, w: TenantWriteScope, holders: ClassificationHolders[], by: { id?: string; name?: string }, body: ClassificationInput, timeZone: string): Promise<Classification> {
  const current = await find(tx, by);
  await checkName(tx, body.name, current.id);
  // Description and color are not part of any product's or contract's view.
  const recordHolders = body.name !== current.name ? await touchHolders(tx, w, holders, current.id, timeZone) : null;
  const row = await tx
    .update(classifications)
    .set({ name: body.name, description: body.description ?? null, color: body.color ?? null })
    .where(eq(classifications.id, current.id))
    .returning()
    .get();
  w.record({ type: "classification", id: row.id, action: "update", before: current, after: row });
  await recordHolders?.();
  return view(row);
}

async function removeClassificationIn(tx: TenantDb, w: TenantWriteScope, holders: ClassificationHolders[], by: { id?: string; name?: string }, timeZone: string): Promise<void> {
  const row = await find(tx, by);
  const recordHolders = await touchHolders(tx, w, holders, row.id, timeZone);
  await tx.delete(classifications).where(eq(classifications.id, row.id)).run();
  w.record({ type: "classification", id: row.id, action: "delete", before: row, after: null });
  await recordHolders();
}

// ---- what the routes call: each in one read or one write of the corporation's door ----

export function listClassifications(tenant: TenantDoor, query: ListParams) {
  return tenant.read((db) => listClassificationsIn(db, query));
}

export function showClassification(tenant: TenantDoor, by: { id?: string; name?: string }) {
  return tenant.read((db) => showClassificationIn(db, by));
}

export function createClassification(tenant: TenantDoor, body: ClassificationInput) {
  return tenant.write((tx, w) => createClassificationIn(tx, w, body));
}

export function updateClassification(tenant: TenantDoor, holders: ClassificationHolders[], by: { id?: string; name?: string }, body: ClassificationInput, timeZone: string) {
  return tenant.write((tx, w) => updateClassificationIn(tx, w, holders, by, body, timeZone));
}

export function removeClassification(tenant: TenantDoor, holders: ClassificationHolders[], by: { id?: string; name?: string }, timeZone: string) {
  return tenant.write((tx, w) => removeClassificationIn(tx, w, holders, by, timeZone));
}
