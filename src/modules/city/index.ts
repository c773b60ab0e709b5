// City rows of routes.md: CRUD, linking to an external app and lookup by the app's identity.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { AppByIdIdentity, AppByNameIdentity, ExternalLinkInput, ExternalLinkView } from "../externalapp/model";
import { City, CityInput, CityWithIdentity } from "./model";
import { changeCity, cityByIdentity, createCity, deleteCity, linkCity, listCities, showCity } from "./service";

export function cityModule(ctx: AppContext) {
  return new Elysia({ name: "city", prefix: "/api", tags: ["City"] })
    .use(authGuard(ctx))
    .get("/city", ({ tenant, query }) => listCities(tenant, query), {
      auth: "platform.city",
      query: ListQuery,
      response: { 200: ListOf(City) },
      detail: { summary: "List cities" },
    })
    .post("/city", async ({ tenant, body, set }) => created(set, "/api/city", await createCity(tenant, body)), {
      auth: "platform.city",
      body: CityInput,
      response: { 200: City },
      detail: { summary: "Create a city" },
    })
    .get("/city/:id", ({ tenant, params }) => showCity(tenant, params.id), {
      auth: "platform.city",
      params: IdParams,
      response: { 200: City },
      detail: { summary: "Show a city" },
    })
    .put("/city/:id", ({ tenant, params, body }) => changeCity(tenant, params.id, body), {
      auth: "platform.city",
      params: IdParams,
      body: CityInput,
      response: { 200: City },
      detail: { summary: "Update a city" },
    })
    .delete(
      "/city/:id",
      async ({ tenant, params, set }) => {
        await deleteCity(tenant, params.id, ctx.usedBy.city);
        noContent(set);
      },
      { auth: "platform.city", params: IdParams, detail: { summary: "Delete a city" } },
    )
    .post("/city/:id/externalapp", ({ tenant, params, body }) => linkCity(tenant, params.id, body), {
      auth: "platform.city",
      params: IdParams,
      body: ExternalLinkInput,
      response: { 200: ExternalLinkView },
      detail: { summary: "Link the city to an external application" },
    })
    .get("/city/externalapp/name/:externalAppName/identity/:identity", ({ tenant, principal, params }) => cityByIdentity(tenant, principal, params), {
      auth: { guard: "platform.city", key: true },
      params: AppByNameIdentity,
      response: { 200: CityWithIdentity },
      detail: { summary: "Show city from identity (app by name)" },
    })
    .get("/city/externalapp/id/:externalAppId/identity/:identity", ({ tenant, principal, params }) => cityByIdentity(tenant, principal, params), {
      auth: { guard: "platform.city", key: true },
      params: AppByIdIdentity,
      response: { 200: CityWithIdentity },
      detail: { summary: "Show city from identity (app by id)" },
    });
}
