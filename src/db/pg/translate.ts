// Cluster mode (issue 19): SQLite-dialect statements, as the modules write them (Drizzle's SQLite
// builder, and hand-written `$client.query(sql)` text), rewritten for PostgreSQL over the shared,
// row-secured tables of src/db/pg/tenant.ts. docs/architecture.md, "Cluster mode".
//
// Translated (outside string literals):
// - placeholders: `?`, `?N`, and named `$name` / `:name` / `@name` (bun:sqlite's object binding) → `$n`
// - `like` → `ilike` (SQLite's LIKE ignores ASCII case); `ifnull` → `coalesce`; `instr` → `strpos`
// - `INSERT OR IGNORE` → `... ON CONFLICT DO NOTHING`; `ON CONFLICT ("t"."x")` → `ON CONFLICT ("x")`,
//   and on a tenant table `("corp_id", "x")` (the shared layout's unique keys lead with corp_id);
//   a bare column read in `DO UPDATE SET` → `"t"."col"` (the existing row, as SQLite reads it)
// - Drizzle's `null` for a column an insert leaves out → `default` (an identity `seq` numbers the
//   row, as SQLite's rowid alias does; any other column's default is NULL, as on SQLite)
// - `group_concat(x[, sep])` → `string_agg((x)::text, sep)`; `json_array` → `json_build_array`;
//   `json_group_array(x)` → `coalesce(json_agg(x), '[]')` (JSON text, as SQLite returns it);
//   `total(x)` → `coalesce(sum(x), 0)`; the scalar `max(a, b)` / `min(a, b)` → `greatest` / `least`
//   (which skip a NULL argument, where SQLite's give NULL); `json_each(x)` →
//   `json_array_elements_text((x)::text::json)`; `json_extract(x, '$[n]' | '$.k')` →
//   `((x)::json ->> ...)` (text, where SQLite returns the JSON value's own type)
// - `rowid IN (SELECT rowid ...)` → `ctid IN (SELECT ctid ...)` (the bounded-DELETE form); any other
//   rowid is refused (a number the code keeps has no PostgreSQL counterpart)
// - `CAST(x AS INTEGER)` → `CAST(x AS bigint)` (SQLite's integers are 64-bit): the way to type a
//   placeholder no context types (`SELECT CAST(?2 AS INTEGER)`)
// - `INDEXED BY i` / `NOT INDEXED` dropped, `CROSS JOIN t ON` → `JOIN t ON`, unary `+col` → `col`
// - `col = 0|1`, `col <> 0|1`, `col IN (0, 1)`, and a bare 0/1 in an INSERT's VALUES, for a column
//   that is boolean on PostgreSQL →
//   `false`/`true`; a bare `0`/`1` operand of AND/OR (Drizzle's `sql\`0\``) likewise
// - the placeholders bound to a jsonb column (`metric_values.value`: inserted or compared) are
//   marked and cast from text (`($n::text)::jsonb`), for the handle to send their values JSON-encoded
// NOT translated: the statement is refused with an error naming the construct (UNTRANSLATABLE
// below), so a module statement the lead must rewrite fails loudly in tests rather than oddly.
// Left to PostgreSQL's own inference: a placeholder whose type no context gives (`SELECT ?2`, then
// `s + ?3`) is text there; such statements need a cast where they are written. A placeholder first
// met in `? IS NULL` is cast to text (the optional-filter form `?3 IS NULL OR col = ?3` on an id).
import { is } from "drizzle-orm";
import { getTableConfig as pgTableConfig, PgTable } from "drizzle-orm/pg-core";
import * as platformSchema from "./platform";
import * as tenantSchema from "./tenant";

export interface Translated {
  sql: string;
  /** For named parameters: the name of `$1`, `$2`, ... in order; null for positional ones. */
  names: string[] | null;
  /** The placeholders (0-based: `$1` is 0) whose values go JSON-encoded (jsonb columns). */
  json: number[];
}

