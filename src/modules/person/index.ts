// Person rows of routes.md (the document's Party): CRUD, address, external links and lookups.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { checkedJsonText, created, noContent } from "../../lib/http";
import { listAnswer, mayAskCsv } from "../../lib/list-csv";
import type { Page } from "../../lib/page";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { AddressInput } from "../address/model";
import { AppById, AppByIdIdentity, AppByName, AppByNameIdentity, ExternalLinkInput, ExternalLinkView } from "../externalapp/model";
import { PERSON_VIEWS_EVERY_MS, PERSON_VIEWS_JOB, PERSON_VIEWS_SCHEDULE, PersonViews, personViewsJob } from "./kept-views";
import { Person, PersonInput, PersonWithIdentity } from "./model";
import {
  changePerson,
  changePersonAddress,
  createPerson,
  deletePerson,
  linkPerson,
  listLinkedPersons,
  listPersons,
  personByIdentity,
  personPageText,
  showPerson,
  personsUseCity,
} from "./service";

export function personModule(ctx: AppContext) {
  ctx.usedBy.city.push(personsUseCity);
  const views = new PersonViews();
  ctx.jobs.add(personViewsJob(views, (pass) => ctx.jobs.track(PERSON_VIEWS_JOB, pass)), { schedule: PERSON_VIEWS_SCHEDULE, everyMs: PERSON_VIEWS_EVERY_MS });
  return new Elysia({ name: "person", prefix: "/api", tags: ["Person"] })
    .use(authGuard(ctx))
    // The page skips the response check: its JSON text from the persons' kept texts (personPageText),
    // or the page object where the request may ask for CSV (listAnswer); test/modules/person/person-list.test.ts checks the bodies.
    .get(
      "/person",
      async ({ tenant, query, set, request }) =>
        mayAskCsv(request) ? listAnswer(set, request, await listPersons(tenant, query)) : (checkedJsonText(set, await personPageText(views, tenant, query)) as unknown as Page<Person>),
      {
        auth: "platform.person",
        query: ListQuery,
        response: { 200: ListOf(Person) },
        detail: { summary: "List persons" },
      },
    )
    .post("/person", async ({ tenant, body, set }) => created(set, "/api/person", await createPerson(tenant, body)), {
      auth: "platform.person",
      body: PersonInput,
      response: { 200: Person },
      detail: { summary: "Create a person" },
    })
    .get("/person/:id", ({ tenant, params }) => showPerson(tenant, params.id), {
      auth: "platform.person",
      params: IdParams,
      response: { 200: Person },
      detail: { summary: "Show a person" },
    })
    .put("/person/:id", ({ tenant, params, body }) => changePerson(tenant, params.id, body), {
      auth: "platform.person",
      params: IdParams,
      body: PersonInput,
      response: { 200: Person },
      detail: { summary: "Update a person" },
    })
    .delete(
      "/person/:id",
      async ({ tenant, params, set }) => {
        await deletePerson(tenant, params.id, ctx.usedBy.person);
        noContent(set);
      },
      { auth: "platform.person", params: IdParams, detail: { summary: "Delete a person" } },
    )
    .post("/person/:id/externalapp", ({ tenant, params, body }) => linkPerson(tenant, params.id, body), {
      auth: "platform.person",
      params: IdParams,
      body: ExternalLinkInput,
      response: { 200: ExternalLinkView },
      detail: { summary: "Link the person to an external application" },
    })
    .post("/person/:id/address", ({ tenant, params, body }) => changePersonAddress(tenant, params.id, body), {
      auth: "platform.person",
      params: IdParams,
      body: AddressInput,
      response: { 200: Person },
      detail: { summary: "Update the person's address" },
    })
    .get("/person/externalapp/id/:externalAppId/identity/:identity", ({ tenant, principal, params }) => personByIdentity(tenant, principal, params), {
      auth: { guard: "platform.person", key: true },
      params: AppByIdIdentity,
      response: { 200: PersonWithIdentity },
      detail: { summary: "Show a person by external application id and identity" },
    })
    .get("/person/externalapp/name/:externalAppName/identity/:identity", ({ tenant, principal, params }) => personByIdentity(tenant, principal, params), {
      auth: { guard: "platform.person", key: true },
      params: AppByNameIdentity,
      response: { 200: PersonWithIdentity },
      detail: { summary: "Show a person by external application name and identity" },
    })
    .get("/person/externalapp/id/:externalAppId", ({ tenant, principal, params, query }) => listLinkedPersons(tenant, principal, params, query), {
      auth: { guard: "platform.person", key: true },
      params: AppById,
      query: ListQuery,
      response: { 200: ListOf(PersonWithIdentity) },
      detail: { summary: "List the persons linked to an external application (by id)" },
    })
    .get("/person/externalapp/name/:externalAppName", ({ tenant, principal, params, query }) => listLinkedPersons(tenant, principal, params, query), {
      auth: { guard: "platform.person", key: true },
      params: AppByName,
      query: ListQuery,
      response: { 200: ListOf(PersonWithIdentity) },
      detail: { summary: "List the persons linked to an external application (by name)" },
    });
}
