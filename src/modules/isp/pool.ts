// Address pools: an IPv4 or IPv6 network, optionally at a POP and on a NAS, with how many
// addresses it holds (IPv4) and how many are in use: online RADIUS sessions' framed addresses and
// contracts' static addresses inside it.
import { Elysia } from "elysia";
import ipaddr from "ipaddr.js";
import { eq } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { writeTx, type TenantDb } from "../../db/sqlite";
import { ispNas, ispPools, ispPops } from "../../db/tenant/schema";
import { created, noContent } from "../../lib/http";
import { listClauses, listRows, type ListParams } from "../../lib/list";
import { invalid } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { nowIso, toIso } from "../../lib/time";
import type { authGuard } from "../auth/guard";
import { canonicalCidr, checkRef, checkUniqueName, requireRow, setStatus, type Q } from "./common";
import { staticAddresses } from "../contract/service";
import { Pool, PoolInput, PoolUsage } from "./model";

type Row = typeof ispPools.$inferSelect;
const AUTH = "platform.isp" as const;

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
function addressesInUse(db: TenantDb, now: string): InUse[] {
  const out: InUse[] = [];
  const sessions = db.$client
    .query<{ id: string; framed_ip: string }, [string]>("SELECT id, framed_ip FROM isp_radius_sessions WHERE open = 1 AND stale_at >= ?1 AND framed_ip IS NOT NULL")
    .all(now);
  for (const s of sessions) {
    const parsed = parsedAddress(s.framed_ip);
    if (parsed) out.push({ address: s.framed_ip, source: "session", id: s.id, parsed });
  }
  for (const c of staticAddresses(db)) {
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

function viewOne(ctx: AppContext, db: TenantDb, row: Row) {
  return poolView(row, addressesInUse(db, toIso(ctx.now())));
}

export function poolUsage(ctx: AppContext, db: TenantDb, id: string) {
  const row = requireRow<Row>(db, ispPools, id, "Pool");
  const items = inside(row, addressesInUse(db, toIso(ctx.now())));
  return { size: poolSize(row), used: usedCount(items), items: items.map(({ address, source, id }) => ({ address, source, id })) };
}

function values(db: Q, input: PoolInput) {
  const parsed = canonicalCidr(input.cidr, input.version);
  if ("error" in parsed) throw invalid("cidr", parsed.error);
  return {
    name: input.name,
    version: input.version,
    cidr: parsed.cidr,
    pop_id: checkRef(db, ispPops, input.pop_id, "pop_id", "POP"),
    nas_id: checkRef(db, ispNas, input.nas_id, "nas_id", "NAS"),
  };
}

const LIST = { q: [ispPools.name, ispPools.cidr] };
const USAGE_FIELDS = ["size", "used"] as const;

/**
 * The list convention over the stored fields, plus `size` and `used`, which are computed (IP
 * ranges are not SQL): with either in ?sort or as a filter, the matching pools (a corporation has
 * tens, not thousands) are read whole and sorted, filtered and paged here.
 */
export function listPools(ctx: AppContext, db: TenantDb, query: ListParams) {
  const inUse = addressesInUse(db, toIso(ctx.now()));
  const view = (r: Row) => poolView(r, inUse);
  const sortField = query.sort?.replace(/^-/, "");
  const usageFilters = USAGE_FIELDS.filter((f) => query[f] !== undefined);
  if (!usageFilters.length && !USAGE_FIELDS.includes(sortField as (typeof USAGE_FIELDS)[number])) return listRows(db, ispPools, LIST, query, view);
  const rest: ListParams = { ...query, page: undefined, limit: undefined, sort: USAGE_FIELDS.includes(sortField as "size") ? undefined : query.sort };
  for (const f of usageFilters) delete rest[f];
  const { where, order } = listClauses(ispPools, LIST, rest);
  let items = db.select().from(ispPools).where(where).orderBy(...order).all().map(view);
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

export function createPool(db: TenantDb, input: PoolInput): Row {
  return writeTx(db, (tx) => {
    const v = values(tx, input);
    checkUniqueName(tx, ispPools, input.name, null, "pool");
    return tx.insert(ispPools).values(v).returning().get();
  });
}

export function updatePool(db: TenantDb, id: string, input: PoolInput): Row {
  return writeTx(db, (tx) => {
    requireRow(tx, ispPools, id, "Pool");
    const v = values(tx, input);
    checkUniqueName(tx, ispPools, input.name, id, "pool");
    return tx
      .update(ispPools)
      .set({ ...v, updated_at: nowIso() })
      .where(eq(ispPools.id, id))
      .returning()
      .get();
  });
}

export function deletePool(db: TenantDb, id: string): void {
  writeTx(db, (tx) => {
    requireRow(tx, ispPools, id, "Pool");
    tx.delete(ispPools).where(eq(ispPools.id, id)).run();
  });
}

export function poolRoutes(ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-pool", prefix: "/api/isp/pool", tags: ["ISP"] })
    .use(guard)
    .get("", ({ tenantDb, query }) => listPools(ctx, tenantDb, query), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(Pool) },
      detail: { summary: "List pools" },
    })
    .post("", ({ tenantDb, body, set }) => created(set, "/api/isp/pool", viewOne(ctx, tenantDb, createPool(tenantDb, body))), {
      auth: AUTH,
      body: PoolInput,
      response: { 200: Pool },
      detail: { summary: "Create a pool" },
    })
    .get("/:id", ({ tenantDb, params }) => viewOne(ctx, tenantDb, requireRow<Row>(tenantDb, ispPools, params.id, "Pool")), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pool },
      detail: { summary: "Get a pool" },
    })
    .put("/:id", ({ tenantDb, params, body }) => viewOne(ctx, tenantDb, updatePool(tenantDb, params.id, body)), {
      auth: AUTH,
      params: IdParams,
      body: PoolInput,
      response: { 200: Pool },
      detail: { summary: "Update a pool" },
    })
    .delete(
      "/:id",
      ({ tenantDb, params, set }) => {
        deletePool(tenantDb, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a pool" } },
    )
    .put("/:id/active", ({ tenantDb, params }) => viewOne(ctx, tenantDb, setStatus<Row>(tenantDb, ispPools, params.id, true, "Pool")), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pool },
      detail: { summary: "Activate a pool" },
    })
    .put("/:id/inactive", ({ tenantDb, params }) => viewOne(ctx, tenantDb, setStatus<Row>(tenantDb, ispPools, params.id, false, "Pool")), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pool },
      detail: { summary: "Deactivate a pool" },
    })
    .get("/:id/usage", ({ tenantDb, params }) => poolUsage(ctx, tenantDb, params.id), {
      auth: AUTH,
      params: IdParams,
      response: { 200: PoolUsage },
      detail: { summary: "Pool usage with the addresses in use (online sessions' framed addresses, contracts' static addresses)" },
    });
}
