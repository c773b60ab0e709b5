// User rows of routes.md (all but the realtime socket): users, their status and password, reset
// keys, permissions and two-factor authentication. Workgroups live in ../workgroup.
import { Elysia, t } from "elysia";
import { eq } from "drizzle-orm";
import type { AppContext } from "../../context";
import { users } from "../../db/platform/schema";
import { created, noContent } from "../../lib/http";
import { listRows } from "../../lib/list";
import { forbidden, notFound } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard } from "../auth/guard";
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
import { userView, type UserRow } from "./view";

const HIDDEN = ["password_hash", "two_factor_secret", "two_factor_pending", "two_factor_last_step"];

export function userModule(ctx: AppContext) {
  const view = (row: UserRow) => userView(ctx.platform, row);
  const listSpec = { q: [users.name, users.email, users.login], hidden: HIDDEN };

  return new Elysia({ name: "user", prefix: "/api", tags: ["User"] })
    .use(authGuard(ctx))
    .get(
      "/user",
      ({ query, principal }) => listRows(ctx.platform, users, listSpec, query, view, principal.superAdmin ? [] : [membersOf(ctx, principal.corpId)]),
      { auth: "platform.user", query: ListQuery, response: { 200: ListOf(User) }, detail: { summary: "List the working corporation's users (`*`: all users)" } },
    )
    .post("/user", async ({ body, principal, set }) => created(set, "/api/user", view(await createUser(ctx, principal, body))), {
      auth: "platform.user",
      body: UserCreate,
      response: { 200: User },
      detail: { summary: "Create a user, a member of the working corporation" },
    })
    .post(
      "/user/password/reset-key",
      ({ body, set }) => {
        createResetKey(ctx, body.login);
        noContent(set);
      },
      { publicAuth: true, body: ResetKeyBody, detail: { summary: "Create a password-reset key and e-mail it to the user", security: [] } },
    )
    .post(
      "/user/password/reset",
      async ({ body, set }) => {
        await resetPassword(ctx, body.key, body.new_password);
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
        return view(updateUser(ctx, principal, row, body));
      },
      { auth: { guard: "platform.user", self: "id" }, params: IdParams, body: UserUpdate, response: { 200: User }, detail: { summary: "Update a user (not the password)" } },
    )
    .delete(
      "/user/:id",
      ({ params, principal, set }) => {
        deleteUser(ctx, principal, visibleUser(ctx, principal, findUser(ctx, params.id)));
        noContent(set);
      },
      { auth: "platform.user", params: IdParams, detail: { summary: "Delete a user" } },
    )
    .put(
      "/user/:id/active",
      ({ params, principal }) => {
        const row = visibleUser(ctx, principal, findUser(ctx, params.id));
        assertMayManage(ctx, principal, row);
        return view(setStatus(ctx, principal, row, true));
      },
      { auth: "platform.user", params: IdParams, response: { 200: User }, detail: { summary: "Activate a user" } },
    )
    .put(
      "/user/:id/inactive",
      ({ params, principal }) => {
        const row = visibleUser(ctx, principal, findUser(ctx, params.id));
        assertMayManage(ctx, principal, row);
        return view(setStatus(ctx, principal, row, false));
      },
      { auth: "platform.user", params: IdParams, response: { 200: User }, detail: { summary: "Inactivate a user; their sessions are revoked" } },
    )
    .post(
      "/user/:id/password",
      async ({ params, body, principal, set }) => {
        const row = visibleUser(ctx, principal, findUser(ctx, params.id));
        assertMayManage(ctx, principal, row);
        await changePassword(ctx, principal, row, body.current_password, body.new_password);
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
      ({ params, body }) => {
        const row = findUser(ctx, params.id)!;
        if (body.code === undefined || body.code === null) return startTwoFactor(ctx, row);
        return view(confirmTwoFactor(ctx, row, body.code));
      },
      {
        auth: { guard: "self", self: "id" },
        params: IdParams,
        body: TwoFactorEnableBody,
        response: { 200: t.Union([TwoFactorSecret, User]) },
        detail: { summary: "Enable two-factor authentication: a pending secret without code; confirm it with a code" },
      },
    )
    .post("/user/:id/2fa/disable", ({ params, body }) => view(disableTwoFactor(ctx, findUser(ctx, params.id)!, body.code)), {
      auth: { guard: "self", self: "id" },
      params: IdParams,
      body: TwoFactorDisableBody,
      response: { 200: User },
      detail: { summary: "Disable two-factor authentication (needs a code)" },
    })
    .post(
      "/user/:id/2fa/reset",
      ({ params, principal }) => {
        const row = visibleUser(ctx, principal, findUser(ctx, params.id));
        assertMayManage(ctx, principal, row);
        return view(clearTwoFactor(ctx, row.id));
      },
      { auth: "platform.user", params: IdParams, response: { 200: User }, detail: { summary: "Reset two-factor authentication (lost authenticator)" } },
    );
}
