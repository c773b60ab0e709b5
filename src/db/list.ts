// The list convention of routes.md: ?page, ?limit, ?q, ?sort=field|-field, ?<field>=<value>.
import { and, asc, Column, desc, eq, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { getTableColumns, getTableName } from "drizzle-orm";
import { SQLiteSyncDialect, type SQLiteColumn, type SQLiteTable } from "drizzle-orm/sqlite-core";
import { readStamp, stampHolds, stampScope } from "./change-stamp";
import { clientOf } from "./rows";
import { sqliteClientOf, type AnyDb, type SqliteClient as Database } from "./sqlite";

type Bindings = Parameters<ReturnType<Database["query"]>["all"]>;
import { invalid } from "../lib/problem";
import { EXPORT_PAGE_SIZE, MAX_LIMIT, MAX_PAGE, type Page } from "../lib/page";

export { EXPORT_PAGE_SIZE, MAX_LIMIT, MAX_PAGE, type Page };

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
  /**
   * The table's FTS5 trigram index of exactly the `q` columns, keyed by the table's rowid and kept
   * in step by triggers (migrations/tenant/0010_search_fts.sql; docs/architecture.md, "Search").
   * Without one, ?q scans.
   */
  search?: string;
  /**
   * ?q over text other tables hold (a contract's customer, its PPPoE username): conditions on this
   * table added to the scan for one word, `match` being the scan's condition on one column. They
   * must find the rows `search` plus `searchMore` find for the word. Undefined: nothing more.
   */
  qMore?: ((match: (c: SQLiteColumn) => SQL, word: SearchWord) => SQL | undefined)[];
  /**
   * With `search`: rowids of this table found for one word through other tables' indexes
   * (`SELECT rowid FROM <table> WHERE ...`), beside the ones `search` finds. Undefined: nothing more.
   */
  searchMore?: ((word: SearchWord) => SQL | undefined)[];
  /**
   * Columns of document numbers (CPF, CNPJ): a word of digits and punctuation also finds them by
   * their digits (`10000791989` finds `100.007.919-89`).
   */
  digits?: SQLiteColumn[];
  /** Columns never filterable or sortable (secrets, blobs). */
  hidden?: string[];
  /** Default sort when ?sort is absent, e.g. "-at"; default "id". */
  defaultSort?: string;
  /** Query keys that are not field filters but belong to the route (handled by the caller). */
  extraKeys?: string[];
  /** Scalar response fields that are not columns of the table, as SQL expressions to sort and filter by. */
  computed?: Record<string, { expr: SQLWrapper; dataType: "string" | "number" | "boolean" }>;
}

// `format` chooses JSON or CSV (lib/list-csv.ts); it is never a filter.
const RESERVED = new Set(["page", "limit", "q", "sort", "format"]);


/**
 * listClauses for a query on `db`'s engine (?q scans where the engine has no search index of
 * SQLite's kind): a module asks the handle, never the engine.
 */
export function listClausesOn(db: AnyDb, table: SQLiteTable, spec: ListSpec, params: ListParams, where: (SQL | undefined)[] = []) {
  return listClauses(table, spec, params, where, sqliteClientOf(db) !== null);
}

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
 * A word of ?q. Search (routes.md): rows that contain every word, in any order and any searched
 * field, folding case and accents; a word of digits and punctuation also finds document numbers
 * by their digits.
 */
export interface SearchWord {
  /** As typed. */
  text: string;
  /** The FTS5 phrase of the word: every character literal. */
  phrase: string;
  /** The word's digits, when it is digits and punctuation with at least MIN_DOCUMENT_DIGITS digits. */
  digits?: string;
}

/** Case and accents folded, as the indexes and the scans compare. */
function fold(text: string): string {
  return text.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
}

const DIGITS_AND_PUNCTUATION = /^[^\p{L}\s]+$/u;
/**
 * Fewest digits of a word that looks documents up by their digits: a CPF has 11, a CNPJ 14, and
 * fewer match a large share of any set of documents. The digits are compared by a scan of the
 * document column (no index holds documents without punctuation), so it also keeps that scan off
 * the short numbers people type with names ("silva 12").
 */
export const MIN_DOCUMENT_DIGITS = 6;

/**
 * The words of a `q`, split at white space. A word inside another (`jo` in `joao`) is dropped: a
 * row holding the longer holds it too. Only words with a letter are dropped: the longer may
 * match by its digits alone, without a shorter number's punctuation.
 */
export function searchWords(q: string): SearchWord[] {
  const texts = [...new Set(q.split(/\s+/u).filter((w) => w !== ""))];
  const folded = texts.map(fold);
  const kept = texts.filter((w, i) => {
    if (!/\p{L}/u.test(w)) return true;
    return !folded.some((other, j) => j !== i && other.length > folded[i]!.length && other.includes(folded[i]!)) && folded.indexOf(folded[i]!) === i;
  });
  return kept.map((text) => {
    const digits = DIGITS_AND_PUNCTUATION.test(text) ? text.replace(/[^0-9]/g, "") : "";
    return { text, phrase: `"${text.replaceAll('"', '""')}"`, ...(digits.length >= MIN_DOCUMENT_DIGITS ? { digits } : {}) };
  });
}

/**
 * A document column without its punctuation, as a word's digits are compared with it (the same
 * SQL on both engines).
 */
export function digitsOf(c: SQLiteColumn): SQL {
  return sql`replace(replace(replace(replace(${c}, '.', ''), '-', ''), '/', ''), ' ', '')`;
}

