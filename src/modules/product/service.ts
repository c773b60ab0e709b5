// The products and product_classifications tables: CRUD, lookup by identity, the classification
// set (names through the classification service).
import { eq, inArray } from "drizzle-orm";
import { inUse, type ClassificationHolders, type UseCheck } from "../../core/context";
import type { TenantDoor, TenantWriteScope } from "../../core/store";
import type { TenantDb } from "../../db/sqlite";
import { productClassifications, products } from "../../db/tenant/schema";
import { finite } from "../../lib/finite";
import { listRows, type ListParams } from "../../db/list";
import { conflict, invalidMany, notFound } from "../../lib/problem";
import { nowIso } from "../../lib/time";
import { unchanged } from "../../lib/unchanged";
import { classificationIds, classificationNames as namesOf } from "../classification/service";
import { clientOf } from "../../db/rows";
import type { Product, ProductInput } from "./model";

export type ProductRow = typeof products.$inferSelect;

// products_fts: the trigram index of the q columns (migrations/tenant/0010_search_fts.sql).
const LIST = { q: [products.identity, products.name], search: "products_fts" };

const columns = (b: ProductInput) => ({ identity: b.identity, name: b.name, description: b.description ?? null, price: b.price ?? null });

async function classificationIdsOf(db: TenantDb, productId: string): Promise<string[]> {
  return (
    await db
      .select({ id: productClassifications.classification_id })
      .from(productClassifications)
      .where(eq(productClassifications.product_id, productId))
      .all()
  ).map((r) => r.id);
}

/** The product's classification names, sorted. */
export async function classificationNames(db: TenantDb, productId: string): Promise<string[]> {
  return await namesOf(db, await classificationIdsOf(db, productId));
}

