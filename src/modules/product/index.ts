// Product rows of routes.md: CRUD, lookup by identity (the product code), classifications.
import { eq } from "drizzle-orm";
import { Elysia, t } from "elysia";
import type { AppContext } from "../../core/context";
import { productClassifications, products } from "../../db/tenant/schema";
import { created, noContent } from "../../lib/http";
import { listRows } from "../../lib/list";
import { conflict, invalidMany } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard } from "../auth/guard";
import { classificationIds } from "../classification";
import { productOnContractItems } from "../contract/service";
import { commit } from "../registry-common";
import { nowIso } from "../../lib/time";
import { unchanged } from "../../lib/unchanged";
import { checkIdentityFree, getProduct, Product, ProductInput, productView, type ProductRow } from "./service";

const LIST = { q: [products.identity, products.name] };
const ClassificationsBody = t.Object({ names: t.Array(t.String({ minLength: 1, maxLength: 64 }), { maxItems: 500 }) });

const columns = (b: typeof ProductInput.static) => ({ identity: b.identity, name: b.name, description: b.description ?? null, price: b.price ?? null });

export function productModule(ctx: AppContext) {
  return new Elysia({ name: "product", prefix: "/api", tags: ["Product"] })
    .use(authGuard(ctx))
    .get("/product", ({ tenantDb, query }) => listRows(tenantDb, products, LIST, query, (r: ProductRow) => productView(tenantDb, r)), {
      auth: "platform.product",
      query: ListQuery,
      response: { 200: ListOf(Product) },
      detail: { summary: "List products" },
    })
    .post(
      "/product",
      ({ tenantDb, principal, body, set }) => {
        const v = commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          checkIdentityFree(tx, body.identity, null);
          const r = tx.insert(products).values(columns(body)).returning().get();
          const v = productView(tx, r);
          emit("PRODUCT_AFTER_INSERT", r.id, () => v);
          return v;
        });
        return created(set, "/api/product", v);
      },
      { auth: "platform.product", body: ProductInput, response: { 200: Product }, detail: { summary: "Create a product" } },
    )
    .get("/product/identity/:identity", ({ tenantDb, params }) => productView(tenantDb, getProduct(tenantDb, { identity: params.identity })), {
      auth: "platform.product",
      params: t.Object({ identity: t.String({ minLength: 1, maxLength: 128 }) }),
      response: { 200: Product },
      detail: { summary: "Show a product by identity" },
    })
    .get("/product/:id", ({ tenantDb, params }) => productView(tenantDb, getProduct(tenantDb, { id: params.id })), {
      auth: "platform.product",
      params: IdParams,
      response: { 200: Product },
      detail: { summary: "Show a product by id" },
    })
    .put(
      "/product/:id",
      ({ tenantDb, principal, params, body }) =>
        commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          const current = getProduct(tx, { id: params.id });
          const set = columns(body);
          if (unchanged(current, set)) return productView(tx, current);
          checkIdentityFree(tx, body.identity, params.id);
          const r = tx.update(products).set(set).where(eq(products.id, params.id)).returning().get();
          const v = productView(tx, r);
          emit("PRODUCT_AFTER_UPDATE", r.id, () => v);
          return v;
        }),
      { auth: "platform.product", params: IdParams, body: ProductInput, response: { 200: Product }, detail: { summary: "Update a product" } },
    )
    .delete(
      "/product/:id",
      ({ tenantDb, principal, params, set }) => {
        commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          const before = productView(tx, getProduct(tx, { id: params.id }));
          if (productOnContractItems(tx, params.id)) throw conflict("The product is used by a contract item");
          tx.delete(products).where(eq(products.id, params.id)).run();
          emit("PRODUCT_AFTER_DELETE", params.id, () => before);
        });
        noContent(set);
      },
      { auth: "platform.product", params: IdParams, detail: { summary: "Delete a product" } },
    )
    .put(
      "/product/:id/classifications",
      ({ tenantDb, principal, params, body }) => {
        getProduct(tenantDb, { id: params.id });
        const { ids, unknown } = classificationIds(tenantDb, body.names);
        if (unknown.length) throw invalidMany(unknown.map((i) => ({ path: `names.${i}`, message: `unknown classification '${body.names[i]}'` })));
        return commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          const current = getProduct(tx, { id: params.id });
          const wanted = new Set(ids);
          const held = tx.select({ id: productClassifications.classification_id }).from(productClassifications).where(eq(productClassifications.product_id, params.id)).all();
          // The set it already has changes nothing the product shows: nothing is written and
          // nothing fires (as PATCH /api/contract/{id}/flags).
          if (held.length === wanted.size && held.every((h) => wanted.has(h.id))) return productView(tx, current);
          tx.delete(productClassifications).where(eq(productClassifications.product_id, params.id)).run();
          for (const id of wanted) tx.insert(productClassifications).values({ product_id: params.id, classification_id: id }).run();
          const r = tx.update(products).set({ updated_at: nowIso() }).where(eq(products.id, params.id)).returning().get();
          const v = productView(tx, r);
          emit("PRODUCT_AFTER_UPDATE", r.id, () => v);
          return v;
        });
      },
      { auth: "platform.product", params: IdParams, body: ClassificationsBody, response: { 200: Product }, detail: { summary: "Associate classification flags (replaces the set)" } },
    );
}
