// Metrics and their values in a corporation's database: the only code touching metrics and
// metric_values. Every function takes the corporation's door first; the HTTP layer (index.ts) and
// the collector (jobs.ts) share them.
import { eq } from "drizzle-orm";
import { CorpIndex } from "../../core/settings";
import type { PlatformDoor, TenantDoor, TenantWriteScope } from "../../core/store";
import type { PlatformDb, TenantDb } from "../../db/sqlite";
import { clientOf, numericOf, readTogether, writeTogether } from "../../db/rows";
import type { TogetherRead } from "../../db/handle";
import { metrics } from "../../db/tenant/schema";
import { finite } from "../../lib/finite";
import { newId } from "../../lib/ids";
import { listRows, paging, type Page } from "../../db/list";
import { conflict, invalid, invalidMany, notFound, type FieldError } from "../../lib/problem";
import { canonicalInstant, nowIso, toIso } from "../../lib/time";
import { unchanged } from "../../lib/unchanged";
import {
  MAX_BUCKETS,
  TEXT_VALUE_MAX,
  type Bucket,
  type DataType,
  type HistoryQuery,
  type Metric,
  type MetricInput,
  type MetricValue,
} from "./model";
import { durationMs } from "./window";

export type MetricRow = typeof metrics.$inferSelect;

