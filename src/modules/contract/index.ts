// Contract rows of routes.md: local CRUD, the external-app upsert (upsert.ts), lookups by the
// app's identity, connection settings, items, flags and the active/inactive transitions.
import { Elysia, type Context } from "elysia";
import type { AppContext } from "../../core/context";
import type { Principal } from "../../core/principal";
import type { TenantDoor } from "../../core/store";
import { checkedJson, checkedJsonText, created } from "../../lib/http";
import { IdParams, ListOf } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { AddressInput } from "../address/model";
import { AppById, AppByIdIdentity, AppByName, AppByNameIdentity, ExternalLinkInput, ExternalLinkView } from "../externalapp/model";
import {
  Contract,
  ContractConfigInput,
  ContractExternalInput,
  ContractInput,
  ContractListQuery,
  ContractWithIdentity,
  FlagsBody,
  FlagsResponse,
  ItemsBody,
  ItemsResponse,
} from "./model";
import {
  contractByIdentityIn,
  contractItemListIn,
  contractViewText,
  createContractIn,
  linkContractIn,
  listContractsIn,
  listLinkedContractsIn,
  setContractAddressIn,
  setContractConfigIn,
  setContractFlagsIn,
  setContractItemsIn,
  setContractStatusIn,
  updateContractIn,
  contractBodiesJob,
  contractClassificationHolders,
  contractsUseCity,
  CONTRACT_BODIES_EVERY_MS,
  CONTRACT_BODIES_JOB,
  personIsParty,
  productOnContractItems,
} from "./service";
import { upsertFromExternalApp } from "./upsert";

export { findContractByUsername, type ContractByUsername } from "./service";

