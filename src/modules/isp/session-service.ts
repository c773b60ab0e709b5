// RADIUS sessions (isp_radius_sessions, kept by the accounting writer: accounting-service.ts): the
// operator's "who is online" list, and the open sessions RFC 5176 requests act on
// (dynamic-auth.ts).
import { and, eq, gte, lt, lte, or, isNull, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { OpenSessionProbe } from "../../core/context";
import type { TenantDoor } from "../../core/store";
import { clientOf } from "../../db/rows";
import type { TenantDb } from "../../db/sqlite";
import { ispRadiusSessions } from "../../db/tenant/schema";
import { listRows, type ListParams, type SearchWord } from "../../db/list";
import { invalid, notFound } from "../../lib/problem";
import { canonicalInstant, toIso } from "../../lib/time";
import { addressWord } from "../contract/service";
import { SESSION_STATES } from "./model";
import { PLACE_KEYS, placeConditions } from "./session-filters";

export type SessionRow = typeof ispRadiusSessions.$inferSelect;
type State = (typeof SESSION_STATES)[number];

const stateExpr = (now: string) =>
  sql<string>`CASE WHEN ${ispRadiusSessions.open} = 0 THEN 'closed' WHEN ${ispRadiusSessions.stale_at} < ${now} THEN 'stale' ELSE 'online' END`;

function stateOf(row: Pick<SessionRow, "open" | "stale_at">, now: string): State {
  if (!row.open) return "closed";
  return row.stale_at < now ? "stale" : "online";
}

async function nasNames(db: TenantDb, ids: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (!unique.length) return new Map();
  const rows = await clientOf(db).query<{ id: string; name: string }, string[]>(`SELECT id, name FROM isp_nas WHERE id IN (${unique.map(() => "?").join(",")})`).all(...unique);
  return new Map(rows.map((r) => [r.id, r.name]));
}

function sessionView(row: SessionRow, now: string, names: Map<string, string>) {
  const { open: _o, stale_at: _s, received_at: _r, ...rest } = row;
  return { ...rest, nas_name: names.get(row.nas_id) ?? null, state: stateOf(row, now) };
}

/** The conditions of ?state, ?from and ?to, written so that the indexes answer them. */
function stateCondition(state: State, now: string): SQL {
  if (state === "closed") return eq(ispRadiusSessions.open, false);
  if (state === "online") return and(eq(ispRadiusSessions.open, true), gte(ispRadiusSessions.stale_at, now))!;
  return and(eq(ispRadiusSessions.open, true), lt(ispRadiusSessions.stale_at, now))!;
}

function instantParam(query: ListParams, key: "from" | "to"): string | null {
  const raw = query[key];
  if (raw === undefined) return null;
  const iso = canonicalInstant(String(raw));
  if (!iso) throw invalid(key, "must be an ISO 8601 instant with offset");
  return iso;
}

/**
 * The ids of the contracts whose online sessions' framed address or calling station (MAC) hold one
 * word of a contract ?q (`match` the search's condition on a column), as a subquery. A MAC is also
 * compared without its separators (`aabbcc`, `aa-bb-cc` find `AA:BB:CC:DD:EE:FF`). Words that cannot be
 * part of an address find nothing here (addressWord).
 */
export function contractIdsByOnlineAddress(match: (c: SQLiteColumn) => SQL, word: SearchWord, now: string): SQL | undefined {
  if (!addressWord(word)) return undefined;
  const s = ispRadiusSessions;
  const hex = word.text.replace(/[.:-]/g, "").toLowerCase();
  const bare = sql`replace(replace(replace(lower(${s.calling_station_id}), ':', ''), '-', ''), '.', '')`;
  // Not for a piece of an IPv4 address (`10.0` is no MAC's `100`).
  const ipv4Piece = /^[0-9]*\.[0-9.]*$/.test(word.text);
  const mac = hex.length >= 4 && !ipv4Piece ? sql` OR ${bare} LIKE ${`%${hex}%`}` : sql``;
  return sql`(SELECT ${s.contract_id} FROM ${s} WHERE ${stateCondition("online", now)} AND ${s.contract_id} IS NOT NULL AND (${match(s.framed_ip)} OR ${match(s.calling_station_id)}${mac}))`;
}

export function listSessions(tenant: TenantDoor, query: ListParams, at: number) {
  return tenant.read((db) => sessionPage(db, query, toIso(at)));
}

/** GET /api/isp/nas/{id}/sessions: the NAS's online sessions (404 for an unknown NAS). */
export function listNasSessions(tenant: TenantDoor, nasId: string, query: ListParams, at: number) {
  return tenant.read(async (db) => {
    if (!(await clientOf(db).query("SELECT 1 FROM isp_nas WHERE id = ?1").get(nasId))) throw notFound("NAS");
    return sessionPage(db, { ...query, state: "online" }, toIso(at), [eq(ispRadiusSessions.nas_id, nasId)]);
  });
}

async function sessionPage(db: TenantDb, query: ListParams, now: string, scope: SQL[] = []) {
  const where: (SQL | undefined)[] = [...scope];
  if (query.state !== undefined) where.push(stateCondition(query.state as State, now));
  // A session overlapping [from, to]: "who had this address at that time".
  const from = instantParam(query, "from");
  const to = instantParam(query, "to");
  if (from && to && from > to) throw invalid("from", "must not be after to");
  if (to) where.push(lte(ispRadiusSessions.started_at, to));
  if (from) where.push(or(isNull(ispRadiusSessions.stopped_at), gte(ispRadiusSessions.stopped_at, from)));
  where.push(...(await placeConditions(db, query)));
  const spec = {
    q: [ispRadiusSessions.username, ispRadiusSessions.framed_ip, ispRadiusSessions.calling_station_id],
    hidden: ["open", "stale_at", "received_at"],
    defaultSort: "-started_at",
    extraKeys: ["state", "from", "to", ...PLACE_KEYS],
    computed: {
      state: { expr: stateExpr(now), dataType: "string" as const },
      nas_name: { expr: sql`(SELECT name FROM isp_nas WHERE isp_nas.id = ${ispRadiusSessions.nas_id})`, dataType: "string" as const },
    },
  };
  const page = await listRows(db, ispRadiusSessions, spec, query, (r: SessionRow) => r, where);
  const names = await nasNames(db, page.items.map((r) => r.nas_id));
  return { ...page, items: page.items.map((r) => sessionView(r, now, names)) };
}

export async function requireSession(db: TenantDb, id: string): Promise<SessionRow> {
  const row = await db.select().from(ispRadiusSessions).where(eq(ispRadiusSessions.id, id)).get();
  if (!row) throw notFound("Session");
  return row;
}

export function getSession(tenant: TenantDoor, id: string, at: number) {
  return tenant.read(async (db) => {
    const row = await requireSession(db, id);
    return sessionView(row, toIso(at), await nasNames(db, [row.nas_id]));
  });
}

/** Whether a contract has an open session (online or stale): one cached raw probe. */
export async function hasOpenSession(db: TenantDb, contractId: string): Promise<boolean> {
  const read = openSessionProbe.read(contractId);
  return openSessionProbe.open(await clientOf(db).query(read.sql).get(...read.params));
}

/** hasOpenSession as ctx.openSessionProbe: its statement, and what its row says. */
export const openSessionProbe: OpenSessionProbe = {
  read: (contractId) => ({ sql: "SELECT 1 AS open FROM isp_radius_sessions WHERE contract_id = ?1 AND open = 1 LIMIT 1", params: [contractId] }),
  open: (row) => !!row,
};

/** The open sessions (online or stale) of a contract. */
export async function openSessionsOf(db: TenantDb, contractId: string): Promise<SessionRow[]> {
  // Asked after committed contract changes (the watcher), where mostly there is none: the probe
  // first, Drizzle's select (≈ 25 µs to build) only when there are some.
  if (!(await hasOpenSession(db, contractId))) return [];
  return await db
    .select()
    .from(ispRadiusSessions)
    .where(and(eq(ispRadiusSessions.contract_id, contractId), eq(ispRadiusSessions.open, true)))
    .all();
}

/** The online sessions a ?q finds (user name, framed address, MAC), as search hits (GET /api/search). */
export async function sessionHits(db: TenantDb, q: string, limit: number, now: string): Promise<{ id: string; title: string; subtitle: string | null }[]> {
  const page = await sessionPage(db, { q, limit, state: "online" }, now);
  return page.items.map((r) => ({ id: r.id, title: r.username, subtitle: [r.framed_ip, r.calling_station_id, r.nas_name].filter((v) => v).join(" · ") || null }));
}