export function metricView(row: MetricRow): Metric {
  return {
    id: row.id,
    name: row.name,
    endpoint: row.endpoint,
    data_type: row.data_type,
    periodicity: row.periodicity,
    start_date: row.start_date,
    end_date: row.end_date,
    daily_start_time: row.daily_start_time,
    daily_end_time: row.daily_end_time,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

// ---- metrics ------------------------------------------------------------------------------

const BY_ID = "SELECT * FROM metrics WHERE id = ?1";
const BY_NAME = "SELECT * FROM metrics WHERE name = ?1";

/** How a route names a metric: by id, or by name (`/api/metric/name/{name}`). */
export type MetricKey = { id: string; name?: undefined } | { name: string; id?: undefined };

/** Bun caches `query()` statements per connection, so these are prepared once per database. */
async function findMetric(db: TenantDb, id: string): Promise<MetricRow | null> {
  return ((await clientOf(db).query(BY_ID).get(id)) as MetricRow | null) ?? null;
}

/** The metric named by `key` (404 when unknown), on the handle given. */
async function metricOf(db: TenantDb, key: MetricKey): Promise<MetricRow> {
  const row = (key.id !== undefined ? await clientOf(db).query(BY_ID).get(key.id) : await clientOf(db).query(BY_NAME).get(key.name)) as MetricRow | null;
  if (!row) throw notFound("Metric");
  return row;
}

export function getMetric(tenant: TenantDoor, key: MetricKey): Promise<Metric> {
  return tenant.read(async (db) => metricView(await metricOf(db, key)));
}

export function listMetrics(tenant: TenantDoor, query: Record<string, unknown>): Promise<Page<Metric>> {
  return tenant.read((db) => listRows(db, metrics, { q: [metrics.name] }, query, metricView));
}

/** Every metric with an endpoint (the collector's jobs at start-up). */
export function collectedMetrics(tenant: TenantDoor): Promise<MetricRow[]> {
  return tenant.read(async (db) => (await clientOf(db).query("SELECT * FROM metrics WHERE endpoint IS NOT NULL").all()) as MetricRow[]);
}

/** One metric as stored now (null: gone), for the collector told of a change made on another node. */
export function storedMetric(tenant: TenantDoor, id: string): Promise<MetricRow | null> {
  return tenant.read((db) => findMetric(db, id));
}

/**
 * The `ctx.changes` topic of metric changes (key `<corpId>/<metricId>`), published in the write of
 * every create, update and delete: in cluster mode the collector runs on one node, and hears
 * through it the changes made on the others (jobs.ts).
 */
export const METRICS_TOPIC = "metrics";

/**
 * Told after the COMMIT of a change to a metric, with the row as stored (null: deleted); the
 * collector rebuilds the metric's job.
 */
export type MetricChanged = (corpId: string, row: MetricRow | null, id: string) => void;

/** What a change to a metric needs besides the corporation's door. */
export interface MetricHooks {
  /** The platform's door: the index of corporations with collected metrics is kept there. */
  platform: PlatformDoor;
  changed?: MetricChanged;
  /** Publishes the change in the write (`ctx.changes`, METRICS_TOPIC): other nodes' collectors hear it. */
  publish?: (tx: TenantDb, w: TenantWriteScope, metricId: string) => Promise<void>;
}

// ---- the index of corporations with collected metrics --------------------------------------
//
// So that the collector's start-up reads only the corporations that have a metric with an
// endpoint, the platform's settings keep one key per such corporation. A key means "may have
// one": it is written (durably, in the platform database) before the COMMIT of any write that
// leaves a metric with an endpoint, and dropped only under the corporation's write lock after
// checking that none is left, so a write that adds one can never slip between the check and the
// drop. A crash can leave a key too many (dropped at the next start-up), never one too few.
// The index's keys and its "complete" mark: `CorpIndex` (core/settings.ts).

/** The corporations that may have metrics with an endpoint (the collector's start-up reads only those). */
export const collectedIndex = new CorpIndex("metric-collector");
const ANY_COLLECTED = "SELECT 1 FROM metrics WHERE endpoint IS NOT NULL LIMIT 1";

/**
 * Drops the corporation from the index when it has no metric with an endpoint left, under its
 * write lock (a write that adds one waits, then indexes it again). Best effort: a key left behind
 * costs the next start-up one read of the corporation.
 */
export function unindexIfNoneCollected(tenant: TenantDoor, platform: PlatformDoor): Promise<void> {
  return tenant
    .write(async (tx, w) => {
      if (!(await clientOf(tx).query(ANY_COLLECTED).get())) await collectedIndex.drop(platform, w.corpId);
    })
    .catch(() => {});
}

type MetricFields = Omit<MetricRow, "id" | "created_at" | "updated_at">;

/** Checks what the schema cannot (URL, instants, their order) and names every bad field at once. */
function metricFields(input: MetricInput): MetricFields {
  const errors: FieldError[] = [];
  let endpoint: string | null = null;
  if (input.endpoint != null) {
    let url: URL | null = null;
    try {
      url = new URL(input.endpoint);
    } catch {
      // reported below
    }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) errors.push({ path: "endpoint", message: "must be an http or https URL" });
    else endpoint = input.endpoint;
  }
  if (durationMs(input.periodicity) === null) errors.push({ path: "periodicity", message: "is too long a duration" });
  const start = canonicalInstant(input.start_date);
  if (!start) errors.push({ path: "start_date", message: "must be an ISO 8601 date-time with a UTC offset" });
  let end: string | null = null;
  if (input.end_date != null) {
    end = canonicalInstant(input.end_date);
    if (!end) errors.push({ path: "end_date", message: "must be an ISO 8601 date-time with a UTC offset" });
    else if (start && Date.parse(end) <= Date.parse(start)) errors.push({ path: "end_date", message: "must be after start_date" });
  }
  if (errors.length) throw invalidMany(errors);
  return {
    name: input.name,
    endpoint,
    data_type: input.data_type,
    periodicity: input.periodicity,
    start_date: start!,
    end_date: end,
    daily_start_time: input.daily_start_time ?? "00:00",
    daily_end_time: input.daily_end_time ?? "00:00",
  };
}

async function checkNameFree(db: TenantDb, name: string, exceptId: string | null): Promise<void> {
  const holder = (await clientOf(db).query(BY_NAME).get(name)) as MetricRow | null;
  if (holder && holder.id !== exceptId) throw conflict(`A metric named '${name}' already exists`);
}

export function createMetric(tenant: TenantDoor, input: MetricInput, { platform, changed, publish }: MetricHooks): Promise<MetricRow> {
  const fields = metricFields(input);
  return tenant.write(async (tx, w) => {
    await checkNameFree(tx, fields.name, null);
    const now = nowIso();
    const row: MetricRow = { id: newId(), ...fields, created_at: now, updated_at: now };
    await tx.insert(metrics).values(row).run();
    if (row.endpoint) await collectedIndex.add(platform, w.corpId);
    w.emit("METRIC_AFTER_INSERT", row.id, metricView(row));
    // The metric is a record; its values are data and make no Change (README, "History").
    w.record({ type: "metric", id: row.id, action: "create", before: null, after: row });
    await publish?.(tx, w, row.id);
    if (changed) w.afterCommit(() => changed(w.corpId, row, row.id));
    return row;
  });
}

const HAS_VALUES = "SELECT 1 FROM metric_values WHERE metric_id = ?1 LIMIT 1";

/**
 * PUT semantics: every writable field is replaced; omitted optional ones fall back to defaults.
 * Fields that are already stored (instants compared canonical) change nothing: no write, the same
 * updated_at, no event, and `changed` false.
 */
export function updateMetric(tenant: TenantDoor, key: MetricKey, input: MetricInput, { platform, changed, publish }: MetricHooks): Promise<Metric> {
  // By id the body is checked before the metric is looked up, by name after (404 first), as ever.
  const checked = key.id !== undefined ? metricFields(input) : null;
  return tenant.write(async (tx, w) => {
    const current = await metricOf(tx, key);
    const fields = checked ?? metricFields(input);
    if (unchanged(current, fields)) return metricView(current);
    const id = current.id;
    await checkNameFree(tx, fields.name, id);
    // Stored values keep the type they were checked against; reinterpreting them would corrupt
    // the history (a Text value has no average).
    if (fields.data_type !== current.data_type && (await clientOf(tx).query(HAS_VALUES).get(id))) {
      throw conflict("data_type cannot change while the metric has values");
    }
    const row: MetricRow = { ...current, ...fields, updated_at: nowIso() };
    await tx.update(metrics).set({ ...fields, updated_at: row.updated_at }).where(eq(metrics.id, id)).run();
    if (row.endpoint) await collectedIndex.add(platform, w.corpId);
    else if (current.endpoint) w.afterCommit(() => void unindexIfNoneCollected(tenant, platform));
    const view = metricView(row);
    w.emit("METRIC_AFTER_UPDATE", id, view);
    w.record({ type: "metric", id, action: "update", before: current, after: row });
    await publish?.(tx, w, id);
    if (changed) w.afterCommit(() => changed(w.corpId, row, id));
    return view;
  });
}

/** Deletes the metric; its values go with it (ON DELETE CASCADE). */
export function deleteMetric(tenant: TenantDoor, key: MetricKey, { platform, changed, publish }: MetricHooks): Promise<void> {
  return tenant.write(async (tx, w) => {
    const current = await metricOf(tx, key);
    await tx.delete(metrics).where(eq(metrics.id, current.id)).run();
    if (current.endpoint) w.afterCommit(() => void unindexIfNoneCollected(tenant, platform));
    w.emit("METRIC_AFTER_DELETE", current.id, metricView(current));
    w.record({ type: "metric", id: current.id, action: "delete", before: current, after: null });
    await publish?.(tx, w, current.id);
    if (changed) w.afterCommit(() => changed(w.corpId, null, current.id));
  });
}

// ---- values -------------------------------------------------------------------------------

/** Why `value` is not of `type`, or null when it is. */
export function valueProblem(type: DataType, value: unknown): string | null {
  switch (type) {
    case "Int":
      return typeof value === "number" && Number.isSafeInteger(value) ? null : "must be an integer (the metric's data_type is Int)";
    case "Float":
      if (typeof value !== "number" || !Number.isFinite(value)) return "must be a number (the metric's data_type is Float)";
      // Bucket sums stay finite (README, "Numbers and money").
      return Math.abs(value) <= Number.MAX_SAFE_INTEGER ? null : "must lie within ±(2^53 − 1)";
    case "Bool":
      return typeof value === "boolean" ? null : "must be true or false (the metric's data_type is Bool)";
    case "Text":
      if (typeof value !== "string") return "must be a string (the metric's data_type is Text)";
      return value.length <= TEXT_VALUE_MAX ? null : `must be at most ${TEXT_VALUE_MAX} characters`;
  }
}

/** Stores one value in the caller's transaction (the collector's), through a cached prepared statement. */
async function insertValue(tx: TenantDb, metric: Pick<MetricRow, "id">, value: number | boolean | string, atMs: number): Promise<void> {
  await clientOf(tx).query(insertValuesSql(1)).run(metric.id, toIso(atMs), atMs, typeof value === "boolean" ? (value ? 1 : 0) : value);
}

// POST .../value, the hot path. Values posted together are stored by ONE write of their
// corporation (a batch, as RADIUS accounting's records): their metrics read once (one statement),
// each value checked against its metric's data type, the good ones inserted by one multi-row
// statement (PostgreSQL: one statement for the batch, writeTogether). The batch is a grouped write
// (group commit: one transaction and one fsync, each value answered after its COMMIT), log-only
// (no cache of the state stamp holds values). The metric is read inside the write, under the
// corporation's writer lock, so a value never lands on a metric deleted meanwhile, nor on one
// whose data_type changed (updateMetric refuses that while values exist).

/** A value waiting for its batch's write. */
interface PendingValue {
  key: MetricKey;
  value: unknown;
  /** The instant in ms; null when `at` is malformed (reported with the value's own problem). */
  atMs: number | null;
  resolve: (v: MetricValue) => void;
  reject: (e: unknown) => void;
}

type ValueOutcome = { ok: true; value: MetricValue } | { ok: false; error: unknown };

/**
 * The batch still open per corporation's door (its write queued, not started): a value arriving
 * meanwhile joins it. Its write's start closes it; the next value opens the next batch, whose
 * write the door runs after the one in flight (writeGrouped), so batches grow with the load.
 */
const openBatches = new WeakMap<TenantDoor, PendingValue[]>();
/** Bounds a batch (and so the wait of the value that joined it last), as the doors bound a group. */
const MAX_BATCH = 64;

export function addValue(tenant: TenantDoor, key: MetricKey, body: { value: unknown; at?: string | null }, nowMs: number): Promise<MetricValue> {
  let atMs: number | null = nowMs;
  if (body.at != null) {
    const at = canonicalInstant(body.at);
    atMs = at ? Date.parse(at) : null;
  }
  return new Promise<MetricValue>((resolve, reject) => {
    const item: PendingValue = { key, value: body.value, atMs, resolve, reject };
    const open = openBatches.get(tenant);
    if (open && open.length < MAX_BATCH) open.push(item);
    else storeBatch(tenant, [item]);
  });
}

/**
 * Opens a batch with its first value and queues its write. Should the write fail, each of its
 * values is stored alone (a write each), so a value that fails the statement (PostgreSQL refuses
 * a NUL in text) fails alone; a 503 (the database away: not acknowledged, perhaps committed) is
 * every value's answer, none written again.
 */
function storeBatch(tenant: TenantDoor, items: PendingValue[]): void {
  openBatches.set(tenant, items);
  const close = () => {
    if (openBatches.get(tenant) === items) openBatches.delete(tenant);
  };
  tenant
    .writeGrouped(
      (tx) => {
        close();
        return storeValues(tx, items);
      },
      { independent: true, logOnly: true },
    )
    .then(
      (outcomes) => settle(items, outcomes),
      (error: unknown) => {
        // A write refused before it started (the corporation busy or gone) left the batch open.
        close();
        if (items.length === 1 || (error as { status?: unknown } | null)?.status === 503) for (const item of items) item.reject(error);
        else
          for (const item of items)
            tenant.writeGrouped((tx) => storeValues(tx, [item]), { independent: true, logOnly: true }).then((o) => settle([item], o), item.reject);
      },
    );
}

function settle(items: PendingValue[], outcomes: ValueOutcome[]): void {
  items.forEach((item, i) => {
    const o = outcomes[i];
    if (o.ok) item.resolve(o.value);
    else item.reject(o.error);
  });
}

/** The metrics the values name, each read once: by id, by name. */
async function metricsOf(tx: TenantDb, items: PendingValue[]): Promise<{ byId: Map<string, MetricRow>; byName: Map<string, MetricRow> }> {
  const byId = new Map<string, MetricRow>();
  const byName = new Map<string, MetricRow>();
  const keys = new Map<string, MetricKey>();
  for (const { key } of items) keys.set(key.id !== undefined ? `i${key.id}` : `n${key.name}`, key);
  const asked = [...keys.values()];
  const only = asked.length === 1 ? asked[0] : null;
  // One metric (the usual batch): its cached statement; more: one statement on PostgreSQL.
  const rows = only
    ? [await (only.id !== undefined ? clientOf(tx).query(BY_ID).get(only.id) : clientOf(tx).query(BY_NAME).get(only.name))]
    : await readTogether(
        tx,
        asked.map((k) => (k.id !== undefined ? { sql: BY_ID, params: [k.id] } : { sql: BY_NAME, params: [k.name] })),
      );
  asked.forEach((k, i) => {
    const row = rows[i] as MetricRow | null;
    if (row) (k.id !== undefined ? byId : byName).set(k.id ?? k.name!, row);
  });
  return { byId, byName };
}

/** The batch's write: each value checked against its metric; the good ones inserted together. */
async function storeValues(tx: TenantDb, items: PendingValue[]): Promise<ValueOutcome[]> {
  const { byId, byName } = await metricsOf(tx, items);
  const cells: (string | number)[] = [];
  const outcomes = items.map((item): ValueOutcome => {
    const metric = item.key.id !== undefined ? byId.get(item.key.id) : byName.get(item.key.name);
    if (!metric) return { ok: false, error: notFound("Metric") };
    const errors: FieldError[] = [];
    const problem = valueProblem(metric.data_type, item.value);
    if (problem) errors.push({ path: "value", message: problem });
    if (item.atMs === null) errors.push({ path: "at", message: "must be an ISO 8601 date-time with a UTC offset" });
    if (errors.length) return { ok: false, error: invalidMany(errors) };
    const value = item.value as number | boolean | string;
    const at = toIso(item.atMs!);
    cells.push(metric.id, at, item.atMs!, typeof value === "boolean" ? (value ? 1 : 0) : value);
    return { ok: true, value: { metric_id: metric.id, value, at } };
  });
  await insertValues(tx, cells);
  return outcomes;
}

/**
 * Rows of 4 cells (metric_id, at, at_ms, value) as multi-row INSERTs of 64, 32, ..., 1 rows (a
 * few statement texts, each prepared once per connection), sent as one statement on PostgreSQL.
 */
async function insertValues(tx: TenantDb, cells: (string | number)[]): Promise<void> {
  const writes: TogetherRead[] = [];
  let at = 0;
  while (at < cells.length) {
    const rows = (cells.length - at) / 4;
    let n = MAX_BATCH;
    while (n > rows) n >>= 1;
    writes.push({ sql: insertValuesSql(n), params: cells.slice(at, at + n * 4) });
    at += n * 4;
  }
  if (writes.length) await writeTogether(tx, writes);
}

const insertTexts = new Map<number, string>();

function insertValuesSql(rows: number): string {
  let text = insertTexts.get(rows);
  if (!text) {
    const tuples = Array.from({ length: rows }, (_, r) => `(?${r * 4 + 1}, ?${r * 4 + 2}, ?${r * 4 + 3}, ?${r * 4 + 4})`);
    text = `INSERT INTO metric_values (metric_id, at, at_ms, value) VALUES ${tuples.join(", ")}`;
    insertTexts.set(rows, text);
  }
  return text;
}

/** The body itself when it is a value of the type, else its `value` member when that is one. */
export function pickValue(type: DataType, body: unknown): number | boolean | string | undefined {
  if (valueProblem(type, body) === null) return body as number | boolean | string;
  if (body !== null && typeof body === "object" && !Array.isArray(body) && "value" in body) {
    const inner = (body as { value: unknown }).value;
    if (valueProblem(type, inner) === null) return inner as number | boolean | string;
  }
  return undefined;
}

/**
 * Stores a value the collector fetched, checked against the metric as stored now (it may have
 * changed or gone while the request ran). Returns "stored", "gone", or the data type the body
 * did not hold a value of.
 */
/** `fence`: run first in the write (cluster mode: throws unless this node holds the scheduler's lease). */
export function storeCollected(
  tenant: TenantDoor,
  metricId: string,
  body: unknown,
  atMs: number,
  fence: ((tx: TenantDb) => Promise<void>) | null = null,
): Promise<"stored" | "gone" | DataType> {
  return tenant.writeGrouped(async (tx) => {
    if (fence) await fence(tx);
    const current = await findMetric(tx, metricId);
    if (!current) return "gone";
    const value = pickValue(current.data_type, body);
    if (value === undefined) return current.data_type;
    await insertValue(tx, current, value, atMs);
    return "stored";
  });
}

function valueOut(type: DataType, stored: number | string): number | boolean | string {
  return type === "Bool" ? stored === 1 : typeof stored === "number" ? finite(stored) : stored;
}

// ---- history ------------------------------------------------------------------------------

const DAY_MS = 86_400_000;
const HISTORY_KEYS = new Set(["page", "limit", "q", "sort", "from", "to", "bucket"]);

function historyRange(query: HistoryQuery, nowMs: number): { from: number; to: number } {
  const errors: FieldError[] = [];
  let to = nowMs;
  let from: number | null = null;
  if (query.to !== undefined) {
    const c = canonicalInstant(query.to);
    if (c) to = Date.parse(c);
    else errors.push({ path: "to", message: "must be an ISO 8601 date-time with a UTC offset" });
  }
  if (query.from !== undefined) {
    const c = canonicalInstant(query.from);
    if (c) from = Date.parse(c);
    else errors.push({ path: "from", message: "must be an ISO 8601 date-time with a UTC offset" });
  }
  if (errors.length) throw invalidMany(errors);
  from ??= to - DAY_MS;
  if (from > to) throw invalid("from", "must not be after to");
  return { from, to };
}

export type History = Page<MetricValue> | { items: Bucket[] };

export function history(tenant: TenantDoor, key: MetricKey, query: HistoryQuery, nowMs: number): Promise<History> {
  return tenant.read(async (db): Promise<History> => {
    const metric = await metricOf(db, key);
    const { from, to } = historyRange(query, nowMs);
    if (query.bucket !== undefined) return buckets(db, metric, from, to, query.bucket);
    return rawHistory(db, metric, from, to, query);
  });
}

/** The raw values by `at` (the list convention: page, limit, sort on at or value, value filter). */
async function rawHistory(db: TenantDb, metric: MetricRow, from: number, to: number, query: HistoryQuery): Promise<Page<MetricValue>> {
  const { page, limit, offset } = paging(query);
  if (query.q !== undefined) throw invalid("q", "MetricValue has no searchable fields");
  const sortText = query.sort ?? "at";
  const sortField = sortText.replace(/^-/, "");
  const direction = sortText.startsWith("-") ? "DESC" : "ASC";
  // Sorting on `at` walks the (metric_id, at_ms, value) index in order; on value it sorts.
  let order: string;
  if (sortField === "at") order = `at_ms ${direction}`;
  else if (sortField === "value") order = `value ${direction}, at_ms ${direction}`;
  else if (sortField === "metric_id") order = "at_ms ASC";
  else throw invalid("sort", `unknown field '${sortField}'`);
  let where = "metric_id = ?1 AND at_ms >= ?2 AND at_ms <= ?3";
  const args: (string | number)[] = [metric.id, from, to];
  for (const [key, raw] of Object.entries(query)) {
    if (HISTORY_KEYS.has(key) || raw === undefined) continue;
    const text = Array.isArray(raw) ? String(raw[raw.length - 1]) : String(raw);
    if (key === "value") {
      const v = parseFilterValue(metric.data_type, text);
      if (v === null) throw invalid("value", `is not a ${metric.data_type} value`);
      args.push(typeof v === "boolean" ? (v ? 1 : 0) : v);
      where += ` AND value = ?${args.length}`;
    } else if (key === "at") {
      const c = canonicalInstant(text);
      if (!c) throw invalid("at", "must be an ISO 8601 date-time with a UTC offset");
      args.push(Date.parse(c));
      where += ` AND at_ms = ?${args.length}`;
    } else if (key === "metric_id") {
      if (text !== metric.id) where += " AND 0";
    } else throw invalid(key, "is not a filterable field");
  }
  const sqlite = clientOf(db);
  const total = ((await sqlite.query(`SELECT count(*) AS n FROM metric_values WHERE ${where}`).get(...args)) as { n: number }).n;
  const rows = (await sqlite
    .query(`SELECT at, value FROM metric_values WHERE ${where} ORDER BY ${order} LIMIT ?${args.length + 1} OFFSET ?${args.length + 2}`)
    .all(...args, limit, offset)) as { at: string; value: number | string }[];
  return {
    items: rows.map((r) => ({ metric_id: metric.id, value: valueOut(metric.data_type, r.value), at: r.at })),
    page,
    limit,
    total,
  };
}

function parseFilterValue(type: DataType, text: string): number | boolean | string | null {
  if (type === "Text") return text;
  if (type === "Bool") return text === "true" ? true : text === "false" ? false : null;
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n)) return null;
  return type === "Int" && !Number.isSafeInteger(n) ? null : n;
}

