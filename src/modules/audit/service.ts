// The audit log as a list (routes.md, Operator additions, GET /api/audit). The entries are written
// by src/core/audit.ts; this only reads them.
import { eq, gte, inArray, lte, type SQL } from "drizzle-orm";
import { auditLog, users } from "../../db/platform/schema";
import type { PlatformDb } from "../../db/sqlite";
import type { AppContext } from "../../core/context";
import { listRows, type ListParams, type Page } from "../../lib/list";
import { invalid } from "../../lib/problem";
import { canonicalInstant } from "../../lib/time";
import type { AuditEntry } from "./model";

type Row = typeof auditLog.$inferSelect;

function instant(field: string, text: unknown): string | undefined {
  if (text === undefined) return undefined;
  const at = canonicalInstant(String(text));
  if (!at) throw invalid(field, "must be an ISO 8601 instant with an offset");
  return at;
}

// owner: core/audit — moves at merge
/** A page of audit_log rows by the list convention (default newest first). */
function auditRows(db: PlatformDb, query: ListParams, where: (SQL | undefined)[]): Page<Row> {
  return listRows<Row, Row>(db, auditLog, { q: [auditLog.action, auditLog.target], defaultSort: "-at", extraKeys: ["from", "to"] }, query, (r) => r, where);
}

// owner: user — moves to user/service.ts at merge
/** Logins by user id, for the users among `ids` that still exist. */
function loginsOf(db: PlatformDb, ids: string[]): Map<string, string> {
  return new Map(ids.length ? db.select({ id: users.id, login: users.login }).from(users).where(inArray(users.id, ids)).all().map((u) => [u.id, u.login]) : []);
}

/**
 * Entries by the list convention (default newest first). `onlyCorpId` confines the list to one
 * corporation's entries whatever the query asks (a corp_id filter for another corporation then
 * finds nothing).
 */
export function listAudit(ctx: AppContext, query: ListParams, onlyCorpId: string | null): Promise<Page<AuditEntry>> {
  const from = instant("from", query.from);
  const to = instant("to", query.to);
  if (from && to && from > to) throw invalid("from", "must not be after to");
  const where: (SQL | undefined)[] = [from ? gte(auditLog.at, from) : undefined, to ? lte(auditLog.at, to) : undefined];
  if (onlyCorpId !== null) where.push(eq(auditLog.corp_id, onlyCorpId));
  return ctx.store.platform.read((db) => {
    const page = auditRows(db, query, where);
    const logins = loginsOf(db, [...new Set(page.items.map((r) => r.actor_user_id).filter((id): id is string => id !== null))]);
    return {
      ...page,
      items: page.items.map((r) => ({
        id: r.id,
        at: r.at,
        actor_user_id: r.actor_user_id,
        actor: r.actor_user_id ? (logins.get(r.actor_user_id) ?? null) : null,
        corp_id: r.corp_id,
        action: r.action,
        target: r.target,
        outcome: r.outcome,
        reason: r.reason,
        ip: r.ip,
        request_id: r.request_id,
      })),
    };
  });
}
