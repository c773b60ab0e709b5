// The history as a list (routes.md, Network operations additions, GET /api/history). Changes are
// written by the store's write path (src/core/history.ts); this only reads them.
import type { AppContext } from "../../core/context";
import { listHistoryRows, PLATFORM_TARGETS, storedChanges, type HistoryRow } from "../../core/history";
import type { Principal } from "../../core/principal";
import type { TenantDoor } from "../../core/store";
import type { ListParams, Page } from "../../db/list";
import { invalid } from "../../lib/problem";
import { canonicalInstant } from "../../lib/time";
import type { Change } from "./model";

/** The permission area of each target type (routes.md: platform.<area>); the rest need platform.corp. */
const AREA: Record<string, string> = {
  city: "city",
  person: "person",
  product: "product",
  contract: "contract",
  classification: "core",
  note: "core",
  externalapp: "externalapp",
  webhook: "webhook",
  metric: "metric",
  nas: "isp",
  pool: "isp",
  layout: "isp",
  attribute: "isp",
  pop: "isp",
  manufacturer: "isp",
  policy: "isp",
  qrcode: "qrcode",
  campaign: "qrcode",
  category: "qrcode",
  logo: "qrcode",
  user: "user",
  workgroup: "workgroup",
  saferange: "auth",
  // corp, service, feature, menu, server: platform.corp.
};

/** The guard of the list: platform.corp, or the area's permission when target_type names one. */
export function historyGuard(targetType: string | undefined): string {
  const area = targetType ? AREA[targetType] : undefined;
  return `platform.${area ?? "corp"}`;
}

function instant(field: string, text: unknown): string | undefined {
  if (text === undefined) return undefined;
  const at = canonicalInstant(String(text));
  if (!at) throw invalid(field, "must be an ISO 8601 instant with an offset");
  return at;
}

function changeOf(r: HistoryRow): Change {
  const changes = storedChanges(r.changes);
  return {
    id: r.id,
    at: r.at,
    actor: r.actor,
    actor_user_id: r.actor_user_id,
    actor_app_id: r.actor_app_id,
    target_type: r.target_type,
    target_id: r.target_id,
    action: r.action,
    fields: r.fields,
    changes,
    request_id: r.request_id,
  };
}

/**
 * The working corporation's Changes by the list convention (default newest first): its own
 * database's, or, for a platform target type (user, workgroup, corp, service, saferange), the
 * platform's rows listed under that corporation.
 */
export async function listHistory(ctx: AppContext, tenant: TenantDoor, principal: Principal, query: ListParams & { target_type?: string }): Promise<Page<Change>> {
  const from = instant("from", query.from);
  const to = instant("to", query.to);
  if (from && to && from > to) throw invalid("from", "must not be after to");
  const platform = query.target_type !== undefined && PLATFORM_TARGETS.has(query.target_type);
  const page = platform
    ? await ctx.store.platform.read((db) => listHistoryRows(db, query, { from, to, platformCorpId: principal.corpId }))
    : await tenant.read((db) => listHistoryRows(db, query, { from, to }));
  return { ...page, items: page.items.map(changeOf) };
}
