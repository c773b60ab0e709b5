// GET /api/search: one ?q across the corporation's areas. Each area's own service finds its hits
// with its list's ?q (db/list.ts: every word, folding case and accents, documents by digits);
// this module reads no table itself (docs/architecture.md, "Table ownership").
import type { AppContext } from "../../core/context";
import { permits } from "../../core/permissions";
import type { Principal } from "../../core/principal";
import type { TenantDoor } from "../../core/store";
import type { TenantDb } from "../../db/sqlite";
import { toIso } from "../../lib/time";
import { cityHits } from "../city/service";
import { contractHits } from "../contract/service";
import { nasHits } from "../isp/nas-service";
import { sessionHits } from "../isp/session-service";
import { personHits } from "../person/service";
import { productHits } from "../product/service";
import { qrCodeHits } from "../qrcode/codes-service";
import type { SearchHit, SearchKind } from "./model";

type Hit = Omit<SearchHit, "kind">;

/** Each kind's list row (its guard and path, the permission to read it) and how its hits are found; in the order of the answer. */
const KINDS: { kind: SearchKind; guard: string; path: string; hits: (db: TenantDb, ctx: AppContext, q: string, limit: number) => Promise<Hit[]> }[] = [
  { kind: "person", guard: "platform.person", path: "/api/person", hits: (db, _ctx, q, limit) => personHits(db, q, limit) },
  { kind: "contract", guard: "platform.contract", path: "/api/contract", hits: (db, ctx, q, limit) => contractHits(ctx.contractNetwork, db, q, limit) },
  { kind: "session", guard: "platform.isp", path: "/api/isp/session", hits: (db, ctx, q, limit) => sessionHits(db, q, limit, toIso(ctx.now())) },
  { kind: "nas", guard: "platform.isp", path: "/api/isp/nas", hits: (db, _ctx, q, limit) => nasHits(db, q, limit) },
  { kind: "city", guard: "platform.city", path: "/api/city", hits: (db, _ctx, q, limit) => cityHits(db, q, limit) },
  { kind: "product", guard: "platform.product", path: "/api/product", hits: (db, _ctx, q, limit) => productHits(db, q, limit) },
  { kind: "qrcode", guard: "platform.qrcode", path: "/api/qrcode", hits: (db, ctx, q, limit) => qrCodeHits(db, ctx.config.publicUrl, q, limit) },
];

/**
 * The hits of `q`, at most `limit`: persons first, then contracts, then the other kinds, each
 * kind only when the caller may read its list (`actionOf`: a list path's action string, as the
 * permission names it for this request's host). One read: one snapshot of the corporation.
 */
export function search(ctx: AppContext, tenant: TenantDoor, principal: Principal, actionOf: (path: string) => string, q: string, limit: number): Promise<{ items: SearchHit[] }> {
  const allowed = KINDS.filter((k) => principal.superAdmin || permits(principal.permission, k.guard, actionOf(k.path)));
  return tenant.read(async (db) => {
    const items: SearchHit[] = [];
    for (const k of allowed) {
      if (items.length >= limit) break;
      for (const hit of await k.hits(db, ctx, q, limit - items.length)) items.push({ kind: k.kind, ...hit });
    }
    return { items };
  });
}
