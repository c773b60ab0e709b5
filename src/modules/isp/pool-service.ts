// Address pools: an IPv4 or IPv6 network, optionally at a POP and on a NAS, with how many
// addresses it holds (IPv4) and how many are in use: online RADIUS sessions' framed addresses and
// contracts' static addresses inside it (read through the contract service, on the same handle).
import ipaddr from "ipaddr.js";
import { eq } from "drizzle-orm";
import type { TenantDoor } from "../../core/store";
import type { TenantDb } from "../../db/sqlite";
import { ispNas, ispPools, ispPops } from "../../db/tenant/schema";
import { listClausesOn, listRows, type ListParams } from "../../db/list";
import { clientOf } from "../../db/rows";
import { invalid } from "../../lib/problem";
import { nowIso, toIso } from "../../lib/time";
import { staticAddresses } from "../contract/service";
import { canonicalCidr } from "./ip";
import type { PoolInput } from "./model";
import { checkRef, checkUniqueName, requireRow, setStatus, type Q, trackedWrite } from "./record-service";

type Row = typeof ispPools.$inferSelect;

interface InUse {
  address: string;
  source: "session" | "contract";
  id: string;
  parsed: ipaddr.IPv4 | ipaddr.IPv6;
}

function parsedAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  // A contract's ipv6 may be a prefix: its network address stands for it.
  const addr = text.split("/")[0];
  try {
    const p = ipaddr.parse(addr);
    return p.kind() === "ipv6" && (p as ipaddr.IPv6).isIPv4MappedAddress() ? (p as ipaddr.IPv6).toIPv4Address() : p;
  } catch {
    return null;
  }
}

/** Every address in use in the corporation now: online sessions' and contracts' static ones. */
async function addressesInUse(db: TenantDb, now: string): Promise<InUse[]> {
  const out: InUse[] = [];
  const sessions = await clientOf(db)
    .query<{ id: string; framed_ip: string }, [string]>("SELECT id, framed_ip FROM isp_radius_sessions WHERE open = 1 AND stale_at >= ?1 AND framed_ip IS NOT NULL")
    .all(now);
  for (const s of sessions) {
    const parsed = parsedAddress(s.framed_ip);
    if (parsed) out.push({ address: s.framed_ip, source: "session", id: s.id, parsed });
  }
  for (const c of await staticAddresses(db)) {
    for (const a of [c.ipv4, c.ipv6]) {
      const parsed = a ? parsedAddress(a) : null;
      if (parsed) out.push({ address: a!, source: "contract", id: c.contract_id, parsed });
    }
  }
  return out;
}

/** routes.md: every address of an IPv4 cidr, network and broadcast included; null for IPv6. */
function poolSize(row: Row): number | null {
  if (row.version !== 4) return null;
  return 2 ** (32 - Number(row.cidr.split("/")[1]));
}

function inside(row: Row, inUse: InUse[]): InUse[] {
  const [net, len] = ipaddr.parseCIDR(row.cidr);
  return inUse.filter((a) => a.parsed.kind() === net.kind() && a.parsed.match(net, len));
}

/** Distinct addresses: a contract's static address that its online session also holds counts once. */
const usedCount = (items: InUse[]) => new Set(items.map((a) => a.parsed.toNormalizedString())).size;

function poolView(row: Row, inUse: InUse[]) {
  return { ...row, size: poolSize(row), used: usedCount(inside(row, inUse)) };
}

/** The pool with its usage at `now`, read on the handle of the caller's read or write. */
async function viewOne(db: TenantDb, row: Row, now: number) {
  return poolView(row, await addressesInUse(db, toIso(now)));
}

export function getPool(tenant: TenantDoor, id: string, now: number) {
  return tenant.read(async (db) => await viewOne(db, await requireRow<Row>(db, ispPools, id, "Pool"), now));
}

export function poolUsage(tenant: TenantDoor, id: string, now: number) {
  return tenant.read(async (db) => {
    const row = await requireRow<Row>(db, ispPools, id, "Pool");
    const items = inside(row, await addressesInUse(db, toIso(now)));
    return { size: poolSize(row), used: usedCount(items), items: items.map(({ address, source, id }) => ({ address, source, id })) };
  });
}

