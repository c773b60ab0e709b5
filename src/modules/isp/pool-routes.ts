// Pool routes (routes.md, Resources: Pool); the work is in pool-service.ts.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import type { authGuard } from "../../http/guard";
import { Pool, PoolInput, PoolUsage } from "./model";
import { createPool, deletePool, getPool, listPools, poolUsage, setPoolStatus, updatePool } from "./pool-service";

const AUTH = "platform.isp" as const;

export function poolRoutes(ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-pool", prefix: "/api/isp/pool", tags: ["ISP"] })
    .use(guard)
    .get("", ({ tenant, query }) => listPools(tenant, query, ctx.now()), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(Pool) },
      detail: { summary: "List pools" },
    })
    .post("", async ({ tenant, body, set }) => created(set, "/api/isp/pool", await createPool(tenant, body, ctx.now())), {
      auth: AUTH,
      body: PoolInput,
      response: { 200: Pool },
      detail: { summary: "Create a pool" },
    })
    .get("/:id", ({ tenant, params }) => getPool(tenant, params.id, ctx.now()), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pool },
      detail: { summary: "Get a pool" },
    })
    .put("/:id", ({ tenant, params, body }) => updatePool(tenant, params.id, body, ctx.now()), {
      auth: AUTH,
      params: IdParams,
      body: PoolInput,
      response: { 200: Pool },
      detail: { summary: "Update a pool" },
    })
    .delete(
      "/:id",
      async ({ tenant, params, set }) => {
        await deletePool(tenant, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a pool" } },
    )
    .put("/:id/active", ({ tenant, params }) => setPoolStatus(tenant, params.id, true, ctx.now()), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pool },
      detail: { summary: "Activate a pool" },
    })
    .put("/:id/inactive", ({ tenant, params }) => setPoolStatus(tenant, params.id, false, ctx.now()), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pool },
      detail: { summary: "Deactivate a pool" },
    })
    .get("/:id/usage", ({ tenant, params }) => poolUsage(tenant, params.id, ctx.now()), {
      auth: AUTH,
      params: IdParams,
      response: { 200: PoolUsage },
      detail: { summary: "Pool usage with the addresses in use (online sessions' framed addresses, contracts' static addresses)" },
    });
}
