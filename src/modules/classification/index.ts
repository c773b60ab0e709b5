// Classification rows of Core: flags that products carry and contracts are tagged with
// (service.ts: renames and deletes update the products and contracts that show them).
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { Classification, ClassificationInput, ClassificationNameParams } from "./model";
import { createClassification, listClassifications, removeClassification, showClassification, updateClassification } from "./service";

export function classificationModule(ctx: AppContext) {
  return new Elysia({ name: "classification", prefix: "/api", tags: ["Core"] })
    .use(authGuard(ctx))
    .get("/classification", ({ tenant, query }) => listClassifications(tenant, query), {
      auth: "platform.core",
      query: ListQuery,
      response: { 200: ListOf(Classification) },
      detail: { summary: "List classifications" },
    })
    .post(
      "/classification",
      async ({ tenant, body, set }) => created(set, "/api/classification", await createClassification(tenant, body)),
      { auth: "platform.core", body: ClassificationInput, response: { 200: Classification }, detail: { summary: "Create a classification" } },
    )
    .get("/classification/name/:name", ({ tenant, params }) => showClassification(tenant, { name: params.name }), {
      auth: "platform.core",
      params: ClassificationNameParams,
      response: { 200: Classification },
      detail: { summary: "Get a classification by name" },
    })
    .put(
      "/classification/name/:name",
      ({ tenant, principal, params, body }) => updateClassification(tenant, ctx.classificationHolders, { name: params.name }, body, principal.corp.timezone),
      {
        auth: "platform.core",
        params: ClassificationNameParams,
        body: ClassificationInput,
        response: { 200: Classification },
        detail: { summary: "Update a classification by name (may rename)" },
      },
    )
    .delete(
      "/classification/name/:name",
      async ({ tenant, principal, params, set }) => {
        await removeClassification(tenant, ctx.classificationHolders, { name: params.name }, principal.corp.timezone);
        noContent(set);
      },
      { auth: "platform.core", params: ClassificationNameParams, detail: { summary: "Delete a classification by name (also from products and contract flags)" } },
    )
    .get("/classification/:id", ({ tenant, params }) => showClassification(tenant, { id: params.id }), {
      auth: "platform.core",
      params: IdParams,
      response: { 200: Classification },
      detail: { summary: "Get a classification by id" },
    })
    .put("/classification/:id", ({ tenant, principal, params, body }) => updateClassification(tenant, ctx.classificationHolders, { id: params.id }, body, principal.corp.timezone), {
      auth: "platform.core",
      params: IdParams,
      body: ClassificationInput,
      response: { 200: Classification },
      detail: { summary: "Update a classification by id" },
    })
    .delete(
      "/classification/:id",
      async ({ tenant, principal, params, set }) => {
        await removeClassification(tenant, ctx.classificationHolders, { id: params.id }, principal.corp.timezone);
        noContent(set);
      },
      { auth: "platform.core", params: IdParams, detail: { summary: "Delete a classification by id (also from products and contract flags)" } },
    );
}
