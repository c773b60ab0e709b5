// Corporation rows of routes.md: CRUD, members, status transitions, enabled services, the tree
// and the public corporation check.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { forbidden } from "../../lib/problem";
import { ListOf, ListQuery, ProblemSchema } from "../../lib/schemas";
import { actionOf, authGuard } from "../../http/guard";
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
  createCorporationBy,
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
        return created(set, "/api/corp", corpView(await createCorporationBy(ctx, principal, body)));
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
      async ({ params, body, principal }) => corpView(await updateCorporation(ctx, principal, params.id, body)),
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
        await deleteCorporation(ctx, principal, params.id);
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
        await addCorpUser(ctx, principal, params.id, params.userId);
        noContent(set);
      },
      { auth: "*", params: CorpUserParams, detail: { summary: "Add a user to the corporation" } },
    )
    .delete(
      "/corp/:id/user/:userId",
      async ({ params, set, principal }) => {
        await removeCorpUser(ctx, principal, params.id, params.userId);
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
        await addCorpService(ctx, principal, params.id, params.serviceId);
        noContent(set);
      },
      { auth: "*", params: CorpServiceParams, detail: { summary: "Enable a service for the corporation" } },
    )
    .delete(
      "/corp/:id/service/:serviceId",
      async ({ params, set, principal }) => {
        await removeCorpService(ctx, principal, params.id, params.serviceId);
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
      async ({ params, principal }) => corpView(await setCorpStatus(ctx, principal, params.id, status)),
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
