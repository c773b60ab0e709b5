// Traffic usage (routes.md, "Network operations additions": UsagePeriod, UsageRow): the daily
// rollups of isp_usage_daily, added to by the accounting writer (accounting-service.ts) in the
// write that stores each record, read by GET /api/contract/{id}/usage and GET /api/isp/usage,
// recomputed from the raw records by `corpadmin usage rebuild`.
import type { TenantDoor } from "../../core/store";
import { clientOf } from "../../db/rows";
import type { TenantDb } from "../../db/sqlite";
import { paging, type ListParams } from "../../db/list";
import { invalid } from "../../lib/problem";
import { canonicalDate, dateAsMidnight, localDate } from "../../lib/time";
import { contractLabels, fairUseTerms, getContract } from "../contract/service";
import { allowanceBytes, cycleOf, cycleUsedBytes, readPolicy } from "./network-service";
import { rankedUsageSums, usageSums, type SumField } from "./usage-range";

const DAY_MS = 86_400_000;
/**
 * Growth that spans more than this is dated over its last MAX_SPREAD_DAYS only: a record whose
 * session time is bogus (years) would otherwise write a rollup row per day of it.
 */
const MAX_SPREAD_DAYS = 62;

export interface UsageGrowth {
  input: number;
  output: number;
  seconds: number;
}

export interface DayShare extends UsageGrowth {
  day: string;
}


function nextDate(date: string): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
}

/** Midnight of a date in a timezone, as epoch milliseconds. */
function midnightMs(date: string, timeZone: string): number {
  return Date.parse(dateAsMidnight(date, timeZone)!);
}

/**
 * Splits growth measured between two instants over the days (in the timezone) it spans, in
 * proportion to the time in each. Shares are cumulative floors, so they add up to the growth
 * exactly. An empty or backwards interval puts it all on the day of `toMs`.
 */
export function splitOverDays(fromMs: number, toMs: number, growth: UsageGrowth, timeZone: string): DayShare[] {
  const lastDay = localDate(toMs, timeZone);
  if (!(toMs > fromMs)) return [{ day: lastDay, ...growth }];
  fromMs = Math.max(fromMs, toMs - MAX_SPREAD_DAYS * DAY_MS);
  const span = toMs - fromMs;
  const out: DayShare[] = [];
  const done = { input: 0, output: 0, seconds: 0 };
  let day = localDate(fromMs, timeZone);
  for (;;) {
    const next = nextDate(day);
    const end = day === lastDay ? toMs : Math.min(toMs, midnightMs(next, timeZone));
    const f = (end - fromMs) / span;
    const upTo = (total: number) => (end === toMs ? total : Math.floor(total * f));
    const share = {
      day,
      input: upTo(growth.input) - done.input,
      output: upTo(growth.output) - done.output,
      seconds: upTo(growth.seconds) - done.seconds,
    };
    done.input += share.input;
    done.output += share.output;
    done.seconds += share.seconds;
    if (share.input || share.output || share.seconds) out.push(share);
    if (end === toMs) break;
    day = next;
  }
  return out.length ? out : [{ day: lastDay, ...growth }];
}

/** Per month (YYYY-MM) of the shares, their sum. */
function byMonth(shares: DayShare[]): DayShare[] {
  const months = new Map<string, DayShare>();
  for (const s of shares) {
    const key = s.day.slice(0, 7);
    const m = months.get(key) ?? { day: key, input: 0, output: 0, seconds: 0 };
    m.input += s.input;
    m.output += s.output;
    m.seconds += s.seconds;
    months.set(key, m);
  }
  return [...months.values()];
}

/**
 * Inside a write: adds the shares to the contract's daily rows and to their months' rows. Each an
 * upsert adding to the stored value (never read-modify-write): in cluster mode two app nodes add
 * to one row at once.
 */
export async function addUsage(tx: TenantDb, contractId: string, shares: DayShare[]): Promise<void> {
  const tally = new UsageTally();
  tally.add(contractId, shares);
  await tally.flush(tx);
}

/**
 * The usage of many records (a batch of accounting records, accounting-service.ts), summed per
 * contract and day (and month) before it is written: one upsert statement per up to 64 rows, not
 * one per record and day.
 */
export class UsageTally {
  private days = new Map<string, DayShare & { contractId: string }>();

  add(contractId: string, shares: DayShare[]): void {
    for (const s of shares) {
      const key = `${contractId}\n${s.day}`;
      const d = this.days.get(key);
      if (d) {
        d.input += s.input;
        d.output += s.output;
        d.seconds += s.seconds;
      } else this.days.set(key, { contractId, ...s });
    }
  }