export async function productView(db: TenantDb, r: ProductRow): Promise<Product> {
  return {
    id: r.id,
    identity: r.identity,
    name: r.name,
    description: r.description,
    price: finite(r.price),
    classifications: await classificationNames(db, r.id),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function findProduct(db: TenantDb, id: string): Promise<ProductRow | undefined> {
  return await db.select().from(products).where(eq(products.id, id)).get();
}

export async function getProduct(db: TenantDb, by: { id?: string; identity?: string }): Promise<ProductRow> {
  const row = by.id !== undefined ? await findProduct(db, by.id) : await db.select().from(products).where(eq(products.identity, by.identity!)).get();
  if (!row) throw notFound("Product");
  return row;
}

export async function productsByIds(db: TenantDb, ids: string[]): Promise<Map<string, ProductRow>> {
  if (ids.length === 0) return new Map();
  return new Map((await db.select().from(products).where(inArray(products.id, ids)).all()).map((p) => [p.id, p]));
}

async function checkIdentityFree(db: TenantDb, identity: string, exceptId: string | null): Promise<void> {
  const other = await db.select({ id: products.id }).from(products).where(eq(products.identity, identity)).get();
  if (other && other.id !== exceptId) throw conflict("A product with this identity already exists");
}

/**
 * Gives every product classified as `classificationId` a new `updated_at` (the classification is
 * renamed or deleted) and returns their ids in order, for one UPDATE event each.
 */
async function touchProductsClassifiedAs(tx: TenantDb, classificationId: string, at: string): Promise<string[]> {
  const client = clientOf(tx);
  const ids = (
    await client
      .query<{ id: string }, [string]>("SELECT product_id AS id FROM product_classifications WHERE classification_id = ?1 ORDER BY product_id")
      .all(classificationId)
  ).map((r) => r.id);
  if (ids.length) {
    await client.query("UPDATE products SET updated_at = ?1 WHERE id IN (SELECT product_id FROM product_classifications WHERE classification_id = ?2)").run(at, classificationId);
  }
  return ids;
}

/**
 * The products showing a classification about to be renamed or deleted (ctx.classificationHolders):
 * each gets a new `updated_at` and an UPDATE event now, its Change once the change is done.
 */
export const productClassificationHolders: ClassificationHolders = async (tx, w, classificationId) => {
  const ids = await touchProductsClassifiedAs(tx, classificationId, nowIso());
  const before: string[][] = [];
  for (const id of ids) before.push(await classificationNames(tx, id));
  for (const id of ids) w.emit("PRODUCT_AFTER_UPDATE", id, async (t: TenantDb) => productView(t, (await findProduct(t, id))!));
  return async () => {
    for (const [i, id] of ids.entries()) {
      w.record({ type: "product", id, action: "classifications", before: { classifications: before[i] }, after: { classifications: await classificationNames(tx, id) } });
    }
  };
};

// ---- the routes' operations (reads on a read handle, changes inside one write) ----

async function listProductsIn(db: TenantDb, query: ListParams) {
  const page = await listRows(db, products, LIST, query, (r: ProductRow) => r);
  const items: Product[] = [];
  for (const r of page.items) items.push(await productView(db, r));
  return { ...page, items };
}

async function showProductIn(db: TenantDb, by: { id?: string; identity?: string }): Promise<Product> {
  return await productView(db, await getProduct(db, by));
}

async function createProductIn(tx: TenantDb, w: TenantWriteScope, body: ProductInput): Promise<Product> {
  await checkIdentityFree(tx, body.identity, null);
  const v = await productView(tx, await tx.insert(products).values(columns(body)).returning().get());
  w.emit("PRODUCT_AFTER_INSERT", v.id, v);
  w.record({ type: "product", id: v.id, action: "create", before: null, after: v });
  return v;
}

async function updateProductIn(tx: TenantDb, w: TenantWriteScope, id: string, body: ProductInput): Promise<Product> {
  const current = await getProduct(tx, { id });
  const set = columns(body);
  if (unchanged(current, set)) return await productView(tx, current);
  await checkIdentityFree(tx, body.identity, id);
  const row = await tx.update(products).set(set).where(eq(products.id, id)).returning().get();
  const v = await productView(tx, row);
  w.emit("PRODUCT_AFTER_UPDATE", id, v);
  w.record({ type: "product", id, action: "update", before: current, after: row });
  return v;
}

/** Deletes a product no contract item names (`users`: ctx.usedBy.product; 409 otherwise). */
async function deleteProductIn(tx: TenantDb, w: TenantWriteScope, id: string, users: UseCheck[]): Promise<void> {
  const before = await productView(tx, await getProduct(tx, { id }));
  if (await inUse(users, tx, id)) throw conflict("The product is used by a contract item");
  await tx.delete(products).where(eq(products.id, id)).run();
  w.emit("PRODUCT_AFTER_DELETE", id, before);
  w.record({ type: "product", id, action: "delete", before, after: null });
}

/** Replaces the product's classification set (by names); the same set writes and fires nothing. */
async function setProductClassificationsIn(tx: TenantDb, w: TenantWriteScope, id: string, names: string[]): Promise<Product> {
  const current = await getProduct(tx, { id });
  const { ids, unknown } = await classificationIds(tx, names);
  if (unknown.length) throw invalidMany(unknown.map((i) => ({ path: `names.${i}`, message: `unknown classification '${names[i]}'` })));
  const wanted = new Set(ids);
  const held = await classificationIdsOf(tx, id);
  // The set it already has changes nothing the product shows: nothing is written and nothing
  // fires (as PATCH /api/contract/{id}/flags).
  if (held.length === wanted.size && held.every((h) => wanted.has(h))) return await productView(tx, current);
  const before = await classificationNames(tx, id);
  await tx.delete(productClassifications).where(eq(productClassifications.product_id, id)).run();
  for (const cid of wanted) await tx.insert(productClassifications).values({ product_id: id, classification_id: cid }).run();
  const v = await productView(tx, await tx.update(products).set({ updated_at: nowIso() }).where(eq(products.id, id)).returning().get());
  w.emit("PRODUCT_AFTER_UPDATE", id, v);
  w.record({ type: "product", id, action: "classifications", before: { classifications: before }, after: { classifications: await classificationNames(tx, id) } });
  return v;
}

/** The products a ?q finds, as search hits (GET /api/search). */
export async function productHits(db: TenantDb, q: string, limit: number): Promise<{ id: string; title: string; subtitle: string | null }[]> {
  const page = await listRows(db, products, LIST, { q, limit }, (r: ProductRow) => r);
  return page.items.map((r) => ({ id: r.id, title: r.name, subtitle: r.identity }));
}

// ---- what the routes call: each in one read or one write of the corporation's door ----

export function listProducts(tenant: TenantDoor, query: ListParams) {
  return tenant.read((db) => listProductsIn(db, query));
}

export function showProduct(tenant: TenantDoor, by: { id?: string; identity?: string }) {
  return tenant.read((db) => showProductIn(db, by));
}

export function createProduct(tenant: TenantDoor, body: ProductInput) {
  return tenant.write((tx, w) => createProductIn(tx, w, body));
}

export function updateProduct(tenant: TenantDoor, id: string, body: ProductInput) {
  return tenant.write((tx, w) => updateProductIn(tx, w, id, body));
}

export function deleteProduct(tenant: TenantDoor, id: string, users: UseCheck[]) {
  return tenant.write((tx, w) => deleteProductIn(tx, w, id, users));
}

export function setProductClassifications(tenant: TenantDoor, id: string, names: string[]) {
  return tenant.write((tx, w) => setProductClassificationsIn(tx, w, id, names));
}
