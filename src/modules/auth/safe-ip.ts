// Safe IP ranges (routes.md, "Safe IP ranges"): a corporation with ranges accepts tokens only
// from client addresses inside them, at issuance and on every request; super_admin is exempt.
import ipaddr from "ipaddr.js";
import type { AppContext } from "../../core/context";
import { auditBy } from "../../core/audit";
import type { Principal } from "../../core/principal";
import type { CorpRow } from "../../core/corp-cache";
import { inCidrs, parseCidr, type ParsedCidr } from "../../lib/client-ip";
import type { ListParams } from "../../db/list";
import { conflict, forbidden, invalid, notFound } from "../../lib/problem";
import type { SafeIpRange } from "./model";
import { allSafeIpRanges, deleteSafeIpRange, findSafeIpRange, insertSafeIpRange, listSafeIpRanges, safeIpRangeTaken, type SafeIpRangeRow } from "./service";

/** `ctx.changes` topic of safe IP ranges (key: the corporation's id). */
export const SAFE_IP_TOPIC = "safe-ip";

/**
 * Every corporation's ranges, held in memory: the check runs on every request of a session and
 * stays synchronous. Read when the module is built; a committed change to a corporation's ranges
 * (SAFE_IP_TOPIC, from this node or another) reads that corporation's again, and a resync reads
 * them all. Reads run one after another, each after the change that asked for it committed, so
 * the last one read is the newest; while one is pending a check waits for it (the writing node's
 * next request sees its change).
 */
export class SafeIpCache {
  private byCorp = new Map<string, ParsedCidr[]>();
  private pending: Promise<void> | null = null;
  /** The last read failed: checks fail (rather than let anything in) and the next one reads all again. */
  private failed = false;

  constructor(private ctx: AppContext) {
    ctx.changes.subscribe(SAFE_IP_TOPIC, { changed: (corpId) => void this.reload(corpId), resync: () => void this.reload(null) });
    void this.reload(null);
  }

  /** Reads one corporation's ranges (null: every corporation's) after the reads already queued. */
  private reload(corpId: string | null): Promise<void> {
    const run = (this.pending ?? Promise.resolve()).catch(() => {}).then(() => this.load(corpId));
    this.pending = run;
    this.failed = false;
    run.then(
      () => {
        if (this.pending === run) this.pending = null;
      },
      (err) => {
        if (this.pending === run) this.failed = true;
        this.ctx.logger.error("safe IP ranges could not be read", { error: String(err) });
      },
    );
    return run;
  }

  private async load(corpId: string | null): Promise<void> {
    const rows = await this.ctx.store.platform.read((db) => allSafeIpRanges(db, corpId ?? undefined));
    if (corpId === null) this.byCorp.clear();
    else this.byCorp.delete(corpId);
    for (const r of rows) {
      const cidr = parseCidr(r.range);
      if (!cidr) continue;
      const held = this.byCorp.get(r.corp_id);
      if (held) held.push(cidr);
      else this.byCorp.set(r.corp_id, [cidr]);
    }
  }

  private allows(corpId: string, ip: string): boolean {
    const held = this.byCorp.get(corpId);
    return !held || held.length === 0 || inCidrs(ip, held);
  }

  private refuse(corpId: string, ip: string, superAdmin: boolean): void {
    if (superAdmin || this.allows(corpId, ip)) return;
    throw forbidden("The client address is outside the corporation's safe IP ranges", "ip-not-allowed");
  }

  /**
   * 403 ip-not-allowed unless the address may work in the corporation. Synchronous while the
   * ranges in memory are current (from the first turn after start-up on); a promise while a read
   * is pending.
   */
  check(corpId: string, ip: string, superAdmin: boolean): void | Promise<void> {
    if (this.failed) void this.reload(null);
    if (this.pending) return this.pending.then(() => this.refuse(corpId, ip, superAdmin));
    this.refuse(corpId, ip, superAdmin);
  }

  async assert(corpId: string, ip: string, superAdmin: boolean): Promise<void> {
    await this.check(corpId, ip, superAdmin);
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

export async function addRange(ctx: AppContext, p: Principal, corp: CorpRow, text: string, description: string | null | undefined): Promise<SafeIpRange> {
  const range = canonicalRange(text);
  if (!range) throw invalid("range", "is not an IPv4 or IPv6 address or CIDR");
  const row = await ctx.store.platform.write(async (tx, w) => {
    if (await safeIpRangeTaken(tx, corp.id, range)) throw conflict(`The range ${range} is already there`);
    const row = await insertSafeIpRange(tx, corp.id, range, description ?? null);
    w.record({ type: "saferange", id: row.id, action: "create", before: null, after: row, corpId: corp.id });
    await ctx.changes.publish(tx, w, SAFE_IP_TOPIC, corp.id);
    return row;
  });
  await ctx.audit.record({ ...auditBy(p), action: "auth.safe_ip_add", outcome: "success", corp_id: corp.id, target: row.range });
  return rangeView(row, corp.auth_name);
}

/** Removes a range of the corporation (404 when it has no such range). */
export async function removeRange(ctx: AppContext, p: Principal, corp: CorpRow, id: string): Promise<void> {
  const row = await ctx.store.platform.write(async (tx, w) => {
    const row = await findSafeIpRange(tx, corp.id, id);
    if (!row) throw notFound("Safe IP range");
    await deleteSafeIpRange(tx, id);
    w.record({ type: "saferange", id, action: "delete", before: row, after: null, corpId: corp.id });
    await ctx.changes.publish(tx, w, SAFE_IP_TOPIC, corp.id);
    return row;
  });
  await ctx.audit.record({ ...auditBy(p), action: "auth.safe_ip_remove", outcome: "success", corp_id: corp.id, target: row.range });
}