/** Each base letter's accented forms (Latin-1, Latin Extended-A and B, Latin Extended Additional), both cases. */
const ACCENTED = (() => {
  const out = new Map<string, string[]>();
  const ranges: [number, number][] = [[0xc0, 0x24f], [0x1e00, 0x1eff]];
  for (const [from, to] of ranges) {
    for (let cp = from; cp <= to; cp++) {
      const ch = String.fromCodePoint(cp);
      const base = ch.normalize("NFD").replace(/\p{M}/gu, "");
      if (base.length !== 1 || base === ch || !/[A-Za-z]/.test(base)) continue;
      const key = base.toLowerCase();
      out.set(key, [...(out.get(key) ?? []), ch]);
    }
  }
  return out;
})();

/**
 * A GLOB pattern that finds `q` as a substring folding case and accents. SQLite's lower() and LIKE
 * fold ASCII letters only and no accents, so `joao` would miss `JOÃO`; a character class per
 * letter with every case and accented form does not.
 */
function foldingGlob(q: string): string {
  let out = "*";
  for (const ch of q) {
    const base = fold(ch);
    const variants = new Set([ch, ch.toLowerCase(), ch.toUpperCase()]);
    if ([...base].length === 1) for (const v of [base, base.toUpperCase(), ...(ACCENTED.get(base) ?? [])]) variants.add(v);
    const single = [...variants].filter((v) => [...v].length === 1);
    if (single.length > 1) out += `[${single.join("")}]`;
    else if (ch === "*" || ch === "?" || ch === "[") out += `[${ch}]`;
    else out += ch;
  }
  return out + "*";
}

const ASCII = /^[\x00-\x7f]*$/;
/** Any character beyond ASCII (as a GLOB); a value without one is compared by LIKE alone. */
const NON_ASCII = "*[^\x01-\x7f]*";

/** A LIKE pattern finding `w` anywhere, its wildcards and backslashes escaped. */
const likeAnywhere = (w: string) => `%${w.replace(/[\\%_]/g, "\\$&")}%`;

/**
 * The condition of one word on one column, for a scan, folding case and accents as the indexes
 * do. LIKE (ASCII case folding, less than a tenth of the folding GLOB's time) with the word's
 * accents stripped finds every match in an ASCII value; the folding GLOB runs only on values
 * holding other characters. A word that is not ASCII once stripped is the GLOB's alone.
 */
export function wordMatch(text: string, sqlite: boolean): (c: SQLiteColumn) => SQL {
  // PostgreSQL has no GLOB: ILIKE (as LIKE is translated there) over both sides without their
  // accents, which folds case and diacritics as the SQLite indexes' search does. The fold is
  // corpadmin_unaccent (immutable), the expression pg_trgm's GIN indexes hold where they exist
  // (src/db/pg/migrate.ts TRIGRAM_INDEXES): the same SQL scans or uses them. No ESCAPE clause:
  // PostgreSQL's default escape is the backslash already, and like_escape() in the condition
  // would keep it from being leakproof, which row-level security needs to use an index.
  // Its text holds no NUL (PostgreSQL refuses one in a parameter): such a q matches nothing.
  if (!sqlite) {
    const pattern = likeAnywhere(text);
    return text.includes("\0") ? () => sql`1 = 0` : (c) => sql`corpadmin_unaccent(${c}) LIKE corpadmin_unaccent(${pattern})`;
  }
  const glob = foldingGlob(text);
  const bare = text.normalize("NFD").replace(/\p{M}/gu, "");
  if (!ASCII.test(bare)) return (c) => sql`${c} GLOB ${glob}`;
  const pattern = likeAnywhere(bare);
  return (c) => sql`(${c} LIKE ${pattern} ESCAPE '\\' OR (${c} GLOB ${NON_ASCII} AND ${c} GLOB ${glob}))`;
}

/**
 * A scan's condition for one word: any of the spec's columns, its document columns by their
 * digits, and what `qMore` adds. Exported so that an owner can offer its rows to another table's
 * search (person/service.ts personIdsByText).
 */
export function wordCondition(spec: ListSpec, word: SearchWord, match: (c: SQLiteColumn) => SQL, joined = false): SQL | undefined {
  const conds: (SQL | undefined)[] = joined && spec.q.length > 1 ? [joinedMatch(word.text, joinedText(spec.q))] : spec.q.map(match);
  if (word.digits) for (const c of spec.digits ?? []) conds.push(sql`${digitsOf(c)} LIKE ${`%${word.digits}%`}`);
  for (const more of spec.qMore ?? []) conds.push(more(match, word));
  return or(...conds);
}

/**
 * PostgreSQL: a row's searched columns as one text, a line break between them (NULLs left out),
 * for a word no trigram index can answer. A word holds no white space and its pattern no
 * unescaped wildcard, and the fold changes no line break, so it matches this text exactly when it
 * matches one of the columns, as the condition per column does: one fold and one ILIKE a row
 * rather than one per column (each fold a PL/pgSQL call, ≈ 2 µs). And no index holds the
 * expression, so the planner never asks a trigram index for a pattern with no trigram: a generic
 * plan (the same statement for every term) did, and such a scan returns every row of the index.
 */
function joinedText(columns: SQLiteColumn[]): SQL {
  return sql`concat_ws(chr(10), ${sql.join(columns, sql`, `)})`;
}

