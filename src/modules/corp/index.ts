// Corporation rows of routes.md: CRUD, members, status transitions, enabled services, the tree
// and the public corporation check.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { forbidden } from "../../lib/problem";
import { ListOf, ListQuery, ProblemSchema } from "../../lib/schemas";
import { actionOf, authGuard } from "../../http/guard";
import type { Principal } from "../../core/principal";
import { permits } from "../../core/permissions";
import { User } from "../user/model";
import {
  AuthNameParams,
  CorpCheck,
  CorpCheckBody,
  CorpIdParams,
  CorpServiceParams,
  CorpTree,
  CorpUserParams,
  Corporation,
  CorporationInput,
} from "./model";
import {
  addCorpService,
  addCorpUser,
  corpCheck,
  corpTree,
  corpView,
  createCorporation,
  deleteCorporation,
  getCorp,
  getCorpByAuthName,
  listCorps,
  listCorpUsers,
  removeCorpService,
  removeCorpUser,
  setCorpStatus,
  updateCorporation,
  type CorpStatus,
  corpCountOnServer,
  corpCountsByServer,
} from "./service";

const TRANSITIONS: [path: string, status: CorpStatus, summary: string][] = [
  ["enable", "ENABLED", "Enable: status ENABLED"],
  ["block", "BLOCKED", "Block: status BLOCKED (tokens into it: 403 corp-blocked)"],
  ["maintenance", "MAINTENANCE", "Set under maintenance: status MAINTENANCE (tokens into it: 503)"],
  ["needs-update", "NEEDS_UPDATE", "Mark as needing update: status NEEDS_UPDATE (tokens into it: 503)"],
];

/** A change to corporation `corpId` by the caller; `target` says what in it changed. */
const audit = (p: Principal, action: string, corpId: string, target: string = corpId) => ({
  action,
  outcome: "success" as const,
  actor_user_id: p.userId,
  corp_id: corpId,
  target,
  ip: p.ip,
  request_id: p.requestId,
});

