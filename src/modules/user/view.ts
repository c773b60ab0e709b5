// The User resource as every route returns it (never the password hash or the TOTP secret).
import { asc, eq } from "drizzle-orm";
import { corpMembers, corporations, users } from "../../db/platform/schema";
import type { PlatformDb } from "../../db/sqlite";
import type { User } from "./model";

export type UserRow = typeof users.$inferSelect;

export function corpsOf(db: PlatformDb, userId: string): User["corps"] {
  const rows = db
    .select({ id: corporations.id, auth_name: corporations.auth_name, company_name: corporations.company_name })
    .from(corpMembers)
    .innerJoin(corporations, eq(corporations.id, corpMembers.corp_id))
    .where(eq(corpMembers.user_id, userId))
    .orderBy(asc(corporations.auth_name))
    .all();
  return Object.fromEntries(rows.map((r) => [r.auth_name, { id: r.id, company_name: r.company_name }]));
}

export function userView(db: PlatformDb, row: UserRow): User {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    login: row.login,
    super_admin: row.super_admin,
    status: row.status,
    two_factor_required: row.two_factor_secret !== null,
    builtin: row.builtin,
    corps: corpsOf(db, row.id),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