/**
 * PostgreSQL: one word on the joined text (joinedText), folding as wordMatch does, but with the
 * fold (a PL/pgSQL call a row) only where the text is not ASCII: unaccent's rules (PostgreSQL's
 * unaccent.rules) each map one character beyond ASCII, so an ASCII text is its own fold.
 */
function joinedMatch(text: string, joined: SQL): SQL {
  if (text.includes("\0")) return sql`1 = 0`;
  const pattern = sql`corpadmin_unaccent(${likeAnywhere(text)})`;
  return sql`(CASE WHEN octet_length(${joined}) = char_length(${joined}) THEN ${joined} LIKE ${pattern} ELSE corpadmin_unaccent(${joined}) LIKE ${pattern} END)`;
}

/** Shortest word (in code points) a trigram index can answer: shorter ones match nothing there. */
const TRIGRAM = 3;

/**
 * A ?q answered by trigram indexes, for its words of at least three characters: the table's index
 * name, the key of its match set, and the query of the rowids that hold every such word.
 */
interface IndexSearch {
  fts: string;
  key: string;
  rowids: SQL;
  /** The one FTS5 expression of the table's index alone, when that is the whole match (one entry per row: count it directly). */
  match?: string;
  /** The shorter words, left to the scan's conditions. */
  rest: SearchWord[];
}

/**
 * The rowids of the spec's table that hold one word (of three characters or more): its index, its
 * document columns by their digits, and what `searchMore` adds. Exported for an owner offering its
 * rows to another table's search (person/service.ts personIdsByWord).
 */
export function wordRowids(spec: ListSpec & { search: string }, table: SQLiteTable, word: SearchWord): SQL {
  const fts = sql.identifier(spec.search);
  const parts: SQL[] = [sql`SELECT rowid FROM ${fts} WHERE ${fts} MATCH ${word.phrase}`];
  if (word.digits && spec.digits?.length) {
    parts.push(sql`SELECT rowid FROM ${table} WHERE ${or(...spec.digits.map((c) => sql`${digitsOf(c)} LIKE ${`%${word.digits}%`}`))}`);
  }
  for (const more of spec.searchMore ?? []) {
    const s = more(word);
    if (s) parts.push(s);
  }
  // UNION: a row found through several ways counts once.
  return sql.join(parts, sql` UNION `);
}

/**
 * Through the table's trigram index when it has one and some word has at least three characters:
 * each word one phrase (every character literal, `%` and `_` included) matched as a substring of
 * one column, folding case and diacritics ("joao" finds "JOÃO"); on ASCII text that is exactly the
 * scan's LIKE. Words of the table's index alone are one FTS5 expression (`"a" "b"`: both, in any
 * columns); otherwise each word's rowids (wordRowids) are intersected. Shorter words scan.
 */
function indexSearch(spec: ListSpec, table: SQLiteTable, words: SearchWord[]): IndexSearch | undefined {
  // FTS5's query parser ends a string at NUL ("unterminated string"): such a q scans, as before.
  if (!spec.search || !words.length || words.some((w) => w.text.includes("\0"))) return undefined;
  const long = words.filter((w) => [...w.text].length >= TRIGRAM);
  if (!long.length) return undefined;
  const rest = words.filter((w) => [...w.text].length < TRIGRAM);
  const key = long.map((w) => w.phrase).join(" ");
  const alone = !spec.searchMore?.length && !(spec.digits?.length && long.some((w) => w.digits));
  if (alone) {
    const fts = sql.identifier(spec.search);
    return { fts: spec.search, key, rowids: sql`SELECT rowid FROM ${fts} WHERE ${fts} MATCH ${key}`, match: key, rest };
  }
  const withSearch = spec as ListSpec & { search: string };
  const each = long.map((w) => wordRowids(withSearch, table, w));
  const rowids = each.length === 1 ? each[0]! : sql.join(each.map((s) => sql`SELECT * FROM (${s})`), sql` INTERSECT `);
  return { fts: spec.search, key, rowids, rest };
}

/**
 * The rows of the table the index search matches. `probe` writes the rowid as `+rowid`, which
 * keeps SQLite from driving the query by the match list: it then walks the sort's index and
 * probes each row against the matches (a dense match on a large table, see listRows).
 */
function matchCondition(table: SQLiteTable, s: IndexSearch, probe = false): SQL {
  const rowid = sql`${sql.raw(probe ? "+" : "")}${sql.identifier(getTableName(table))}.rowid`;
  return sql`${rowid} IN (${s.rowids})`;
}

function clauses(table: SQLiteTable, spec: ListSpec, params: ListParams, where: (SQL | undefined)[], probe: boolean, sqlite = true) {
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
  const words = params.q ? searchWords(params.q) : [];
  const search = indexSearch(spec, table, words);
  const onlySearch = !!search && !search.rest.length && conds.every((c) => c === undefined);
  if (search) conds.push(matchCondition(table, search, probe));
  // PostgreSQL: a word too short for a trigram is compared with the columns joined (joinedText).
  for (const w of search ? search.rest : words) conds.push(wordCondition(spec, w, wordMatch(w.text, sqlite), !sqlite && [...w.text].length < TRIGRAM));
  const sortText = params.sort ?? spec.defaultSort ?? "id";
  const descending = sortText.startsWith("-");
  const sortField = descending ? sortText.slice(1) : sortText;
  const sortCol: SQLWrapper | undefined = cols.get(sortField) ?? computedField(spec, sortField)?.expr;
  if (!sortCol) throw invalid("sort", `unknown field '${sortField}'`);
  const order = [descending ? desc(sortCol) : asc(sortCol)];
  const id = cols.get("id");
  if (sortField !== "id" && id) order.push(asc(id));
  return { where: and(...conds), order, search, onlySearch, byId: sortField === "id" && !!id };
}

