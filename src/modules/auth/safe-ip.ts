// Safe IP ranges (routes.md, "Safe IP ranges"): a corporation with ranges accepts tokens only
// from client addresses inside them, at issuance and on every request; super_admin is exempt.
import ipaddr from "ipaddr.js";
import type { AppContext } from "../../core/context";
import type { Principal } from "../../core/principal";
import type { CorpRow } from "../../core/corp-cache";
import { inCidrs, parseCidr, type ParsedCidr } from "../../lib/client-ip";
import type { ListParams } from "../../lib/list";
import { conflict, forbidden, invalid, notFound } from "../../lib/problem";
import type { SafeIpRange } from "./model";
import { allSafeIpRanges, deleteSafeIpRange, findSafeIpRange, insertSafeIpRange, listSafeIpRanges, safeIpRangeTaken, type SafeIpRangeRow } from "./service";

/** A corporation's ranges: parsed, and their row ids in the same order. */
interface HeldRanges {
  ids: string[];
  cidrs: ParsedCidr[];
}

/**
 * Every corporation's ranges, held in memory: the check runs on every request of a session and
 * stays synchronous. Read once when the module is built; each committed change is applied to the
 * copy after its COMMIT (an add or a removal by id, so that the order in which two changes'
 * after-commit steps run does not matter).
 */
export class SafeIpCache {
  private byCorp = new Map<string, HeldRanges>();
  private ready: Promise<void> | null;

  constructor(ctx: AppContext) {
    this.ready = ctx.store.platform
      .read((db) => allSafeIpRanges(db))
      .then((rows) => {
        for (const r of rows) this.held(r.corp_id, r.id, r.range);
        this.ready = null;
      });
    // Left rejected: a check before the ranges are known then fails rather than lets anything in.
    this.ready.catch((err) => ctx.logger.error("safe IP ranges could not be read", { error: String(err) }));
  }

  private held(corpId: string, id: string, range: string): void {
    const cidr = parseCidr(range);
    if (!cidr) return;
    const held = this.byCorp.get(corpId);
    if (held?.ids.includes(id)) return;
    if (held) {
      held.ids.push(id);
      held.cidrs.push(cidr);
    } else this.byCorp.set(corpId, { ids: [id], cidrs: [cidr] });
  }

  private allows(corpId: string, ip: string): boolean {
    const held = this.byCorp.get(corpId);
    return !held || held.cidrs.length === 0 || inCidrs(ip, held.cidrs);
  }

  private refuse(corpId: string, ip: string, superAdmin: boolean): void {
    if (superAdmin || this.allows(corpId, ip)) return;
    throw forbidden("The client address is outside the corporation's safe IP ranges", "ip-not-allowed");
  }

  /**
   * 403 ip-not-allowed unless the address may work in the corporation. Synchronous once the
   * ranges are in memory (from the first turn after start-up on); a promise before that.
   */
  check(corpId: string, ip: string, superAdmin: boolean): void | Promise<void> {
    if (this.ready) return this.ready.then(() => this.refuse(corpId, ip, superAdmin));
    this.refuse(corpId, ip, superAdmin);
  }

  async assert(corpId: string, ip: string, superAdmin: boolean): Promise<void> {
    await this.check(corpId, ip, superAdmin);
  }

  /** After the COMMIT of an added range. */
  added(row: SafeIpRangeRow): void {
    this.held(row.corp_id, row.id, row.range);
  }

  /** After the COMMIT of a removed range. */
  removed(corpId: string, id: string): void {
    const held = this.byCorp.get(corpId);
    const at = held ? held.ids.indexOf(id) : -1;
    if (at < 0) return;
    held!.ids.splice(at, 1);
    held!.cidrs.splice(at, 1);
  }
}

const caches = new WeakMap<AppContext, SafeIpCache>();
export function safeIpsOf(ctx: AppContext): SafeIpCache {
  let c = caches.get(ctx);
  if (!c) caches.set(ctx, (c = new SafeIpCache(ctx)));
  return c;
}

/** A CIDR or bare address in canonical form, host bits cleared; null when it is not one. */
function canonicalRange(text: string): string | null {
  const parsed = parseCidr(text.trim());
  if (!parsed) return null;
  const [addr, bits] = parsed;
  const network =
    addr.kind() === "ipv4"
      ? ipaddr.IPv4.networkAddressFromCIDR(`${addr.toString()}/${bits}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${addr.toString()}/${bits}`);
  return `${network.toString()}/${bits}`;
}

const rangeView = (row: SafeIpRangeRow, domain: string): SafeIpRange => ({
  id: row.id,
  domain,
  range: row.range,
  description: row.description,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/** The corporation named by a safe-IP domain: the working one, any for `*`; others 404. */
export async function domainCorp(ctx: AppContext, principal: Principal, domain: string): Promise<CorpRow> {
  const corp = await ctx.corps.find(domain);
  if (!corp || corp.auth_name !== domain) throw notFound("Domain");
  if (corp.id !== principal.corpId && !principal.superAdmin) throw notFound("Domain");
  return corp;
}

/** A page of ranges: every corporation's (`domain` filters by one), or one corporation's. */
export async function listRanges(ctx: AppContext, query: ListParams, corp: CorpRow | null, domain?: unknown) {
  let corpId = corp?.id ?? null;
  if (!corp && typeof domain === "string") corpId = (await ctx.corps.find(domain))?.id ?? "";
  const page = await ctx.store.platform.read((db) => listSafeIpRanges(db, query, corpId));
  // Each corporation of the page named once (its auth_name is the range's domain).
  const names = new Map<string, string>();
  if (corp) names.set(corp.id, corp.auth_name);
  else {
    const ids = [...new Set(page.items.map((r) => r.corp_id))];
    const corps = await Promise.all(ids.map((id) => ctx.corps.get(id)));
    ids.forEach((id, i) => names.set(id, corps[i]?.auth_name ?? ""));
  }
  return { ...page, items: page.items.map((r) => rangeView(r, names.get(r.corp_id) ?? "")) };
}

export async function addRange(ctx: AppContext, corp: CorpRow, text: string, description: string | null | undefined): Promise<SafeIpRange> {
  const range = canonicalRange(text);
  if (!range) throw invalid("range", "is not an IPv4 or IPv6 address or CIDR");
  const row = await ctx.store.platform.write(async (tx, w) => {
    if (await safeIpRangeTaken(tx, corp.id, range)) throw conflict(`The range ${range} is already there`);
    const row = await insertSafeIpRange(tx, corp.id, range, description ?? null);
    w.afterCommit(() => safeIpsOf(ctx).added(row));
    return row;
  });
  return rangeView(row, corp.auth_name);
}

/** Removes a range of the corporation (404 when it has no such range); returns it. */
export async function removeRange(ctx: AppContext, corp: CorpRow, id: string): Promise<SafeIpRangeRow> {
  return await ctx.store.platform.write(async (tx, w) => {
    const row = await findSafeIpRange(tx, corp.id, id);
    if (!row) throw notFound("Safe IP range");
    await deleteSafeIpRange(tx, id);
    w.afterCommit(() => safeIpsOf(ctx).removed(corp.id, id));
    return row;
  });
}
