// A user's flags for the kernel's session check (src/core/sessions.ts), on every authenticated
// request: one cached statement (booleans stay 0/1, as the guard compares them).
import type { PlatformDb } from "../../db/sqlite";
import type { UserFlags } from "../../core/sessions";

export function userFlags(db: PlatformDb, userId: string): UserFlags | null {
  return db.$client.query<UserFlags, [string]>("SELECT status, super_admin FROM users WHERE id = ?1").get(userId);
}