/**
 * The index search of a request that is nothing else (no filter, no caller condition, sorted by
 * id, every word in the index): what `clauses` finds for it (search, onlySearch, byId), without
 * building any SQL beyond the match — a page answered from the match set then costs no Drizzle
 * select at all. Undefined otherwise, and for anything `clauses` would refuse.
 */
function plainSearch(table: SQLiteTable, spec: ListSpec, params: ListParams, where: (SQL | undefined)[]) {
  const plain = plainById(table, spec, params, where);
  if (!plain) return undefined;
  const search = indexSearch(spec, table, searchWords(params.q!));
  return search && !search.rest.length ? { search, descending: plain.descending } : undefined;
}

/**
 * Whether a request is a ?q of a table with a search index and nothing else (no filter, no caller
 * condition, sorted by id or -id): the requests a match set may answer, on either engine.
 */
function plainById(table: SQLiteTable, spec: ListSpec, params: ListParams, where: (SQL | undefined)[]): { descending: boolean } | undefined {
  if (!params.q || !spec.search || where.some((w) => w !== undefined)) return undefined;
  for (const key of Object.keys(params)) if (!RESERVED.has(key) && params[key] !== undefined) return undefined;
  const sortText = params.sort ?? spec.defaultSort ?? "id";
  const descending = sortText.startsWith("-");
  if ((descending ? sortText.slice(1) : sortText) !== "id") return undefined;
  const id = (getTableColumns(table) as Record<string, SQLiteColumn | undefined>).id;
  if (!id || spec.hidden?.includes("id") || !(id.dataType === "string" || id.dataType === "number" || id.dataType === "boolean")) return undefined;
  return { descending };
}

/** Builds the WHERE and ORDER BY of a list request; throws 400 naming an unknown field. */
export function listClauses(table: SQLiteTable, spec: ListSpec, params: ListParams, where: (SQL | undefined)[] = [], sqlite = true) {
  // `sqlite: false` (another engine): ?q scans, as in listRows.
  const { where: w, order } = clauses(table, sqlite ? spec : { ...spec, search: undefined, searchMore: undefined }, params, where, false, sqlite);
  return { where: w, order };
}

/**
 * Exact totals of list queries on a door's read connection, for its change stamp: a total is
 * kept until anything may have been written (the stamp moves), so repeated pages and searches
 * between writes count nothing (a dense search over 100,000 persons counts ≈ 12,500 matches,
 * 3–4 ms). Keyed by the count's SQL text and parameters; at most MAX_TOTALS per connection,
 * the oldest dropped first. On a write's handle readStamp is null and nothing is kept; on
 * PostgreSQL totals are kept per corporation and generation (src/db/pg/generations.ts).
 */
interface Totals {
  stamp: number;
  counts: Map<string, number>;
  /** Match sets of index searches (see matchSet), and the bytes they hold. */
  matches: Map<string, Matches>;
  matchBytes: number;
}
/** Per SQLite read connection, or per corporation on PostgreSQL (change-stamp.ts stampScope). */
const totalsByScope = new WeakMap<object, Totals>();
const MAX_TOTALS = 128;
/** Longer keys (a long id list in a caller's condition) are counted each time rather than kept. */
const MAX_TOTAL_KEY = 1024;

/** What is kept for the read's current stamp; null where nothing may be kept (a write's handle). */
function keptFor(db: AnyDb): Totals | null {
  const stamp = readStamp(db);
  if (stamp === null) return null;
  const scope = stampScope(db);
  if (!scope) return null;
  let totals = totalsByScope.get(scope);
  if (!totals || totals.stamp !== stamp) {
    totals = { stamp, counts: new Map(), matches: new Map(), matchBytes: 0 };
    totalsByScope.set(scope, totals);
  }
  return totals;
}

async function cachedTotal(db: AnyDb, query: { sql: string; params: unknown[] }, countIt: () => Promise<number>): Promise<number> {
  const totals = keptFor(db);
  if (!totals) return await countIt();
  const key = query.params.length ? `${query.sql}\0${JSON.stringify(query.params)}` : query.sql;
  const hit = totals.counts.get(key);
  if (hit !== undefined) return hit;
  const n = await countIt();
  // PostgreSQL: a count that overlapped a write's end is answered, not kept.
  if (key.length <= MAX_TOTAL_KEY && stampHolds(db, totals.stamp)) {
    if (totals.counts.size >= MAX_TOTALS) totals.counts.delete(totals.counts.keys().next().value!);
    totals.counts.set(key, n);
  }
  return n;
}

/**
 * How a table's rows are read for a page without Drizzle's select builder and row mapper (tens
 * of µs per page and ≈ 1.5 µs per row): the column list once, and the few columns whose stored
 * value is not the row's value (booleans, buffers, custom types), decoded as Drizzle decodes
 * them. Rows keep the table's column order, so a view that returns the row answers the same
 * bytes. Null for a table whose property names differ from its column names (none today): such
 * a table goes through Drizzle.
 */