/** SQLite constructs with no rewrite here, refused by name (see the header). */
const UNTRANSLATABLE: [RegExp, string][] = [
  [/\bmatch\b/i, "FTS5 MATCH"],
  [/\bglob\b/i, "GLOB"],
  [/\bsqlite_(master|schema|sequence)\b/i, "the SQLite catalog"],
  [/^\s*pragma\b/i, "PRAGMA"],
  [/\b(changes|last_insert_rowid|total_changes)\s*\(\s*\)/i, "changes()/last_insert_rowid()"],
  [/\binsert\s+or\s+(replace|abort|fail|rollback)\b/i, "INSERT OR REPLACE/ABORT/FAIL/ROLLBACK"],
  [/^\s*replace\s+into\b/i, "REPLACE INTO"],
  [/\b(strftime|julianday|unixepoch|datetime|printf|typeof|iif|json_group_object|randomblob|zeroblob)\s*\(/i, "a SQLite function"],
  [/^\s*begin\s+(immediate|exclusive|deferred)\b/i, "BEGIN IMMEDIATE (the door owns transactions)"],
];

function tableNames(schema: Record<string, unknown>): PgTable[] {
  return Object.values(schema).filter((v): v is PgTable => is(v, PgTable));
}

/** Names of the columns that are boolean on PostgreSQL, and the jsonb columns by table. */
const booleanColumns = new Set<string>();
const jsonbColumns = new Map<string, Set<string>>();
const columnsOf = new Map<string, string[]>();
for (const table of [...tableNames(tenantSchema), ...tableNames(platformSchema)]) {
  const cfg = pgTableConfig(table);
  columnsOf.set(cfg.name, cfg.columns.map((c) => c.name));
  for (const col of cfg.columns) {
    const type = col.getSQLType();
    if (type === "boolean") booleanColumns.add(col.name);
    if (type === "jsonb") {
      let set = jsonbColumns.get(cfg.name);
      if (!set) jsonbColumns.set(cfg.name, (set = new Set()));
      set.add(col.name);
    }
  }
}
const boolNames = [...booleanColumns].join("|");
const BOOL_COMPARE = new RegExp(`((?:"?\\w+"?\\.)?"?\\b(?:${boolNames})\\b"?\\s*(?:=|==|<>|!=)\\s*)([01])\\b`, "gi");
const BOOL_IN = new RegExp(`((?:"?\\w+"?\\.)?"?\\b(?:${boolNames})\\b"?\\s+(?:not\\s+)?in\\s*\\()(\\s*[01](?:\\s*,\\s*[01])*\\s*)\\)`, "gi");

const CORP = '"corp_id"';
const MASK = "\u0000";

/** `'...'` literals replaced by a marker, so that no rewrite touches their text. */
function mask(text: string): { masked: string; literals: string[] } {
  const literals: string[] = [];
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "'") {
      let j = i + 1;
      for (;;) {
        if (j >= text.length) break;
        if (text[j] === "'") {
          if (text[j + 1] === "'") j += 2;
          else break;
        } else j++;
      }
      literals.push(text.slice(i, j + 1));
      out += `${MASK}${literals.length - 1}${MASK}`;
      i = j + 1;
    } else if (c === '"') {
      // A quoted identifier goes through as is (no placeholder or keyword inside one).
      const j = text.indexOf('"', i + 1);
      const end = j < 0 ? text.length : j + 1;
      out += text.slice(i, end);
      i = end;
    } else {
      out += c;
      i++;
    }
  }
  return { masked: out, literals };
}

const unmask = (text: string, literals: string[]) => text.replace(/\u0000(\d+)\u0000/g, (_, n) => literals[Number(n)]);

/** The index just past the parenthesis that closes the one at `open`. */
function closing(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")" && --depth === 0) return i + 1;
  }
  throw new Error(`unbalanced parentheses in: ${text}`);
}

/** The top-level, comma-separated items of a parenthesised list's inside. */
function splitArgs(inside: string): string[] {
  const args: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inside.length; i++) {
    const c = inside[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      args.push(inside.slice(start, i).trim());
      start = i + 1;
    }
  }
  args.push(inside.slice(start).trim());
  return args;
}

/**
 * `INSERT INTO t (a, b, ...) VALUES (...), ...`: a bare 0 or 1 given to a boolean column (SQLite has
 * no booleans) → false / true.
 */
