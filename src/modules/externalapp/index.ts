// External App rows of routes.md. This module also installs the guard's key verifier, so
// `key: true` routes of every module accept keys once it is registered.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import type { Principal } from "../../core/principal";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { ExternalApp, ExternalAppInput, ExternalAppWithKey } from "./model";
import { createExternalApp, deleteExternalApp, listExternalApps, rotateApiKey, showExternalApp, updateExternalApp, verifyApiKey } from "./service";

/** The app `appId` of the working corporation, changed by the caller; never the key. */
const audit = (p: Principal, action: string, appId: string) => ({
  action,
  outcome: "success" as const,
  actor_user_id: p.userId,
  corp_id: p.corpId,
  target: appId,
  ip: p.ip,
  request_id: p.requestId,
});

export function externalAppModule(ctx: AppContext) {
  ctx.apiKeys = (tenant, appId, secret) => tenant.read((db) => verifyApiKey(db, appId, secret));
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
        const app = await createExternalApp(tenant, body);
        await ctx.audit.record(audit(principal, "externalapp.create", app.id));
        return created(set, "/api/externalapp", app);
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
      async ({ tenant, principal, params, body }) => {
        const app = await updateExternalApp(tenant, params.id, body);
        await ctx.audit.record(audit(principal, "externalapp.update", app.id));
        return app;
      },
      { auth: "platform.externalapp", params: IdParams, body: ExternalAppInput, response: { 200: ExternalApp }, detail: { summary: "Update an external application" } },
    )
    .delete(
      "/externalapp/:id",
      async ({ tenant, principal, params, set }) => {
        await deleteExternalApp(tenant, params.id);
        await ctx.audit.record(audit(principal, "externalapp.delete", params.id));
        noContent(set);
      },
      { auth: "platform.externalapp", params: IdParams, detail: { summary: "Delete an external application with its external links" } },
    )
    .post(
      "/externalapp/:id/key",
      async ({ tenant, principal, params }) => {
        const app = await rotateApiKey(tenant, params.id);
        await ctx.audit.record(audit(principal, "externalapp.key_rotate", app.id));
        return app;
      },
      { auth: "platform.externalapp", params: IdParams, response: { 200: ExternalAppWithKey }, detail: { summary: "Rotate the API key; the old key stops working at once" } },
    );
}
