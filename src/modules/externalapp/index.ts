// External App rows of routes.md. The API key (`<corp id>.<app id>.<secret>`) is shown only by
// create and rotation; only the secret's hash is stored. This module also installs the guard's
// key verifier, so `key: true` routes of every module accept keys once it is registered.
import { eq } from "drizzle-orm";
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { externalApps } from "../../db/tenant/schema";
import { created, noContent } from "../../lib/http";
import { listRows } from "../../lib/list";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { unchanged } from "../../lib/unchanged";
import { authGuard } from "../auth/guard";
import type { Principal } from "../../core/principal";
import { commit } from "../registry-common";
import {
  apiKeyOf,
  checkNameFree,
  ExternalApp,
  ExternalAppInput,
  externalAppView,
  ExternalAppWithKey,
  getExternalApp,
  newSecret,
  verifyApiKey,
} from "./service";

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

const LIST = { q: [externalApps.name], hidden: ["key_hash"] };

export function externalAppModule(ctx: AppContext) {
  ctx.apiKeys = (tenant, appId, secret) => tenant.read((db) => verifyApiKey(db, appId, secret));
  return new Elysia({ name: "externalapp", prefix: "/api", tags: ["External App"] })
    .use(authGuard(ctx))
    .get("/externalapp", ({ tenantDb, query }) => listRows(tenantDb, externalApps, LIST, query, externalAppView), {
      auth: "platform.externalapp",
      query: ListQuery,
      response: { 200: ListOf(ExternalApp) },
      detail: { summary: "List external applications" },
    })
    .post(
      "/externalapp",
      ({ tenantDb, principal, body, set }) => {
        const key = newSecret();
        const row = commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          checkNameFree(tx, body.name, null);
          const r = tx
            .insert(externalApps)
            .values({ name: body.name, description: body.description ?? null, status: body.status ?? true, key_prefix: key.key_prefix, key_hash: key.key_hash })
            .returning()
            .get();
          emit("EXTERNALAPP_AFTER_INSERT", r.id, () => externalAppView(r));
          return r;
        });
        ctx.audit.record(audit(principal, "externalapp.create", row.id));
        return created(set, "/api/externalapp", { ...externalAppView(row), api_key: apiKeyOf(principal.corpId, row.id, key.secret) });
      },
      { auth: "platform.externalapp", body: ExternalAppInput, response: { 200: ExternalAppWithKey }, detail: { summary: "Create an external application; its API key is returned this once" } },
    )
    .get("/externalapp/:id", ({ tenantDb, params }) => externalAppView(getExternalApp(tenantDb, params.id)), {
      auth: "platform.externalapp",
      params: IdParams,
      response: { 200: ExternalApp },
      detail: { summary: "Show an external application" },
    })
    .put(
      "/externalapp/:id",
      ({ tenantDb, principal, params, body }) => {
        const row = commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          const current = getExternalApp(tx, params.id);
          const columns = { name: body.name, description: body.description ?? null, status: body.status ?? true };
          if (unchanged(current, columns)) return current;
          checkNameFree(tx, body.name, params.id);
          const r = tx
            .update(externalApps)
            .set(columns)
            .where(eq(externalApps.id, params.id))
            .returning()
            .get();
          emit("EXTERNALAPP_AFTER_UPDATE", r.id, () => externalAppView(r));
          return r;
        });
        // The status turns the app's key on or off.
        ctx.audit.record(audit(principal, "externalapp.update", row.id));
        return externalAppView(row);
      },
      { auth: "platform.externalapp", params: IdParams, body: ExternalAppInput, response: { 200: ExternalApp }, detail: { summary: "Update an external application" } },
    )
    .delete(
      "/externalapp/:id",
      ({ tenantDb, principal, params, set }) => {
        commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          const before = externalAppView(getExternalApp(tx, params.id));
          // Its external links go with it (ON DELETE CASCADE).
          tx.delete(externalApps).where(eq(externalApps.id, params.id)).run();
          emit("EXTERNALAPP_AFTER_DELETE", params.id, () => before);
        });
        ctx.audit.record(audit(principal, "externalapp.delete", params.id));
        noContent(set);
      },
      { auth: "platform.externalapp", params: IdParams, detail: { summary: "Delete an external application with its external links" } },
    )
    .post(
      "/externalapp/:id/key",
      ({ tenantDb, principal, params }) => {
        const key = newSecret();
        const row = commit(ctx, tenantDb, principal.corpId, (tx, emit) => {
          getExternalApp(tx, params.id);
          const r = tx.update(externalApps).set({ key_prefix: key.key_prefix, key_hash: key.key_hash }).where(eq(externalApps.id, params.id)).returning().get();
          emit("EXTERNALAPP_AFTER_UPDATE", r.id, () => externalAppView(r));
          return r;
        });
        ctx.audit.record(audit(principal, "externalapp.key_rotate", row.id));
        return { ...externalAppView(row), api_key: apiKeyOf(principal.corpId, row.id, key.secret) };
      },
      { auth: "platform.externalapp", params: IdParams, response: { 200: ExternalAppWithKey }, detail: { summary: "Rotate the API key; the old key stops working at once" } },
    );
}
