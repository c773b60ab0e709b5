// Layouts (isp_layouts, isp_layout_attributes): the RADIUS reply a NAS gets for a contract, as
// attributes with templated values.
import { and, asc, eq, max } from "drizzle-orm";
import type { TenantDoor } from "../../core/store";
import { ispLayoutAttributes, ispLayouts, ispManufacturers, ispNas, ispRadiusAttributes } from "../../db/tenant/schema";
import { listRows, type ListParams } from "../../db/list";
import { conflict, invalid, notFound } from "../../lib/problem";
import { nowIso } from "../../lib/time";
import { findContract, getConfig, MASKED_PASSWORD } from "../contract/service";
import type { LayoutAttributeInput, LayoutInput } from "./model";
import { nasById } from "./nas-service";
import { checkRef, findRow, checkUniqueName, isUsed, requireRow, setStatus, type Q, trackedWrite } from "./record-service";
import { networkInForce } from "./network-service";
import { renderLayout } from "./render-service";
import { checkTemplate } from "./template";

type Row = typeof ispLayouts.$inferSelect;

export interface LayoutAttributeView {
  attribute_id: string;
  name: string;
  operator: string;
  value: string;
  /** Whether the RADIUS attribute is active (inactive ones are left out when rendering). */
  active: boolean;
}

async function layoutAttributes(db: Q, layoutId: string): Promise<LayoutAttributeView[]> {
  return await db
    .select({
      attribute_id: ispLayoutAttributes.attribute_id,
      name: ispRadiusAttributes.name,
      operator: ispLayoutAttributes.operator,
      value: ispLayoutAttributes.value,
      active: ispRadiusAttributes.status,
    })
    .from(ispLayoutAttributes)
    .innerJoin(ispRadiusAttributes, eq(ispRadiusAttributes.id, ispLayoutAttributes.attribute_id))
    .where(eq(ispLayoutAttributes.layout_id, layoutId))
    .orderBy(asc(ispLayoutAttributes.position))
    .all();
}

async function layoutView(db: Q, row: Row) {
  return { ...row, attributes: (await layoutAttributes(db, row.id)).map(({ active: _a, ...a }) => a) };
}

/** The layout as its history compares it: its view (attributes included), null when gone. */
async function layoutSnapshot(db: Q, id: string): Promise<object | null> {
  const row = await findRow<Row>(db, ispLayouts, id);
  return row ? await layoutView(db, row) : null;
}

export function listLayouts(tenant: TenantDoor, query: ListParams) {
  return tenant.read(async (db) => {
    const page = await listRows(db, ispLayouts, { q: [ispLayouts.name] }, query, (r: Row) => layoutView(db, r));
    return { ...page, items: await Promise.all(page.items) };
  });
}

async function layoutById(db: Q, id: string) {
  return await layoutView(db, await requireRow<Row>(db, ispLayouts, id, "Layout"));
}

export function getLayout(tenant: TenantDoor, id: string) {
  return tenant.read((db) => layoutById(db, id));
}

export function createLayout(tenant: TenantDoor, input: LayoutInput) {
  return trackedWrite(tenant, "layout", ispLayouts, null, async (tx) => {
    await checkUniqueName(tx, ispLayouts, input.name, null, "layout");
    const row = await tx
      .insert(ispLayouts)
      .values({
        name: input.name,
        manufacturer_id: await checkRef(tx, ispManufacturers, input.manufacturer_id, "manufacturer_id", "manufacturer"),
        description: input.description ?? null,
      })
      .returning()
      .get();
    return await layoutView(tx, row);
  }, { snapshot: layoutSnapshot });
}

export function updateLayout(tenant: TenantDoor, id: string, input: LayoutInput) {
  return trackedWrite(tenant, "layout", ispLayouts, id, async (tx) => {
    await requireRow(tx, ispLayouts, id, "Layout");
    await checkUniqueName(tx, ispLayouts, input.name, id, "layout");
    const row = await tx
      .update(ispLayouts)
      .set({
        name: input.name,
        manufacturer_id: await checkRef(tx, ispManufacturers, input.manufacturer_id, "manufacturer_id", "manufacturer"),
        description: input.description ?? null,
        updated_at: nowIso(),
      })
      .where(eq(ispLayouts.id, id))
      .returning()
      .get();
    return await layoutView(tx, row);
  }, { snapshot: layoutSnapshot });
}