interface RowReader {
  from: SQL;
  decoders: [string, SQLiteColumn][];
  /** The table's quoted name, and the texts of a walked page's row read (by id, ascending and descending). */
  name: string;
  byRowids: { ASC: string; DESC: string };
  /** A page of the rows of a list of rowids, by id: ?1 the list (JSON), ?2 limit, ?3 offset. */
  pageOfRowids: { ASC: string; DESC: string };
  /**
   * The rows of `n` ids (?1 … ?n), by id: a page of a PostgreSQL match set. A list of parameters
   * (PostgreSQL's `= ANY`, a probe of the primary key each) rather than json_each: planned as a
   * generic plan, the JSON's rows are estimated at 100 and the persons were read in full (a hash
   * join). `n` is a power of two (idsBucket), the ids past the page's end NULL (they match
   * nothing): a few statement texts per table.
   */
  byIds(n: number, dir: "ASC" | "DESC"): string;
}
const readers = new WeakMap<SQLiteTable, RowReader | null>();
const identity = Column.prototype.mapFromDriverValue;

function rowReader(table: SQLiteTable): RowReader | null {
  let reader = readers.get(table);
  if (reader !== undefined) return reader;
  const columns = Object.entries(getTableColumns(table)) as [string, SQLiteColumn][];
  if (columns.some(([key, col]) => col.name !== key)) reader = null;
  else {
    const list = columns.map(([, col]) => `"${col.name.replaceAll('"', '""')}"`).join(", ");
    const name = `"${getTableName(table).replaceAll('"', '""')}"`;
    const byRowids = (dir: string) => `SELECT ${list} FROM ${name} WHERE rowid IN (SELECT value FROM json_each(?1)) ORDER BY id ${dir}`;
    const byIds = new Map<string, string>();
    reader = {
      from: sql`SELECT ${sql.raw(list)} FROM ${table}`,
      decoders: columns.filter(([, col]) => col.mapFromDriverValue !== identity),
      name,
      byRowids: { ASC: byRowids("ASC"), DESC: byRowids("DESC") },
      pageOfRowids: { ASC: `${byRowids("ASC")} LIMIT ?2 OFFSET ?3`, DESC: `${byRowids("DESC")} LIMIT ?2 OFFSET ?3` },
      byIds: (n, dir) => {
        const key = `${dir}${n}`;
        let text = byIds.get(key);
        if (text === undefined) {
          text = `SELECT ${list} FROM ${name} WHERE id IN (${Array.from({ length: n }, (_, i) => `?${i + 1}`).join(", ")}) ORDER BY id ${dir}`;
          byIds.set(key, text);
        }
        return text;
      },
    };
  }
  readers.set(table, reader);
  return reader;
}

const dialect = new SQLiteSyncDialect();

/**
 * The rowids an index search matches, as a bitmap over the rowids (dense matches: 100,000 rows
 * take 12.5 kB) or a sorted list (sparse ones), whichever is smaller. Kept per change stamp like
 * the totals, at most MAX_MATCH_BYTES per connection (the oldest dropped first): with up to 256
 * corporation files open that is at most 64 MB in all.
 */
interface Matches {
  count: number;
  has(rowid: number): boolean;
  bytes: number;
  /** The rowids in ascending order, when the set is kept as a list (sparse matches). */
  list?: Float64Array;
}
const MAX_MATCH_BYTES = 256 * 1024;

/** The integers of group_concat's text ("3,-1,42"). */
function rowidList(text: string): number[] {
  const out: number[] = [];
  if (!text) return out;
  let n = 0;
  let negative = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 44) {
      out.push(negative ? -n : n);
      n = 0;
      negative = false;
    } else if (c === 45) negative = true;
    else n = n * 10 + (c - 48);
  }
  out.push(negative ? -n : n);
  return out;
}

function loadMatches(client: Database, s: IndexSearch): Matches {
  // One text of the rowids rather than a row each: a row per match cost ≈ 60 µs per 1,000 matches
  // on top of the match itself, this ≈ 35 (measured over 100,000 persons). A search over several
  // indexes (searchMore) concatenates its UNION the same way. Neither SQLite's nor FTS5's order is
  // relied on below.
  let text: string | null;
  if (s.match !== undefined) {
    const fts = `"${s.fts.replaceAll('"', '""')}"`;
    text = (client.query(`SELECT group_concat(rowid) FROM ${fts} WHERE ${fts} MATCH ?1`).values(s.match) as [[string | null]])[0]![0];
  } else {
    const q = dialect.sqlToQuery(sql`SELECT group_concat(rowid) FROM (${s.rowids})`);
    text = (client.query(q.sql).values(...(q.params as Bindings)) as [[string | null]])[0]![0];
  }
  const rowids = rowidList(text ?? "");
  let max = 0;
  for (const r of rowids) if (r > max) max = r;
  if (rowids.length * 8 <= (max >> 3) + 1) {
    const list = Float64Array.from(rowids).sort();
    return {
      count: list.length,
      bytes: list.byteLength,
      list,
      has(rowid) {
        let lo = 0;
        let hi = list.length - 1;
        while (lo <= hi) {
          const mid = (lo + hi) >> 1;
          if (list[mid] === rowid) return true;
          if (list[mid]! < rowid) lo = mid + 1;
          else hi = mid - 1;
        }
        return false;
      },
    };
  }
  const bits = new Uint8Array((max >> 3) + 1);
  for (const r of rowids) bits[r >> 3]! |= 1 << (r & 7);
  return { count: rowids.length, bytes: bits.byteLength, has: (rowid) => rowid <= max && (bits[rowid >> 3]! & (1 << (rowid & 7))) !== 0 };
}