function insertBooleans(text: string): string {
  const head = /^\s*insert\s+(?:or\s+ignore\s+)?into\s+"?\w+"?\s*\(([^)]*)\)\s*values\s*/i.exec(text);
  if (!head) return text;
  const at = head[1].split(",").flatMap((c, i) => (booleanColumns.has(c.trim().replaceAll('"', "")) ? [i] : []));
  if (!at.length) return text;
  let out = head[0];
  let i = head[0].length;
  while (text[i] === "(") {
    const end = closing(text, i);
    const values = splitArgs(text.slice(i + 1, end - 1));
    for (const k of at) if (values[k] === "0" || values[k] === "1") values[k] = values[k] === "1" ? "true" : "false";
    out += `(${values.join(", ")})`;
    const sep = /^\s*,\s*/.exec(text.slice(end));
    i = end + (sep ? sep[0].length : 0);
    if (sep) out += ", ";
  }
  return out + text.slice(i);
}

/** Rewrites each call of the function `name` (innermost first, so arguments are rewritten too). */
function rewriteCalls(text: string, name: string, fn: (args: string[]) => string | null): string {
  const re = new RegExp(`\\b${name}\\s*\\(`, "gi");
  const starts: number[] = [];
  for (let m = re.exec(text); m; m = re.exec(text)) if (!/[\w."]/.test(text[m.index - 1] ?? " ")) starts.push(m.index);
  for (const start of starts.reverse()) {
    const open = text.indexOf("(", start);
    const end = closing(text, open);
    const out = fn(splitArgs(text.slice(open + 1, end - 1)));
    if (out !== null) text = text.slice(0, start) + out + text.slice(end);
  }
  return text;
}

function placeholders(text: string): { text: string; names: string[] | null } {
  let max = 0;
  const named = new Map<string, number>();
  const out = text.replace(/\?(\d*)|(?<![\w:$])([:$@])([A-Za-z_]\w*)/g, (_, digits: string | undefined, prefix: string | undefined, name: string | undefined) => {
    if (prefix) {
      const key = prefix + name;
      let n = named.get(key);
      if (n === undefined) named.set(key, (n = named.size + 1));
      return `$${n}`;
    }
    const n = digits ? Number(digits) : max + 1;
    if (n > max) max = n;
    return `$${n}`;
  });
  if (named.size && max) throw new Error("a statement mixes named and positional parameters");
  return { text: out, names: named.size ? [...named.keys()] : null };
}

const unquote = (name: string) => name.trim().replace(/^"|"$/g, "");

/** The placeholders of `insert into t (cols) values (...)` bound to a jsonb column of t. */
function insertJson(text: string, json: Set<number>): void {
  const m = /^\s*insert\s+into\s+("?\w+"?)\s*\(([^)]*)\)\s*values\s*/i.exec(text);
  if (!m) return;
  const cols = jsonbColumns.get(unquote(m[1]));
  if (!cols) return;
  const positions = m[2].split(",").map((c, i) => (cols.has(unquote(c)) ? i : -1)).filter((i) => i >= 0);
  let at = m.index + m[0].length;
  while (text[at] === "(") {
    const end = closing(text, at);
    const items = splitArgs(text.slice(at + 1, end - 1));
    for (const p of positions) {
      const ph = /^\$(\d+)$/.exec(items[p] ?? "");
      if (ph) json.add(Number(ph[1]) - 1);
    }
    at = end;
    while (text[at] === " " || text[at] === ",") at++;
  }
}

/** Drizzle's `values (null, ?, ...)`: a `null` item is a column the insert leaves out. */
function insertDefaults(text: string): string {
  const m = /^insert into "\w+" \([^)]*\) values /.exec(text);
  if (!m) return text;
  let at = m[0].length;
  let out = text.slice(0, at);
  while (text[at] === "(") {
    const end = closing(text, at);
    out += `(${splitArgs(text.slice(at + 1, end - 1))
      .map((item) => (item === "null" ? "default" : item))
      .join(", ")})`;
    at = end;
    if (text.startsWith(", ", at)) {
      out += ", ";
      at += 2;
    }
  }
  return out + text.slice(at);
}

