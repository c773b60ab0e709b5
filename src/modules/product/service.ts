import { asc, eq, inArray } from "drizzle-orm";
import { t, type Static } from "elysia";
import { classifications, productClassifications, products } from "../../db/tenant/schema";
import { conflict, notFound } from "../../lib/problem";
import { Money, Opt, Uuid } from "../../lib/schemas";
import { clientOf, type Db } from "../registry-common";

export const ProductInput = t.Object({
  identity: t.String({ minLength: 1, maxLength: 128 }),
  name: t.String({ minLength: 1, maxLength: 200 }),
  description: Opt(t.String({ maxLength: 2000 })),
  price: Opt(Money()),
});
export type ProductInput = Static<typeof ProductInput>;

export const Product = t.Object({
  id: Uuid,
  identity: t.String(),
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  price: t.Union([t.Number(), t.Null()]),
  classifications: t.Array(t.String()),
  created_at: t.String(),
  updated_at: t.String(),
});
export type Product = Static<typeof Product>;
export type ProductRow = typeof products.$inferSelect;

export function classificationNames(db: Db, productId: string): string[] {
  return db
    .select({ name: classifications.name })
    .from(productClassifications)
    .innerJoin(classifications, eq(classifications.id, productClassifications.classification_id))
    .where(eq(productClassifications.product_id, productId))
    .orderBy(asc(classifications.name))
    .all()
    .map((r) => r.name);
}

export function productView(db: Db, r: ProductRow): Product {
  return {
    id: r.id,
    identity: r.identity,
    name: r.name,
    description: r.description,
    price: r.price,
    classifications: classificationNames(db, r.id),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function findProduct(db: Db, id: string): ProductRow | undefined {
  return db.select().from(products).where(eq(products.id, id)).get();
}

export function getProduct(db: Db, by: { id?: string; identity?: string }): ProductRow {
  const row = by.id !== undefined ? findProduct(db, by.id) : db.select().from(products).where(eq(products.identity, by.identity!)).get();
  if (!row) throw notFound("Product");
  return row;
}

export function productsByIds(db: Db, ids: string[]): Map<string, ProductRow> {
  if (ids.length === 0) return new Map();
  return new Map(db.select().from(products).where(inArray(products.id, ids)).all().map((p) => [p.id, p]));
}

export function checkIdentityFree(db: Db, identity: string, exceptId: string | null): void {
  const other = db.select({ id: products.id }).from(products).where(eq(products.identity, identity)).get();
  if (other && other.id !== exceptId) throw conflict("A product with this identity already exists");
}

/**
 * Gives every product classified as `classificationId` a new `updated_at` (the classification is
 * renamed or deleted) and returns their ids in order, for one UPDATE event each.
 */
export function touchProductsClassifiedAs(tx: Db, classificationId: string, at: string): string[] {
  const client = clientOf(tx);
  const ids = client
    .query<{ id: string }, [string]>("SELECT product_id AS id FROM product_classifications WHERE classification_id = ?1 ORDER BY product_id")
    .all(classificationId)
    .map((r) => r.id);
  if (ids.length) {
    client.query("UPDATE products SET updated_at = ?1 WHERE id IN (SELECT product_id FROM product_classifications WHERE classification_id = ?2)").run(at, classificationId);
  }
  return ids;
}
