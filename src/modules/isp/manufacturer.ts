// Manufacturers (NAS vendors): the vendor of RADIUS attributes, layouts and NAS.
import { Elysia } from "elysia";
import { eq } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { writeTx, type TenantDb } from "../../db/sqlite";
import { ispLayouts, ispManufacturers, ispNas, ispRadiusAttributes } from "../../db/tenant/schema";
import { created, noContent } from "../../lib/http";
import { listRows, type ListParams } from "../../lib/list";
import { conflict } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { nowIso } from "../../lib/time";
import type { authGuard } from "../auth/guard";
import { checkUniqueName, isUsed, requireRow, setStatus } from "./common";
import { Manufacturer, ManufacturerInput } from "./model";

type Row = typeof ispManufacturers.$inferSelect;
const WHAT = "manufacturer";
const AUTH = "platform.isp" as const;

export function listManufacturers(db: TenantDb, query: ListParams) {
  return listRows(db, ispManufacturers, { q: [ispManufacturers.name] }, query, (r: Row) => r);
}

export function getManufacturer(db: TenantDb, id: string): Row {
  return requireRow<Row>(db, ispManufacturers, id, "Manufacturer");
}

export function createManufacturer(db: TenantDb, input: ManufacturerInput): Row {
  return writeTx(db, (tx) => {
    checkUniqueName(tx, ispManufacturers, input.name, null, WHAT);
    return tx.insert(ispManufacturers).values({ name: input.name, description: input.description ?? null }).returning().get();
  });
}

export function updateManufacturer(db: TenantDb, id: string, input: ManufacturerInput): Row {
  return writeTx(db, (tx) => {
    requireRow(tx, ispManufacturers, id, "Manufacturer");
    checkUniqueName(tx, ispManufacturers, input.name, id, WHAT);
    return tx
      .update(ispManufacturers)
      .set({ name: input.name, description: input.description ?? null, updated_at: nowIso() })
      .where(eq(ispManufacturers.id, id))
      .returning()
      .get();
  });
}

export function deleteManufacturer(db: TenantDb, id: string): void {
  writeTx(db, (tx) => {
        requireRow(tx, ispManufacturers, id, "Manufacturer");
    if (isUsed(tx, ispRadiusAttributes, ispRadiusAttributes.manufacturer_id, id)) throw conflict("The manufacturer is used by a RADIUS attribute");
    if (isUsed(tx, ispLayouts, ispLayouts.manufacturer_id, id)) throw conflict("The manufacturer is used by a layout");
    if (isUsed(tx, ispNas, ispNas.manufacturer_id, id)) throw conflict("The manufacturer is used by a NAS");
    tx.delete(ispManufacturers).where(eq(ispManufacturers.id, id)).run();
  });
}

export function manufacturerRoutes(_ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-manufacturer", prefix: "/api/isp/manufacturer", tags: ["ISP"] })
    .use(guard)
    .get("", ({ tenantDb, query }) => listManufacturers(tenantDb, query), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(Manufacturer) },
      detail: { summary: "List manufacturers" },
    })
    .post("", ({ tenantDb, body, set }) => created(set, "/api/isp/manufacturer", createManufacturer(tenantDb, body)), {
      auth: AUTH,
      body: ManufacturerInput,
      response: { 200: Manufacturer },
      detail: { summary: "Create a manufacturer" },
    })
    .get("/:id", ({ tenantDb, params }) => getManufacturer(tenantDb, params.id), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Manufacturer },
      detail: { summary: "Get a manufacturer" },
    })
    .put("/:id", ({ tenantDb, params, body }) => updateManufacturer(tenantDb, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: ManufacturerInput,
      response: { 200: Manufacturer },
      detail: { summary: "Update a manufacturer" },
    })
    .delete(
      "/:id",
      ({ tenantDb, params, set }) => {
        deleteManufacturer(tenantDb, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a manufacturer" } },
    )
    .put("/:id/active", ({ tenantDb, params }) => setStatus<Row>(tenantDb, ispManufacturers, params.id, true, "Manufacturer"), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Manufacturer },
      detail: { summary: "Activate a manufacturer" },
    })
    .put("/:id/inactive", ({ tenantDb, params }) => setStatus<Row>(tenantDb, ispManufacturers, params.id, false, "Manufacturer"), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Manufacturer },
      detail: { summary: "Deactivate a manufacturer" },
    });
}
