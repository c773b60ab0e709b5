// "CSV on every list" (routes.md, Operator additions): every GET route whose success is a list
// ({items, page, limit, total}) also answers text/csv for `Accept: text/csv` or `?format=csv`,
// with the same filters and sort, every page, up to CSV_MAX_ROWS rows; nested objects flattened
// into dotted headers, arrays left out, contract dates as YYYY-MM-DD.
//
// Done once here rather than per route: a transform hook (before validation) takes `format` out
// of the query and asks for page 1; a before-handle hook (after validation) raises its limit to
// PAGE rows; the after-handle hook turns that page into the start of a streamed CSV body and
// asks the same handler for the following pages as the client reads, with the context it
// already resolved (principal, tenant database). Every list route, present or future, gets it
// without a line of its own.
import type { Context } from "elysia";
import { csvLine } from "./csv";
import { checkedJson } from "./http";
import { EXPORT_PAGE_SIZE, type Page } from "./page";
import { invalid } from "./problem";
import { DATE_ONLY } from "./schemas";

export const CSV_MAX_ROWS = 100_000;
/**
 * Rows asked of the handler per page once the query has passed validation. Pages are offsets
 * over the route's sort: 100,000 cities sorted by an unindexed field took 11.5 s in pages of 500
 * (200 sorts of the whole result) and 3.4 s in pages of 5,000; by id, 2.6 s and 1.2 s (a shared
 * 2-core machine, test/ops/list-csv.test.ts's data).
 */
const PAGE = 5_000;


interface RouteLike {
  method: string;
  path: string;
  handler: unknown;
  hooks: { response?: unknown };
}

interface ListRoute {
  handler: (context: unknown) => unknown;
  columns: Column[];
  filename: string;
}

/** One CSV column: its dotted header, the path to its value in an item, and how it is written. */
export interface Column {
  header: string;
  path: string[];
  dateOnly: boolean;
}

type Schema = { type?: string; anyOf?: Schema[]; allOf?: Schema[]; const?: unknown; properties?: Record<string, Schema>; items?: Schema; [DATE_ONLY]?: boolean };

const SCALAR_TYPES = new Set(["string", "number", "integer", "boolean", "null"]);

function isScalar(s: Schema | undefined): boolean {
  if (!s) return false;
  if (s.anyOf) return s.anyOf.every(isScalar);
  if (s.const !== undefined) return true;
  return s.type !== undefined && SCALAR_TYPES.has(s.type);
}

function propertiesOf(s: Schema | undefined): Record<string, Schema> {
  if (!s) return {};
  if (s.properties) return s.properties;
  if (s.allOf) return Object.assign({}, ...s.allOf.map(propertiesOf));
  return {};
}

/** The item schema of a `ListOf(...)` response, or null when the schema is not a paged list. */
export function listItemSchema(response: unknown): Schema | null {
  const r = response as { 200?: Schema } & Schema;
  const ok = (r && typeof r === "object" && "200" in r ? r[200] : r) as Schema | undefined;
  const p = ok?.properties;
  if (!p || p.items?.type !== "array" || !p.page || !p.limit || !p.total) return null;
  return p.items.items ?? null;
}

/** The object schema a property holds (an object, or an object or null), else null. */
function objectOf(s: Schema): Schema | null {
  if (s.type === "object" && s.properties) return s;
  if (s.allOf) return s;
  if (s.anyOf) {
    const objects = s.anyOf.filter((v) => v.type !== "null");
    return objects.length === 1 ? objectOf(objects[0]) : null;
  }
  return null;
}

const isDateOnly = (s: Schema): boolean => s[DATE_ONLY] === true || (s.anyOf ?? []).some((v) => v[DATE_ONLY] === true);

/** Deep enough for a contract's customer.address.city; a deeper object is left out. */
const MAX_DEPTH = 4;

/**
 * The CSV columns of a list: its items' scalar fields, nested objects flattened into dotted
 * headers (`customer.name`, `config.username`), arrays and free-form JSON left out.
 */
export function csvColumns(item: Schema, prefix: string[] = []): Column[] {
  const out: Column[] = [];
  for (const [name, s] of Object.entries(propertiesOf(item))) {
    const path = [...prefix, name];
    if (isScalar(s)) out.push({ header: path.join("."), path, dateOnly: isDateOnly(s) });
    else {
      const nested = objectOf(s);
      if (nested && path.length < MAX_DEPTH) out.push(...csvColumns(nested, path));
    }
  }
  return out;
}

/** A column's value in an item: null through a null object; a contract date as YYYY-MM-DD. */
function cellOf(item: unknown, column: Column): unknown {
  let value = item;
  for (const key of column.path) {
    if (value === null || typeof value !== "object") return null;
    value = (value as Record<string, unknown>)[key];
  }
  return column.dateOnly && typeof value === "string" ? value.slice(0, 10) : value;
}

/** Whether `Accept` asks for CSV: text/csv listed with q > 0 and not below application/json. */
function acceptsCsv(accept: string): boolean {
  let csv = 0;
  let json = -1;
  for (const part of accept.split(",")) {
    const [type, ...params] = part.split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const weight = q ? Number(q.slice(2)) : 1;
    const media = type.trim().toLowerCase();
    if (media === "text/csv") csv = Math.max(csv, Number.isFinite(weight) ? weight : 0);
    else if (media === "application/json") json = Math.max(json, weight);
  }
  return csv > 0 && csv >= json;
}

function rowsOf(items: unknown[], columns: Column[]): string {
  let out = "";
  for (const item of items) out += csvLine(columns.map((c) => cellOf(item, c)));
  return out;
}

