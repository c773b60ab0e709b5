// Product rows of routes.md: CRUD, lookup by identity (the product code), classifications.
import { Elysia, t } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { Product, ProductIdentityParams, ProductInput } from "./model";
import { createProduct, deleteProduct, productClassificationHolders, listProducts, setProductClassifications, showProduct, updateProduct } from "./service";

// Kept here, not in model.ts: every object schema a model exports is published under its name
// (system/openapi-schemas.ts), and the document has always shown this body inline.
const ClassificationsBody = t.Object({ names: t.Array(t.String({ minLength: 1, maxLength: 64 }), { maxItems: 500 }) });

export function productModule(ctx: AppContext) {
  ctx.classificationHolders.push(productClassificationHolders);
  return new Elysia({ name: "product", prefix: "/api", tags: ["Product"] })
    .use(authGuard(ctx))
    .get("/product", ({ tenant, query }) => listProducts(tenant, query), {
      auth: "platform.product",
      query: ListQuery,
      response: { 200: ListOf(Product) },
      detail: { summary: "List products" },
    })
    .post("/product", async ({ tenant, body, set }) => created(set, "/api/product", await createProduct(tenant, body)), {
      auth: "platform.product",
      body: ProductInput,
      response: { 200: Product },
      detail: { summary: "Create a product" },
    })
    .get("/product/identity/:identity", ({ tenant, params }) => showProduct(tenant, { identity: params.identity }), {
      auth: "platform.product",
      params: ProductIdentityParams,
      response: { 200: Product },
      detail: { summary: "Show a product by identity" },
    })
    .get("/product/:id", ({ tenant, params }) => showProduct(tenant, { id: params.id }), {
      auth: "platform.product",
      params: IdParams,
      response: { 200: Product },
      detail: { summary: "Show a product by id" },
    })
    .put("/product/:id", ({ tenant, params, body }) => updateProduct(tenant, params.id, body), {
      auth: "platform.product",
      params: IdParams,
      body: ProductInput,
      response: { 200: Product },
      detail: { summary: "Update a product" },
    })
    .delete(
      "/product/:id",
      async ({ tenant, params, set }) => {
        await deleteProduct(tenant, params.id, ctx.usedBy.product);
        noContent(set);
      },
      { auth: "platform.product", params: IdParams, detail: { summary: "Delete a product" } },
    )
    .put("/product/:id/classifications", ({ tenant, params, body }) => setProductClassifications(tenant, params.id, body.names), {
      auth: "platform.product",
      params: IdParams,
      body: ClassificationsBody,
      response: { 200: Product },
      detail: { summary: "Associate classification flags (replaces the set)" },
    });
}
