// Contract rows of routes.md: local CRUD, the external-app upsert (upsert.ts), lookups by the
// app's identity, connection settings, items, flags and the active/inactive transitions.
import { and, eq, inArray } from "drizzle-orm";
import { Elysia, type Context } from "elysia";
import type { AppContext } from "../../core/context";
import type { TenantDb } from "../../db/sqlite";
import { contractFlags, contractItems, contracts } from "../../db/tenant/schema";
import { checkedJsonText, created } from "../../lib/http";
import { listRows, type ListParams } from "../../lib/list";
import { conflict, forbidden, invalid, invalidMany, notFound, type FieldError } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { canonicalDate, nowIso } from "../../lib/time";
import { unchanged } from "../../lib/unchanged";
import { authGuard } from "../auth/guard";
import type { Principal } from "../../core/principal";
import { classificationIds } from "../classification";
import { productsByIds } from "../product/service";
import {
  ADDRESS_COLUMN_NAMES,
  AddressInput,
  addressColumns,
  AppById,
  AppByIdIdentity,
  AppByName,
  AppByNameIdentity,
  checkCityId,
  commit,
  ExternalLinkInput,
  ExternalLinkView,
  identitiesOf,
  identityListField,
  linkedIdsOf,
  linkedRecordId,
  linkFromRequest,
  resolveApp,
  type Tx,
} from "../registry-common";
import {
  Contract,
  ContractConfigInput,
  ContractExternalInput,
  ContractInput,
  ContractWithIdentity,
  DATE_FIELDS,
  FlagsBody,
  FlagsResponse,
  ItemsBody,
  ItemsResponse,
} from "./model";
import {
  checkConfigInput,
  checkLocalInput,
  contractConnection,
  contractChanged,
  contractView,
  flagNames,
  contractViewJson,
  getContractView,
  getContract,
  insertDefaultConfig,
  itemsOf,
  localColumns,
  numberHolder,
  updateConfig,
  type ContractConnection,
  type ContractRow,
} from "./service";
import { upsertFromExternalApp } from "./upsert";

export { findContractByUsername, type ContractByUsername } from "./service";

const LIST = {
  q: [contracts.number],
  hidden: [...ADDRESS_COLUMN_NAMES, "json_original", "json_billing", "json_payment_method", "json_items"],
};

const tzOf = (p: Principal) => p.corp.timezone;

/**
 * Contract dates are stored as `YYYY-MM-DD` but shown as midnight in the corporation's timezone:
 * a date filter accepts either form (a date-time's date part is used, as in request bodies).
 */
function listQuery(query: ListParams): ListParams {
  const out = { ...query };
  for (const f of DATE_FIELDS) {
    const raw = out[f];
    if (raw === undefined) continue;
    const text = Array.isArray(raw) ? String(raw[raw.length - 1]) : String(raw);
    const date = canonicalDate(text);
    if (!date) throw invalid(f, "must be a date, YYYY-MM-DD");
    out[f] = date;
  }
  return out;
}

function byIdentity(db: TenantDb, principal: Principal, params: { externalAppId?: string; externalAppName?: string; identity: string }) {
  const app = resolveApp(db, principal, params);
  const id = linkedRecordId(db, app.id, "contract", params.identity);
  if (!id) throw notFound("Contract");
  return { ...getContractView(db, id, tzOf(principal)), identity: params.identity };
}

function linkedList(db: TenantDb, principal: Principal, params: { externalAppId?: string; externalAppName?: string }, query: ListParams) {
  const app = resolveApp(db, principal, params);
  const tz = tzOf(principal);
  const page = listRows(db, contracts, { ...LIST, computed: identityListField(app.id, "contract", contracts.id) }, listQuery(query), (r: ContractRow) => contractView(db, r, tz), [inArray(contracts.id, linkedIdsOf(db, app.id, "contract"))]);
  const identities = identitiesOf(db, app.id, "contract", page.items.map((c) => c.id));
  return { ...page, items: page.items.map((c) => ({ ...c, identity: identities.get(c.id)! })) };
}