export function deleteLayout(tenant: TenantDoor, id: string): Promise<void> {
  return trackedWrite(tenant, "layout", ispLayouts, id, async (tx) => {
    await requireRow(tx, ispLayouts, id, "Layout");
    if (await isUsed(tx, ispNas, ispNas.layout_id, id)) throw conflict("The layout is used by a NAS");
    await tx.delete(ispLayouts).where(eq(ispLayouts.id, id)).run();
  }, { snapshot: layoutSnapshot });
}

/** Attaches an attribute; attaching it again replaces its operator and value, keeping its place. */
export function attachAttribute(tenant: TenantDoor, layoutId: string, input: LayoutAttributeInput) {
  checkTemplate(input.value);
  return trackedWrite(tenant, "layout", ispLayouts, layoutId, async (tx) => {
    await requireRow(tx, ispLayouts, layoutId, "Layout");
    await checkRef(tx, ispRadiusAttributes, input.attribute_id, "attribute_id", "RADIUS attribute");
    const operator = input.operator ?? ":=";
    const next = ((await tx.select({ n: max(ispLayoutAttributes.position) }).from(ispLayoutAttributes).where(eq(ispLayoutAttributes.layout_id, layoutId)).get())?.n ?? 0) + 1;
    await tx.insert(ispLayoutAttributes)
      .values({ layout_id: layoutId, attribute_id: input.attribute_id, operator, value: input.value, position: next })
      .onConflictDoUpdate({ target: [ispLayoutAttributes.layout_id, ispLayoutAttributes.attribute_id], set: { operator, value: input.value } })
      .run();
    await tx.update(ispLayouts).set({ updated_at: nowIso() }).where(eq(ispLayouts.id, layoutId)).run();
    return await layoutById(tx, layoutId);
  }, { action: "attributes", snapshot: layoutSnapshot });
}

export function detachAttribute(tenant: TenantDoor, layoutId: string, attributeId: string) {
  return trackedWrite(tenant, "layout", ispLayouts, layoutId, async (tx) => {
    await requireRow(tx, ispLayouts, layoutId, "Layout");
    const where = and(eq(ispLayoutAttributes.layout_id, layoutId), eq(ispLayoutAttributes.attribute_id, attributeId));
    if (!(await tx.select({ id: ispLayoutAttributes.attribute_id }).from(ispLayoutAttributes).where(where).get())) throw notFound("Attribute attached to the layout");
    await tx.delete(ispLayoutAttributes).where(where).run();
    await tx.update(ispLayouts).set({ updated_at: nowIso() }).where(eq(ispLayouts.id, layoutId)).run();
    return await layoutById(tx, layoutId);
  }, { action: "attributes", snapshot: layoutSnapshot });
}

export function setLayoutStatus(tenant: TenantDoor, id: string, status: boolean) {
  return trackedWrite(tenant, "layout", ispLayouts, id, async (tx) => await layoutView(tx, await setStatus<Row>(tx, ispLayouts, id, status, "Layout")), { action: "status", snapshot: layoutSnapshot });
}

/**
 * A preview of what RADIUS would send: the password variable renders masked, as the contract's
 * password is shown nowhere but in the response that set it (routes.md, ContractConfig).
 */
export function renderForContract(tenant: TenantDoor, layoutId: string, contractId: string, nasId: string | undefined) {
  return tenant.read(async (db) => {
    await requireRow(db, ispLayouts, layoutId, "Layout");
    const contract = await findContract(db, contractId);
    if (!contract) throw notFound("Contract");
    let nas = null;
    if (nasId !== undefined) {
      nas = await nasById(db, nasId);
      if (!nas) throw invalid("nas_id", `no NAS with id ${nasId}`);
    }
    const { contract_id: _c, ...config } = await getConfig(db, contractId);
    return {
      layout_id: layoutId,
      contract_id: contractId,
      attributes: await renderLayout(db, layoutId, { contract, config, password: MASKED_PASSWORD, nas: nas ?? null, network: await networkInForce(db, { id: contract.id, contract_status: contract.contract_status, config }, nowIso()) }),
    };
  });
}