export function contractModule(ctx: AppContext) {
  // What contracts reference, asked by the modules owning it before a delete or a rename.
  ctx.usedBy.city.push(contractsUseCity);
  ctx.usedBy.person.push(personIsParty);
  ctx.usedBy.product.push(productOnContractItems);
  ctx.classificationHolders.push(contractClassificationHolders(ctx));
  ctx.jobs.add(contractBodiesJob((pass) => ctx.jobs.track(CONTRACT_BODIES_JOB, pass)), { schedule: `every ${CONTRACT_BODIES_EVERY_MS / 1000} s`, everyMs: CONTRACT_BODIES_EVERY_MS });
  const key = (guard: "platform.contract") => ({ guard, key: true });
  // The answer is the contract view built field by field from the schema's type (as GET
  // /api/contract/{id}), so Elysia's response check and normalisation are skipped (checkedJson:
  // ≈ 20 µs of the upsert); the upsert tests check the bodies against the schema.
  const upsert = async (tenant: TenantDoor, principal: Principal, params: { externalAppId?: string; externalAppName?: string }, body: ContractExternalInput, set: Context["set"]) => {
    const { contract, created: isNew } = await upsertFromExternalApp(ctx, tenant, principal, params, body);
    // A creating upsert is a create: it sends Location as every create does (routes.md, Success).
    return checkedJson(set, isNew ? created(set, "/api/contract", contract) : contract);
  };
  return new Elysia({ name: "contract", prefix: "/api", tags: ["Contract"] })
    .use(authGuard(ctx))
    .get("/contract", ({ tenant, principal, query }) => listContractsIn(ctx.contractNetwork, tenant, principal, query), {
      auth: "platform.contract",
      query: ContractListQuery,
      response: { 200: ListOf(Contract) },
      detail: { summary: "List all contracts (also ?customer_id)" },
    })
    .post("/contract", async ({ tenant, principal, body, set }) => created(set, "/api/contract", await createContractIn(ctx.contractNetwork, tenant, principal, body)), {
      auth: "platform.contract",
      body: ContractInput,
      response: { 200: Contract },
      detail: { summary: "Create a contract (the generated password is shown this once)" },
    })
    .post("/contract/create/externalapp/name/:externalAppName", ({ tenant, principal, params, body, set }) => upsert(tenant, principal, params, body, set), {
      auth: key("platform.contract"),
      params: AppByName,
      body: ContractExternalInput,
      response: { 200: ContractWithIdentity },
      detail: { summary: "Create or update a contract from an external application (by name)" },
    })
    .post("/contract/create/externalapp/id/:externalAppId", ({ tenant, principal, params, body, set }) => upsert(tenant, principal, params, body, set), {
      auth: key("platform.contract"),
      params: AppById,
      body: ContractExternalInput,
      response: { 200: ContractWithIdentity },
      detail: { summary: "Create or update a contract from an external application (by id)" },
    })
    .get("/contract/externalapp/id/:externalAppId/identity/:identity", ({ tenant, principal, params }) => contractByIdentityIn(ctx.contractNetwork, tenant, principal, params), {
      auth: key("platform.contract"),
      params: AppByIdIdentity,
      response: { 200: ContractWithIdentity },
      detail: { summary: "Show a contract by external application id and identity" },
    })
    .get("/contract/externalapp/name/:externalAppName/identity/:identity", ({ tenant, principal, params }) => contractByIdentityIn(ctx.contractNetwork, tenant, principal, params), {
      auth: key("platform.contract"),
      params: AppByNameIdentity,
      response: { 200: ContractWithIdentity },
      detail: { summary: "Show a contract by external application name and identity" },
    })
    .get("/contract/externalapp/id/:externalAppId", ({ tenant, principal, params, query }) => listLinkedContractsIn(ctx.contractNetwork, tenant, principal, params, query), {
      auth: key("platform.contract"),
      params: AppById,
      query: ContractListQuery,
      response: { 200: ListOf(ContractWithIdentity) },
      detail: { summary: "List the contracts of an external application (by id)" },
    })
    .get("/contract/externalapp/name/:externalAppName", ({ tenant, principal, params, query }) => listLinkedContractsIn(ctx.contractNetwork, tenant, principal, params, query), {
      auth: key("platform.contract"),
      params: AppByName,
      query: ContractListQuery,
      response: { 200: ListOf(ContractWithIdentity) },
      detail: { summary: "List the contracts of an external application (by name)" },
    })
    // The hottest read: its value is built from the schema's type (contractViewById), so the
    // response check is skipped (checkedJson); test/registry/contract-view.test.ts checks the bodies.
    // The text itself is reused until the corporation's database changes (contractViewText): per
    // change stamp, which moves with every commit (on PostgreSQL a kept text needs no transaction).
    .get("/contract/:id", async ({ tenant, principal, params, set }) => checkedJsonText(set, await contractViewText(ctx.contractNetwork, tenant, params.id, principal.corp.timezone)), {
      auth: "platform.contract",
      params: IdParams,
      response: { 200: Contract },
      detail: { summary: "Show a contract" },
    })
    .put("/contract/:id", ({ tenant, principal, params, body }) => updateContractIn(ctx, tenant, principal, params.id, body), {
      auth: "platform.contract",
      params: IdParams,
      body: ContractInput,
      response: { 200: Contract },
      detail: { summary: "Alter a contract (full update)" },
    })
    .post("/contract/:id/externalapp", ({ tenant, params, body }) => linkContractIn(tenant, params.id, body), {
      auth: "platform.contract",
      params: IdParams,
      body: ExternalLinkInput,
      response: { 200: ExternalLinkView },
      detail: { summary: "Link the contract to an external application" },
    })
    .post("/contract/:id/address", ({ tenant, principal, params, body }) => setContractAddressIn(ctx, tenant, principal, params.id, body), {
      auth: "platform.contract",
      params: IdParams,
      body: AddressInput,
      response: { 200: Contract },
      detail: { summary: "Update the contract's address" },
    })
    .put("/contract/:id/active", ({ tenant, principal, params }) => setContractStatusIn(ctx, tenant, principal, params.id, "ACTIVE"), {
      auth: "platform.contract",
      params: IdParams,
      response: { 200: Contract },
      detail: { summary: "Make active: contract_status ACTIVE (from INACTIVE or SUSPENDED; 409 CANCELLED)" },
    })
    .put("/contract/:id/inactive", ({ tenant, principal, params }) => setContractStatusIn(ctx, tenant, principal, params.id, "INACTIVE"), {
      auth: "platform.contract",
      params: IdParams,
      response: { 200: Contract },
      detail: { summary: "Make inactive: contract_status INACTIVE (from ACTIVE or SUSPENDED; 409 CANCELLED)" },
    })
    .post("/contract/:id/config", ({ tenant, principal, params, body }) => setContractConfigIn(ctx, tenant, principal, params.id, body), {
      auth: "platform.contract",
      params: IdParams,
      body: ContractConfigInput,
      response: { 200: Contract },
      detail: { summary: "Update the connection settings" },
    })
    .get("/contract/:id/items", ({ tenant, params }) => contractItemListIn(tenant, params.id), {
      auth: "platform.contract",
      params: IdParams,
      response: { 200: ItemsResponse },
      detail: { summary: "Get the contract's items" },
    })
    .post("/contract/:id/items", ({ tenant, principal, params, body }) => setContractItemsIn(ctx, tenant, principal, params.id, body.items), {
      auth: "platform.contract",
      params: IdParams,
      body: ItemsBody,
      response: { 200: ItemsResponse },
      detail: { summary: "Define the contract's items (replaces the set)" },
    })
    .patch("/contract/:id/flags", ({ tenant, principal, params, body }) => setContractFlagsIn(ctx, tenant, principal, params.id, body), {
      auth: "platform.contract",
      params: IdParams,
      body: FlagsBody,
      response: { 200: FlagsResponse },
      detail: { summary: "Manipulate flags (classification names)" },
    });
}
