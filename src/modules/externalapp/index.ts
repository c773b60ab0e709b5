// External App rows of routes.md. This module also installs the guard's key verifier, so
// `key: true` routes of every module accept keys once it is registered.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { ExternalApp, ExternalAppInput, ExternalAppWithKey } from "./model";
import { checkApiKey, createExternalApp, deleteExternalApp, listExternalApps, rotateApiKey, showExternalApp, updateExternalApp } from "./service";

export function externalAppModule(ctx: AppContext) {
  ctx.apiKeys = checkApiKey;
  return new Elysia({ name: "externalapp", prefix: "/api", tags: ["External App"] })
    .use(authGuard(ctx))
    .get("/externalapp", ({ tenant, query }) => listExternalApps(tenant, query), {
      auth: "platform.externalapp",
      query: ListQuery,
      response: { 200: ListOf(ExternalApp) },
      detail: { summary: "List external applications" },
    })
    .post(
      "/externalapp",
      async ({ tenant, principal, body, set }) => {
        return created(set, "/api/externalapp", await createExternalApp(tenant, body, { log: ctx.audit, by: principal }));
      },
      { auth: "platform.externalapp", body: ExternalAppInput, response: { 200: ExternalAppWithKey }, detail: { summary: "Create an external application; its API key is returned this once" } },
    )
    .get("/externalapp/:id", ({ tenant, params }) => showExternalApp(tenant, params.id), {
      auth: "platform.externalapp",
      params: IdParams,
      response: { 200: ExternalApp },
      detail: { summary: "Show an external application" },
    })
    .put(
      "/externalapp/:id",
      ({ tenant, principal, params, body }) => updateExternalApp(tenant, params.id, body, { log: ctx.audit, by: principal }),
      { auth: "platform.externalapp", params: IdParams, body: ExternalAppInput, response: { 200: ExternalApp }, detail: { summary: "Update an external application" } },
    )
    .delete(
      "/externalapp/:id",
      async ({ tenant, principal, params, set }) => {
        await deleteExternalApp(tenant, params.id, { log: ctx.audit, by: principal });
        noContent(set);
      },
      { auth: "platform.externalapp", params: IdParams, detail: { summary: "Delete an external application with its external links" } },
    )
    .post(
      "/externalapp/:id/key",
      ({ tenant, principal, params }) => rotateApiKey(tenant, params.id, { log: ctx.audit, by: principal }),
      { auth: "platform.externalapp", params: IdParams, response: { 200: ExternalAppWithKey }, detail: { summary: "Rotate the API key; the old key stops working at once" } },
    );
}
