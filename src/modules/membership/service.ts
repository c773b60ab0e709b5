// Memberships (corp_members: which users belong to which corporations) and the membership
// questions the identity modules ask: auth, user, workgroup, catalog and corp all sit above this
// module, so none of them ties itself to another through it. It reads two of the corp module's
// tables (a member's corporations by name, whether a service is enabled) and writes none of them.
// Each function takes the caller's handle, so it runs inside the caller's read or transaction.
import { and, asc, eq, ne } from "drizzle-orm";
import { corpMembers, corpServices, corporations } from "../../db/platform/schema";
import type { PlatformDb } from "../../db/sqlite";

export async function isMember(db: PlatformDb, userId: string, corpId: string): Promise<boolean> {
  return !!(await db
    .select({ u: corpMembers.user_id })
    .from(corpMembers)
    .where(and(eq(corpMembers.corp_id, corpId), eq(corpMembers.user_id, userId)))
    .get());
}

/** Is the user a member of a corporation other than `corpId`? */
export async function isMemberElsewhere(db: PlatformDb, userId: string, corpId: string): Promise<boolean> {
  return !!(await db
    .select({ c: corpMembers.corp_id })
    .from(corpMembers)
    .where(and(eq(corpMembers.user_id, userId), ne(corpMembers.corp_id, corpId)))
    .get());
}

/** The ids of a corporation's members, as a subquery (list filters). */
export function memberIdsOf(db: PlatformDb, corpId: string) {
  return db.select({ id: corpMembers.user_id }).from(corpMembers).where(eq(corpMembers.corp_id, corpId));
}

/** Up to `limit` ids of the corporations a user belongs to. */
export async function corpIdsOfUser(db: PlatformDb, userId: string, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: corpMembers.corp_id })
    .from(corpMembers)
    .where(eq(corpMembers.user_id, userId))
    .limit(limit)
    .all();
  return rows.map((r) => r.id);
}

/** The corporations a user belongs to, by auth_name. */
export async function corpsOfUser(db: PlatformDb, userId: string): Promise<{ id: string; auth_name: string; company_name: string }[]> {
  return await db
    .select({ id: corporations.id, auth_name: corporations.auth_name, company_name: corporations.company_name })
    .from(corpMembers)
    .innerJoin(corporations, eq(corporations.id, corpMembers.corp_id))
    .where(eq(corpMembers.user_id, userId))
    .orderBy(asc(corporations.auth_name))
    .all();
}

/** Makes the user a member (in the caller's transaction); one already there stays as it is. */
export async function insertMember(tx: PlatformDb, corpId: string, userId: string): Promise<void> {
  await tx.insert(corpMembers).values({ corp_id: corpId, user_id: userId }).onConflictDoNothing().run();
}

/** Ends a membership (in the caller's transaction); false when there was none. */
export async function removeMember(tx: PlatformDb, corpId: string, userId: string): Promise<boolean> {
  const removed = await tx
    .delete(corpMembers)
    .where(and(eq(corpMembers.corp_id, corpId), eq(corpMembers.user_id, userId)))
    .returning({ u: corpMembers.user_id })
    .all();
  return removed.length > 0;
}

export async function serviceEnabled(db: PlatformDb, corpId: string, serviceId: string): Promise<boolean> {
  return !!(await db
    .select({ s: corpServices.service_id })
    .from(corpServices)
    .where(and(eq(corpServices.corp_id, corpId), eq(corpServices.service_id, serviceId)))
    .get());
}
