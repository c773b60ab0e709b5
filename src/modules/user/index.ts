// User rows of routes.md (all but the realtime socket): users, their status and password, reset
// keys, permissions and two-factor authentication. Workgroups live in ../workgroup.
import { Elysia, t } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { Problem } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard, requestIdOf } from "../../http/guard";
import type { Principal } from "../../core/principal";
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
  changePassword,
  confirmTwoFactor,
  createResetKey,
  createUser,
  deleteUser,
  disableTwoFactor,
  getManageableUser,
  getUser,
  getUserByLogin,
  listUsers,
  permissionsOf,
  resetPassword,
  resetTwoFactor,
  setStatus,
  startTwoFactor,
  updateUser,
} from "./service";
import { userSessionRoutes } from "./sessions-routes";

/** Who did it, where, from which address: the common fields of an audit record. */
const auditBy = (p: Principal) => ({ actor_user_id: p.userId, corp_id: p.corpId, ip: p.ip, request_id: p.requestId });
const problemSlug = (err: unknown) => (err instanceof Problem ? err.slug : "error");

export function userModule(ctx: AppContext) {
  const clientIpOf = (request: Request, server: { requestIP(r: Request): { address: string } | null } | null) => ctx.clientIp(request, server?.requestIP(request)?.address ?? null);

  return new Elysia({ name: "user", prefix: "/api", tags: ["User"] })
    .use(authGuard(ctx))
    .use(userSessionRoutes(ctx))
    .get(
      "/user",
      ({ query, principal }) => listUsers(ctx, principal, query),
      { auth: "platform.user", query: ListQuery, response: { 200: ListOf(User) }, detail: { summary: "List the working corporation's users (`*`: all users)" } },
    )
    .post(
      "/user",
      async ({ body, principal, set }) => {
        const user = await createUser(ctx, principal, body);
        await ctx.audit.record({ ...auditBy(principal), action: "user.create", outcome: "success", target: user.id });
        if (user.super_admin) await ctx.audit.record({ ...auditBy(principal), action: "user.super_admin_grant", outcome: "success", target: user.id });
        return created(set, "/api/user", user);
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
      async ({ body, set, request, server }) => {
        createResetKey(ctx, body.login);
        // The same record whether the login exists or not: the log must not become an oracle.
        await ctx.audit.record({ action: "user.password_reset_request", outcome: "requested", target: body.login, ip: clientIpOf(request, server), request_id: requestIdOf(set) });
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
          await ctx.audit.record({ ...audit, outcome: "failure", reason: problemSlug(err) });
          throw err;
        }
        await ctx.audit.record({ ...audit, outcome: "success", target: userId });
        noContent(set);
      },
      { publicAuth: true, body: ResetBody, detail: { summary: "Reset the password with a key", security: [] } },
    )
    .get("/user/login/:login", ({ params, principal }) => getUserByLogin(ctx, principal, params.login), {
      auth: "platform.user",
      params: LoginParams,
      response: { 200: User },
      detail: { summary: "Get a user by login" },
    })
    .get("/user/:id", ({ params, principal }) => getUser(ctx, principal, params.id), {
      auth: { guard: "platform.user", self: "id" },
      params: IdParams,
      response: { 200: User },
      detail: { summary: "Show a user" },
    })
    .put(
      "/user/:id",
      async ({ params, body, principal }) => {
        const { before, user } = await updateUser(ctx, principal, params.id, body);
        await ctx.audit.record({ ...auditBy(principal), action: "user.update", outcome: "success", target: user.id });
        if (user.super_admin !== before.super_admin)
          await ctx.audit.record({ ...auditBy(principal), action: user.super_admin ? "user.super_admin_grant" : "user.super_admin_revoke", outcome: "success", target: user.id });
        return user;
      },
      { auth: { guard: "platform.user", self: "id" }, params: IdParams, body: UserUpdate, response: { 200: User }, detail: { summary: "Update a user (not the password)" } },
    )
    .delete(
      "/user/:id",
      async ({ params, principal, set }) => {
        await deleteUser(ctx, principal, params.id);
        await ctx.audit.record({ ...auditBy(principal), action: "user.delete", outcome: "success", target: params.id });
        noContent(set);
      },
      { auth: "platform.user", params: IdParams, detail: { summary: "Delete a user" } },
    )
    .put(
      "/user/:id/active",
      async ({ params, principal }) => {
        const user = await setStatus(ctx, principal, params.id, true);
        await ctx.audit.record({ ...auditBy(principal), action: "user.activate", outcome: "success", target: user.id });
        return user;
      },
      { auth: "platform.user", params: IdParams, response: { 200: User }, detail: { summary: "Activate a user" } },
    )
    .put(
      "/user/:id/inactive",
      async ({ params, principal }) => {
        const user = await setStatus(ctx, principal, params.id, false);
        await ctx.audit.record({ ...auditBy(principal), action: "user.inactivate", outcome: "success", target: user.id });
        return user;
      },
      { auth: "platform.user", params: IdParams, response: { 200: User }, detail: { summary: "Inactivate a user; their sessions are revoked" } },
    )
    .post(
      "/user/:id/password",
      async ({ params, body, principal, set }) => {
        const row = await getManageableUser(ctx, principal, params.id);
        const audit = { ...auditBy(principal), action: "user.password_change", target: row.id };
        try {
          await changePassword(ctx, principal, row, body.current_password, body.new_password);
        } catch (err) {
          await ctx.audit.record({ ...audit, outcome: "failure", reason: problemSlug(err) });
          throw err;
        }
        await ctx.audit.record({ ...audit, outcome: "success" });
        noContent(set);
      },
      { auth: { guard: "platform.user", self: "id" }, params: IdParams, body: PasswordChange, detail: { summary: "Change a password; the user's other sessions are revoked" } },
    )
    .get(
      "/user/:id/permissions",
      ({ params, query, principal }) => permissionsOf(ctx, principal, params.id, query.corp_id),
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
      async ({ params, body, principal }) => {
        if (body.code === undefined || body.code === null) return startTwoFactor(ctx, params.id);
        const audit = { ...auditBy(principal), action: "user.two_factor_enable", target: params.id };
        let updated: User;
        try {
          updated = await confirmTwoFactor(ctx, params.id, body.code);
        } catch (err) {
          await ctx.audit.record({ ...audit, outcome: "failure", reason: problemSlug(err) });
          throw err;
        }
        await ctx.audit.record({ ...audit, outcome: "success" });
        return updated;
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
      async ({ params, body, principal }) => {
        const audit = { ...auditBy(principal), action: "user.two_factor_disable", target: params.id };
        let updated: User;
        try {
          updated = await disableTwoFactor(ctx, params.id, body.code);
        } catch (err) {
          await ctx.audit.record({ ...audit, outcome: "failure", reason: problemSlug(err) });
          throw err;
        }
        await ctx.audit.record({ ...audit, outcome: "success" });
        return updated;
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
      async ({ params, principal }) => {
        const user = await resetTwoFactor(ctx, principal, params.id);
        await ctx.audit.record({ ...auditBy(principal), action: "user.two_factor_reset", outcome: "success", target: user.id });
        return user;
      },
      { auth: "platform.user", params: IdParams, response: { 200: User }, detail: { summary: "Reset two-factor authentication (lost authenticator)" } },
    );
}
