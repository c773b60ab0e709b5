// Service & Feature rows of routes.md: the service catalog, features and their actions, and the
// application menu with its permission-aware tree.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { ArrayOf, IdParams, ListOf, ListQuery, ProblemSchema } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import {
  ActionInput,
  Feature,
  FeatureActionParams,
  FeatureInput,
  FeatureUpload,
  Menu,
  MenuInput,
  MenuNode,
  Service,
  ServiceInput,
  ServiceWithFeatures,
} from "./model";
import {
  addAction,
  createFeature,
  createService,
  deleteFeature,
  deleteService,
  getFeature,
  getService,
  listFeatures,
  listServices,
  menuTree,
  removeAction,
  saveMenu,
  updateFeature,
  updateService,
  uploadFeatures,
} from "./service";

export function catalogModule(ctx: AppContext) {
  return new Elysia({ name: "catalog", prefix: "/api", tags: ["Service & Feature"] })
    .use(authGuard(ctx))
    // Elysia infers a recursive schema's children as never[]; the schema still validates them.
    .get("/menu/tree", async ({ principal }) => ({ items: (await menuTree(ctx, principal.permission)) as never[] }), {
      auth: "token",
      response: { 200: ArrayOf(MenuNode) },
      detail: { summary: "The menu tree with its actions; `allowed` says whether the caller's permission covers them" },
    })
    .post(
      "/menu",
      async ({ body, set }) => {
        const { menu, created: isNew } = await saveMenu(ctx, body);
        return isNew ? created(set, "/api/menu", menu) : menu;
      },
      {
        auth: "*",
        body: MenuInput,
        response: { 200: Menu },
        detail: { summary: "Create a menu (no id) or replace one (id given)" },
      },
    )
    .post("/service/:id/features", async ({ params, body }) => ({ items: await uploadFeatures(ctx, params.id, body) }), {
      auth: "*",
      params: IdParams,
      body: FeatureUpload,
      response: { 200: ArrayOf(Feature) },
      detail: { summary: "Upload the service's features with their actions (upsert; nothing removed)" },
    })
    .get("/service", ({ query }) => listServices(ctx, query), {
      auth: "*",
      query: ListQuery,
      response: { 200: ListOf(Service) },
      detail: { summary: "List services" },
    })
    .post("/service", async ({ body, set }) => created(set, "/api/service", await createService(ctx, body)), {
      auth: "*",
      body: ServiceInput,
      response: { 200: Service, 409: ProblemSchema },
      detail: { summary: "Create a service" },
    })
    .get("/service/:id", ({ params }) => getService(ctx, params.id), {
      auth: "*",
      params: IdParams,
      response: { 200: ServiceWithFeatures },
      detail: { summary: "Show a service with its features" },
    })
    .put("/service/:id", ({ params, body }) => updateService(ctx, params.id, body), {
      auth: "*",
      params: IdParams,
      body: ServiceInput,
      response: { 200: Service, 409: ProblemSchema },
      detail: { summary: "Update a service (a built-in one keeps its identifier)" },
    })
    .delete(
      "/service/:id",
      async ({ params, set }) => {
        await deleteService(ctx, params.id);
        noContent(set);
      },
      { auth: "*", params: IdParams, detail: { summary: "Delete a service with its features, actions and grants" } },
    )
    .get("/feature", ({ query }) => listFeatures(ctx, query), {
      auth: "*",
      query: ListQuery,
      response: { 200: ListOf(Feature) },
      detail: { summary: "List features" },
    })
    .post("/feature", async ({ body, set }) => created(set, "/api/feature", await createFeature(ctx, body)), {
      auth: "*",
      body: FeatureInput,
      response: { 200: Feature, 409: ProblemSchema },
      detail: { summary: "Create a feature" },
    })
    .get("/feature/:id", ({ params }) => getFeature(ctx, params.id), {
      auth: "*",
      params: IdParams,
      response: { 200: Feature },
      detail: { summary: "Show a feature" },
    })
    .put("/feature/:id", ({ params, body }) => updateFeature(ctx, params.id, body), {
      auth: "*",
      params: IdParams,
      body: FeatureInput,
      response: { 200: Feature, 409: ProblemSchema },
      detail: { summary: "Update a feature" },
    })
    .delete(
      "/feature/:id",
      async ({ params, set }) => {
        await deleteFeature(ctx, params.id);
        noContent(set);
      },
      { auth: "*", params: IdParams, detail: { summary: "Delete a feature with its actions and grants" } },
    )
    .post("/feature/:id/action", ({ params, body }) => addAction(ctx, params.id, body), {
      auth: "*",
      params: IdParams,
      body: ActionInput,
      response: { 200: Feature, 409: ProblemSchema },
      detail: { summary: "Add an action to a feature" },
    })
    .delete(
      "/feature/:id/action/:actionId",
      async ({ params, set }) => {
        await removeAction(ctx, params.id, params.actionId);
        noContent(set);
      },
      { auth: "*", params: FeatureActionParams, detail: { summary: "Remove an action from a feature" } },
    );
}