async function upsert(
  ctx: AppContext,
  db: TenantDb,
  principal: Principal,
  params: { externalAppId?: string; externalAppName?: string },
  body: ContractExternalInput,
  set: Context["set"],
) {
  const app = resolveApp(db, principal, params);
  if (!app.status) throw forbidden("The external application is inactive");
  const { contract, created: isNew } = await upsertFromExternalApp(ctx, db, principal.corpId, tzOf(principal), app, body);
  // A creating upsert is a create: it sends Location as every create does (routes.md, Success).
  return isNew ? created(set, "/api/contract", contract) : contract;
}

/**
 * A change to one contract that fires CONTRACT_AFTER_UPDATE with its new view; after the commit
 * the contract watchers hear of it (RADIUS sessions: disconnect or CoA).
 */
function changeContract<T>(ctx: AppContext, db: TenantDb, principal: Principal, id: string, fn: (tx: Tx, row: ContractRow) => T | null): T | null {
  let before: ContractConnection | null = null;
  const result = commit(ctx, db, principal.corpId, (tx, emit) => {
    const row = getContract(tx, id);
    before = contractConnection(tx, id);
    const out = fn(tx, row);
    if (out === null) return null;
    tx.update(contracts).set({ updated_at: nowIso() }).where(eq(contracts.id, id)).run();
    emit("CONTRACT_AFTER_UPDATE", id, (t) => getContractView(t, id, tzOf(principal)));
    return out;
  });
  if (result !== null) contractChanged(ctx, { corpId: principal.corpId, contractId: id, before, actorUserId: principal.userId, ip: principal.ip });
  return result;
}

function setStatus(ctx: AppContext, db: TenantDb, principal: Principal, id: string, target: "ACTIVE" | "INACTIVE") {
  changeContract(ctx, db, principal, id, (tx, row) => {
    if (row.contract_status === "CANCELLED") throw conflict("The contract is cancelled");
    if (row.contract_status === target) return null;
    tx.update(contracts).set({ contract_status: target }).where(eq(contracts.id, id)).run();
    return true;
  });
  return getContractView(db, id, tzOf(principal));
}

