// Scans (qr_accesses): the accesses list and CSV export, the per-code and all-codes reports, and
// their retention. Everything is computed in SQL over the one (qrcode_id, at, visitor) index.
// The rows themselves are written by the scan writer thread (access-writer.worker.ts).
import { eq, gte, lt } from "drizzle-orm";
import type { TenantDoor } from "../../core/store";
import { clientOf } from "../../db/rows";
import { qrAccesses } from "../../db/tenant/schema";
import type { TenantDb } from "../../db/sqlite";
import { listRows, type ListParams } from "../../db/list";
import { invalid } from "../../lib/problem";
import { canonicalDate, canonicalInstant, dateAsMidnight, toIso, zoneOffsetMinutes } from "../../lib/time";
import { csvLine } from "../../lib/csv";
import { findCode } from "./codes-service";
import type { AllReport, QrAccess, Report } from "./model";

type AccessRow = typeof qrAccesses.$inferSelect;

export function accessView(row: AccessRow): QrAccess {
  const { visitor: _visitor, seq: _seq, ...rest } = row;
  return { ...rest, created_at: row.at, updated_at: row.at };
}

export interface Range {
  from: string | null; // inclusive
  to: string | null; // exclusive
}

const DAY_MS = 86_400_000;
/**
 * Days a range may name: the day after the last one (an exclusive `to`) and local dates around it
 * in any zone are still years of four digits, which the date arithmetic here needs.
 */
const FIRST_DAY = "1970-01-01";
const LAST_DAY = "9999-12-30";
const OUT_OF_RANGE = `must lie between ${FIRST_DAY} and ${LAST_DAY}`;
/** Longest span a per-code report lists day by day. */
const MAX_REPORT_DAYS = 3660;

function nextDate(date: string): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
}

/** Local midnight of a date in `tz`, as a canonical instant. */
function midnight(date: string, tz: string): string {
  return canonicalInstant(dateAsMidnight(date, tz)!)!;
}

/** The local date of an instant in `tz`. */
export function localDate(instant: string, tz: string): string {
  const at = new Date(instant);
  return new Date(at.getTime() + zoneOffsetMinutes(tz, at) * 60_000).toISOString().slice(0, 10);
}

/**
 * `from`/`to` of a query: an instant with offset, or a date in the corporation's timezone
 * (`from` its first instant, `to` the whole day included). `to` is exclusive.
 */
function bound(field: "from" | "to", text: string | undefined, tz: string): string | null {
  if (text === undefined) return null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const date = canonicalDate(text);
    if (!date) throw invalid(field, "is not a real date");
    if (date < FIRST_DAY || date > LAST_DAY) throw invalid(field, OUT_OF_RANGE);
    return midnight(field === "to" ? nextDate(date) : date, tz);
  }
  const instant = canonicalInstant(text);
  if (!instant) throw invalid(field, "must be an instant with an offset or a date (YYYY-MM-DD)");
  // Canonical instants of years 0000-9999 compare as text; later years would not even print so.
  if (instant < FIRST_DAY || instant > LAST_DAY) throw invalid(field, OUT_OF_RANGE);
  return instant;
}

export function parseRange(query: { from?: string; to?: string }, tz: string): Range {
  const from = bound("from", query.from, tz);
  const to = bound("to", query.to, tz);
  if (from && to && from > to) throw invalid("to", "must not be before from");
  return { from, to };
}

/** A report's range; by default the last 30 local days, today included (up to its end). */
function reportRange(query: { from?: string; to?: string }, tz: string, now: number): { from: string; to: string } {
  const r = parseRange(query, tz);
  const to = r.to ?? midnight(nextDate(localDate(toIso(now), tz)), tz);
  let from = r.from;
  if (!from) {
    let day = localDate(toIso(Date.parse(to) - 1), tz);
    for (let i = 0; i < 29; i++) day = new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
    from = midnight(day, tz);
    if (from > to) from = to;
  }
  return { from, to };
}

/** The accesses of a code (404 when the code is unknown). */
export function listAccesses(tenant: TenantDoor, codeId: string, query: ListParams & { from?: string; to?: string }, tz: string) {
  return tenant.read(async (db) => {
    await findCode(db, codeId);
    return accessPage(db, codeId, query, tz);
  });
}

