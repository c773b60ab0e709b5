// Workgroup rows of routes.md (in its User group): CRUD, members, service and feature grants.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery, ProblemSchema } from "../../lib/schemas";
import { MenuWorkgroupParams } from "../catalog/model";
import { authGuard } from "../../http/guard";
import type { Principal } from "../../core/principal";
import { FeatureParams, MemberParams, ServiceParams, Workgroup, WorkgroupInput } from "./model";
import {
  addMember,
  assignMenuToWorkgroup,
  createWorkgroup,
  deleteWorkgroup,
  grantFeature,
  getWorkgroup,
  grantService,
  listWorkgroups,
  removeMember,
  revokeFeature,
  revokeService,
  updateWorkgroup,
} from "./service";

/** Who changed whose permissions: `target` names the workgroup and, for a link, what it links. */
const audit = (p: Principal, action: string, row: { id: string; corp_id: string }, link = "") => ({
  action,
  outcome: "success" as const,
  actor_user_id: p.userId,
  corp_id: row.corp_id,
  target: `workgroup=${row.id}${link}`,
  ip: p.ip,
  request_id: p.requestId,
});

export function workgroupModule(ctx: AppContext) {
  const auth = "platform.workgroup" as const;
  return new Elysia({ name: "workgroup", prefix: "/api", tags: ["User"] })
    .use(authGuard(ctx))
    .get("/workgroup", ({ query, principal }) => listWorkgroups(ctx, principal.corpId, query), {
      auth,
      query: ListQuery,
      response: { 200: ListOf(Workgroup) },
      detail: { summary: "List the working corporation's workgroups" },
    })
    .post(
      "/workgroup",
      async ({ body, principal, set }) => {
        const row = await createWorkgroup(ctx, principal.corpId, body);
        await ctx.audit.record(audit(principal, "workgroup.create", row));
        return created(set, "/api/workgroup", row);
      },
      {
      auth,
      body: WorkgroupInput,
      response: { 200: Workgroup },
      detail: { summary: "Create a workgroup in the working corporation" },
      },
    )
    .get("/workgroup/:id", ({ params, principal }) => getWorkgroup(ctx, principal, params.id), {
      auth,
      params: IdParams,
      response: { 200: Workgroup },
      detail: { summary: "Show a workgroup" },
    })
    .put(
      "/workgroup/:id",
      async ({ params, body, principal }) => {
        const row = await updateWorkgroup(ctx, principal, params.id, body);
        await ctx.audit.record(audit(principal, "workgroup.update", row));
        return row;
      },
      { auth, params: IdParams, body: WorkgroupInput, response: { 200: Workgroup }, detail: { summary: "Update a workgroup" } },
    )
    .delete(
      "/workgroup/:id",
      async ({ params, principal, set }) => {
        const row = await deleteWorkgroup(ctx, principal, params.id);
        await ctx.audit.record(audit(principal, "workgroup.delete", row));
        noContent(set);
      },
      { auth, params: IdParams, detail: { summary: "Delete a workgroup with its memberships and grants" } },
    )
    .post(
      "/workgroup/:id/user/:userId",
      async ({ params, principal, set }) => {
        const row = await addMember(ctx, principal, params.id, params.userId);
        await ctx.audit.record(audit(principal, "workgroup.member_add", row, ` user=${params.userId}`));
        noContent(set);
      },
      { auth, params: MemberParams, detail: { summary: "Add a user to the workgroup" } },
    )
    .delete(
      "/workgroup/:id/user/:userId",
      async ({ params, principal, set }) => {
        const row = await removeMember(ctx, principal, params.id, params.userId);
        await ctx.audit.record(audit(principal, "workgroup.member_remove", row, ` user=${params.userId}`));
        noContent(set);
      },
      { auth, params: MemberParams, detail: { summary: "Remove a user from the workgroup" } },
    )
    .post(
      "/workgroup/:id/service/:serviceId",
      async ({ params, principal, set }) => {
        const row = await grantService(ctx, principal, params.id, params.serviceId);
        await ctx.audit.record(audit(principal, "workgroup.service_grant", row, ` service=${params.serviceId}`));
        noContent(set);
      },
      { auth, params: ServiceParams, detail: { summary: "Give the workgroup access to a service" } },
    )
    .delete(
      "/workgroup/:id/service/:serviceId",
      async ({ params, principal, set }) => {
        const row = await revokeService(ctx, principal, params.id, params.serviceId);
        await ctx.audit.record(audit(principal, "workgroup.service_revoke", row, ` service=${params.serviceId}`));
        noContent(set);
      },
      { auth, params: ServiceParams, detail: { summary: "Take the access to a service away" } },
    )
    .post(
      "/workgroup/:id/feature/:featureId",
      async ({ params, principal, set }) => {
        const row = await grantFeature(ctx, principal, params.id, params.featureId);
        await ctx.audit.record(audit(principal, "workgroup.feature_grant", row, ` feature=${params.featureId}`));
        noContent(set);
      },
      { auth, params: FeatureParams, detail: { summary: "Give the workgroup access to a feature" } },
    )
    .delete(
      "/workgroup/:id/feature/:featureId",
      async ({ params, principal, set }) => {
        const row = await revokeFeature(ctx, principal, params.id, params.featureId);
        await ctx.audit.record(audit(principal, "workgroup.feature_revoke", row, ` feature=${params.featureId}`));
        noContent(set);
      },
      { auth, params: FeatureParams, detail: { summary: "Take the access to a feature away" } },
    )
    .post(
      "/menu/:id/workgroup/:workgroupId",
      async ({ params, principal }) => {
        const wg = await assignMenuToWorkgroup(ctx, params.id, params.workgroupId);
        const target = `workgroup=${wg.id} menu=${params.id}`;
        await ctx.audit.record({ action: "workgroup.menu_assign", outcome: "success", actor_user_id: principal.userId, corp_id: wg.corp_id, target, ip: principal.ip, request_id: principal.requestId });
        return wg;
      },
      {
      auth: "*",
      params: MenuWorkgroupParams,
      response: { 200: Workgroup, 409: ProblemSchema },
      // Published with the menu rows it belongs to in routes.md.
      detail: { summary: "Grant a workgroup the features of a menu and of its descendants", tags: ["Service & Feature"] },
      },
    );
}
