// Workgroup rows of routes.md (in its User group): CRUD, members, service and feature grants.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery, ProblemSchema } from "../../lib/schemas";
import { MenuWorkgroupParams } from "../catalog/model";
import { authGuard } from "../../http/guard";
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
        return created(set, "/api/workgroup", await createWorkgroup(ctx, principal, body));
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
      ({ params, body, principal }) => updateWorkgroup(ctx, principal, params.id, body),
      { auth, params: IdParams, body: WorkgroupInput, response: { 200: Workgroup }, detail: { summary: "Update a workgroup" } },
    )
    .delete(
      "/workgroup/:id",
      async ({ params, principal, set }) => {
        await deleteWorkgroup(ctx, principal, params.id);
        noContent(set);
      },
      { auth, params: IdParams, detail: { summary: "Delete a workgroup with its memberships and grants" } },
    )
    .post(
      "/workgroup/:id/user/:userId",
      async ({ params, principal, set }) => {
        await addMember(ctx, principal, params.id, params.userId);
        noContent(set);
      },
      { auth, params: MemberParams, detail: { summary: "Add a user to the workgroup" } },
    )
    .delete(
      "/workgroup/:id/user/:userId",
      async ({ params, principal, set }) => {
        await removeMember(ctx, principal, params.id, params.userId);
        noContent(set);
      },
      { auth, params: MemberParams, detail: { summary: "Remove a user from the workgroup" } },
    )
    .post(
      "/workgroup/:id/service/:serviceId",
      async ({ params, principal, set }) => {
        await grantService(ctx, principal, params.id, params.serviceId);
        noContent(set);
      },
      { auth, params: ServiceParams, detail: { summary: "Give the workgroup access to a service" } },
    )
    .delete(
      "/workgroup/:id/service/:serviceId",
      async ({ params, principal, set }) => {
        await revokeService(ctx, principal, params.id, params.serviceId);
        noContent(set);
      },
      { auth, params: ServiceParams, detail: { summary: "Take the access to a service away" } },
    )
    .post(
      "/workgroup/:id/feature/:featureId",
      async ({ params, principal, set }) => {
        await grantFeature(ctx, principal, params.id, params.featureId);
        noContent(set);
      },
      { auth, params: FeatureParams, detail: { summary: "Give the workgroup access to a feature" } },
    )
    .delete(
      "/workgroup/:id/feature/:featureId",
      async ({ params, principal, set }) => {
        await revokeFeature(ctx, principal, params.id, params.featureId);
        noContent(set);
      },
      { auth, params: FeatureParams, detail: { summary: "Take the access to a feature away" } },
    )
    .post(
      "/menu/:id/workgroup/:workgroupId",
      ({ params, principal }) => assignMenuToWorkgroup(ctx, principal, params.id, params.workgroupId),
      {
      auth: "*",
      params: MenuWorkgroupParams,
      response: { 200: Workgroup, 409: ProblemSchema },
      // Published with the menu rows it belongs to in routes.md.
      detail: { summary: "Grant a workgroup the features of a menu and of its descendants", tags: ["Service & Feature"] },
      },
    );
}