// Keyed by the index and phrase: one ListSpec per index (contracts_fts with its searchMore).
function matchSet(client: Database, kept: Totals, s: IndexSearch): Matches {
  const key = `${s.fts}\0${s.key}`;
  const hit = kept.matches.get(key);
  if (hit) return hit;
  const m = loadMatches(client, s);
  // Each set also costs its key and an entry, so a flood of distinct empty searches is bounded too.
  m.bytes += 64 + key.length * 2;
  if (m.bytes <= MAX_MATCH_BYTES) {
    for (const [k, old] of kept.matches) {
      if (kept.matchBytes + m.bytes <= MAX_MATCH_BYTES) break;
      kept.matches.delete(k);
      kept.matchBytes -= old.bytes;
    }
    kept.matches.set(key, m);
    kept.matchBytes += m.bytes;
  }
  return m;
}

/**
 * Cluster mode's match sets: the ids a plain ?q (plainById) matches, in id order, loaded with one
 * statement once per corporation generation (change-stamp.ts readStamp), as SQLite's are per
 * change stamp. PostgreSQL evaluates the fold (corpadmin_unaccent, a function it cannot
 * inline: several µs a call) on every row a plan reads: a page of a name every eighth person holds
 * read ≈ 400 rows × 3 columns by the id index, or every match through the trigram indexes plus a
 * sort, each time; from the set a page is its ids' rows by primary key, and the total its size.
 * Ids of one width (UUIDs) are kept as one string, 36 bytes an id: a name every eighth of 100,000
 * persons holds takes 450 kB. Process-wide, at most MAX_PG_MATCH_BYTES, the least recently used
 * dropped first; an entry's key holds its corporation's generation, so a write's sets are never
 * read again and age out.
 */
interface IdMatches {
  count: number;
  bytes: number;
  /** The i-th id in ascending order. */
  at(i: number): unknown;
}
const pgMatches = new Map<string, IdMatches>();
/** The sets being loaded, by key: what a concurrent miss of the same set waits for (the set when kept, else undefined). */
const pgLoading = new Map<string, Promise<IdMatches | undefined>>();
let pgMatchBytes = 0;
const MAX_PG_MATCH_BYTES = 32 * 1024 * 1024;

function idMatches(rows: unknown[][]): IdMatches {
  const first = rows[0]?.[0];
  if (typeof first === "string" && first.length > 0) {
    const width = first.length;
    if (rows.every((r) => typeof r[0] === "string" && (r[0] as string).length === width)) {
      const joined = rows.map((r) => r[0] as string).join("");
      return { count: rows.length, bytes: joined.length + 64, at: (i) => joined.slice(i * width, (i + 1) * width) };
    }
  }
  const ids = rows.map((r) => r[0]);
  return { count: ids.length, bytes: ids.length * 48 + 64, at: (i) => ids[i] };
}

/** Most ids one statement of a match set's page binds. */
const MAX_IDS_STATEMENT = 512;
/** The parameters a page of `n` ids binds: the next power of two from 8 (NULLs past the ids). */
function idsBucket(n: number): number {
  let b = 8;
  while (b < n) b *= 2;
  return b;
}

const specNumbers = new WeakMap<ListSpec, number>();
let specCount = 0;
const numberOf = (map: WeakMap<object, number>, o: object, next: () => number) => {
  let n = map.get(o);
  if (n === undefined) map.set(o, (n = next()));
  return n;
};

/**
 * A kept set's key. The stamp alone names the corporation: a generation is drawn from the stamps'
 * one sequence (change-stamp.ts newStamp) for one corporation on one node, never for another.
 */
function pgMatchKey(stamp: number, table: SQLiteTable, spec: ListSpec, q: string): string {
  return `${stamp}\0${numberOf(specNumbers, spec, () => ++specCount)}\0${getTableName(table)}\0${q}`;
}

/** The set kept under `key`, made the most recently used. */
function keptPgMatches(key: string): IdMatches | undefined {
  const hit = pgMatches.get(key);
  if (hit) {
    pgMatches.delete(key);
    pgMatches.set(key, hit);
  }
  return hit;
}

/**
 * The ids of a plain ?q's page (plainById) from the match set kept for `stamp` (a door's
 * `stampNow()`: the corporation's generation, no read), with its page, limit and total; undefined
 * when no set is kept for it or the request is not plain. A module that keeps its rows' views per
 * stamp answers such a page with no statement at all (person/service.ts personPageText).
 */
export function keptPlainPage(stamp: number, table: SQLiteTable, spec: ListSpec, params: ListParams): { ids: unknown[]; page: number; limit: number; total: number } | undefined {
  const idColumn = (getTableColumns(table) as Record<string, SQLiteColumn | undefined>).id;
  const plain = rowReader(table) && idColumn?.dataType === "string" && plainById(table, spec, params, []);
  if (!plain) return undefined;
  const m = keptPgMatches(pgMatchKey(stamp, table, spec, params.q!));
  if (!m) return undefined;
  const { page, limit, offset } = paging(params);
  const ids: unknown[] = [];
  for (let i = offset; i < Math.min(m.count, offset + limit); i++) ids.push(m.at(plain.descending ? m.count - 1 - i : i));
  return { ids, page, limit, total: m.count };
}

/**
 * The match set of a plain ?q on PostgreSQL; loaded (`match`, the words' condition, built only
 * then), and kept when the generation held. Keyed by the corporation's generation (pgMatchKey),
 * the owner's ListSpec and table, and `q` as sent: a page from a kept set builds no SQL at all.
 */
