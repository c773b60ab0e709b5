// Points of presence: where NAS and pools live; an optional Address.
import { Elysia } from "elysia";
import { eq } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { writeTx, type TenantDb } from "../../db/sqlite";
import { ispNas, ispPools, ispPops } from "../../db/tenant/schema";
import { created, noContent } from "../../lib/http";
import { listRows, type ListParams } from "../../lib/list";
import { conflict } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { nowIso } from "../../lib/time";
import type { authGuard } from "../auth/guard";
import { ADDRESS_COLUMN_NAMES, addressColumns, addressView, checkCityId, type AddressInput } from "../registry-common";
import { checkUniqueName, isUsed, requireRow, setStatus, type Q } from "./common";
import { Pop, PopInput } from "./model";

type Row = typeof ispPops.$inferSelect;
const AUTH = "platform.isp" as const;

export function popView(db: Q, row: Row) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    address: addressView(db as never, row),
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function addressOf(db: Q, address: AddressInput | undefined) {
  if (address) checkCityId(db as never, address.city_id, "address");
  return addressColumns(address, address?.city_id ?? null);
}

export function listPops(db: TenantDb, query: ListParams) {
  return listRows(db, ispPops, { q: [ispPops.name], hidden: ADDRESS_COLUMN_NAMES }, query, (r: Row) => popView(db, r));
}

export function getPop(db: TenantDb, id: string) {
  return popView(db, requireRow<Row>(db, ispPops, id, "POP"));
}

export function createPop(db: TenantDb, input: PopInput) {
  return writeTx(db, (tx) => {
    checkUniqueName(tx, ispPops, input.name, null, "POP");
    const row = tx
      .insert(ispPops)
      .values({ name: input.name, description: input.description ?? null, ...addressOf(tx, input.address) })
      .returning()
      .get();
    return popView(tx, row);
  });
}

export function updatePop(db: TenantDb, id: string, input: PopInput) {
  return writeTx(db, (tx) => {
    requireRow(tx, ispPops, id, "POP");
    checkUniqueName(tx, ispPops, input.name, id, "POP");
    const row = tx
      .update(ispPops)
      .set({ name: input.name, description: input.description ?? null, ...addressOf(tx, input.address), updated_at: nowIso() })
      .where(eq(ispPops.id, id))
      .returning()
      .get();
    return popView(tx, row);
  });
}

export function deletePop(db: TenantDb, id: string): void {
  writeTx(db, (tx) => {
    requireRow(tx, ispPops, id, "POP");
    if (isUsed(tx, ispPools, ispPools.pop_id, id)) throw conflict("The POP is used by a pool");
    if (isUsed(tx, ispNas, ispNas.pop_id, id)) throw conflict("The POP is used by a NAS");
    tx.delete(ispPops).where(eq(ispPops.id, id)).run();
  });
}

/** Whether any POP's address names the city (the city delete is refused then). */
export function cityUsedByPop(db: Q, cityId: string): boolean {
  return isUsed(db, ispPops, ispPops.address_city_id, cityId);
}

function dropNullAddress({ body }: { body: unknown }) {
  if (body && typeof body === "object" && (body as { address?: unknown }).address === null) delete (body as { address?: unknown }).address;
}

export function popRoutes(_ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-pop", prefix: "/api/isp/pop", tags: ["ISP"] })
    .use(guard)
    .get("", ({ tenantDb, query }) => listPops(tenantDb, query), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(Pop) },
      detail: { summary: "List points of presence" },
    })
    .post("", ({ tenantDb, body, set }) => created(set, "/api/isp/pop", createPop(tenantDb, body)), {
      auth: AUTH,
      body: PopInput,
      transform: dropNullAddress,
      response: { 200: Pop },
      detail: { summary: "Create a POP" },
    })
    .get("/:id", ({ tenantDb, params }) => getPop(tenantDb, params.id), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pop },
      detail: { summary: "Get a POP" },
    })
    .put("/:id", ({ tenantDb, params, body }) => updatePop(tenantDb, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: PopInput,
      transform: dropNullAddress,
      response: { 200: Pop },
      detail: { summary: "Update a POP" },
    })
    .delete(
      "/:id",
      ({ tenantDb, params, set }) => {
        deletePop(tenantDb, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a POP" } },
    )
    .put("/:id/active", ({ tenantDb, params }) => popView(tenantDb, setStatus<Row>(tenantDb, ispPops, params.id, true, "POP")), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pop },
      detail: { summary: "Activate a POP" },
    })
    .put("/:id/inactive", ({ tenantDb, params }) => popView(tenantDb, setStatus<Row>(tenantDb, ispPops, params.id, false, "POP")), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pop },
      detail: { summary: "Deactivate a POP" },
    });
}
