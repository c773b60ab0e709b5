// RADIUS attributes: dictionary names (standard, or of a manufacturer) that layouts attach.
import { Elysia } from "elysia";
import { and, eq, isNull, ne } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { writeTx, type TenantDb } from "../../db/sqlite";
import { ispLayoutAttributes, ispManufacturers, ispRadiusAttributes } from "../../db/tenant/schema";
import { created, noContent } from "../../lib/http";
import { listRows, type ListParams } from "../../lib/list";
import { conflict } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { nowIso } from "../../lib/time";
import type { authGuard } from "../auth/guard";
import { checkRef, isUsed, requireRow, setStatus, type Q } from "./common";
import { RadiusAttribute, RadiusAttributeInput } from "./model";

type Row = typeof ispRadiusAttributes.$inferSelect;
const AUTH = "platform.isp" as const;

/** (name, manufacturer_id) is unique, a null manufacturer (standard attribute) included. */
function checkUnique(db: Q, name: string, manufacturerId: string | null, exceptId: string | null): void {
  const same = and(
    eq(ispRadiusAttributes.name, name),
    manufacturerId ? eq(ispRadiusAttributes.manufacturer_id, manufacturerId) : isNull(ispRadiusAttributes.manufacturer_id),
    exceptId ? ne(ispRadiusAttributes.id, exceptId) : undefined,
  );
  if (db.select({ id: ispRadiusAttributes.id }).from(ispRadiusAttributes).where(same).get()) {
    throw conflict(`A RADIUS attribute named '${name}' already exists for ${manufacturerId ? "that manufacturer" : "no manufacturer"}`);
  }
}

function values(db: Q, input: RadiusAttributeInput) {
  return {
    name: input.name,
    manufacturer_id: checkRef(db, ispManufacturers, input.manufacturer_id, "manufacturer_id", "manufacturer"),
    type: input.type,
    description: input.description ?? null,
  };
}

export function listRadiusAttributes(db: TenantDb, query: ListParams) {
  return listRows(db, ispRadiusAttributes, { q: [ispRadiusAttributes.name] }, query, (r: Row) => r);
}

export function createRadiusAttribute(db: TenantDb, input: RadiusAttributeInput): Row {
  return writeTx(db, (tx) => {
    const v = values(tx, input);
    checkUnique(tx, v.name, v.manufacturer_id, null);
    return tx.insert(ispRadiusAttributes).values(v).returning().get();
  });
}

export function updateRadiusAttribute(db: TenantDb, id: string, input: RadiusAttributeInput): Row {
  return writeTx(db, (tx) => {
    requireRow(tx, ispRadiusAttributes, id, "RADIUS attribute");
    const v = values(tx, input);
    checkUnique(tx, v.name, v.manufacturer_id, id);
    return tx
      .update(ispRadiusAttributes)
      .set({ ...v, updated_at: nowIso() })
      .where(eq(ispRadiusAttributes.id, id))
      .returning()
      .get();
  });
}

export function deleteRadiusAttribute(db: TenantDb, id: string): void {
  writeTx(db, (tx) => {
    requireRow(tx, ispRadiusAttributes, id, "RADIUS attribute");
    if (isUsed(tx, ispLayoutAttributes, ispLayoutAttributes.attribute_id, id)) throw conflict("The RADIUS attribute is attached to a layout");
    tx.delete(ispRadiusAttributes).where(eq(ispRadiusAttributes.id, id)).run();
  });
}

export function radiusAttributeRoutes(_ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-radius-attribute", prefix: "/api/isp/radius-attribute", tags: ["ISP"] })
    .use(guard)
    .get("", ({ tenantDb, query }) => listRadiusAttributes(tenantDb, query), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(RadiusAttribute) },
      detail: { summary: "List RADIUS attributes" },
    })
    .post("", ({ tenantDb, body, set }) => created(set, "/api/isp/radius-attribute", createRadiusAttribute(tenantDb, body)), {
      auth: AUTH,
      body: RadiusAttributeInput,
      response: { 200: RadiusAttribute },
      detail: { summary: "Create a RADIUS attribute" },
    })
    .get("/:id", ({ tenantDb, params }) => requireRow<Row>(tenantDb, ispRadiusAttributes, params.id, "RADIUS attribute"), {
      auth: AUTH,
      params: IdParams,
      response: { 200: RadiusAttribute },
      detail: { summary: "Get a RADIUS attribute" },
    })
    .put("/:id", ({ tenantDb, params, body }) => updateRadiusAttribute(tenantDb, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: RadiusAttributeInput,
      response: { 200: RadiusAttribute },
      detail: { summary: "Update a RADIUS attribute" },
    })
    .delete(
      "/:id",
      ({ tenantDb, params, set }) => {
        deleteRadiusAttribute(tenantDb, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a RADIUS attribute" } },
    )
    .put("/:id/active", ({ tenantDb, params }) => setStatus<Row>(tenantDb, ispRadiusAttributes, params.id, true, "RADIUS attribute"), {
      auth: AUTH,
      params: IdParams,
      response: { 200: RadiusAttribute },
      detail: { summary: "Activate a RADIUS attribute" },
    })
    .put("/:id/inactive", ({ tenantDb, params }) => setStatus<Row>(tenantDb, ispRadiusAttributes, params.id, false, "RADIUS attribute"), {
      auth: AUTH,
      params: IdParams,
      response: { 200: RadiusAttribute },
      detail: { summary: "Deactivate a RADIUS attribute (left out when layouts render)" },
    });
}