export function contractModule(ctx: AppContext) {
  const key = (guard: "platform.contract") => ({ guard, key: true });
  return new Elysia({ name: "contract", prefix: "/api", tags: ["Contract"] })
    .use(authGuard(ctx))
    .get(
      "/contract",
      ({ tenantDb, principal, query }) => listRows(tenantDb, contracts, LIST, listQuery(query), (r: ContractRow) => contractView(tenantDb, r, tzOf(principal))),
      { auth: "platform.contract", query: ListQuery, response: { 200: ListOf(Contract) }, detail: { summary: "List all contracts (also ?customer_id)" } },
    )
    .post(
      "/contract",
      ({ tenantDb, principal, body, set }) => {
        const { dates } = checkLocalInput(tenantDb, body);
        const id = commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          numberHolder(tx, body.number, null);
          const id = tx.insert(contracts).values(localColumns(body, dates)).returning({ id: contracts.id }).get().id;
          insertDefaultConfig(tx, id, body.number);
          emit("CONTRACT_AFTER_INSERT", id, (t) => getContractView(t, id, tzOf(principal)));
          return id;
        });
        return created(set, "/api/contract", getContractView(tenantDb, id, tzOf(principal), true));
      },
      { auth: "platform.contract", body: ContractInput, response: { 200: Contract }, detail: { summary: "Create a contract (the generated password is shown this once)" } },
    )
    .post("/contract/create/externalapp/name/:externalAppName", ({ tenantDb, principal, params, body, set }) => upsert(ctx, tenantDb, principal, params, body, set), {
      auth: key("platform.contract"),
      params: AppByName,
      body: ContractExternalInput,
      response: { 200: ContractWithIdentity },
      detail: { summary: "Create or update a contract from an external application (by name)" },
    })
    .post("/contract/create/externalapp/id/:externalAppId", ({ tenantDb, principal, params, body, set }) => upsert(ctx, tenantDb, principal, params, body, set), {
      auth: key("platform.contract"),
      params: AppById,
      body: ContractExternalInput,
      response: { 200: ContractWithIdentity },
      detail: { summary: "Create or update a contract from an external application (by id)" },
    })
    .get("/contract/externalapp/id/:externalAppId/identity/:identity", ({ tenantDb, principal, params }) => byIdentity(tenantDb, principal, params), {
      auth: key("platform.contract"),
      params: AppByIdIdentity,
      response: { 200: ContractWithIdentity },
      detail: { summary: "Show a contract by external application id and identity" },
    })
    .get("/contract/externalapp/name/:externalAppName/identity/:identity", ({ tenantDb, principal, params }) => byIdentity(tenantDb, principal, params), {
      auth: key("platform.contract"),
      params: AppByNameIdentity,
      response: { 200: ContractWithIdentity },
      detail: { summary: "Show a contract by external application name and identity" },
    })
    .get("/contract/externalapp/id/:externalAppId", ({ tenantDb, principal, params, query }) => linkedList(tenantDb, principal, params, query), {
      auth: key("platform.contract"),
      params: AppById,
      query: ListQuery,
      response: { 200: ListOf(ContractWithIdentity) },
      detail: { summary: "List the contracts of an external application (by id)" },
    })
    .get("/contract/externalapp/name/:externalAppName", ({ tenantDb, principal, params, query }) => linkedList(tenantDb, principal, params, query), {
      auth: key("platform.contract"),
      params: AppByName,
      query: ListQuery,
      response: { 200: ListOf(ContractWithIdentity) },
      detail: { summary: "List the contracts of an external application (by name)" },
    })
    // The hottest read: its value is built from the schema's type (contractViewById), so the
    // response check is skipped (checkedJson); test/registry/contract-view.test.ts checks the bodies.
    // The text itself is reused until the corporation's database changes (contractViewJson).
    .get("/contract/:id", ({ tenantDb, principal, params, set }) => checkedJsonText(set, contractViewJson(tenantDb, params.id, tzOf(principal))), {
      auth: "platform.contract",
      params: IdParams,
      response: { 200: Contract },
      detail: { summary: "Show a contract" },
    })
    .put(
      "/contract/:id",
      ({ tenantDb, principal, params, body }) => {
        getContract(tenantDb, params.id);
        const { dates } = checkLocalInput(tenantDb, body);
        changeContract(ctx, tenantDb, principal, params.id, (tx, row) => {
          const columns = localColumns(body, dates);
          // The body as stored (dates, JSON text, left-out fields as null) is what it has: no change.
          if (unchanged(row, columns)) return null;
          numberHolder(tx, body.number, params.id);
          tx.update(contracts).set(columns).where(eq(contracts.id, params.id)).run();
          return true;
        });
        return getContractView(tenantDb, params.id, tzOf(principal));
      },
      { auth: "platform.contract", params: IdParams, body: ContractInput, response: { 200: Contract }, detail: { summary: "Alter a contract (full update)" } },
    )
    .post(
      "/contract/:id/externalapp",
      ({ tenantDb, params, body }) => {
        getContract(tenantDb, params.id);
        return linkFromRequest(tenantDb, "contract", params.id, body);
      },
      { auth: "platform.contract", params: IdParams, body: ExternalLinkInput, response: { 200: ExternalLinkView }, detail: { summary: "Link the contract to an external application" } },
    )
    .post(
      "/contract/:id/address",
      ({ tenantDb, principal, params, body }) => {
        getContract(tenantDb, params.id);
        checkCityId(tenantDb, body.city_id, "");
        changeContract(ctx, tenantDb, principal, params.id, (tx, row) => {
          const columns = addressColumns(body, body.city_id);
          if (unchanged(row, columns)) return null;
          tx.update(contracts).set(columns).where(eq(contracts.id, params.id)).run();
          return true;
        });
        return getContractView(tenantDb, params.id, tzOf(principal));
      },
      { auth: "platform.contract", params: IdParams, body: AddressInput, response: { 200: Contract }, detail: { summary: "Update the contract's address" } },
    )
    .put("/contract/:id/active", ({ tenantDb, principal, params }) => setStatus(ctx, tenantDb, principal, params.id, "ACTIVE"), {
      auth: "platform.contract",
      params: IdParams,
      response: { 200: Contract },
      detail: { summary: "Make active: contract_status ACTIVE (from INACTIVE or SUSPENDED; 409 CANCELLED)" },
    })
    .put("/contract/:id/inactive", ({ tenantDb, principal, params }) => setStatus(ctx, tenantDb, principal, params.id, "INACTIVE"), {
      auth: "platform.contract",
      params: IdParams,
      response: { 200: Contract },
      detail: { summary: "Make inactive: contract_status INACTIVE (from ACTIVE or SUSPENDED; 409 CANCELLED)" },
    })
    .post(
      "/contract/:id/config",
      ({ tenantDb, principal, params, body }) => {
        getContract(tenantDb, params.id);
        checkConfigInput(body);
        changeContract(ctx, tenantDb, principal, params.id, (tx) => (updateConfig(tx, params.id, body) ? true : null));
        // The password is in clear only when this request set it.
        return getContractView(tenantDb, params.id, tzOf(principal), body.password != null);
      },
      { auth: "platform.contract", params: IdParams, body: ContractConfigInput, response: { 200: Contract }, detail: { summary: "Update the connection settings" } },
    )
    .get("/contract/:id/items", ({ tenantDb, params }) => (getContract(tenantDb, params.id), { items: itemsOf(tenantDb, params.id) }), {
      auth: "platform.contract",
      params: IdParams,
      response: { 200: ItemsResponse },
      detail: { summary: "Get the contract's items" },
    })
    .post(
      "/contract/:id/items",
      ({ tenantDb, principal, params, body }) => {
        getContract(tenantDb, params.id);
        const found = productsByIds(tenantDb, body.items.map((i) => i.product_id));
        const errors: FieldError[] = [];
        body.items.forEach((i, n) => {
          if (!found.has(i.product_id)) errors.push({ path: `items.${n}.product_id`, message: "unknown product" });
        });
        if (errors.length) throw invalidMany(errors);
        changeContract(ctx, tenantDb, principal, params.id, (tx) => {
          const wanted = body.items.map((i, n) => {
            const p = found.get(i.product_id)!;
            return { product_id: p.id, description: i.description ?? p.name, quantity: i.quantity ?? 1, unit_price: i.unit_price ?? p.price ?? 0 };
          });
          // The same list, in the same order (itemsOf reads by position), as stored: the items keep
          // their ids and nothing fires.
          const held = itemsOf(tx, params.id);
          if (held.length === wanted.length && held.every((h, n) => unchanged(h, wanted[n]))) return null;
          tx.delete(contractItems).where(eq(contractItems.contract_id, params.id)).run();
          wanted.forEach((w, n) => tx.insert(contractItems).values({ contract_id: params.id, position: n, ...w }).run());
          return true;
        });
        return { items: itemsOf(tenantDb, params.id) };
      },
      { auth: "platform.contract", params: IdParams, body: ItemsBody, response: { 200: ItemsResponse }, detail: { summary: "Define the contract's items (replaces the set)" } },
    )
    .patch(
      "/contract/:id/flags",
      ({ tenantDb, principal, params, body }) => {
        getContract(tenantDb, params.id);
        const add = body.add ?? [];
        const remove = body.remove ?? [];
        const errors: FieldError[] = [];
        const addIds = classificationIds(tenantDb, add);
        for (const i of addIds.unknown) errors.push({ path: `add.${i}`, message: `unknown classification '${add[i]}'` });
        const removeIds = classificationIds(tenantDb, remove);
        for (const i of removeIds.unknown) errors.push({ path: `remove.${i}`, message: `unknown classification '${remove[i]}'` });
        remove.forEach((name, i) => {
          if (add.includes(name)) errors.push({ path: `remove.${i}`, message: `'${name}' is also in add` });
        });
        if (errors.length) throw invalidMany(errors);
        changeContract(ctx, tenantDb, principal, params.id, (tx) => {
          const before = flagNames(tx, params.id).join("\n");
          for (const cid of addIds.ids) tx.insert(contractFlags).values({ contract_id: params.id, classification_id: cid }).onConflictDoNothing().run();
          if (removeIds.ids.length) {
            tx.delete(contractFlags)
              .where(and(eq(contractFlags.contract_id, params.id), inArray(contractFlags.classification_id, removeIds.ids)))
              .run();
          }
          return flagNames(tx, params.id).join("\n") === before ? null : true;
        });
        return { flags: flagNames(tenantDb, params.id) };
      },
      { auth: "platform.contract", params: IdParams, body: FlagsBody, response: { 200: FlagsResponse }, detail: { summary: "Manipulate flags (classification names)" } },
    );
}