  /** Writes what was added (inside the write), then forgets it. */
  async flush(tx: TenantDb): Promise<void> {
    // In key order: two writers adding to the same rows lock them in the same order.
    const days = [...this.days.values()].sort((a, b) => (a.contractId === b.contractId ? (a.day < b.day ? -1 : 1) : a.contractId < b.contractId ? -1 : 1));
    this.days.clear();
    const months = new Map<string, DayShare & { contractId: string }>();
    for (const d of days) {
      const key = `${d.contractId}\n${d.day.slice(0, 7)}`;
      const m = months.get(key);
      if (m) {
        m.input += d.input;
        m.output += d.output;
        m.seconds += d.seconds;
      } else months.set(key, { contractId: d.contractId, day: d.day.slice(0, 7), input: d.input, output: d.output, seconds: d.seconds });
    }
    // Sent together (one round trip on PostgreSQL).
    await Promise.all([...upserts(tx, "isp_usage_daily", "day", days), ...upserts(tx, "isp_usage_monthly", "month", [...months.values()])]);
  }
}

/**
 * Statements of 64, 16, 4 and 1 rows: a few statement texts (each prepared once per connection)
 * whatever the count.
 */
const CHUNKS = [64, 16, 4, 1];

function upserts(tx: TenantDb, table: "isp_usage_daily" | "isp_usage_monthly", period: "day" | "month", rows: (DayShare & { contractId: string })[]): Promise<unknown>[] {
  const out: Promise<unknown>[] = [];
  let at = 0;
  for (const size of CHUNKS)
    for (; rows.length - at >= size; at += size) {
      const params: (string | number)[] = [];
      for (const r of rows.slice(at, at + size)) params.push(r.contractId, r.day, r.input, r.output, r.seconds);
      out.push(clientOf(tx).query(upsertText(table, period, size)).run(...params));
    }
  return out;
}

const upsertTexts = new Map<string, string>();
function upsertText(table: string, period: string, size: number): string {
  const key = `${table} ${size}`;
  let text = upsertTexts.get(key);
  if (!text) {
    text = `INSERT INTO ${table} (contract_id, ${period}, input_bytes, output_bytes, session_seconds) VALUES ${Array.from({ length: size }, () => "(?, ?, ?, ?, ?)").join(", ")}
       ON CONFLICT (contract_id, ${period}) DO UPDATE SET input_bytes = ${table}.input_bytes + excluded.input_bytes,
         output_bytes = ${table}.output_bytes + excluded.output_bytes, session_seconds = ${table}.session_seconds + excluded.session_seconds`;
    upsertTexts.set(key, text);
  }
  return text;
}

/** The growth of a counter: a counter that went backwards (NAS restart, 32-bit wrap) counts from zero. */
export function counterGrowth(previous: number, current: number | null | undefined): number {
  if (current === null || current === undefined) return 0;
  return current >= previous ? current - previous : current;
}

interface Totals {
  input_bytes: number;
  output_bytes: number;
  session_seconds: number;
}

function dateParam(query: Record<string, unknown>, key: "from" | "to"): string | null {
  const raw = query[key];
  if (raw === undefined || raw === null || raw === "") return null;
  const d = canonicalDate(String(raw));
  if (!d) throw invalid(key, "must be a date (YYYY-MM-DD)");
  return d;
}

/** Longest range a usage answer covers (zero-filled buckets). */
const MAX_RANGE_DAYS = 3_700;

/**
 * from/to of a usage query as [from, toExclusive) dates. A bound left out is the current cycle's;
 * when that leaves nothing (a `from` after the cycle, a `to` before it), the range is that one day.
 */
