// Manufacturers (isp_manufacturers): the vendor of RADIUS attributes, layouts and NAS.
import { eq } from "drizzle-orm";
import type { TenantDoor } from "../../core/store";
import { ispLayouts, ispManufacturers, ispNas, ispRadiusAttributes } from "../../db/tenant/schema";
import { listRows, type ListParams } from "../../db/list";
import { conflict } from "../../lib/problem";
import { nowIso } from "../../lib/time";
import type { ManufacturerInput } from "./model";
import { checkUniqueName, isUsed, requireRow, setStatus, trackedWrite } from "./record-service";

type Row = typeof ispManufacturers.$inferSelect;
const WHAT = "manufacturer";

export function listManufacturers(tenant: TenantDoor, query: ListParams) {
  return tenant.read((db) => listRows(db, ispManufacturers, { q: [ispManufacturers.name] }, query, (r: Row) => r));
}

export function getManufacturer(tenant: TenantDoor, id: string): Promise<Row> {
  return tenant.read((db) => requireRow<Row>(db, ispManufacturers, id, "Manufacturer"));
}

export function createManufacturer(tenant: TenantDoor, input: ManufacturerInput): Promise<Row> {
  return trackedWrite(tenant, "manufacturer", ispManufacturers, null, async (tx) => {
    await checkUniqueName(tx, ispManufacturers, input.name, null, WHAT);
    return await tx.insert(ispManufacturers).values({ name: input.name, description: input.description ?? null }).returning().get();
  });
}

export function updateManufacturer(tenant: TenantDoor, id: string, input: ManufacturerInput): Promise<Row> {
  return trackedWrite(tenant, "manufacturer", ispManufacturers, id, async (tx) => {
    await requireRow(tx, ispManufacturers, id, "Manufacturer");
    await checkUniqueName(tx, ispManufacturers, input.name, id, WHAT);
    return await tx
      .update(ispManufacturers)
      .set({ name: input.name, description: input.description ?? null, updated_at: nowIso() })
      .where(eq(ispManufacturers.id, id))
      .returning()
      .get();
  });
}

export function deleteManufacturer(tenant: TenantDoor, id: string): Promise<void> {
  return trackedWrite(tenant, "manufacturer", ispManufacturers, id, async (tx) => {
    await requireRow(tx, ispManufacturers, id, "Manufacturer");
    if (await isUsed(tx, ispRadiusAttributes, ispRadiusAttributes.manufacturer_id, id)) throw conflict("The manufacturer is used by a RADIUS attribute");
    if (await isUsed(tx, ispLayouts, ispLayouts.manufacturer_id, id)) throw conflict("The manufacturer is used by a layout");
    if (await isUsed(tx, ispNas, ispNas.manufacturer_id, id)) throw conflict("The manufacturer is used by a NAS");
    await tx.delete(ispManufacturers).where(eq(ispManufacturers.id, id)).run();
  });
}

export function setManufacturerStatus(tenant: TenantDoor, id: string, status: boolean): Promise<Row> {
  return trackedWrite(tenant, "manufacturer", ispManufacturers, id, (tx) => setStatus<Row>(tx, ispManufacturers, id, status, "Manufacturer"), { action: "status" });
}
