// Layouts: the RADIUS reply a NAS gets for a contract, as attributes with templated values.
import { Elysia } from "elysia";
import { and, asc, eq, max } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { writeTx, type TenantDb } from "../../db/sqlite";
import { ispLayoutAttributes, ispLayouts, ispManufacturers, ispNas, ispRadiusAttributes } from "../../db/tenant/schema";
import { created, noContent } from "../../lib/http";
import { listRows, type ListParams } from "../../lib/list";
import { conflict, invalid, notFound } from "../../lib/problem";
import { ArrayOf, IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { nowIso } from "../../lib/time";
import type { authGuard } from "../auth/guard";
import { getConfig, MASKED_PASSWORD } from "../contract/service";
import { checkRef, checkUniqueName, isUsed, requireRow, setStatus, type Q } from "./common";
import { Layout, LayoutAttributeInput, LayoutAttributeParams, LayoutInput, LayoutVariable, Rendered, RenderParams, RenderQuery } from "./model";
import { contractRow, renderLayout } from "./render";
import { checkTemplate, LAYOUT_VARIABLES } from "./template";

type Row = typeof ispLayouts.$inferSelect;
const AUTH = "platform.isp" as const;

export interface LayoutAttributeView {
  attribute_id: string;
  name: string;
  operator: string;
  value: string;
  /** Whether the RADIUS attribute is active (inactive ones are left out when rendering). */
  active: boolean;
}

export function layoutAttributes(db: Q, layoutId: string): LayoutAttributeView[] {
  return db
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

export function layoutView(db: Q, row: Row) {
  return { ...row, attributes: layoutAttributes(db, row.id).map(({ active: _a, ...a }) => a) };
}

export function listLayouts(db: TenantDb, query: ListParams) {
  return listRows(db, ispLayouts, { q: [ispLayouts.name] }, query, (r: Row) => layoutView(db, r));
}

export function getLayout(db: Q, id: string) {
  return layoutView(db, requireRow<Row>(db, ispLayouts, id, "Layout"));
}

export function createLayout(db: TenantDb, input: LayoutInput) {
  return writeTx(db, (tx) => {
    checkUniqueName(tx, ispLayouts, input.name, null, "layout");
    const row = tx
      .insert(ispLayouts)
      .values({
        name: input.name,
        manufacturer_id: checkRef(tx, ispManufacturers, input.manufacturer_id, "manufacturer_id", "manufacturer"),
        description: input.description ?? null,
      })
      .returning()
      .get();
    return layoutView(tx, row);
  });
}

export function updateLayout(db: TenantDb, id: string, input: LayoutInput) {
  return writeTx(db, (tx) => {
    requireRow(tx, ispLayouts, id, "Layout");
    checkUniqueName(tx, ispLayouts, input.name, id, "layout");
    const row = tx
      .update(ispLayouts)
      .set({
        name: input.name,
        manufacturer_id: checkRef(tx, ispManufacturers, input.manufacturer_id, "manufacturer_id", "manufacturer"),
        description: input.description ?? null,
        updated_at: nowIso(),
      })
      .where(eq(ispLayouts.id, id))
      .returning()
      .get();
    return layoutView(tx, row);
  });
}

export function deleteLayout(db: TenantDb, id: string): void {
  writeTx(db, (tx) => {
    requireRow(tx, ispLayouts, id, "Layout");
    if (isUsed(tx, ispNas, ispNas.layout_id, id)) throw conflict("The layout is used by a NAS");
    tx.delete(ispLayouts).where(eq(ispLayouts.id, id)).run();
  });
}

/** Attaches an attribute; attaching it again replaces its operator and value, keeping its place. */
export function attachAttribute(db: TenantDb, layoutId: string, input: LayoutAttributeInput) {
  checkTemplate(input.value);
  return writeTx(db, (tx) => {
    requireRow(tx, ispLayouts, layoutId, "Layout");
    checkRef(tx, ispRadiusAttributes, input.attribute_id, "attribute_id", "RADIUS attribute");
    const operator = input.operator ?? ":=";
    const next = (tx.select({ n: max(ispLayoutAttributes.position) }).from(ispLayoutAttributes).where(eq(ispLayoutAttributes.layout_id, layoutId)).get()?.n ?? 0) + 1;
    tx.insert(ispLayoutAttributes)
      .values({ layout_id: layoutId, attribute_id: input.attribute_id, operator, value: input.value, position: next })
      .onConflictDoUpdate({ target: [ispLayoutAttributes.layout_id, ispLayoutAttributes.attribute_id], set: { operator, value: input.value } })
      .run();
    tx.update(ispLayouts).set({ updated_at: nowIso() }).where(eq(ispLayouts.id, layoutId)).run();
    return getLayout(tx, layoutId);
  });
}

export function detachAttribute(db: TenantDb, layoutId: string, attributeId: string) {
  return writeTx(db, (tx) => {
    requireRow(tx, ispLayouts, layoutId, "Layout");
    const where = and(eq(ispLayoutAttributes.layout_id, layoutId), eq(ispLayoutAttributes.attribute_id, attributeId));
    if (!tx.select({ id: ispLayoutAttributes.attribute_id }).from(ispLayoutAttributes).where(where).get()) throw notFound("Attribute attached to the layout");
    tx.delete(ispLayoutAttributes).where(where).run();
    tx.update(ispLayouts).set({ updated_at: nowIso() }).where(eq(ispLayouts.id, layoutId)).run();
    return getLayout(tx, layoutId);
  });
}

/**
 * A preview of what RADIUS would send: the password variable renders masked, as the contract's
 * password is shown nowhere but in the response that set it (routes.md, ContractConfig).
 */
export function renderForContract(db: TenantDb, layoutId: string, contractId: string, nasId: string | undefined) {
  requireRow(db, ispLayouts, layoutId, "Layout");
  const contract = contractRow(db, contractId);
  if (!contract) throw notFound("Contract");
  let nas = null;
  if (nasId !== undefined) {
    nas = db.select().from(ispNas).where(eq(ispNas.id, nasId)).get();
    if (!nas) throw invalid("nas_id", `no NAS with id ${nasId}`);
  }
  const { contract_id: _c, ...config } = getConfig(db, contractId);
  return {
    layout_id: layoutId,
    contract_id: contractId,
    attributes: renderLayout(db, layoutId, { contract, config, password: MASKED_PASSWORD, nas: nas ?? null }),
  };
}

export function layoutRoutes(_ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-layout", prefix: "/api/isp/layout", tags: ["ISP"] })
    .use(guard)
    .get("", ({ tenantDb, query }) => listLayouts(tenantDb, query), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(Layout) },
      detail: { summary: "List layouts" },
    })
    .post("", ({ tenantDb, body, set }) => created(set, "/api/isp/layout", createLayout(tenantDb, body)), {
      auth: AUTH,
      body: LayoutInput,
      response: { 200: Layout },
      detail: { summary: "Create a layout" },
    })
    .get("/variables", () => ({ items: LAYOUT_VARIABLES.map((v) => ({ ...v })) }), {
      auth: AUTH,
      response: { 200: ArrayOf(LayoutVariable) },
      detail: { summary: "Retrieve the variable templates usable in attribute values" },
    })
    .get("/:id", ({ tenantDb, params }) => getLayout(tenantDb, params.id), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Layout },
      detail: { summary: "Get a layout" },
    })
    .put("/:id", ({ tenantDb, params, body }) => updateLayout(tenantDb, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: LayoutInput,
      response: { 200: Layout },
      detail: { summary: "Update a layout (attributes unchanged)" },
    })
    .delete(
      "/:id",
      ({ tenantDb, params, set }) => {
        deleteLayout(tenantDb, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a layout" } },
    )
    .put("/:id/active", ({ tenantDb, params }) => layoutView(tenantDb, setStatus<Row>(tenantDb, ispLayouts, params.id, true, "Layout")), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Layout },
      detail: { summary: "Activate a layout" },
    })
    .put("/:id/inactive", ({ tenantDb, params }) => layoutView(tenantDb, setStatus<Row>(tenantDb, ispLayouts, params.id, false, "Layout")), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Layout },
      detail: { summary: "Deactivate a layout (RADIUS rejects users through a NAS with an inactive layout)" },
    })
    .post("/:id/attribute", ({ tenantDb, params, body }) => attachAttribute(tenantDb, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: LayoutAttributeInput,
      response: { 200: Layout },
      detail: { summary: "Add an attribute to a layout (again: replaces its operator and value)" },
    })
    .get("/:id/render/:contractId", ({ tenantDb, params, query }) => renderForContract(tenantDb, params.id, params.contractId, query.nas_id), {
      auth: AUTH,
      params: RenderParams,
      query: RenderQuery,
      response: { 200: Rendered },
      detail: { summary: "Render a layout's attributes for a contract (nas_id fills nas.* and pop.*)" },
    })
    .delete("/:id/attribute/:attributeId", ({ tenantDb, params }) => detachAttribute(tenantDb, params.id, params.attributeId), {
      auth: AUTH,
      params: LayoutAttributeParams,
      response: { 200: Layout },
      detail: { summary: "Remove an attribute (RADIUS attribute id) from a layout" },
    });
}