function accessPage(db: TenantDb, codeId: string, query: ListParams & { from?: string; to?: string }, tz: string) {
  const { from, to } = parseRange(query, tz);
  return listRows(
    db,
    qrAccesses,
    {
      q: [qrAccesses.ip, qrAccesses.user_agent, qrAccesses.referer],
      hidden: ["visitor", "seq"],
      defaultSort: "-at",
      extraKeys: ["from", "to"],
      // An access is never updated: accessView shows `at` as both timestamps, so lists take them too.
      computed: { created_at: { expr: qrAccesses.at, dataType: "string" }, updated_at: { expr: qrAccesses.at, dataType: "string" } },
    },
    query,
    accessView,
    [eq(qrAccesses.qrcode_id, codeId), from ? gte(qrAccesses.at, from) : undefined, to ? lt(qrAccesses.at, to) : undefined],
  );
}

export const ACCESS_CSV_HEADER = ["at", "ip", "user_agent", "referer"];
const EXPORT_PAGE = 2_000;

const EXPORT_PAGE_SQL =
  "SELECT id, at, ip, user_agent, referer FROM qr_accesses WHERE qrcode_id = ?1 AND at >= ?2 AND at < ?3 AND (at > ?4 OR (at = ?4 AND id > ?5)) ORDER BY at, id LIMIT ?6";
type ExportRow = { id: string; at: string; ip: string; user_agent: string | null; referer: string | null };

/**
 * The accesses of a code in time order (404 when the code is unknown), streamed page by page
 * (keyset on at, id), each page one read of its own.
 */
export async function exportAccesses(
  tenant: TenantDoor,
  codeId: string,
  query: { format: string; from?: string; to?: string },
  tz: string,
): Promise<ReadableStream<Uint8Array>> {
  await tenant.read((db) => findCode(db, codeId));
  if (query.format !== "csv") throw invalid("format", "must be csv");
  const { from, to } = parseRange(query, tz);
  const encoder = new TextEncoder();
  let cursor = { at: "", id: "" };
  let headerSent = false;
  return new ReadableStream({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(encoder.encode(csvLine(ACCESS_CSV_HEADER)));
        return;
      }
      const rows = await tenant.read((db) => clientOf(db).query<ExportRow>(EXPORT_PAGE_SQL).all(codeId, from ?? "", to ?? "\uffff", cursor.at, cursor.id, EXPORT_PAGE));
      if (rows.length === 0) return controller.close();
      controller.enqueue(encoder.encode(rows.map((r) => csvLine([r.at, r.ip, r.user_agent, r.referer])).join("")));
      const last = rows[rows.length - 1];
      cursor = { at: last.at, id: last.id };
      if (rows.length < EXPORT_PAGE) controller.close();
    },
  });
}

interface Counts {
  total: number;
  unique_visitors: number;
}

/** The report of one code (404 when the code is unknown). */
export function codeReport(tenant: TenantDoor, codeId: string, query: { from?: string; to?: string }, tz: string, now: number): Promise<Report> {
  return tenant.read(async (db) => {
    await findCode(db, codeId);
    return reportOf(db, codeId, query, tz, now);
  });
}

async function reportOf(db: TenantDb, codeId: string, query: { from?: string; to?: string }, tz: string, now: number): Promise<Report> {
  const { from, to } = reportRange(query, tz, now);
  // One [start, end) slice per local day, clipped to the range: DST days are 23 or 25 hours long.
  const days: [string, string, string][] = [];
  if (from < to) {
    const last = localDate(toIso(Date.parse(to) - 1), tz);
    for (let day = localDate(from, tz); day <= last; day = nextDate(day)) {
      if (days.length >= MAX_REPORT_DAYS) throw invalid("from", `a report spans at most ${MAX_REPORT_DAYS} days`);
      const start = midnight(day, tz);
      const end = midnight(nextDate(day), tz);
      days.push([day, start > from ? start : from, end < to ? end : to]);
    }
  }
  const totals = (await clientOf(db)
    .query<Counts>("SELECT count(*) AS total, count(DISTINCT visitor) AS unique_visitors FROM qr_accesses WHERE qrcode_id = ? AND at >= ? AND at < ?")
    .get(codeId, from, to))!;
  const perDay = await clientOf(db)
    .query<{ date: string } & Counts>(
      "WITH d(date, s, e) AS (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?1)) " +
        "SELECT d.date AS date, count(a.qrcode_id) AS total, count(DISTINCT a.visitor) AS unique_visitors " +
        "FROM d LEFT JOIN qr_accesses a ON a.qrcode_id = ?2 AND a.at >= d.s AND a.at < d.e GROUP BY d.date ORDER BY d.date",
    )
    .all(JSON.stringify(days), codeId);
  return { qrcode_id: codeId, from, to, total: totals.total, unique_visitors: totals.unique_visitors, days: perDay };
}

