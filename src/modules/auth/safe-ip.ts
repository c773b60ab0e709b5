// Safe IP ranges (routes.md, "Safe IP ranges"): a corporation with ranges accepts tokens only
// from client addresses inside them, at issuance and on every request; super_admin is exempt.
import { eq } from "drizzle-orm";
import ipaddr from "ipaddr.js";
import type { AppContext } from "../../core/context";
import { safeIpRanges } from "../../db/platform/schema";
import { inCidrs, parseCidr, type ParsedCidr } from "../../lib/client-ip";
import { forbidden } from "../../lib/problem";
import type { SafeIpRange } from "./model";

export type SafeIpRangeRow = typeof safeIpRanges.$inferSelect;

/** Ranges per corporation, read on every request of a session; dropped on every change. */
export class SafeIpCache {
  private byCorp = new Map<string, ParsedCidr[]>();
  private stmt;

  constructor(ctx: AppContext) {
    this.stmt = ctx.platform.$client.query<{ range: string }, [string]>("SELECT range FROM safe_ip_ranges WHERE corp_id = ?1");
  }

  rangesOf(corpId: string): ParsedCidr[] {
    let hit = this.byCorp.get(corpId);
    if (!hit) {
      hit = this.stmt.all(corpId).map((r) => parseCidr(r.range)).filter((c): c is ParsedCidr => c !== null);
      this.byCorp.set(corpId, hit);
    }
    return hit;
  }

  allows(corpId: string, ip: string): boolean {
    const ranges = this.rangesOf(corpId);
    return ranges.length === 0 || inCidrs(ip, ranges);
  }

  /** 403 ip-not-allowed unless the address may work in the corporation. */
  assert(corpId: string, ip: string, superAdmin: boolean): void {
    if (superAdmin || this.allows(corpId, ip)) return;
    throw forbidden("The client address is outside the corporation's safe IP ranges", "ip-not-allowed");
  }

  invalidate(corpId?: string): void {
    if (corpId) this.byCorp.delete(corpId);
    else this.byCorp.clear();
  }
}

const caches = new WeakMap<AppContext, SafeIpCache>();
export function safeIpsOf(ctx: AppContext): SafeIpCache {
  let c = caches.get(ctx);
  if (!c) caches.set(ctx, (c = new SafeIpCache(ctx)));
  return c;
}

/** A CIDR or bare address in canonical form, host bits cleared; null when it is not one. */
export function canonicalRange(text: string): string | null {
  const parsed = parseCidr(text.trim());
  if (!parsed) return null;
  const [addr, bits] = parsed;
  const network =
    addr.kind() === "ipv4"
      ? ipaddr.IPv4.networkAddressFromCIDR(`${addr.toString()}/${bits}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${addr.toString()}/${bits}`);
  return `${network.toString()}/${bits}`;
}

export function safeIpView(ctx: AppContext, row: SafeIpRangeRow): SafeIpRange {
  return {
    id: row.id,
    domain: ctx.corps.get(row.corp_id)?.auth_name ?? "",
    range: row.range,
    description: row.description,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function findRange(ctx: AppContext, corpId: string, id: string): SafeIpRangeRow | undefined {
  const row = ctx.platform.select().from(safeIpRanges).where(eq(safeIpRanges.id, id)).get();
  return row && row.corp_id === corpId ? row : undefined;
}
