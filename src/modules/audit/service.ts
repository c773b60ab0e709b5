// The audit log as a list (routes.md, Operator additions, GET /api/audit). The entries are written
// by src/core/audit.ts; this only reads them.
import { listAuditRows } from "../../core/audit";
import type { AppContext } from "../../core/context";
import type { ListParams, Page } from "../../db/list";
import { invalid } from "../../lib/problem";
import { canonicalInstant } from "../../lib/time";
import { loginsOf } from "../user/service";
import type { AuditEntry } from "./model";

function instant(field: string, text: unknown): string | undefined {
  if (text === undefined) return undefined;
  const at = canonicalInstant(String(text));
  if (!at) throw invalid(field, "must be an ISO 8601 instant with an offset");
  return at;
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
  return ctx.store.platform.read(async (db) => {
    const page = await listAuditRows(db, query, { from, to, corpId: onlyCorpId });
    const logins = await loginsOf(db, [...new Set(page.items.map((r) => r.actor_user_id).filter((id): id is string => id !== null))]);
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
