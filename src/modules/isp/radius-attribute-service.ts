// RADIUS attributes (isp_radius_attributes): dictionary names (standard, or of a manufacturer)
// that layouts attach.
import { and, eq, isNull, ne } from "drizzle-orm";
import type { TenantDoor } from "../../core/store";
import { ispLayoutAttributes, ispManufacturers, ispRadiusAttributes } from "../../db/tenant/schema";
import { listRows, type ListParams } from "../../db/list";
import { conflict } from "../../lib/problem";
import { nowIso } from "../../lib/time";
import type { RadiusAttributeInput } from "./model";
import { checkRef, isUsed, requireRow, setStatus, type Q, trackedWrite } from "./record-service";

type Row = typeof ispRadiusAttributes.$inferSelect;
const WHAT = "RADIUS attribute";

/** (name, manufacturer_id) is unique, a null manufacturer (standard attribute) included. */
async function checkUnique(db: Q, name: string, manufacturerId: string | null, exceptId: string | null): Promise<void> {
  const same = and(
    eq(ispRadiusAttributes.name, name),
    manufacturerId ? eq(ispRadiusAttributes.manufacturer_id, manufacturerId) : isNull(ispRadiusAttributes.manufacturer_id),
    exceptId ? ne(ispRadiusAttributes.id, exceptId) : undefined,
  );
  if (await db.select({ id: ispRadiusAttributes.id }).from(ispRadiusAttributes).where(same).get()) {
    throw conflict(`A RADIUS attribute named '${name}' already exists for ${manufacturerId ? "that manufacturer" : "no manufacturer"}`);
  }
}

async function values(db: Q, input: RadiusAttributeInput) {
  return {
    name: input.name,
    manufacturer_id: await checkRef(db, ispManufacturers, input.manufacturer_id, "manufacturer_id", "manufacturer"),
    type: input.type,
    description: input.description ?? null,
  };
}

export function listRadiusAttributes(tenant: TenantDoor, query: ListParams) {
  return tenant.read((db) => listRows(db, ispRadiusAttributes, { q: [ispRadiusAttributes.name] }, query, (r: Row) => r));
}

export function getRadiusAttribute(tenant: TenantDoor, id: string): Promise<Row> {
  return tenant.read((db) => requireRow<Row>(db, ispRadiusAttributes, id, WHAT));
}

export function createRadiusAttribute(tenant: TenantDoor, input: RadiusAttributeInput): Promise<Row> {
  return trackedWrite(tenant, "attribute", ispRadiusAttributes, null, async (tx) => {
    const v = await values(tx, input);
    await checkUnique(tx, v.name, v.manufacturer_id, null);
    return await tx.insert(ispRadiusAttributes).values(v).returning().get();
  });
}

export function updateRadiusAttribute(tenant: TenantDoor, id: string, input: RadiusAttributeInput): Promise<Row> {
  return trackedWrite(tenant, "attribute", ispRadiusAttributes, id, async (tx) => {
    await requireRow(tx, ispRadiusAttributes, id, WHAT);
    const v = await values(tx, input);
    await checkUnique(tx, v.name, v.manufacturer_id, id);
    return await tx
      .update(ispRadiusAttributes)
      .set({ ...v, updated_at: nowIso() })
      .where(eq(ispRadiusAttributes.id, id))
      .returning()
      .get();
  });
}

export function deleteRadiusAttribute(tenant: TenantDoor, id: string): Promise<void> {
  return trackedWrite(tenant, "attribute", ispRadiusAttributes, id, async (tx) => {
    await requireRow(tx, ispRadiusAttributes, id, WHAT);
    if (await isUsed(tx, ispLayoutAttributes, ispLayoutAttributes.attribute_id, id)) throw conflict("The RADIUS attribute is attached to a layout");
    await tx.delete(ispRadiusAttributes).where(eq(ispRadiusAttributes.id, id)).run();
  });
}

export function setRadiusAttributeStatus(tenant: TenantDoor, id: string, status: boolean): Promise<Row> {
  return trackedWrite(tenant, "attribute", ispRadiusAttributes, id, (tx) => setStatus<Row>(tx, ispRadiusAttributes, id, status, WHAT), { action: "status" });
}
