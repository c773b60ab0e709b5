// City rows of routes.md: CRUD, linking to an external app and lookup by the app's identity.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { cities } from "../../db/tenant/schema";
import { created, noContent } from "../../lib/http";
import { listRows } from "../../lib/list";
import { conflict, notFound } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { unchanged } from "../../lib/unchanged";
import { authGuard } from "../auth/guard";
import {
  AppByIdIdentity,
  AppByNameIdentity,
  commit,
  ExternalLinkInput,
  ExternalLinkView,
  linkedRecordId,
  linkFromRequest,
  resolveApp,
} from "../registry-common";
import type { Principal } from "../../core/principal";
import type { TenantDb } from "../../db/sqlite";
import { City, CityInput, cityInUse, cityView, CityWithIdentity, deleteCity, getCity, insertCity, updateCity } from "./service";

const LIST = { q: [cities.name, cities.state] };

function byIdentity(db: TenantDb, principal: Principal, params: { externalAppId?: string; externalAppName?: string; identity: string }) {
  const app = resolveApp(db, principal, params);
  const id = linkedRecordId(db, app.id, "city", params.identity);
  if (!id) throw notFound("City");
  return { ...cityView(getCity(db, id)), identity: params.identity };
}

export function cityModule(ctx: AppContext) {
  return new Elysia({ name: "city", prefix: "/api", tags: ["City"] })
    .use(authGuard(ctx))
    .get("/city", ({ tenantDb, query }) => listRows(tenantDb, cities, LIST, query, cityView), {
      auth: "platform.city",
      query: ListQuery,
      response: { 200: ListOf(City) },
      detail: { summary: "List cities" },
    })
    .post(
      "/city",
      ({ tenantDb, principal, body, set }) => {
        const row = commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          const r = insertCity(tx, body);
          emit("CITY_AFTER_INSERT", r.id, () => cityView(r));
          return r;
        });
        return created(set, "/api/city", cityView(row));
      },
      { auth: "platform.city", body: CityInput, response: { 200: City }, detail: { summary: "Create a city" } },
    )
    .get("/city/:id", ({ tenantDb, params }) => cityView(getCity(tenantDb, params.id)), {
      auth: "platform.city",
      params: IdParams,
      response: { 200: City },
      detail: { summary: "Show a city" },
    })
    .put(
      "/city/:id",
      ({ tenantDb, principal, params, body }) =>
        cityView(
          commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
            const current = getCity(tx, params.id);
            if (unchanged(current, { name: body.name, state: body.state, country: body.country })) return current;
            const r = updateCity(tx, params.id, body);
            emit("CITY_AFTER_UPDATE", r.id, () => cityView(r));
            return r;
          }),
        ),
      { auth: "platform.city", params: IdParams, body: CityInput, response: { 200: City }, detail: { summary: "Update a city" } },
    )
    .delete(
      "/city/:id",
      ({ tenantDb, principal, params, set }) => {
        commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          const before = cityView(getCity(tx, params.id));
          if (cityInUse(tx, params.id)) throw conflict("The city is used by an address");
          deleteCity(tx, params.id);
          emit("CITY_AFTER_DELETE", params.id, () => before);
        });
        noContent(set);
      },
      { auth: "platform.city", params: IdParams, detail: { summary: "Delete a city" } },
    )
    .post(
      "/city/:id/externalapp",
      ({ tenantDb, params, body }) => {
        getCity(tenantDb, params.id);
        return linkFromRequest(tenantDb, "city", params.id, body);
      },
      { auth: "platform.city", params: IdParams, body: ExternalLinkInput, response: { 200: ExternalLinkView }, detail: { summary: "Link the city to an external application" } },
    )
    .get("/city/externalapp/name/:externalAppName/identity/:identity", ({ tenantDb, principal, params }) => byIdentity(tenantDb, principal, params), {
      auth: { guard: "platform.city", key: true },
      params: AppByNameIdentity,
      response: { 200: CityWithIdentity },
      detail: { summary: "Show city from identity (app by name)" },
    })
    .get("/city/externalapp/id/:externalAppId/identity/:identity", ({ tenantDb, principal, params }) => byIdentity(tenantDb, principal, params), {
      auth: { guard: "platform.city", key: true },
      params: AppByIdIdentity,
      response: { 200: CityWithIdentity },
      detail: { summary: "Show city from identity (app by id)" },
    });
}
