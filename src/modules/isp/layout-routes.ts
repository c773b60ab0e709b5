// Layout routes (routes.md, Resources: Layout); the work is in layout-service.ts.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { ArrayOf, IdParams, ListOf, ListQuery } from "../../lib/schemas";
import type { authGuard } from "../../http/guard";
import { attachAttribute, createLayout, deleteLayout, detachAttribute, getLayout, listLayouts, renderForContract, setLayoutStatus, updateLayout } from "./layout-service";
import { Layout, LayoutAttributeInput, LayoutAttributeParams, LayoutInput, LayoutVariable, Rendered, RenderParams, RenderQuery } from "./model";
import { LAYOUT_VARIABLES } from "./template";

const AUTH = "platform.isp" as const;

export function layoutRoutes(_ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-layout", prefix: "/api/isp/layout", tags: ["ISP"] })
    .use(guard)
    .get("", ({ tenant, query }) => listLayouts(tenant, query), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(Layout) },
      detail: { summary: "List layouts" },
    })
    .post("", async ({ tenant, body, set }) => created(set, "/api/isp/layout", await createLayout(tenant, body)), {
      auth: AUTH,
      body: LayoutInput,
      response: { 200: Layout },
      detail: { summary: "Create a layout" },
    })
    .get("/variables", () => ({ items: LAYOUT_VARIABLES.map((v) => ({ ...v })) }), {
      auth: AUTH,
      response: { 200: ArrayOf(LayoutVariable) },
      detail: { summary: "Retrieve the variable templates usable in attribute values" },
    })
    .get("/:id", ({ tenant, params }) => getLayout(tenant, params.id), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Layout },
      detail: { summary: "Get a layout" },
    })
    .put("/:id", ({ tenant, params, body }) => updateLayout(tenant, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: LayoutInput,
      response: { 200: Layout },
      detail: { summary: "Update a layout (attributes unchanged)" },
    })
    .delete(
      "/:id",
      async ({ tenant, params, set }) => {
        await deleteLayout(tenant, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a layout" } },
    )
    .put("/:id/active", ({ tenant, params }) => setLayoutStatus(tenant, params.id, true), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Layout },
      detail: { summary: "Activate a layout" },
    })
    .put("/:id/inactive", ({ tenant, params }) => setLayoutStatus(tenant, params.id, false), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Layout },
      detail: { summary: "Deactivate a layout (RADIUS rejects users through a NAS with an inactive layout)" },
    })
    .post("/:id/attribute", ({ tenant, params, body }) => attachAttribute(tenant, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: LayoutAttributeInput,
      response: { 200: Layout },
      detail: { summary: "Add an attribute to a layout (again: replaces its operator and value)" },
    })
    .get("/:id/render/:contractId", ({ tenant, params, query }) => renderForContract(tenant, params.id, params.contractId, query.nas_id), {
      auth: AUTH,
      params: RenderParams,
      query: RenderQuery,
      response: { 200: Rendered },
      detail: { summary: "Render a layout's attributes for a contract (nas_id fills nas.* and pop.*)" },
    })
    .delete("/:id/attribute/:attributeId", ({ tenant, params }) => detachAttribute(tenant, params.id, params.attributeId), {
      auth: AUTH,
      params: LayoutAttributeParams,
      response: { 200: Layout },
      detail: { summary: "Remove an attribute (RADIUS attribute id) from a layout" },
    });
}
