// Person rows of routes.md (the document's Party): CRUD, address, external links and lookups.
import { eq, inArray } from "drizzle-orm";
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import type { TenantDb } from "../../db/sqlite";
import { persons } from "../../db/tenant/schema";
import { created, noContent } from "../../lib/http";
import { listRows, type ListParams } from "../../lib/list";
import { conflict, notFound } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { unchanged } from "../../lib/unchanged";
import { authGuard } from "../auth/guard";
import type { Principal } from "../../core/principal";
import { personIsParty } from "../contract/service";
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
  unlinkAll,
} from "../registry-common";
import { checkPersonInput, getPerson, Person, personColumns, PersonInput, personView, PersonWithIdentity } from "./service";

const LIST = { q: [persons.name, persons.display_name, persons.doc_identity], hidden: ADDRESS_COLUMN_NAMES };

function byIdentity(db: TenantDb, principal: Principal, params: { externalAppId?: string; externalAppName?: string; identity: string }) {
  const app = resolveApp(db, principal, params);
  const id = linkedRecordId(db, app.id, "person", params.identity);
  if (!id) throw notFound("Person");
  return { ...personView(db, getPerson(db, id)), identity: params.identity };
}

function linkedList(db: TenantDb, principal: Principal, params: { externalAppId?: string; externalAppName?: string }, query: ListParams) {
  const app = resolveApp(db, principal, params);
  const page = listRows(db, persons, { ...LIST, computed: identityListField(app.id, "person", persons.id) }, query, (r: typeof persons.$inferSelect) => personView(db, r), [inArray(persons.id, linkedIdsOf(db, app.id, "person"))]);
  const identities = identitiesOf(db, app.id, "person", page.items.map((p) => p.id));
  return { ...page, items: page.items.map((p) => ({ ...p, identity: identities.get(p.id)! })) };
}

export function personModule(ctx: AppContext) {
  return new Elysia({ name: "person", prefix: "/api", tags: ["Person"] })
    .use(authGuard(ctx))
    .get("/person", ({ tenantDb, query }) => listRows(tenantDb, persons, LIST, query, (r: typeof persons.$inferSelect) => personView(tenantDb, r)), {
      auth: "platform.person",
      query: ListQuery,
      response: { 200: ListOf(Person) },
      detail: { summary: "List persons" },
    })
    .post(
      "/person",
      ({ tenantDb, principal, body, set }) => {
        checkPersonInput(tenantDb, body);
        const view = commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          const r = tx.insert(persons).values(personColumns(body)).returning().get();
          const v = personView(tx, r);
          emit("PERSON_AFTER_INSERT", r.id, () => v);
          return v;
        });
        return created(set, "/api/person", view);
      },
      { auth: "platform.person", body: PersonInput, response: { 200: Person }, detail: { summary: "Create a person" } },
    )
    .get("/person/:id", ({ tenantDb, params }) => personView(tenantDb, getPerson(tenantDb, params.id)), {
      auth: "platform.person",
      params: IdParams,
      response: { 200: Person },
      detail: { summary: "Show a person" },
    })
    .put(
      "/person/:id",
      ({ tenantDb, principal, params, body }) => {
        getPerson(tenantDb, params.id);
        checkPersonInput(tenantDb, body);
        return commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          const current = getPerson(tx, params.id);
          const columns = personColumns(body);
          if (unchanged(current, columns)) return personView(tx, current);
          const r = tx.update(persons).set(columns).where(eq(persons.id, params.id)).returning().get();
          const v = personView(tx, r);
          emit("PERSON_AFTER_UPDATE", r.id, () => v);
          return v;
        });
      },
      { auth: "platform.person", params: IdParams, body: PersonInput, response: { 200: Person }, detail: { summary: "Update a person" } },
    )
    .delete(
      "/person/:id",
      ({ tenantDb, principal, params, set }) => {
        commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          const before = personView(tx, getPerson(tx, params.id));
          if (personIsParty(tx, params.id)) throw conflict("The person is a party of a contract");
          unlinkAll(tx, "person", params.id);
          tx.delete(persons).where(eq(persons.id, params.id)).run();
          emit("PERSON_AFTER_DELETE", params.id, () => before);
        });
        noContent(set);
      },
      { auth: "platform.person", params: IdParams, detail: { summary: "Delete a person" } },
    )
    .post(
      "/person/:id/externalapp",
      ({ tenantDb, params, body }) => {
        getPerson(tenantDb, params.id);
        return linkFromRequest(tenantDb, "person", params.id, body);
      },
      { auth: "platform.person", params: IdParams, body: ExternalLinkInput, response: { 200: ExternalLinkView }, detail: { summary: "Link the person to an external application" } },
    )
    .post(
      "/person/:id/address",
      ({ tenantDb, principal, params, body }) => {
        getPerson(tenantDb, params.id);
        checkCityId(tenantDb, body.city_id, "");
        return commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          const current = getPerson(tx, params.id);
          const columns = addressColumns(body, body.city_id);
          if (unchanged(current, columns)) return personView(tx, current);
          const r = tx.update(persons).set(columns).where(eq(persons.id, params.id)).returning().get();
          const v = personView(tx, r);
          emit("PERSON_AFTER_UPDATE", r.id, () => v);
          return v;
        });
      },
      { auth: "platform.person", params: IdParams, body: AddressInput, response: { 200: Person }, detail: { summary: "Update the person's address" } },
    )
    .get("/person/externalapp/id/:externalAppId/identity/:identity", ({ tenantDb, principal, params }) => byIdentity(tenantDb, principal, params), {
      auth: { guard: "platform.person", key: true },
      params: AppByIdIdentity,
      response: { 200: PersonWithIdentity },
      detail: { summary: "Show a person by external application id and identity" },
    })
    .get("/person/externalapp/name/:externalAppName/identity/:identity", ({ tenantDb, principal, params }) => byIdentity(tenantDb, principal, params), {
      auth: { guard: "platform.person", key: true },
      params: AppByNameIdentity,
      response: { 200: PersonWithIdentity },
      detail: { summary: "Show a person by external application name and identity" },
    })
    .get("/person/externalapp/id/:externalAppId", ({ tenantDb, principal, params, query }) => linkedList(tenantDb, principal, params, query), {
      auth: { guard: "platform.person", key: true },
      params: AppById,
      query: ListQuery,
      response: { 200: ListOf(PersonWithIdentity) },
      detail: { summary: "List the persons linked to an external application (by id)" },
    })
    .get("/person/externalapp/name/:externalAppName", ({ tenantDb, principal, params, query }) => linkedList(tenantDb, principal, params, query), {
      auth: { guard: "platform.person", key: true },
      params: AppByName,
      query: ListQuery,
      response: { 200: ListOf(PersonWithIdentity) },
      detail: { summary: "List the persons linked to an external application (by name)" },
    });
}