/**
 * Epoch-aligned buckets, computed by SQLite over the covering (metric_id, at_ms, value) index.
 * A plain GROUP BY on the bucket expression sorts every value in a temporary B-tree (≈ 300 ms for
 * 1,000,000 values here); instead the bucket starts come from a recursive CTE and each bucket
 * aggregates its own index range, so the values are read once, in index order, with no sort.
 * Empty buckets are left out.
 */
async function buckets(db: TenantDb, metric: MetricRow, from: number, to: number, bucket: string): Promise<{ items: Bucket[] }> {
  const width = durationMs(bucket);
  if (width === null) throw invalid("bucket", "is too long a duration");
  const first = Math.floor(from / width) * width;
  const count = Math.floor(to / width) - Math.floor(from / width) + 1;
  if (count > MAX_BUCKETS) throw invalid("bucket", `gives ${count} buckets between from and to; at most ${MAX_BUCKETS} are allowed`);
  const numeric = metric.data_type === "Int" || metric.data_type === "Float";
  // PostgreSQL keeps a value as jsonb (a number stays a number there): aggregated as a double.
  const v = numericOf(db, "value");
  const aggregate = numeric ? `json_array(count(*), min(${v}), max(${v}), avg(${v}), total(${v}))` : "json_array(count(*))";
  // The CAST types the first placeholder on PostgreSQL (64-bit there too); a no-op on SQLite.
  const sql = `WITH RECURSIVE b(s) AS (SELECT CAST(?2 AS INTEGER) UNION ALL SELECT s + ?3 FROM b WHERE s + ?3 <= ?5)
    SELECT s, (SELECT ${aggregate} FROM metric_values
               WHERE metric_id = ?1 AND at_ms >= max(s, ?4) AND at_ms < s + ?3 AND at_ms <= ?5) AS agg
    FROM b`;
  const rows = (await clientOf(db).query(sql).all(metric.id, first, width, from, to)) as { s: number; agg: string }[];
  const items: Bucket[] = [];
  for (const r of rows) {
    const a = JSON.parse(r.agg) as number[];
    if (a[0] === 0) continue;
    items.push(
      numeric
        ? { start: toIso(r.s), count: a[0], min: finite(a[1]), max: finite(a[2]), avg: finite(a[3]), sum: finite(a[4]) }
        : { start: toIso(r.s), count: a[0], min: null, max: null, avg: null, sum: null },
    );
  }
  return { items };
}

// ---- retention ------------------------------------------------------------------------------

/**
 * Deletes up to `limit` values timed before `cutoffMs`; returns how many. A value's `at` may be
 * any instant a client posted, so neither seq nor insertion order follows it: each metric's old
 * values are a range of the (metric_id, at_ms, value) index, walked metric by metric (a few dozen
 * per corporation), which also bounds the empty batch. Housekeeping calls it once per batch, in
 * its own transaction.
 */
export async function pruneMetricValues(db: TenantDb, cutoffMs: number, limit: number): Promise<number> {
  const done = await clientOf(db)
    .query(
      `DELETE FROM metric_values WHERE seq IN (SELECT v.seq FROM metrics m CROSS JOIN metric_values v INDEXED BY metric_values_metric_at ON v.metric_id = m.id
            WHERE v.at_ms < ?1 LIMIT ?2)`,
    )
    .run(cutoffMs, limit);
  return done.changes;
}
