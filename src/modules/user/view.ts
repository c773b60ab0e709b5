// The User resource as every route returns it (never the password hash or the TOTP secret).
import type { users } from "../../db/platform/schema";
import type { PlatformDb } from "../../db/sqlite";
import { corpsOfUser } from "../membership/service";
import type { User } from "./model";

export type UserRow = typeof users.$inferSelect;

/** The corporations the user can access, by auth_name (in the caller's read or transaction). */
export async function corpsOf(db: PlatformDb, userId: string): Promise<User["corps"]> {
  return Object.fromEntries((await corpsOfUser(db, userId)).map((r) => [r.auth_name, { id: r.id, company_name: r.company_name }]));
}

export async function userView(db: PlatformDb, row: UserRow): Promise<User> {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    login: row.login,
    super_admin: row.super_admin,
    status: row.status,
    two_factor_required: row.two_factor_secret !== null,
    builtin: row.builtin,
    corps: await corpsOf(db, row.id),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