async function pgMatchSet(db: AnyDb, client: ReturnType<typeof clientOf>, table: SQLiteTable, spec: ListSpec, q: string, match: () => SQL | undefined): Promise<IdMatches | undefined> {
  const stamp = readStamp(db);
  if (stamp === null || !stampScope(db)) return undefined;
  const key = pgMatchKey(stamp, table, spec, q);
  const hit = keptPgMatches(key);
  if (hit) return hit;
  // Requests that miss the same set at once (the first searches after a write, several
  // connections) wait for one load rather than each evaluating the match: they share its set when
  // it was kept (no write ended meanwhile: the same generation's rows), else load their own.
  const loading = pgLoading.get(key);
  if (loading) {
    const shared = await loading;
    if (shared) return shared;
  }
  const where = match();
  if (!where) return undefined;
  const query = dialect.sqlToQuery(sql`SELECT id FROM ${table} WHERE ${where} ORDER BY id`);
  let kept: (m: IdMatches | undefined) => void = () => {};
  if (!loading) pgLoading.set(key, new Promise((resolve) => (kept = resolve)));
  let m: IdMatches;
  try {
    m = idMatches((await client.query(query.sql).values(...(query.params as Bindings))) as unknown[][]);
  } catch (err) {
    if (!loading) pgLoading.delete(key);
    kept(undefined);
    throw err;
  }
  if (!loading) pgLoading.delete(key);
  m.bytes += key.length * 2 + 64;
  // A set that overlapped a write's end is answered, not kept (as cachedTotal's counts).
  const keep = m.bytes <= MAX_PG_MATCH_BYTES && key.length <= MAX_TOTAL_KEY && stampHolds(db, stamp);
  kept(keep ? m : undefined);
  if (keep) {
    for (const [k, old] of pgMatches) {
      if (pgMatchBytes + m.bytes <= MAX_PG_MATCH_BYTES) break;
      pgMatches.delete(k);
      pgMatchBytes -= old.bytes;
    }
    pgMatches.set(key, m);
    pgMatchBytes += m.bytes;
  }
  return m;
}

/** Most matches a page is sorted out of by their rowids (listRows); beyond it SQLite's plan answers. */
const MAX_LISTED_PAGE = 5_000;

/** Index entries one page may walk (see walkPage); beyond it the page is left to SQLite. */
const MAX_WALK = 20_000;
/** Most id index entries read in one step of a walk. */
const MAX_WALK_CHUNK = 4096;

/**
 * A page of an index search sorted by id, by walking the id index (its rowids, in chunks by id)
 * and keeping the rows in the match set: SQLite's own plan evaluates the whole match again in
 * every page (≈ 6 ms for a common name over 100,000 persons), the walk reads the page's share of
 * the id index (≈ 400 entries for a name every eighth person holds). Undefined when the walk would
 * pass more than MAX_WALK entries (a rare match, a deep page): SQLite answers those.
 * Each step reads rowids only (an id string per entry cost ≈ 60 % of the walk) and as many as the
 * matches still wanted should take at the set's density, with a margin: a fixed 1,024 read two
 * and a half times the entries a 50-row page of a name every eighth person holds needs.
 */
function walkPage(client: Database, reader: RowReader, m: Matches, descending: boolean, offset: number, limit: number, tableRows: number) {
  if (m.count === 0 || offset >= m.count) return [];
  if (((offset + limit) * tableRows) / m.count > MAX_WALK) return undefined;
  const t = reader.name;
  const dir = descending ? "DESC" : "ASC";
  const first = client.query(`SELECT rowid FROM ${t} ORDER BY id ${dir} LIMIT ?1`);
  // Keyset by the last rowid read: its id is looked up inside the statement.
  const next = client.query(`SELECT rowid FROM ${t} WHERE id ${descending ? "<" : ">"} (SELECT id FROM ${t} WHERE rowid = ?1) ORDER BY id ${dir} LIMIT ?2`);
  const stepFor = (wanted: number) => Math.min(MAX_WALK_CHUNK, Math.ceil((wanted * tableRows * 1.25) / m.count) + 32);
  const picked: number[] = [];
  let skip = offset;
  let walked = 0;
  let step = stepFor(offset + limit);
  let chunk = first.values(step) as [number][];
  for (;;) {
    for (const [rowid] of chunk) {
      if (!m.has(rowid)) continue;
      if (skip > 0) skip--;
      else if (picked.push(rowid) === limit) break;
    }
    walked += chunk.length;
    if (picked.length === limit || chunk.length < step) break;
    if (walked >= MAX_WALK * 2) return undefined;
    step = stepFor(skip + limit - picked.length);
    chunk = next.values(chunk[chunk.length - 1]![0], step) as [number][];
  }
  if (!picked.length) return [];
  return client.query(reader.byRowids[dir]).all(JSON.stringify(picked)) as Record<string, unknown>[];
}

