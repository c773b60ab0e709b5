// Manufacturer routes (routes.md, Resources: Manufacturer); the work is in manufacturer-service.ts.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import type { authGuard } from "../../http/guard";
import { createManufacturer, deleteManufacturer, getManufacturer, listManufacturers, setManufacturerStatus, updateManufacturer } from "./manufacturer-service";
import { Manufacturer, ManufacturerInput } from "./model";

const AUTH = "platform.isp" as const;

export function manufacturerRoutes(_ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-manufacturer", prefix: "/api/isp/manufacturer", tags: ["ISP"] })
    .use(guard)
    .get("", ({ tenant, query }) => listManufacturers(tenant, query), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(Manufacturer) },
      detail: { summary: "List manufacturers" },
    })
    .post("", async ({ tenant, body, set }) => created(set, "/api/isp/manufacturer", await createManufacturer(tenant, body)), {
      auth: AUTH,
      body: ManufacturerInput,
      response: { 200: Manufacturer },
      detail: { summary: "Create a manufacturer" },
    })
    .get("/:id", ({ tenant, params }) => getManufacturer(tenant, params.id), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Manufacturer },
      detail: { summary: "Get a manufacturer" },
    })
    .put("/:id", ({ tenant, params, body }) => updateManufacturer(tenant, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: ManufacturerInput,
      response: { 200: Manufacturer },
      detail: { summary: "Update a manufacturer" },
    })
    .delete(
      "/:id",
      async ({ tenant, params, set }) => {
        await deleteManufacturer(tenant, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a manufacturer" } },
    )
    .put("/:id/active", ({ tenant, params }) => setManufacturerStatus(tenant, params.id, true), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Manufacturer },
      detail: { summary: "Activate a manufacturer" },
    })
    .put("/:id/inactive", ({ tenant, params }) => setManufacturerStatus(tenant, params.id, false), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Manufacturer },
      detail: { summary: "Deactivate a manufacturer" },
    });
}
