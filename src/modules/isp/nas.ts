// NAS routes (routes.md, Resources: Nas); the work is in nas-service.ts.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import type { authGuard } from "../auth/guard";
import { Nas, NasCreateInput, NasUpdateInput } from "./model";
import { createNas, deleteNas, getNas, listNas, setNasStatus, updateNas } from "./nas-service";

const AUTH = "platform.isp" as const;

export function nasRoutes(ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-nas", prefix: "/api/isp/nas", tags: ["ISP"] })
    .use(guard)
    .get("", ({ tenant, query }) => listNas(tenant, query), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(Nas) },
      detail: { summary: "List NAS" },
    })
    .post("", async ({ tenant, body, set }) => created(set, "/api/isp/nas", await createNas(tenant, ctx.secrets, body)), {
      auth: AUTH,
      body: NasCreateInput,
      response: { 200: Nas },
      detail: { summary: "Create a NAS" },
    })
    .get("/:id", ({ tenant, params }) => getNas(tenant, params.id), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Nas },
      detail: { summary: "Get a NAS" },
    })
    .put("/:id", ({ tenant, params, body }) => updateNas(tenant, ctx.secrets, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: NasUpdateInput,
      response: { 200: Nas },
      detail: { summary: "Update a NAS" },
    })
    .delete(
      "/:id",
      async ({ tenant, params, set }) => {
        await deleteNas(tenant, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a NAS" } },
    )
    .put("/:id/active", ({ tenant, params }) => setNasStatus(tenant, params.id, true), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Nas },
      detail: { summary: "Activate a NAS" },
    })
    .put("/:id/inactive", ({ tenant, params }) => setNasStatus(tenant, params.id, false), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Nas },
      detail: { summary: "Deactivate a NAS (RADIUS rejects requests through it)" },
    });
}