export function corpModule(ctx: AppContext) {
  // Servers hold corporations: the server module asks here how many (it sits below this module).
  ctx.serverCorps = { on: corpCountOnServer, byServer: corpCountsByServer };
  const app = new Elysia({ name: "corp", prefix: "/api", tags: ["Corporation"] })
    .use(authGuard(ctx))
    .post("/corp/check", ({ body }) => corpCheck(ctx, body.auth_name), {
      publicAuth: true,
      body: CorpCheckBody,
      response: { 200: CorpCheck, 429: ProblemSchema },
      detail: { summary: "Corporation check (public; unknown names answer exists: false)", security: [] },
    })
    .get("/corp", ({ query }) => listCorps(ctx, query), {
      auth: "*",
      query: ListQuery,
      response: { 200: ListOf(Corporation) },
      detail: { summary: "List corporations" },
    })
    .post(
      "/corp",
      async ({ body, set, principal }) => {
        const row = await createCorporation(ctx, body);
        await ctx.audit.record(audit(principal, "corp.create", row.id));
        return created(set, "/api/corp", corpView(row));
      },
      {
      auth: "*",
      body: CorporationInput,
      response: { 200: Corporation, 409: ProblemSchema },
      detail: { summary: "Create a corporation with its database on its server; every built-in service is enabled" },
      },
    )
    .get("/corp/authname/:authName", async ({ params }) => corpView(await getCorpByAuthName(ctx, params.authName)), {
      auth: "*",
      params: AuthNameParams,
      response: { 200: Corporation },
      detail: { summary: "Show a corporation by auth name" },
    })
    .get("/corp/:id", async ({ params }) => corpView(await getCorp(ctx, params.id)), {
      auth: "*",
      params: CorpIdParams,
      response: { 200: Corporation },
      detail: { summary: "Show a corporation" },
    })
    .put(
      "/corp/:id",
      async ({ params, body, principal }) => {
        const row = await updateCorporation(ctx, params.id, body);
        await ctx.audit.record(audit(principal, "corp.update", row.id));
        return corpView(row);
      },
      {
      auth: "*",
      params: CorpIdParams,
      body: CorporationInput,
      response: { 200: Corporation, 409: ProblemSchema },
      detail: { summary: "Update a corporation (server_id is immutable)" },
      },
    )
    .delete(
      "/corp/:id",
      async ({ params, set, principal }) => {
        await deleteCorporation(ctx, params.id);
        await ctx.audit.record(audit(principal, "corp.delete", params.id));
        noContent(set);
      },
      {
        auth: "*",
        params: CorpIdParams,
        detail: { summary: "Delete a corporation; its database file is moved to DATA_DIR/deleted/" },
      },
    )
    .get("/corp/:id/user", ({ params, query }) => listCorpUsers(ctx, params.id, query), {
      auth: "*",
      params: CorpIdParams,
      query: ListQuery,
      response: { 200: ListOf(User) },
      detail: { summary: "List the corporation's users" },
    })
    .post(
      "/corp/:id/user/:userId",
      async ({ params, set, principal }) => {
        await addCorpUser(ctx, params.id, params.userId);
        await ctx.audit.record(audit(principal, "corp.user_add", params.id, `user=${params.userId}`));
        noContent(set);
      },
      { auth: "*", params: CorpUserParams, detail: { summary: "Add a user to the corporation" } },
    )
    .delete(
      "/corp/:id/user/:userId",
      async ({ params, set, principal }) => {
        await removeCorpUser(ctx, params.id, params.userId);
        await ctx.audit.record(audit(principal, "corp.user_remove", params.id, `user=${params.userId}`));
        noContent(set);
      },
      {
        auth: "*",
        params: CorpUserParams,
        detail: { summary: "Remove a user from the corporation and its workgroups; their sessions there are revoked" },
      },
    )
    .post(
      "/corp/:id/service/:serviceId",
      async ({ params, set, principal }) => {
        await addCorpService(ctx, params.id, params.serviceId);
        await ctx.audit.record(audit(principal, "corp.service_add", params.id, `service=${params.serviceId}`));
        noContent(set);
      },
      { auth: "*", params: CorpServiceParams, detail: { summary: "Enable a service for the corporation" } },
    )
    .delete(
      "/corp/:id/service/:serviceId",
      async ({ params, set, principal }) => {
        await removeCorpService(ctx, params.id, params.serviceId);
        await ctx.audit.record(audit(principal, "corp.service_remove", params.id, `service=${params.serviceId}`));
        noContent(set);
      },
      {
        auth: "*",
        params: CorpServiceParams,
        detail: { summary: "Remove a service from the corporation, with its grants to the corporation's workgroups" },
      },
    )
    .get(
      "/corp/:id/tree",
      ({ params, principal, request, route }) => {
        // `*`, or platform.workgroup for the working corporation (to build its workgroups' grants).
        if (!principal.superAdmin) {
          if (params.id !== principal.corpId) throw forbidden("Only a platform administrator may see another corporation's tree");
          if (!permits(principal.permission, "platform.workgroup", actionOf(request, route))) throw forbidden("Requires platform.workgroup");
        }
        return corpTree(ctx, params.id);
      },
      {
        auth: "token",
        params: CorpIdParams,
        response: { 200: CorpTree },
        detail: { summary: "Tree of the services, features and actions available to the corporation" },
      },
    );

  for (const [path, status, summary] of TRANSITIONS) {
    app.post(
      `/corp/:id/${path}`,
      async ({ params, principal }) => {
        const row = await setCorpStatus(ctx, params.id, status);
        await ctx.audit.record(audit(principal, "corp.status_change", row.id, `status=${status}`));
        return corpView(row);
      },
      {
      auth: "*",
      params: CorpIdParams,
      response: { 200: Corporation },
      detail: { summary },
      },
    );
  }
  return app;
}
