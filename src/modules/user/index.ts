// User rows of routes.md (all but the realtime socket): users, their status and password, reset
// keys, permissions and two-factor authentication. Workgroups live in ../workgroup.
import { Elysia, t } from "elysia";
import { eq } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { users } from "../../db/platform/schema";
import { created, noContent } from "../../lib/http";
import { listRows } from "../../lib/list";
import { forbidden, notFound, Problem } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard, requestIdOf } from "../auth/guard";
import type { Principal } from "../../core/principal";
import { isMember } from "../auth/login";
import {
  LoginParams,
  PasswordChange,
  Permissions,
  PermissionsQuery,
  ResetBody,
  ResetKeyBody,
  TwoFactorDisableBody,
  TwoFactorEnableBody,
  TwoFactorSecret,
  User,
  UserCreate,
  UserUpdate,
} from "./model";
import {
  assertMayManage,
  changePassword,
  clearTwoFactor,
  confirmTwoFactor,
  createResetKey,
  createUser,
  deleteUser,
  disableTwoFactor,
  findUser,
  membersOf,
  permissionsOf,
  resetPassword,
  setStatus,
  startTwoFactor,
  updateUser,
  visibleUser,
} from "./service";
import { userSessionRoutes } from "./sessions";
import { userView, type UserRow } from "./view";

/** Who did it, where, from which address: the common fields of an audit record. */
const auditBy = (p: Principal) => ({ actor_user_id: p.userId, corp_id: p.corpId, ip: p.ip, request_id: p.requestId });
const problemSlug = (err: unknown) => (err instanceof Problem ? err.slug : "error");

const HIDDEN = ["password_hash", "two_factor_secret", "two_factor_pending", "two_factor_last_step"];