const GROUP_COLUMN = { qrcode: "a.qrcode_id", campaign: "c.campaign_id", category: "c.category_id" } as const;
const GROUP_NAMES = {
  qrcode: "SELECT name FROM qr_codes WHERE id = g.key",
  campaign: "SELECT name FROM qr_campaigns WHERE id = g.key",
  category: "SELECT name FROM qr_categories WHERE id = g.key",
} as const;

export function allReport(
  tenant: TenantDoor,
  query: { from?: string; to?: string; group_by?: "qrcode" | "campaign" | "category"; campaign_id?: string; category_id?: string },
  tz: string,
  now: number,
): Promise<AllReport> {
  return tenant.read((db) => allReportOf(db, query, tz, now));
}

async function allReportOf(
  db: TenantDb,
  query: { from?: string; to?: string; group_by?: "qrcode" | "campaign" | "category"; campaign_id?: string; category_id?: string },
  tz: string,
  now: number,
): Promise<AllReport> {
  const { from, to } = reportRange(query, tz, now);
  const groupBy = query.group_by ?? "qrcode";
  // Driven from the codes, each code's accesses a range of the (qrcode_id, at, visitor) index:
  // a second index leading with `at` would cost every scan one more b-tree insert. CROSS JOIN
  // keeps that order; every access has its code (the foreign key cascades).
  const base =
    "FROM qr_codes c CROSS JOIN qr_accesses a INDEXED BY qr_accesses_code_at ON a.qrcode_id = c.id " +
    "WHERE a.at >= ?1 AND a.at < ?2 AND (?3 IS NULL OR c.campaign_id = ?3) AND (?4 IS NULL OR c.category_id = ?4)";
  const args = [from, to, query.campaign_id ?? null, query.category_id ?? null];
  const totals = (await clientOf(db).query<Counts>(`SELECT count(*) AS total, count(DISTINCT a.visitor) AS unique_visitors ${base}`).get(...args))!;
  const groups = await clientOf(db)
    .query<AllReport["groups"][number]>(
      `SELECT g.key AS id, (${GROUP_NAMES[groupBy]}) AS name, g.total, g.unique_visitors FROM ` +
        `(SELECT ${GROUP_COLUMN[groupBy]} AS key, count(*) AS total, count(DISTINCT a.visitor) AS unique_visitors ${base} GROUP BY key) g ` +
        "ORDER BY g.total DESC, g.key",
    )
    .all(...args);
  return { from, to, total: totals.total, unique_visitors: totals.unique_visitors, groups };
}

/**
 * Retention (src/modules/retention): deletes at most `limit` scans made before `cutoff` (an
 * instant), returns how many. The old scans are a range of the (qrcode_id, at, visitor) index per
 * code, walked code by code as the all-codes report walks it (no second index is worth its cost on
 * every scan). Run inside a write: the scan writer thread commits on its own connection, and its
 * busy timeout waits out this short transaction.
 */
export async function pruneQrAccesses(db: TenantDb, cutoff: string, limit: number): Promise<number> {
  const deleted = await clientOf(db)
    .query(
      `DELETE FROM qr_accesses WHERE seq IN (SELECT a.seq FROM qr_codes c CROSS JOIN qr_accesses a INDEXED BY qr_accesses_code_at ON a.qrcode_id = c.id
            WHERE a.at < ?1 LIMIT ?2)`,
    )
    .run(cutoff, limit);
  return deleted.changes;
}
