// Address pools: an IPv4 or IPv6 network, optionally at a POP and on a NAS.
import { Elysia } from "elysia";
import { eq } from "drizzle-orm";
import type { AppContext } from "../../context";
import { writeTx, type TenantDb } from "../../db/sqlite";
import { ispNas, ispPools, ispPops } from "../../db/tenant/schema";
import { created, noContent } from "../../lib/http";
import { listRows, type ListParams } from "../../lib/list";
import { invalid } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { nowIso } from "../../lib/time";
import type { authGuard } from "../auth/guard";
import { canonicalCidr, checkRef, checkUniqueName, requireRow, setStatus, type Q } from "./common";
import { Pool, PoolInput } from "./model";

type Row = typeof ispPools.$inferSelect;
const AUTH = "platform.isp" as const;

function values(db: Q, input: PoolInput) {
  const parsed = canonicalCidr(input.cidr, input.version);
  if ("error" in parsed) throw invalid("cidr", parsed.error);
  return {
    name: input.name,
    version: input.version,
    cidr: parsed.cidr,
    pop_id: checkRef(db, ispPops, input.pop_id, "pop_id", "POP"),
    nas_id: checkRef(db, ispNas, input.nas_id, "nas_id", "NAS"),
  };
}

export function listPools(db: TenantDb, query: ListParams) {
  return listRows(db, ispPools, { q: [ispPools.name, ispPools.cidr] }, query, (r: Row) => r);
}

export function createPool(db: TenantDb, input: PoolInput): Row {
  return writeTx(db, (tx) => {
    const v = values(tx, input);
    checkUniqueName(tx, ispPools, input.name, null, "pool");
    return tx.insert(ispPools).values(v).returning().get();
  });
}

export function updatePool(db: TenantDb, id: string, input: PoolInput): Row {
  return writeTx(db, (tx) => {
    requireRow(tx, ispPools, id, "Pool");
    const v = values(tx, input);
    checkUniqueName(tx, ispPools, input.name, id, "pool");
    return tx
      .update(ispPools)
      .set({ ...v, updated_at: nowIso() })
      .where(eq(ispPools.id, id))
      .returning()
      .get();
  });
}

export function deletePool(db: TenantDb, id: string): void {
  writeTx(db, (tx) => {
    requireRow(tx, ispPools, id, "Pool");
    tx.delete(ispPools).where(eq(ispPools.id, id)).run();
  });
}

export function poolRoutes(_ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-pool", prefix: "/api/isp/pool", tags: ["ISP"] })
    .use(guard)
    .get("", ({ tenantDb, query }) => listPools(tenantDb, query), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(Pool) },
      detail: { summary: "List pools" },
    })
    .post("", ({ tenantDb, body, set }) => created(set, "/api/isp/pool", createPool(tenantDb, body)), {
      auth: AUTH,
      body: PoolInput,
      response: { 200: Pool },
      detail: { summary: "Create a pool" },
    })
    .get("/:id", ({ tenantDb, params }) => requireRow<Row>(tenantDb, ispPools, params.id, "Pool"), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pool },
      detail: { summary: "Get a pool" },
    })
    .put("/:id", ({ tenantDb, params, body }) => updatePool(tenantDb, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: PoolInput,
      response: { 200: Pool },
      detail: { summary: "Update a pool" },
    })
    .delete(
      "/:id",
      ({ tenantDb, params, set }) => {
        deletePool(tenantDb, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a pool" } },
    )
    .put("/:id/active", ({ tenantDb, params }) => setStatus<Row>(tenantDb, ispPools, params.id, true, "Pool"), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pool },
      detail: { summary: "Activate a pool" },
    })
    .put("/:id/inactive", ({ tenantDb, params }) => setStatus<Row>(tenantDb, ispPools, params.id, false, "Pool"), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pool },
      detail: { summary: "Deactivate a pool" },
    });
}
