// Issuing tokens and describing them: the Credentials resource of the interface document.
import type { AppContext } from "../../core/context";
import { unauthorized } from "../../lib/problem";
import { findUser } from "../user/service";
import { corpsOf, type UserRow } from "../user/view";
import type { Credentials } from "./model";
import type { SessionClient } from "../../core/sessions";

/** The client of a request that obtains a token: its address and user agent. */
export const clientOf = (ip: string, request: Request): SessionClient => ({ ip, userAgent: request.headers.get("user-agent") });

export async function credentialsOf(ctx: AppContext, user: UserRow, corpId: string, token: string, expiresIn: number): Promise<Credentials> {
  const permission = (await ctx.permissions.get(user.id, corpId, user.super_admin)).lists;
  const corps = await ctx.store.platform.read((db) => corpsOf(db, user.id));
  return {
    access_token: token,
    token_type: "bearer",
    expires_in: expiresIn,
    credentials: {
      user: {
        id: user.id,
        name: user.name,
        email: user.email,
        login: user.login,
        status: user.status,
        two_factor_required: user.two_factor_secret !== null,
        corps,
      },
      corp: corpId,
      permission: { admin: [...permission.admin], allow: [...permission.allow] },
    },
  };
}

export async function issueCredentials(ctx: AppContext, user: UserRow, corpId: string, client: SessionClient): Promise<Credentials> {
  const { token, expiresIn } = await ctx.sessions.issue(user.id, corpId, client);
  return credentialsOf(ctx, user, corpId, token, expiresIn);
}

export async function loadUser(ctx: AppContext, userId: string): Promise<UserRow> {
  const user = await ctx.store.platform.read((db) => findUser(db, userId));
  if (!user) throw unauthorized("The user no longer exists");
  return user;
}
