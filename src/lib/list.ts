// The list convention of routes.md: ?page, ?limit, ?q, ?sort=field|-field, ?<field>=<value>.
import { and, asc, count, desc, eq, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { getTableColumns } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { AnyDb } from "../db/sqlite";
import { invalid } from "./problem";

export interface ListParams {
  page?: number;
  limit?: number;
  q?: string;
  sort?: string;
  [filter: string]: unknown;
}

export interface ListSpec {
  /** Columns that ?q searches (case-insensitive substring). */
  q: SQLiteColumn[];
  /** Columns never filterable or sortable (secrets, blobs). */
  hidden?: string[];
  /** Default sort when ?sort is absent, e.g. "-at"; default "id". */
  defaultSort?: string;
  /** Query keys that are not field filters but belong to the route (handled by the caller). */
  extraKeys?: string[];
  /** Scalar response fields that are not columns of the table, as SQL expressions to sort and filter by. */
  computed?: Record<string, { expr: SQLWrapper; dataType: "string" | "number" | "boolean" }>;
}

export interface Page<T> {
  items: T[];
  page: number;
  limit: number;
  total: number;
}

// `format` chooses JSON or CSV (lib/list-csv.ts); it is never a filter.
const RESERVED = new Set(["page", "limit", "q", "sort", "format"]);

export const MAX_LIMIT = 500;
/** Highest page: (page - 1) * limit stays far inside a safe integer and SQLite's int64. */
export const MAX_PAGE = 1_000_000;
/**
 * Page size of a CSV export (lib/list-csv.ts), above MAX_LIMIT. A symbol on the validated query
 * object, so only server code can set it: no client spelling of `limit` reaches past MAX_LIMIT.
 */
export const EXPORT_PAGE_SIZE = Symbol("export page size");

/**
 * ?page and ?limit checked here as well as by the route schema: whatever reaches this code
 * (a number, or the raw text should validation be skipped) is a whole number in range or a 400.
 */
function wholeParam(field: string, raw: unknown, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = typeof raw === "number" ? raw : typeof raw === "string" && /^[0-9]{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > max) throw invalid(field, `must be a whole number from 1 to ${max}`);
  return n;
}

/** The page, page size and row offset of a list request; 400 naming ?page or ?limit out of range. */
export function paging(params: { page?: unknown; limit?: unknown }): { page: number; limit: number; offset: number } {
  const page = wholeParam("page", params.page, 1, MAX_PAGE);
  const exportLimit = (params as { [EXPORT_PAGE_SIZE]?: number })[EXPORT_PAGE_SIZE];
  const limit = exportLimit ?? wholeParam("limit", params.limit, 50, MAX_LIMIT);
  return { page, limit, offset: (page - 1) * limit };
}

/** Filterable columns by response field name; a Map, so inherited names (`constructor`, `__proto__`) are unknown fields. */
function scalarColumns(table: SQLiteTable, hidden: string[]): Map<string, SQLiteColumn> {
  const out = new Map<string, SQLiteColumn>();
  for (const [k, c] of Object.entries(getTableColumns(table))) {
    const col = c as SQLiteColumn;
    if (hidden.includes(k)) continue;
    if (col.dataType === "string" || col.dataType === "number" || col.dataType === "boolean") out.set(k, col);
  }
  return out;
}

/** A computed field of the spec by its own name only (the spec is a plain object). */
function computedField(spec: ListSpec, key: string) {
  return spec.computed && Object.hasOwn(spec.computed, key) ? spec.computed[key] : undefined;
}

function filterValue(field: string, col: { dataType: string }, raw: unknown): unknown {
  const text = Array.isArray(raw) ? String(raw[raw.length - 1]) : String(raw);
  if (col.dataType === "boolean") {
    if (text === "true") return true;
    if (text === "false") return false;
    throw invalid(field, "must be true or false");
  }
  if (col.dataType === "number") {
    const n = Number(text);
    if (text.trim() === "" || !Number.isFinite(n)) throw invalid(field, "must be a number");
    return n;
  }
  return text;
}

/**
 * A GLOB pattern that finds `q` as a substring in any letter case. SQLite's lower() and LIKE fold
 * ASCII letters only, so `joão` would miss `JOÃO`; a character class per cased letter does not.
 */
function caselessGlob(q: string): string {
  let out = "*";
  for (const ch of q) {
    const variants = new Set([ch, ch.toLowerCase(), ch.toUpperCase()].filter((v) => [...v].length === 1));
    if (variants.size > 1) out += `[${[...variants].join("")}]`;
    else if (ch === "*" || ch === "?" || ch === "[") out += `[${ch}]`;
    else out += ch;
  }
  return out + "*";
}

const ASCII = /^[\x00-\x7f]*$/;

/**
 * The ?q condition on one column. For an ASCII-only `q` the GLOB above finds exactly what LIKE
 * finds (LIKE folds ASCII letters only, and an ASCII letter's case variants are ASCII), and LIKE
 * runs in less than half the time: a search counts its matches over the whole table.
 */
function qCondition(q: string): (c: SQLiteColumn) => SQL {
  if (ASCII.test(q)) {
    const pattern = `%${q.replace(/[\\%_]/g, "\\$&")}%`;
    return (c) => sql`${c} LIKE ${pattern} ESCAPE '\\'`;
  }
  const pattern = caselessGlob(q);
  return (c) => sql`${c} GLOB ${pattern}`;
}

/** Builds the WHERE and ORDER BY of a list request; throws 400 naming an unknown field. */
export function listClauses(table: SQLiteTable, spec: ListSpec, params: ListParams, where: (SQL | undefined)[] = []) {
  const cols = scalarColumns(table, spec.hidden ?? []);
  const conds: (SQL | undefined)[] = [...where];
  for (const [key, raw] of Object.entries(params)) {
    if (RESERVED.has(key) || raw === undefined || spec.extraKeys?.includes(key)) continue;
    const col = cols.get(key);
    const computed = computedField(spec, key);
    if (col) conds.push(eq(col, filterValue(key, col, raw)));
    else if (computed) conds.push(eq(computed.expr, filterValue(key, computed, raw)));
    else throw invalid(key, "is not a filterable field");
  }
  if (params.q) {
    conds.push(or(...spec.q.map(qCondition(params.q))));
  }
  const sortText = params.sort ?? spec.defaultSort ?? "id";
  const descending = sortText.startsWith("-");
  const sortField = descending ? sortText.slice(1) : sortText;
  const sortCol: SQLWrapper | undefined = cols.get(sortField) ?? computedField(spec, sortField)?.expr;
  if (!sortCol) throw invalid("sort", `unknown field '${sortField}'`);
  const order = [descending ? desc(sortCol) : asc(sortCol)];
  const id = cols.get("id");
  if (sortField !== "id" && id) order.push(asc(id));
  return { where: and(...conds), order };
}

/** Runs a paged list over one table; `view` maps a row to its response shape. */
export function listRows<R, V>(
  db: AnyDb,
  table: SQLiteTable,
  spec: ListSpec,
  params: ListParams,
  view: (row: R) => V,
  where: (SQL | undefined)[] = [],
): Page<V> {
  const { page, limit, offset } = paging(params);
  const { where: w, order } = listClauses(table, spec, params, where);
  const d = db as any;
  const total = (d.select({ n: count() }).from(table).where(w).get() as { n: number }).n;
  const rows = d.select().from(table).where(w).orderBy(...order).limit(limit).offset(offset).all() as R[];
  return { items: rows.map(view), page, limit, total };
}
