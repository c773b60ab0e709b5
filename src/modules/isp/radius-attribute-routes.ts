// RADIUS attribute routes (routes.md, Resources: RadiusAttribute); the work is in radius-attribute-service.ts.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import type { authGuard } from "../../http/guard";
import { RadiusAttribute, RadiusAttributeInput } from "./model";
import {
  createRadiusAttribute,
  deleteRadiusAttribute,
  getRadiusAttribute,
  listRadiusAttributes,
  setRadiusAttributeStatus,
  updateRadiusAttribute,
} from "./radius-attribute-service";

const AUTH = "platform.isp" as const;

export function radiusAttributeRoutes(_ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-radius-attribute", prefix: "/api/isp/radius-attribute", tags: ["ISP"] })
    .use(guard)
    .get("", ({ tenant, query }) => listRadiusAttributes(tenant, query), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(RadiusAttribute) },
      detail: { summary: "List RADIUS attributes" },
    })
    .post("", async ({ tenant, body, set }) => created(set, "/api/isp/radius-attribute", await createRadiusAttribute(tenant, body)), {
      auth: AUTH,
      body: RadiusAttributeInput,
      response: { 200: RadiusAttribute },
      detail: { summary: "Create a RADIUS attribute" },
    })
    .get("/:id", ({ tenant, params }) => getRadiusAttribute(tenant, params.id), {
      auth: AUTH,
      params: IdParams,
      response: { 200: RadiusAttribute },
      detail: { summary: "Get a RADIUS attribute" },
    })
    .put("/:id", ({ tenant, params, body }) => updateRadiusAttribute(tenant, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: RadiusAttributeInput,
      response: { 200: RadiusAttribute },
      detail: { summary: "Update a RADIUS attribute" },
    })
    .delete(
      "/:id",
      async ({ tenant, params, set }) => {
        await deleteRadiusAttribute(tenant, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a RADIUS attribute" } },
    )
    .put("/:id/active", ({ tenant, params }) => setRadiusAttributeStatus(tenant, params.id, true), {
      auth: AUTH,
      params: IdParams,
      response: { 200: RadiusAttribute },
      detail: { summary: "Activate a RADIUS attribute" },
    })
    .put("/:id/inactive", ({ tenant, params }) => setRadiusAttributeStatus(tenant, params.id, false), {
      auth: AUTH,
      params: IdParams,
      response: { 200: RadiusAttribute },
      detail: { summary: "Deactivate a RADIUS attribute (left out when layouts render)" },
    });
}