function rangeOf(query: Record<string, unknown>, cycle: { start: string; end: string }) {
  const from = dateParam(query, "from");
  const to = dateParam(query, "to");
  if (from && to && from > to) throw invalid("from", "must not be after to");
  const lastOfCycle = new Date(Date.parse(`${cycle.end}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
  const start = from ?? (to && to < cycle.start ? to : cycle.start);
  const last = to ?? (from && from > lastOfCycle ? from : lastOfCycle);
  const end = nextDate(last);
  if ((Date.parse(end) - Date.parse(start)) / DAY_MS > MAX_RANGE_DAYS) throw invalid("to", `the range may span at most ${MAX_RANGE_DAYS} days`);
  return { start, end };
}

/** GET /api/contract/{id}/usage. */
export function contractUsage(tenant: TenantDoor, contractId: string, query: Record<string, unknown>, timeZone: string, at: number) {
  return tenant.read(async (db) => {
    await getContract(db, contractId);
    const bucket = (query.bucket as string | undefined) ?? "day";
    const policy = await readPolicy(db);
    const terms = await fairUseTerms(db, [contractId]);
    const cycle = cycleOf(at, timeZone, policy.usage_cycle_day);
    const { start, end } = rangeOf(query, cycle);
    const rows = (await clientOf(db)
      .query("SELECT day, input_bytes, output_bytes, session_seconds FROM isp_usage_daily WHERE contract_id = ?1 AND day >= ?2 AND day < ?3 ORDER BY day")
      .all(contractId, start, end)) as unknown as ({ day: string } & Totals)[];
    const byKey = new Map<string, Totals>();
    for (const r of rows) {
      const key = bucket === "month" ? r.day.slice(0, 7) : r.day;
      const t = byKey.get(key) ?? { input_bytes: 0, output_bytes: 0, session_seconds: 0 };
      t.input_bytes += Number(r.input_bytes);
      t.output_bytes += Number(r.output_bytes);
      t.session_seconds += Number(r.session_seconds);
      byKey.set(key, t);
    }
    // Every bucket of the range, zero-filled: a chart needs the days without traffic too.
    const items = [];
    const total = { input_bytes: 0, output_bytes: 0 };
    for (let day = start; day < end; day = bucket === "month" ? firstOfNextMonth(day) : nextDate(day)) {
      const t = byKey.get(bucket === "month" ? day.slice(0, 7) : day) ?? { input_bytes: 0, output_bytes: 0, session_seconds: 0 };
      items.push({ start: dateAsMidnight(day, timeZone)!, input_bytes: t.input_bytes, output_bytes: t.output_bytes, total_bytes: t.input_bytes + t.output_bytes, session_seconds: t.session_seconds });
      total.input_bytes += t.input_bytes;
      total.output_bytes += t.output_bytes;
    }
    return {
      items,
      input_bytes: total.input_bytes,
      output_bytes: total.output_bytes,
      total_bytes: total.input_bytes + total.output_bytes,
      cycle: {
        start: dateAsMidnight(cycle.start, timeZone)!,
        end: dateAsMidnight(cycle.end, timeZone)!,
        used_bytes: await cycleUsedBytes(db, contractId, cycle),
        allowance_bytes: allowanceBytes(terms[0]?.allowance_gb),
      },
    };
  });
}

function firstOfNextMonth(day: string): string {
  const [y, m] = day.split("-").map(Number);
  return new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10);
}

interface UsageRowOut {
  contract_id: string;
  number: string;
  username: string | null;
  customer_name: string;
  input_bytes: number;
  output_bytes: number;
  total_bytes: number;
}

const USAGE_ROW_FIELDS = ["contract_id", "number", "username", "customer_name", "input_bytes", "output_bytes", "total_bytes"] as const;
const USAGE_NUMBER_FIELDS = new Set(["input_bytes", "output_bytes", "total_bytes"]);
const LABEL_FIELDS = new Set<string>(["number", "username", "customer_name"]);

const USAGE_QUERY_KEYS = new Set(["page", "limit", "q", "sort", "format", "from", "to"]);

/** Lower case without accents: ?q matches "JOAO" to "João". */
const folded = (s: string) => s.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();

/**
 * GET /api/isp/usage: one row per contract with traffic in the range, default sort -total_bytes.
 * The sums come from the rollups (one grouped read of whole months and the days at the range's
 * ends, usage-range.ts), the labels from the contract module. Ranked by bytes (no q, no label sort
 * or filter) the database sorts, filters and pages the sums; otherwise q, filters, sort and paging
 * work on the labelled rows in memory (one row per contract of the range).
 */
export function usageByContract(tenant: TenantDoor, query: ListParams, timeZone: string, at: number) {
  return tenant.read(async (db) => {
    const { page, limit, offset } = paging(query);
    const { start, end } = rangeOf(query as Record<string, unknown>, cycleOf(at, timeZone, (await readPolicy(db)).usage_cycle_day));
    const sortText = typeof query.sort === "string" && query.sort ? query.sort : "-total_bytes";
    const sortField = sortText.replace(/^-/, "") as keyof UsageRowOut;
    if (!(USAGE_ROW_FIELDS as readonly string[]).includes(sortField)) throw invalid("sort", `unknown field ${sortField}`);
    const filters: [keyof UsageRowOut, string | number][] = [];
    for (const [key, value] of Object.entries(query)) {
      if (USAGE_QUERY_KEYS.has(key) || value === undefined) continue;
      if (!(USAGE_ROW_FIELDS as readonly string[]).includes(key)) throw invalid(key, "is not a field of UsageRow");
      if (USAGE_NUMBER_FIELDS.has(key) && !/^\d{1,16}$/.test(String(value))) throw invalid(key, "must be a whole number");
      filters.push([key as keyof UsageRowOut, USAGE_NUMBER_FIELDS.has(key) ? Number(value) : String(value)]);
    }
    const words = typeof query.q === "string" ? folded(query.q).split(/\s+/).filter(Boolean) : [];
    const dir = sortText.startsWith("-") ? -1 : 1;
    // The usual ask (ranked by bytes, no q, no label filter): the database ranks and counts the
    // sums, the page alone is labelled. Measured, 1,000 contracts: labelling every row is most of
    // the answer's time; 10,000: building every row was most of its garbage.
    if (!words.length && !LABEL_FIELDS.has(sortField) && filters.every(([k]) => !LABEL_FIELDS.has(k))) {
      const ranked = await rankedUsageSums(db, start, end, { field: sortField as SumField, descending: dir === -1 }, filters as [SumField, string | number][], limit, offset);
      const labels = await contractLabels(db, ranked.rows.map((r) => r.contract_id));
      // Contracts are never deleted (only with their corporation): every row has its label. Were one
      // missing, the general path below leaves it out.
      if (ranked.rows.every((r) => labels.has(r.contract_id))) {
        const items = ranked.rows.map((r): UsageRowOut => ({ contract_id: r.contract_id, ...labels.get(r.contract_id)!, input_bytes: r.input_bytes, output_bytes: r.output_bytes, total_bytes: r.input_bytes + r.output_bytes }));
        return { items, page, limit, total: ranked.total };
      }
    }
    const sums = await usageSums(db, start, end);
    const bySort = (a: UsageRowOut, b: UsageRowOut) => {
      const x = a[sortField] ?? "";
      const y = b[sortField] ?? "";
      return x < y ? -dir : x > y ? dir : a.contract_id < b.contract_id ? -1 : 1;
    };
    const unlabelled: UsageRowOut[] = sums.map((r) => ({
      contract_id: r.contract_id,
      number: "",
      username: null,
      customer_name: "",
      input_bytes: r.input_bytes,
      output_bytes: r.output_bytes,
      total_bytes: r.input_bytes + r.output_bytes,
    }));
    const labels = await contractLabels(db, sums.map((r) => r.contract_id));
    const rows: UsageRowOut[] = [];
    for (const r of unlabelled) {
      const label = labels.get(r.contract_id);
      // A deleted contract's usage is nobody's row.
      if (!label) continue;
      // One folding per contract: its three fields on separate lines (a word holds no line break).
      if (words.length) {
        const text = folded(`${label.number}\n${label.username ?? ""}\n${label.customer_name}`);
        if (!words.every((w) => text.includes(w))) continue;
      }
      const row = { ...r, ...label };
      if (filters.every(([k, v]) => row[k] === v)) rows.push(row);
    }
    rows.sort(bySort);
    return { items: rows.slice(offset, offset + limit), page, limit, total: rows.length };
  });
}

/**
 * Retention, with the accounting records': deletes at most `limit` daily rows of days before
 * `beforeDay` (a date; the caller leaves a day of slack for timezones), and takes what they held
 * off their months' rows (a month's row is its days' sum; one left with nothing goes). Run inside
 * a write.
 */
export async function pruneIspUsageDaily(tx: TenantDb, beforeDay: string, limit: number): Promise<number> {
  const raw = clientOf(tx);
  const rows = (await raw
    .query("SELECT contract_id, day FROM isp_usage_daily WHERE day < ?1 ORDER BY day, contract_id LIMIT ?2")
    .all(beforeDay, limit)) as unknown as { contract_id: string; day: string }[];
  // What each delete removed, as it removed it: in cluster mode a late record may add to the row
  // between the read above and the delete.
  const deleteDay = raw.query("DELETE FROM isp_usage_daily WHERE contract_id = ?1 AND day = ?2 RETURNING input_bytes, output_bytes, session_seconds");
  const months = new Map<string, { contractId: string; shares: DayShare[] }>();
  for (const r of rows) {
    const gone = (await deleteDay.get(r.contract_id, r.day)) as { input_bytes: number | string; output_bytes: number | string; session_seconds: number | string } | null;
    if (!gone) continue;
    const m = months.get(r.contract_id) ?? { contractId: r.contract_id, shares: [] };
    m.shares.push({ day: r.day, input: Number(gone.input_bytes), output: Number(gone.output_bytes), seconds: Number(gone.session_seconds) });
    months.set(r.contract_id, m);
  }
  const subtract = raw.query(
    "UPDATE isp_usage_monthly SET input_bytes = input_bytes - ?3, output_bytes = output_bytes - ?4, session_seconds = session_seconds - ?5 WHERE contract_id = ?1 AND month = ?2",
  );
  const dropEmpty = raw.query("DELETE FROM isp_usage_monthly WHERE contract_id = ?1 AND month = ?2 AND input_bytes = 0 AND output_bytes = 0 AND session_seconds = 0");
  for (const { contractId, shares } of months.values()) {
    for (const m of byMonth(shares)) {
      await subtract.run(contractId, m.day, m.input, m.output, m.seconds);
      await dropEmpty.run(contractId, m.day);
    }
  }
  return rows.length;
}

interface ReplayedSession {
  open: boolean;
  time: number;
  input: number;
  output: number;
  at: number;
  contractId: string | null;
}

/**
 * `corpadmin usage rebuild`: recomputes every daily row from the raw accounting records, inside
 * one write. Records are replayed in the order they arrived, folded as storeAccounting folded them
 * (a record of a closed session, or one behind its session's time, adds nothing; a Stop behind it
 * closes without growth), so the result is what the records would have added as they arrived.
 * Returns how many records were replayed.
 */
export async function rebuildUsage(tx: TenantDb, timeZone: string): Promise<number> {
  const raw = clientOf(tx);
  await raw.query("DELETE FROM isp_usage_daily").run();
  await raw.query("DELETE FROM isp_usage_monthly").run();
  const records = (await raw
    .query(
      "SELECT radius_session_id, contract_id, status_type, session_time, input_octets, output_octets, event_at FROM isp_radius_accounting WHERE radius_session_id IS NOT NULL ORDER BY received_at, id",
    )
    .all()) as unknown as { radius_session_id: string; contract_id: string | null; status_type: string; session_time: number; input_octets: number | null; output_octets: number | null; event_at: string }[];
  const sessions = new Map<string, ReplayedSession>();
  const totals = new Map<string, DayShare & { contractId: string }>();
  const add = (contractId: string, shares: DayShare[]) => {
    for (const s of shares) {
      const key = `${contractId} ${s.day}`;
      const t = totals.get(key) ?? { contractId, day: s.day, input: 0, output: 0, seconds: 0 };
      t.input += s.input;
      t.output += s.output;
      t.seconds += s.seconds;
      totals.set(key, t);
    }
  };
  for (const r of records) {
    const time = Number(r.session_time);
    const at = Date.parse(r.event_at);
    const input = r.input_octets === null ? null : Number(r.input_octets);
    const output = r.output_octets === null ? null : Number(r.output_octets);
    const stop = r.status_type === "Stop";
    const s = sessions.get(r.radius_session_id);
    if (!s) {
      const start = r.status_type === "Start" ? at : at - time * 1000;
      sessions.set(r.radius_session_id, { open: !stop, time, input: input ?? 0, output: output ?? 0, at, contractId: r.contract_id });
      const growth = { input: input ?? 0, output: output ?? 0, seconds: time };
      if (r.contract_id && (growth.input || growth.output || growth.seconds)) add(r.contract_id, splitOverDays(start, at, growth, timeZone));
      continue;
    }
    if (!s.open || (!stop && time < s.time)) continue;
    const contractId = r.contract_id ?? s.contractId;
    if (contractId && time >= s.time) {
      const growth = { input: counterGrowth(s.input, input), output: counterGrowth(s.output, output), seconds: Math.max(0, time - s.time) };
      if (growth.input || growth.output || growth.seconds) add(contractId, splitOverDays(s.at, at, growth, timeZone));
    }
    Object.assign(s, { open: !stop, time: Math.max(time, s.time), input: input ?? s.input, output: output ?? s.output, at, contractId });
  }
  const insert = raw.query("INSERT INTO isp_usage_daily (contract_id, day, input_bytes, output_bytes, session_seconds) VALUES (?1, ?2, ?3, ?4, ?5)");
  for (const t of totals.values()) await insert.run(t.contractId, t.day, t.input, t.output, t.seconds);
  await raw
    .query(
      `INSERT INTO isp_usage_monthly (contract_id, month, input_bytes, output_bytes, session_seconds)
         SELECT contract_id, substr(day, 1, 7), sum(input_bytes), sum(output_bytes), sum(session_seconds) FROM isp_usage_daily GROUP BY contract_id, substr(day, 1, 7)`,
    )
    .run();
  return records.length;
}
