// RADIUS authorize attempts (isp_radius_attempts): who tried to connect through which NAS, and
// why they were refused (the "why can't this customer connect" screen). The attempt log (jobs.ts)
// buffers them and stores them in batches; the list reads them newest first. No password is ever
// part of an attempt.
import { and, gte, lte, type SQL } from "drizzle-orm";
import type { TenantDoor } from "../../core/store";
import { clientOf } from "../../db/rows";
import type { TenantDb } from "../../db/sqlite";
import { ispRadiusAttempts } from "../../db/tenant/schema";
import { listRows, type ListParams } from "../../db/list";
import { invalid } from "../../lib/problem";
import { canonicalInstant } from "../../lib/time";
import type { AttemptOutcome } from "./model";

export type AttemptRow = typeof ispRadiusAttempts.$inferSelect;

/** Inside a write: appends a batch of attempts. */
export async function storeAttempts(tx: TenantDb, rows: readonly AttemptRow[]): Promise<void> {
  const insert = clientOf(tx).query("INSERT INTO isp_radius_attempts (id, at, username, nas_id, nas_ip, outcome, reason) VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (const r of rows) await insert.run(r.id, r.at, r.username, r.nas_id, r.nas_ip, r.outcome, r.reason);
}

function instant(query: ListParams, key: "from" | "to"): string | null {
  if (query[key] === undefined) return null;
  const iso = canonicalInstant(String(query[key]));
  if (!iso) throw invalid(key, "must be an ISO 8601 instant with offset");
  return iso;
}

export function listAttempts(tenant: TenantDoor, query: ListParams) {
  return tenant.read((db) => attemptPage(db, query));
}

function attemptPage(db: TenantDb, query: ListParams) {
  const where: (SQL | undefined)[] = [];
  const from = instant(query, "from");
  const to = instant(query, "to");
  if (from && to && from > to) throw invalid("from", "must not be after to");
  if (from) where.push(gte(ispRadiusAttempts.at, from));
  if (to) where.push(lte(ispRadiusAttempts.at, to));
  // Newest first: -id is -at with the order of arrival among equal instants (the id is a UUIDv7
  // taken with `at`), which ?sort=-at would break by id ascending.
  return listRows(db, ispRadiusAttempts, { q: [ispRadiusAttempts.username], defaultSort: "-id", extraKeys: ["from", "to"] }, query, (r: AttemptRow) => ({ ...r, outcome: r.outcome as AttemptOutcome }), [and(...where)]);
}

/** Retention: deletes at most `limit` attempts made before `cutoff` (an instant), returns how many. Run inside a write. */
export async function pruneIspRadiusAttempts(tx: TenantDb, cutoff: string, limit: number): Promise<number> {
  return (await clientOf(tx).query("DELETE FROM isp_radius_attempts WHERE rowid IN (SELECT rowid FROM isp_radius_attempts WHERE at < ?1 LIMIT ?2)").run(cutoff, limit)).changes;
}