/** Runs a paged list over one table; `view` maps a row to its response shape. */
export async function listRows<R, V>(
  db: AnyDb,
  table: SQLiteTable,
  spec: ListSpec,
  params: ListParams,
  view: (row: R) => V,
  where: (SQL | undefined)[] = [],
): Promise<Page<V>> {
  const { page, limit, offset } = paging(params);
  const d = db as any;
  const client = clientOf(db);
  // The match sets are kept on a SQLite read connection only; totals on a read's stamp (keptFor).
  const sqlite = sqliteClientOf(db);
  const reader = rowReader(table);
  const pgPlain = !sqlite && reader && (getTableColumns(table) as Record<string, SQLiteColumn>).id?.dataType === "string" ? plainById(table, spec, params, where) : undefined;
  const ownSpec = spec;
  // The trigram indexes are SQLite's (FTS5): on another engine ?q scans its columns.
  if (!sqlite && spec.search) spec = { ...spec, search: undefined, searchMore: undefined };
  if (pgPlain && reader) {
    // PostgreSQL: a plain ?q is answered from its match set (pgMatchSet): the total its size, the
    // page its ids' rows.
    const scanSpec = spec;
    const m = await pgMatchSet(db, client, table, ownSpec, params.q!, () => clauses(table, scanSpec, params, where, false, false).where);
    if (m) {
      const dir = pgPlain.descending ? "DESC" : "ASC";
      const rows: Record<string, unknown>[] = [];
      // In chunks of at most MAX_IDS_STATEMENT ids (a CSV export's pages hold 5,000), each in id order.
      for (let from = offset; from < Math.min(m.count, offset + limit); from += MAX_IDS_STATEMENT) {
        const ids: unknown[] = [];
        for (let i = from; i < Math.min(m.count, offset + limit, from + MAX_IDS_STATEMENT); i++) ids.push(m.at(pgPlain.descending ? m.count - 1 - i : i));
        const n = idsBucket(ids.length);
        while (ids.length < n) ids.push(null);
        for (const row of (await client.query(reader.byIds(n, dir)).all(...(ids as Bindings))) as Record<string, unknown>[]) rows.push(row);
      }
      return { items: decodeRows(reader, rows, view), page, limit, total: m.count };
    }
  }
  const tableRows = `SELECT max(rowid) FROM "${getTableName(table).replaceAll('"', '""')}"`;
  const tableRowsOf = async () => ((await client.query(tableRows).values()) as [[number | null]])[0][0] ?? 0;
  let knownTotal: number | undefined;
  const plain = reader ? plainSearch(table, spec, params, where) : undefined;
  const kept = plain && sqlite ? keptFor(db) : null;
  if (plain && kept && reader && sqlite) {
    // An index search alone, sorted by id, between writes: its match set answers the total and
    // the page's rows (walkPage); SQLite's plan below when the walk would be long.
    const m = matchSet(sqlite, kept, plain.search);
    let rows = walkPage(sqlite, reader, m, plain.descending, offset, limit, await tableRowsOf());
    // Too few matches to walk for (a number, a rare name): the page is sorted out of the set's own
    // rowids, rather than by SQLite's plan, which would evaluate the whole match again.
    if (!rows && m.list && m.count <= MAX_LISTED_PAGE) {
      rows = sqlite.query(reader.pageOfRowids[plain.descending ? "DESC" : "ASC"]).all(`[${m.list.join(",")}]`, limit, offset) as Record<string, unknown>[];
    }
    if (rows) return { items: decodeRows(reader, rows, view), page, limit, total: m.count };
    knownTotal = m.count;
  }
  const c = clauses(table, spec, params, where, false, !!sqlite);
  let countQuery: SQL;
  if (c.search && c.onlySearch) {
    // The index holds one entry per row: its matches are the table's, counted without a row read
    // (and the rowids other indexes find, distinct, beside them).
    const fts = sql.identifier(c.search.fts);
    countQuery = c.search.match !== undefined
      ? sql`SELECT count(*) AS n FROM ${fts} WHERE ${fts} MATCH ${c.search.match}`
      : sql`SELECT count(*) AS n FROM (${c.search.rowids})`;
  } else {
    countQuery = c.where ? sql`SELECT count(*) AS n FROM ${table} WHERE ${c.where}` : sql`SELECT count(*) AS n FROM ${table}`;
  }
  const count = dialect.sqlToQuery(countQuery);
  const total = knownTotal ?? (await cachedTotal(db, count, async () => ((await client.query(count.sql).get(...(count.params as Bindings))) as { n: number }).n));
  let w = c.where;
  if (c.search && c.byId && total > 0) {
    // Sorted by id, SQLite reads every match to sort them (≈ 1.5 µs each) unless told to walk the
    // id index and probe (the page's rows × table rows ÷ matches probes, ≈ 0.1 µs each): the
    // walk wins when matches are many. max(rowid) estimates the table's rows for free.
    if (total * total * 15 > (offset + limit) * (await tableRowsOf())) w = clauses(table, spec, params, where, true).where;
  }
  if (!reader) {
    const rows = (await d.select().from(table).where(w).orderBy(...c.order).limit(limit).offset(offset).all()) as R[];
    return { items: rows.map(view), page, limit, total };
  }
  const select = dialect.sqlToQuery(
    sql`${reader.from}${w ? sql` WHERE ${w}` : sql``} ORDER BY ${sql.join(c.order, sql`, `)} LIMIT ${limit} OFFSET ${offset}`,
  );
  const rows = (await client.query(select.sql).all(...(select.params as Bindings))) as Record<string, unknown>[];
  return { items: decodeRows(reader, rows, view), page, limit, total };
}

/** Stored values to the row's values (as Drizzle decodes them), then the view. */
function decodeRows<R, V>(reader: RowReader, rows: Record<string, unknown>[], view: (row: R) => V): V[] {
  const items: V[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    for (const [key, col] of reader.decoders) if (row[key] !== null) row[key] = col.mapFromDriverValue(row[key]);
    items[i] = view(row as R);
  }
  return items;
}