/**
 * The CSV answer of a list route, for the app's one after-handle hook (src/app.ts): undefined
 * unless the request asks for CSV. No hook of its own: every hook an app holds costs every
 * request, and the route's handler has already run with the client's query (its answer gives
 * `total` for the cap); the export then asks the same handler for every page from the first.
 * `routes` gives the app's routes (read once, at the first CSV request, when every module has
 * been mounted). `format` is not a filter (db/list.ts RESERVED).
 */
export function csvExporter(routes: () => readonly RouteLike[]) {
  let lists: Map<string, ListRoute> | null = null;
  const listRoute = (path: string): ListRoute | undefined => {
    if (!lists) {
      lists = new Map();
      for (const r of routes()) {
        if (r.method !== "GET" || typeof r.handler !== "function") continue;
        const item = listItemSchema(r.hooks.response);
        if (!item) continue;
        const name = r.path.replace(/^\/api\//, "").split("/").filter((s) => s && !s.startsWith(":")).join("-") || "list";
        lists.set(r.path, { handler: r.handler as ListRoute["handler"], columns: csvColumns(item), filename: `${name}.csv` });
      }
    }
    return lists.get(path);
  };

  return (c: { request: Request; route: string; response?: unknown; query?: unknown }): Response | undefined => {
    if (!mayAskCsv(c.request)) return undefined;
    const url = c.request.url;
    const accept = c.request.headers.get("accept");
    if (c.request.method !== "GET") return undefined;
    const route = listRoute(c.route);
    if (!route) return undefined;
    const formats = new URL(url).searchParams.getAll("format");
    const format = formats.length ? formats[formats.length - 1] : undefined;
    if (format !== undefined && format !== "csv" && format !== "json") throw invalid("format", "must be csv or json");
    if (format === "json" || (format === undefined && !acceptsCsv(accept ?? ""))) return undefined;
    return csvResponse(route, c, c.response as Page<unknown>);
  };
}

/** Whether a request may ask for CSV (else it surely does not): one substring search and one header read. */
export function mayAskCsv(request: Request): boolean {
  if (request.url.includes("format=")) return true;
  const accept = request.headers.get("accept");
  return accept !== null && accept.includes("text/csv");
}

/**
 * A list page as a hot list route's answer: past Elysia's response check and normaliser
 * (lib/http.ts checkedJson; on a 50-person search page they cost more than reading it), except
 * when the request may ask for CSV, whose after-handle hook needs the page object itself. Typed
 * as the page (the Response carries its JSON): Elysia takes a Response from any handler, and the
 * route's types stay those of its schema.
 */
export function listAnswer<T>(set: Context["set"], request: Request, page: Page<T>): Page<T> {
  return mayAskCsv(request) ? page : (checkedJson(set, page) as unknown as Page<T>);
}

/**
 * The CSV answer: the first page (already computed) at once, then the following pages asked of
 * the route's handler as the client reads. List handlers return the page object (not a
 * Response), as every one does.
 */
function csvResponse(route: ListRoute, c: { query?: unknown }, first: Page<unknown>): Response {
  if (first.total > CSV_MAX_ROWS) {
    throw invalid("format", `the list holds ${first.total} rows and a CSV export at most ${CSV_MAX_ROWS}: narrow it with a filter or ?q`);
  }
  const encoder = new TextEncoder();
  const base: Record<string | symbol, unknown> = { ...(c.query as object) };
  delete base.format;
  delete base.limit;
  let page = 0;
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(csvLine(route.columns.map((c) => c.header))));
    },
    async pull(controller) {
      // Rows written meanwhile may shift a page; the cap still holds.
      page += 1;
      const query = { ...base, page, [EXPORT_PAGE_SIZE]: PAGE };
      const next = (await route.handler(Object.assign(Object.create(c), { query }))) as Page<unknown>;
      const items = next.items.slice(0, CSV_MAX_ROWS - sent);
      sent += items.length;
      if (items.length) controller.enqueue(encoder.encode(rowsOf(items, route.columns)));
      // A page shorter than the size the handler says it used is the last (a handler that does
      // not page through lib/list answers with its own limit).
      if (next.items.length < next.limit || sent >= CSV_MAX_ROWS) controller.close();
    },
  });
  return new Response(body, {
    status: 200,
    headers: { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="${route.filename}"` },
  });
}

/**
 * Publishes the CSV form in the OpenAPI document: a `format` query parameter on every list route.
 * Not a `text/csv` content of the 200 answer: typed clients generated from the document
 * (openapi-typescript with openapi-fetch) would then type every list's answer as `Page | string`.
 * Returns the document it was given.
 */
export function describeCsvLists<D>(doc: D, routes: readonly RouteLike[]): D {
  for (const r of routes) {
    if (r.method !== "GET" || !listItemSchema(r.hooks.response)) continue;
    const op = (doc as any)?.paths?.[r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")]?.get;
    if (!op) continue;
    op.parameters ??= [];
    if (!op.parameters.some((p: { in: string; name: string }) => p.in === "query" && p.name === "format")) {
      op.parameters.push({
        name: "format",
        in: "query",
        required: false,
        description:
          "csv (or the header `Accept: text/csv`): the answer is `text/csv`, the whole filtered, sorted list (page and limit do not apply, at most 100000 rows, else 400) with a header row of the items' scalar fields, nested objects flattened into dotted names (`customer.name`), arrays left out",
        schema: { type: "string", enum: ["csv", "json"] },
      });
    }
    // The CSV answer is documented beside the JSON one, so a validating proxy (Prism) and a
    // generated client accept it.
    const ok = op.responses?.["200"];
    if (ok) {
      ok.content ??= {};
      ok.content["text/csv"] ??= { schema: { type: "string", description: "RFC 4180 CSV: a header row of the items' scalar fields (nested objects as dotted names), then one row per item" } };
    }
  }
  return doc;
}
