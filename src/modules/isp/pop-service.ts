// Points of presence (isp_pops): where NAS and pools live; an optional Address (its city is the
// city module's: checked and shown through the address module, on the caller's handle).
import { eq } from "drizzle-orm";
import { clientOf } from "../../db/rows";
import type { TenantDoor } from "../../core/store";
import type { TenantDb } from "../../db/sqlite";
import { ispNas, ispPools, ispPops } from "../../db/tenant/schema";
import { listRows, type ListParams } from "../../db/list";
import { conflict } from "../../lib/problem";
import { nowIso } from "../../lib/time";
import { ADDRESS_COLUMN_NAMES, addressColumns } from "../address/columns";
import { addressView, checkCityId } from "../address/service";
import type { AddressInput } from "../address/model";
import type { PopInput } from "./model";
import { checkUniqueName, isUsed, requireRow, setStatus, type Q, trackedWrite } from "./record-service";

type Row = typeof ispPops.$inferSelect;

async function popView(db: Q, row: Row) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    address: await addressView(db, row),
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

async function addressOf(db: Q, address: AddressInput | undefined) {
  if (address) await checkCityId(db, address.city_id, "address");
  return addressColumns(address, address?.city_id ?? null);
}

export function listPops(tenant: TenantDoor, query: ListParams) {
  return tenant.read(async (db) => {
    const page = await listRows(db, ispPops, { q: [ispPops.name], hidden: ADDRESS_COLUMN_NAMES }, query, (r: Row) => popView(db, r));
    return { ...page, items: await Promise.all(page.items) };
  });
}

export function getPop(tenant: TenantDoor, id: string) {
  return tenant.read(async (db) => await popView(db, await requireRow<Row>(db, ispPops, id, "POP")));
}

export function createPop(tenant: TenantDoor, input: PopInput) {
  return trackedWrite(tenant, "pop", ispPops, null, async (tx) => {
    await checkUniqueName(tx, ispPops, input.name, null, "POP");
    const row = await tx
      .insert(ispPops)
      .values({ name: input.name, description: input.description ?? null, ...(await addressOf(tx, input.address)) })
      .returning()
      .get();
    return await popView(tx, row);
  });
}

export function updatePop(tenant: TenantDoor, id: string, input: PopInput) {
  return trackedWrite(tenant, "pop", ispPops, id, async (tx) => {
    await requireRow(tx, ispPops, id, "POP");
    await checkUniqueName(tx, ispPops, input.name, id, "POP");
    const row = await tx
      .update(ispPops)
      .set({ name: input.name, description: input.description ?? null, ...(await addressOf(tx, input.address)), updated_at: nowIso() })
      .where(eq(ispPops.id, id))
      .returning()
      .get();
    return await popView(tx, row);
  });
}

export function deletePop(tenant: TenantDoor, id: string): Promise<void> {
  return trackedWrite(tenant, "pop", ispPops, id, async (tx) => {
    await requireRow(tx, ispPops, id, "POP");
    if (await isUsed(tx, ispPools, ispPools.pop_id, id)) throw conflict("The POP is used by a pool");
    if (await isUsed(tx, ispNas, ispNas.pop_id, id)) throw conflict("The POP is used by a NAS");
    await tx.delete(ispPops).where(eq(ispPops.id, id)).run();
  });
}

export function setPopStatus(tenant: TenantDoor, id: string, status: boolean) {
  return trackedWrite(tenant, "pop", ispPops, id, async (tx) => await popView(tx, await setStatus<Row>(tx, ispPops, id, status, "POP")), { action: "status" });
}

/** Whether any POP's address names the city (the city module refuses the city's delete then). */
export function cityUsedByPop(db: Q, cityId: string): Promise<boolean> {
  return isUsed(db, ispPops, ispPops.address_city_id, cityId);
}

/** The POP's name (layouts render `pop.name`), null when it has none or is gone. */
export async function popName(db: TenantDb, popId: string | null): Promise<string | null> {
  if (!popId) return null;
  return (await clientOf(db).query<{ name: string }, [string]>("SELECT name FROM isp_pops WHERE id = ?1").get(popId))?.name ?? null;
}