export function userModule(ctx: AppContext) {
  const clientIpOf = (request: Request, server: { requestIP(r: Request): { address: string } | null } | null) => ctx.clientIp(request, server?.requestIP(request)?.address ?? null);
  const view = (row: UserRow) => userView(ctx.platform, row);
  const listSpec = { q: [users.name, users.email, users.login], hidden: HIDDEN };

  return new Elysia({ name: "user", prefix: "/api", tags: ["User"] })
    .use(authGuard(ctx))
    .use(userSessionRoutes(ctx))
    .get(
      "/user",
      ({ query, principal }) => listRows(ctx.platform, users, listSpec, query, view, principal.superAdmin ? [] : [membersOf(ctx, principal.corpId)]),
      { auth: "platform.user", query: ListQuery, response: { 200: ListOf(User) }, detail: { summary: "List the working corporation's users (`*`: all users)" } },
    )
    .post(
      "/user",
      async ({ body, principal, set }) => {
        const row = await createUser(ctx, principal, body);
        ctx.audit.record({ ...auditBy(principal), action: "user.create", outcome: "success", target: row.id });
        if (row.super_admin) ctx.audit.record({ ...auditBy(principal), action: "user.super_admin_grant", outcome: "success", target: row.id });
        return created(set, "/api/user", view(row));
      },
      {
      auth: "platform.user",
      body: UserCreate,
      response: { 200: User },
      detail: { summary: "Create a user, a member of the working corporation" },
      },
    )
    .post(
      "/user/password/reset-key",
      ({ body, set, request, server }) => {
        createResetKey(ctx, body.login);
        // The same record whether the login exists or not: the log must not become an oracle.
        ctx.audit.record({ action: "user.password_reset_request", outcome: "requested", target: body.login, ip: clientIpOf(request, server), request_id: requestIdOf(set) });
        noContent(set);
      },
      { publicAuth: true, body: ResetKeyBody, detail: { summary: "Create a password-reset key and e-mail it to the user", security: [] } },
    )
    .post(
      "/user/password/reset",
      async ({ body, set, request, server }) => {
        const audit = { action: "user.password_reset", ip: clientIpOf(request, server), request_id: requestIdOf(set) };
        let userId: string;
        try {
          userId = await resetPassword(ctx, body.key, body.new_password);
        } catch (err) {
          ctx.audit.record({ ...audit, outcome: "failure", reason: problemSlug(err) });
          throw err;
        }
        ctx.audit.record({ ...audit, outcome: "success", target: userId });
        noContent(set);
      },
      { publicAuth: true, body: ResetBody, detail: { summary: "Reset the password with a key", security: [] } },
    )
    .get("/user/login/:login", ({ params, principal }) => view(visibleUser(ctx, principal, ctx.platform.select().from(users).where(eq(users.login, params.login)).get())), {
      auth: "platform.user",
      params: LoginParams,
      response: { 200: User },
      detail: { summary: "Get a user by login" },
    })
    .get("/user/:id", ({ params, principal }) => view(visibleUser(ctx, principal, findUser(ctx, params.id))), {
      auth: { guard: "platform.user", self: "id" },
      params: IdParams,
      response: { 200: User },
      detail: { summary: "Show a user" },
    })
    .put(
      "/user/:id",
      ({ params, body, principal }) => {
        const row = visibleUser(ctx, principal, findUser(ctx, params.id));
        assertMayManage(ctx, principal, row);
        const updated = updateUser(ctx, principal, row, body);
        ctx.audit.record({ ...auditBy(principal), action: "user.update", outcome: "success", target: row.id });
        if (updated.super_admin !== row.super_admin)
          ctx.audit.record({ ...auditBy(principal), action: updated.super_admin ? "user.super_admin_grant" : "user.super_admin_revoke", outcome: "success", target: row.id });
        return view(updated);
      },
      { auth: { guard: "platform.user", self: "id" }, params: IdParams, body: UserUpdate, response: { 200: User }, detail: { summary: "Update a user (not the password)" } },
    )
    .delete(
      "/user/:id",
      ({ params, principal, set }) => {
        deleteUser(ctx, principal, visibleUser(ctx, principal, findUser(ctx, params.id)));
        ctx.audit.record({ ...auditBy(principal), action: "user.delete", outcome: "success", target: params.id });
        noContent(set);
      },
      { auth: "platform.user", params: IdParams, detail: { summary: "Delete a user" } },
    )
    .put(
      "/user/:id/active",
      ({ params, principal }) => {
        const row = visibleUser(ctx, principal, findUser(ctx, params.id));
        assertMayManage(ctx, principal, row);
        const updated = setStatus(ctx, principal, row, true);
        ctx.audit.record({ ...auditBy(principal), action: "user.activate", outcome: "success", target: row.id });
        return view(updated);
      },
      { auth: "platform.user", params: IdParams, response: { 200: User }, detail: { summary: "Activate a user" } },
    )
    .put(
      "/user/:id/inactive",
      ({ params, principal }) => {
        const row = visibleUser(ctx, principal, findUser(ctx, params.id));
        assertMayManage(ctx, principal, row);
        const updated = setStatus(ctx, principal, row, false);
        ctx.audit.record({ ...auditBy(principal), action: "user.inactivate", outcome: "success", target: row.id });
        return view(updated);
      },
      { auth: "platform.user", params: IdParams, response: { 200: User }, detail: { summary: "Inactivate a user; their sessions are revoked" } },
    )
    .post(
      "/user/:id/password",
      async ({ params, body, principal, set }) => {
        const row = visibleUser(ctx, principal, findUser(ctx, params.id));
        assertMayManage(ctx, principal, row);
        const audit = { ...auditBy(principal), action: "user.password_change", target: row.id };
        try {
          await changePassword(ctx, principal, row, body.current_password, body.new_password);
        } catch (err) {
          ctx.audit.record({ ...audit, outcome: "failure", reason: problemSlug(err) });
          throw err;
        }
        ctx.audit.record({ ...audit, outcome: "success" });
        noContent(set);
      },
      { auth: { guard: "platform.user", self: "id" }, params: IdParams, body: PasswordChange, detail: { summary: "Change a password; the user's other sessions are revoked" } },
    )
    .get(
      "/user/:id/permissions",
      ({ params, query, principal }) => {
        const row = visibleUser(ctx, principal, findUser(ctx, params.id));
        const corpId = query.corp_id ?? principal.corpId;
        if (corpId !== principal.corpId) {
          if (!ctx.corps.get(corpId)) throw notFound("Corporation");
          const selfMember = principal.userId === row.id && isMember(ctx, row.id, corpId);
          if (!principal.superAdmin && !selfMember) throw forbidden("Only a platform administrator, or the user as a member, may see another corporation");
        }
        return permissionsOf(ctx, row, corpId);
      },
      {
        auth: { guard: "platform.user", self: "id" },
        params: IdParams,
        query: PermissionsQuery,
        response: { 200: Permissions },
        detail: { summary: "Global and per-service permissions in a corporation" },
      },
    )
    .post(
      "/user/:id/2fa/enable",
      ({ params, body, principal }) => {
        const row = findUser(ctx, params.id)!;
        if (body.code === undefined || body.code === null) return startTwoFactor(ctx, row);
        const audit = { ...auditBy(principal), action: "user.two_factor_enable", target: row.id };
        let updated: UserRow;
        try {
          updated = confirmTwoFactor(ctx, row, body.code);
        } catch (err) {
          ctx.audit.record({ ...audit, outcome: "failure", reason: problemSlug(err) });
          throw err;
        }
        ctx.audit.record({ ...audit, outcome: "success" });
        return view(updated);
      },
      {
        auth: { guard: "self", self: "id" },
        params: IdParams,
        body: TwoFactorEnableBody,
        response: { 200: t.Union([TwoFactorSecret, User]) },
        detail: { summary: "Enable two-factor authentication: a pending secret without code; confirm it with a code" },
      },
    )
    .post(
      "/user/:id/2fa/disable",
      ({ params, body, principal }) => {
        const audit = { ...auditBy(principal), action: "user.two_factor_disable", target: params.id };
        let updated: UserRow;
        try {
          updated = disableTwoFactor(ctx, findUser(ctx, params.id)!, body.code);
        } catch (err) {
          ctx.audit.record({ ...audit, outcome: "failure", reason: problemSlug(err) });
          throw err;
        }
        ctx.audit.record({ ...audit, outcome: "success" });
        return view(updated);
      },
      {
        auth: { guard: "self", self: "id" },
        params: IdParams,
        body: TwoFactorDisableBody,
        response: { 200: User },
        detail: { summary: "Disable two-factor authentication (needs a code)" },
      },
    )
    .post(
      "/user/:id/2fa/reset",
      ({ params, principal }) => {
        const row = visibleUser(ctx, principal, findUser(ctx, params.id));
        assertMayManage(ctx, principal, row);
        const updated = clearTwoFactor(ctx, row.id);
        ctx.audit.record({ ...auditBy(principal), action: "user.two_factor_reset", outcome: "success", target: row.id });
        return view(updated);
      },
      { auth: "platform.user", params: IdParams, response: { 200: User }, detail: { summary: "Reset two-factor authentication (lost authenticator)" } },
    );
}
