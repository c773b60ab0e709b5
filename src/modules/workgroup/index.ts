// Workgroup rows of routes.md (in its User group): CRUD, members, service and feature grants.
import { Elysia } from "elysia";
import { eq } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { workgroups } from "../../db/platform/schema";
import { created, noContent } from "../../lib/http";
import { listRows } from "../../lib/list";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard } from "../auth/guard";
import type { Principal } from "../../core/principal";
import { FeatureParams, MemberParams, ServiceParams, Workgroup, WorkgroupInput } from "./model";
import {
  addMember,
  createWorkgroup,
  deleteWorkgroup,
  grantFeature,
  grantService,
  removeMember,
  revokeFeature,
  revokeService,
  updateWorkgroup,
  visibleWorkgroup,
  workgroupView,
  type WorkgroupRow,
} from "./service";

/** Who changed whose permissions: `target` names the workgroup and, for a link, what it links. */
const audit = (p: Principal, action: string, row: WorkgroupRow, link = "") => ({
  action,
  outcome: "success" as const,
  actor_user_id: p.userId,
  corp_id: row.corp_id,
  target: `workgroup=${row.id}${link}`,
  ip: p.ip,
  request_id: p.requestId,
});

export function workgroupModule(ctx: AppContext) {
  const view = (row: WorkgroupRow) => workgroupView(ctx, row);
  const auth = "platform.workgroup" as const;
  return new Elysia({ name: "workgroup", prefix: "/api", tags: ["User"] })
    .use(authGuard(ctx))
    .get("/workgroup", ({ query, principal }) => listRows(ctx.platform, workgroups, { q: [workgroups.name] }, query, view, [eq(workgroups.corp_id, principal.corpId)]), {
      auth,
      query: ListQuery,
      response: { 200: ListOf(Workgroup) },
      detail: { summary: "List the working corporation's workgroups" },
    })
    .post(
      "/workgroup",
      ({ body, principal, set }) => {
        const row = createWorkgroup(ctx, principal.corpId, body);
        ctx.audit.record(audit(principal, "workgroup.create", row));
        return created(set, "/api/workgroup", view(row));
      },
      {
      auth,
      body: WorkgroupInput,
      response: { 200: Workgroup },
      detail: { summary: "Create a workgroup in the working corporation" },
      },
    )
    .get("/workgroup/:id", ({ params, principal }) => view(visibleWorkgroup(ctx, principal, params.id)), {
      auth,
      params: IdParams,
      response: { 200: Workgroup },
      detail: { summary: "Show a workgroup" },
    })
    .put(
      "/workgroup/:id",
      ({ params, body, principal }) => {
        const row = updateWorkgroup(ctx, visibleWorkgroup(ctx, principal, params.id), body);
        ctx.audit.record(audit(principal, "workgroup.update", row));
        return view(row);
      },
      { auth, params: IdParams, body: WorkgroupInput, response: { 200: Workgroup }, detail: { summary: "Update a workgroup" } },
    )
    .delete(
      "/workgroup/:id",
      ({ params, principal, set }) => {
        const row = visibleWorkgroup(ctx, principal, params.id);
        deleteWorkgroup(ctx, row);
        ctx.audit.record(audit(principal, "workgroup.delete", row));
        noContent(set);
      },
      { auth, params: IdParams, detail: { summary: "Delete a workgroup with its memberships and grants" } },
    )
    .post(
      "/workgroup/:id/user/:userId",
      ({ params, principal, set }) => {
        const row = visibleWorkgroup(ctx, principal, params.id);
        addMember(ctx, row, params.userId);
        ctx.audit.record(audit(principal, "workgroup.member_add", row, ` user=${params.userId}`));
        noContent(set);
      },
      { auth, params: MemberParams, detail: { summary: "Add a user to the workgroup" } },
    )
    .delete(
      "/workgroup/:id/user/:userId",
      ({ params, principal, set }) => {
        const row = visibleWorkgroup(ctx, principal, params.id);
        removeMember(ctx, row, params.userId);
        ctx.audit.record(audit(principal, "workgroup.member_remove", row, ` user=${params.userId}`));
        noContent(set);
      },
      { auth, params: MemberParams, detail: { summary: "Remove a user from the workgroup" } },
    )
    .post(
      "/workgroup/:id/service/:serviceId",
      ({ params, principal, set }) => {
        const row = visibleWorkgroup(ctx, principal, params.id);
        grantService(ctx, row, params.serviceId);
        ctx.audit.record(audit(principal, "workgroup.service_grant", row, ` service=${params.serviceId}`));
        noContent(set);
      },
      { auth, params: ServiceParams, detail: { summary: "Give the workgroup access to a service" } },
    )
    .delete(
      "/workgroup/:id/service/:serviceId",
      ({ params, principal, set }) => {
        const row = visibleWorkgroup(ctx, principal, params.id);
        revokeService(ctx, row, params.serviceId);
        ctx.audit.record(audit(principal, "workgroup.service_revoke", row, ` service=${params.serviceId}`));
        noContent(set);
      },
      { auth, params: ServiceParams, detail: { summary: "Take the access to a service away" } },
    )
    .post(
      "/workgroup/:id/feature/:featureId",
      ({ params, principal, set }) => {
        const row = visibleWorkgroup(ctx, principal, params.id);
        grantFeature(ctx, row, params.featureId);
        ctx.audit.record(audit(principal, "workgroup.feature_grant", row, ` feature=${params.featureId}`));
        noContent(set);
      },
      { auth, params: FeatureParams, detail: { summary: "Give the workgroup access to a feature" } },
    )
    .delete(
      "/workgroup/:id/feature/:featureId",
      ({ params, principal, set }) => {
        const row = visibleWorkgroup(ctx, principal, params.id);
        revokeFeature(ctx, row, params.featureId);
        ctx.audit.record(audit(principal, "workgroup.feature_revoke", row, ` feature=${params.featureId}`));
        noContent(set);
      },
      { auth, params: FeatureParams, detail: { summary: "Take the access to a feature away" } },
    );
}