async function values(db: Q, input: PoolInput) {
  const parsed = canonicalCidr(input.cidr, input.version);
  if ("error" in parsed) throw invalid("cidr", parsed.error);
  return {
    name: input.name,
    version: input.version,
    cidr: parsed.cidr,
    pop_id: await checkRef(db, ispPops, input.pop_id, "pop_id", "POP"),
    nas_id: await checkRef(db, ispNas, input.nas_id, "nas_id", "NAS"),
  };
}

const LIST = { q: [ispPools.name, ispPools.cidr] };
const USAGE_FIELDS = ["size", "used"] as const;

/**
 * The list convention over the stored fields, plus `size` and `used`, which are computed (IP
 * ranges are not SQL): with either in ?sort or as a filter, the matching pools (a corporation has
 * tens, not thousands) are read whole and sorted, filtered and paged here.
 */
export function listPools(tenant: TenantDoor, query: ListParams, now: number) {
  return tenant.read((db) => poolPage(db, query, now));
}

async function poolPage(db: TenantDb, query: ListParams, now: number) {
  const inUse = await addressesInUse(db, toIso(now));
  const view = (r: Row) => poolView(r, inUse);
  const sortField = query.sort?.replace(/^-/, "");
  const usageFilters = USAGE_FIELDS.filter((f) => query[f] !== undefined);
  if (!usageFilters.length && !USAGE_FIELDS.includes(sortField as (typeof USAGE_FIELDS)[number])) return listRows(db, ispPools, LIST, query, view);
  const rest: ListParams = { ...query, page: undefined, limit: undefined, sort: USAGE_FIELDS.includes(sortField as "size") ? undefined : query.sort };
  for (const f of usageFilters) delete rest[f];
  const { where, order } = listClausesOn(db, ispPools, LIST, rest);
  let items = (await db.select().from(ispPools).where(where).orderBy(...order).all()).map(view);
  for (const f of usageFilters) {
    const raw = query[f];
    const text = Array.isArray(raw) ? String(raw[raw.length - 1]) : String(raw);
    const wanted = text === "null" ? null : Number(text);
    if (wanted !== null && (text.trim() === "" || !Number.isFinite(wanted))) throw invalid(f, "must be a number");
    items = items.filter((p) => p[f] === wanted);
  }
  if (sortField === "size" || sortField === "used") {
    const dir = query.sort!.startsWith("-") ? -1 : 1;
    // Stable: ties keep creation order, as listRows's secondary order by id.
    items.sort((a, b) => dir * ((a[sortField] ?? -1) - (b[sortField] ?? -1)) || (a.id < b.id ? -1 : 1));
  }
  const page = query.page ?? 1;
  const limit = query.limit ?? 50;
  return { items: items.slice((page - 1) * limit, page * limit), page, limit, total: items.length };
}

export function createPool(tenant: TenantDoor, input: PoolInput, now: number) {
  return trackedWrite(tenant, "pool", ispPools, null, async (tx) => {
    const v = await values(tx, input);
    await checkUniqueName(tx, ispPools, input.name, null, "pool");
    return await viewOne(tx, await tx.insert(ispPools).values(v).returning().get(), now);
  });
}

export function updatePool(tenant: TenantDoor, id: string, input: PoolInput, now: number) {
  return trackedWrite(tenant, "pool", ispPools, id, async (tx) => {
    await requireRow(tx, ispPools, id, "Pool");
    const v = await values(tx, input);
    await checkUniqueName(tx, ispPools, input.name, id, "pool");
    const row = await tx
      .update(ispPools)
      .set({ ...v, updated_at: nowIso() })
      .where(eq(ispPools.id, id))
      .returning()
      .get();
    return await viewOne(tx, row, now);
  });
}

export function deletePool(tenant: TenantDoor, id: string): Promise<void> {
  return trackedWrite(tenant, "pool", ispPools, id, async (tx) => {
    await requireRow(tx, ispPools, id, "Pool");
    await tx.delete(ispPools).where(eq(ispPools.id, id)).run();
  });
}

export function setPoolStatus(tenant: TenantDoor, id: string, status: boolean, now: number) {
  return trackedWrite(tenant, "pool", ispPools, id, async (tx) => await viewOne(tx, await setStatus<Row>(tx, ispPools, id, status, "Pool"), now), { action: "status" });
}