/**
 * In an upsert's `DO UPDATE SET`, a bare column means the existing row on SQLite and is ambiguous
 * (that row or `excluded`) on PostgreSQL: qualified with the table's name, except where assigned.
 */
function qualifyUpsert(text: string): string {
  const m = /^\s*insert\s+into\s+"?(\w+)"?/i.exec(text);
  const set = /\bdo\s+update\s+set\b/i.exec(text);
  const cols = m && columnsOf.get(m[1]);
  if (!m || !set || !cols) return text;
  const end = /\breturning\b/i.exec(text.slice(set.index))?.index;
  const stop = end === undefined ? text.length : set.index + end;
  const names = cols.join("|");
  const re = new RegExp(`(?<![."\\w$])(?:"(${names})"|\\b(${names})\\b(?!"))(?!\\s*=(?!=))`, "g");
  const body = text.slice(set.index + set[0].length, stop).replace(re, (_, quoted: string | undefined, bare: string | undefined) => `"${m[1]}"."${quoted ?? bare}"`);
  return text.slice(0, set.index + set[0].length) + body + text.slice(stop);
}

function rewrite(sqlite: string, tenant: boolean): Translated {
  const { masked, literals } = mask(sqlite);
  for (const [re, what] of UNTRANSLATABLE) if (re.test(masked)) throw new Error(`not translatable to PostgreSQL (${what}): ${sqlite}`);
  const p = placeholders(masked);
  let text = p.text;

  // `?3 IS NULL OR col = ?3`: PostgreSQL types a parameter where it first meets it, and IS NULL
  // gives no type. Such optional filters compare ids (text) here, so that first use is cast to text.
  const seen = new Set<string>();
  text = text.replace(/\$(\d+)(\s+is\s+(?:not\s+)?null\b)?/gi, (ph: string, n: string, isNull: string | undefined) => {
    const first = !seen.has(n);
    seen.add(n);
    return first && isNull ? `$${n}::text${isNull}` : ph;
  });

  let orIgnore = false;
  text = text.replace(/\binsert\s+or\s+ignore\s+into\b/i, () => {
    orIgnore = true;
    return "insert into";
  });
  text = insertDefaults(text);
  text = text
    .replace(/\blike\b/gi, "ilike")
    .replace(/\bindexed\s+by\s+\w+/gi, "")
    .replace(/\bnot\s+indexed\b/gi, "")
    .replace(/\bcross\s+join\s+("?\w+"?(?:\s+(?!on\b)\w+)?)\s+on\b/gi, "join $1 on")
    .replace(/(\b(?:and|or|where|on|not|when|then)\s+|[(,]\s*)\+(?=[A-Za-z_"])/gi, "$1")
    .replace(/\browid(\s+in\s*\(\s*select\s+)rowid\b/gi, "ctid$1ctid")
    .replace(BOOL_COMPARE, (_, lhs: string, bit: string) => `${lhs}${bit === "1" ? "true" : "false"}`)
    .replace(BOOL_IN, (_, lhs: string, bits: string) => `${lhs}${bits.replace(/[01]/g, (b) => (b === "1" ? "true" : "false"))})`)
    .replace(/\b(and|or)\s+([01])(?=\s*(?:\)|$|order\b|group\b|limit\b))/gi, (_, op: string, bit: string) => `${op} ${bit === "1" ? "true" : "false"}`)
    .replace(/\(\s*([01])\s+(and|or)\b/gi, (_, bit: string, op: string) => `(${bit === "1" ? "true" : "false"} ${op}`);

  text = insertBooleans(text);
  // Anywhere else a rowid is a number the code keeps (list.ts's match sets): ctid is no number.
  if (/\browid\b/i.test(text)) throw new Error(`not translatable to PostgreSQL (rowid outside "rowid IN (SELECT rowid ...)"): ${sqlite}`);
  // SQLite's INTEGER is 64-bit; PostgreSQL's is 32 (an epoch in ms overflows it).
  text = text.replace(/\bas\s+integer\s*\)/gi, "as bigint)");
  text = rewriteCalls(text, "ifnull", (a) => `coalesce(${a.join(", ")})`);
  text = rewriteCalls(text, "instr", (a) => `strpos(${a.join(", ")})`);
  text = rewriteCalls(text, "group_concat", (a) => `string_agg((${a[0]})::text, ${a[1] ?? "','"})`);
  text = rewriteCalls(text, "json_array", (a) => `json_build_array(${a.join(", ")})`);
  // SQLite's gives '[]' over no rows, json_agg NULL.
  text = rewriteCalls(text, "json_group_array", (a) => `coalesce(json_agg(${a[0]}), '[]'::json)`);
  text = rewriteCalls(text, "total", (a) => `coalesce(sum(${a[0]}), 0)`);
  text = rewriteCalls(text, "max", (a) => (a.length > 1 ? `greatest(${a.join(", ")})` : null));
  text = rewriteCalls(text, "min", (a) => (a.length > 1 ? `least(${a.join(", ")})` : null));
  // Through text: a parameter typed json would be JSON-encoded again by Bun.sql.
  // _text: a list of ids compares as text; an element that is itself JSON goes through ::json below.
  text = rewriteCalls(text, "json_each", (a) => `json_array_elements_text((${a[0]})::text::json)`);
  text = rewriteCalls(text, "json_extract", (a) => {
    const path = /^'\$(?:\[(\d+)\]|\.(\w+))'$/.exec(unmask(a[1] ?? "", literals));
    if (!path) throw new Error(`not translatable to PostgreSQL (a json_extract path other than '$[n]' or '$.key'): ${sqlite}`);
    return path[1] !== undefined ? `((${a[0]})::json ->> ${path[1]})` : `((${a[0]})::json ->> '${path[2]}')`;
  });

  text = text.replace(/\bon\s+conflict\s*\(([^)]*)\)/gi, (_, target: string) => {
    const cols = target.split(",").map((c) => c.trim().replace(/^"\w+"\./, ""));
    if (tenant && !cols.some((c) => c.replaceAll('"', "") === "corp_id")) cols.unshift(CORP);
    return `on conflict (${cols.join(", ")})`;
  });
  text = qualifyUpsert(text);
  if (orIgnore) {
    const returning = /\breturning\b/i.exec(text);
    text = returning ? `${text.slice(0, returning.index)}on conflict do nothing ${text.slice(returning.index)}` : `${text.replace(/\s*;?\s*$/, "")} on conflict do nothing`;
  }

  const json = new Set<number>();
  if (jsonbColumns.size) {
    for (const [table, cols] of jsonbColumns) {
      if (!new RegExp(`\\b${table}\\b`).test(text)) continue;
      insertJson(text, json);
      const colNames = [...cols].join("|");
      const re = new RegExp(`(?:"?\\w+"?\\.)?"?\\b(?:${colNames})\\b"?\\s*(?:=|<>|!=|<=|>=|<|>)\\s*\\$(\\d+)`, "gi");
      for (let m = re.exec(text); m; m = re.exec(text)) json.add(Number(m[1]) - 1);
    }
  }
  // Typed text, then cast: Bun.sql would JSON-encode a value bound to a json-typed parameter itself,
  // and types a JS number as an integer, which jsonb does not take.
  if (json.size) text = text.replace(/\$(\d+)\b/g, (ph, n: string) => (json.has(Number(n) - 1) ? `(${ph}::text)::jsonb` : ph));
  return { sql: unmask(text, literals), names: p.names, json: [...json].sort((a, b) => a - b) };
}

/** Distinct texts kept per kind; past that the cache starts over (`inArray` lists vary in length). */
const CACHE_MAX = 4096;
const caches = { tenant: new Map<string, Translated>(), platform: new Map<string, Translated>() };

/** `sqlite` in PostgreSQL's dialect, cached by text; throws for what is not translatable. */
export function translate(sqlite: string, { tenant }: { tenant: boolean }): Translated {
  const cache = tenant ? caches.tenant : caches.platform;
  let t = cache.get(sqlite);
  if (!t) {
    t = rewrite(sqlite, tenant);
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(sqlite, t);
  }
  return t;
}
