// User rows of routes.md (all but the realtime socket): users, their status and password, reset
// keys, permissions and two-factor authentication. Workgroups live in ../workgroup.
import { Elysia, t } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard, requestIdOf } from "../../http/guard";
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
      async ({ body, principal, set }) => created(set, "/api/user", await createUser(ctx, principal, body)),
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
        await createResetKey(ctx, body.login, { ip: clientIpOf(request, server), requestId: requestIdOf(set) });
        noContent(set);
      },
      { publicAuth: true, body: ResetKeyBody, detail: { summary: "Create a password-reset key and e-mail it to the user", security: [] } },
    )
    .post(
      "/user/password/reset",
      async ({ body, set, request, server }) => {
        await resetPassword(ctx, body.key, body.new_password, { ip: clientIpOf(request, server), requestId: requestIdOf(set) });
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
      ({ params, body, principal }) => updateUser(ctx, principal, params.id, body),
      { auth: { guard: "platform.user", self: "id" }, params: IdParams, body: UserUpdate, response: { 200: User }, detail: { summary: "Update a user (not the password)" } },
    )
    .delete(
      "/user/:id",
      async ({ params, principal, set }) => {
        await deleteUser(ctx, principal, params.id);
        noContent(set);
      },
      { auth: "platform.user", params: IdParams, detail: { summary: "Delete a user" } },
    )
    .put(
      "/user/:id/active",
      ({ params, principal }) => setStatus(ctx, principal, params.id, true),
      { auth: "platform.user", params: IdParams, response: { 200: User }, detail: { summary: "Activate a user" } },
    )
    .put(
      "/user/:id/inactive",
      ({ params, principal }) => setStatus(ctx, principal, params.id, false),
      { auth: "platform.user", params: IdParams, response: { 200: User }, detail: { summary: "Inactivate a user; their sessions are revoked" } },
    )
    .post(
      "/user/:id/password",
      async ({ params, body, principal, set }) => {
        await changePassword(ctx, principal, params.id, body.current_password, body.new_password);
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
        return confirmTwoFactor(ctx, principal, params.id, body.code);
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
      ({ params, body, principal }) => disableTwoFactor(ctx, principal, params.id, body.code),
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
      ({ params, principal }) => resetTwoFactor(ctx, principal, params.id),
      { auth: "platform.user", params: IdParams, response: { 200: User }, detail: { summary: "Reset two-factor authentication (lost authenticator)" } },
    );
}
