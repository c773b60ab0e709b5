// `t.sql(corpId?)` / `t.sqlWrite(corpId?)` on the PostgreSQL backend (test/support/backend.ts): the
// suites' checks of what was stored are SQLite statements run synchronously on a bun:sqlite
// Database; here the same text is translated (src/db/pg/translate.ts) and run synchronously by
// `psql`, as the app's role (so row-level security shows one corporation's rows, as its file
// would), values returned as the app's handle returns them (numbers, 1/0 for booleans, JSON as
// stored); `rowid` read as ctid, sqlite_master's tables from PostgreSQL's catalog. What only SQLite has (PRAGMA, sqlite_master, drizzle over the file) fails, naming it.
import type { Database } from "bun:sqlite";
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { translate } from "../../src/db/pg/translate";
import * as tenantSchema from "../../src/db/pg/tenant";
import { CHANGES_CHANNEL, changesPayload } from "../../src/core/pg/door";
import { TENANT_WRITES_TOPIC } from "../../src/db/pg/generations";
import { PG_BIN } from "./postgres";

type Params = unknown[];

function literal(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "boolean") return v ? "'1'" : "'0'";
  if (typeof v === "number" || typeof v === "bigint") return `'${String(v)}'`;
  if (v instanceof Uint8Array) return `'\\x${Buffer.from(v).toString("hex")}'`;
  return `'${String(v).replaceAll("'", "''")}'`;
}

const CATALOG = `(SELECT table_name AS name, 'table' AS type FROM information_schema.tables WHERE table_schema = current_schema()) AS pg_tables_as_sqlite_master`;

/** The jsonb columns of the PostgreSQL schema (metric_values.value), by name. */
const JSONB = [
  ...new Set(
    (Object.values(tenantSchema) as unknown[])
      .filter((v): v is PgTable => is(v, PgTable))
      .flatMap((table) => getTableConfig(table).columns.filter((c) => c.getSQLType() === "jsonb").map((c) => c.name)),
  ),
];
const NUMBER_LITERAL = String.raw`-?(?<![\w.])\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.])`;
const LITERALS = new RegExp(String.raw`(\b(?:${JSONB.join("|")})\s*=\s*)?(${NUMBER_LITERAL})`, "gi");

/**
 * Number literals of a hand-written statement as SQLite stores them: one beyond a double's range
 * is Infinity there (`9e999`: 'Infinity' for a double precision column on PostgreSQL), and one
 * assigned to a jsonb column is that JSON number (jsonb holds numbers as numeric, so `9e999` too,
 * which a reader parses to Infinity as SQLite's REAL would be).
 */
function sqliteNumbers(pg: string): string {
  return pg
    .split(/('(?:[^']|'')*')/)
    .map((part, i) =>
      i % 2
        ? part
        : part.replace(LITERALS, (all, jsonb: string | undefined, n: string) =>
            jsonb ? `${jsonb}to_jsonb(${n}::numeric)` : Number.isFinite(Number(n)) ? all : `${n.startsWith("-") ? "-" : ""}'Infinity'::float8`,
          ),
    )
    .join("");
}

/** The statement with its parameters written in as untyped literals (PostgreSQL infers their types). */
function inline(sqlite: string, corpId: string | undefined, params: Params): string {
  // A check's `ORDER BY rowid` (insertion order): ctid is that order for rows never updated; the
  // catalog's tables as sqlite_master lists them (every table: the platform's and the shared ones).
  const t = translate(sqlite.replace(/\browid\b/gi, "ctid").replace(/\bsqlite_master\b/gi, CATALOG), { tenant: !!corpId });
  let values: unknown[] = params;
  if (t.names) {
    const obj = (params[0] ?? {}) as Record<string, unknown>;
    values = t.names.map((n) => (n in obj ? obj[n] : obj[n.slice(1)]));
  }
  return sqliteNumbers(t.sql).replace(/\$(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    const v = values[i];
    return t.json.includes(i) ? (v === null || v === undefined ? "NULL" : literal(JSON.stringify(typeof v === "boolean" ? (v ? 1 : 0) : v))) : literal(v);
  });
}

/**
 * A write through t.sqlWrite is another node's write to the app: it notifies as a node's does
 * (src/db/pg/generations.ts), so the app's read caches move on. The in-process app is also told
 * at once (`onWrite`: the notification would arrive only when its event loop next polls); a binary
 * is given a moment to hear it.
 */
type OnWrite = ((corpId: string) => void) | undefined;

function psql(url: string, corpId: string | undefined, write: boolean, statement: string, onWrite?: OnWrite): string {
  // The platform's connection sees no corporation's rows (as platform.db holds none), and its
  // reads of a tenant table find nothing rather than an unset setting.
  const setup = [`SET corpadmin.corp_id = ${literal(corpId ?? "")}`, write ? "" : "SET default_transaction_read_only = on"].filter(Boolean);
  // On stdin: a transaction's statements together outgrow an argument (128 KiB).
  const notify = write && corpId ? [`SELECT pg_notify('${CHANGES_CHANNEL}', ${literal(changesPayload("", TENANT_WRITES_TOPIC, corpId))})`] : [];
  const script = [...setup, statement, ...notify].map((s) => `${s};\n`).join("");
  const args = [`${PG_BIN}/psql`, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-f", "-"];
  const r = Bun.spawnSync(args, { stdin: new TextEncoder().encode(script), stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`psql: ${r.stderr.toString().trim()} (in ${statement})`);
  if (notify.length) {
    if (onWrite) onWrite(corpId!);
    else Bun.sleepSync(50);
  }
  // The notification's own output line (empty) is the last: the statement's is before it.
  return notify.length ? r.stdout.toString().replace(/\n?\n$/, "\n") : r.stdout.toString();
}

const sqliteValue = (v: unknown): unknown => (typeof v === "boolean" ? (v ? 1 : 0) : v);

function rows(url: string, corpId: string | undefined, write: boolean, sqlite: string, params: Params): Record<string, unknown>[] {
  const statement = inline(sqlite, corpId, params);
  if (!/^\s*(select|with|values)\b/i.test(statement)) throw new Error(`t.sql on PostgreSQL reads rows of SELECT statements only: ${sqlite}`);
  const out = psql(url, corpId, write, `SELECT coalesce(json_agg(row_to_json(q)), '[]') FROM (${statement}) q`).trim().split("\n");
  const parsed = JSON.parse(out[out.length - 1]!) as Record<string, unknown>[];
  for (const row of parsed) for (const k of Object.keys(row)) row[k] = sqliteValue(row[k]);
  return parsed;
}

function changes(url: string, corpId: string | undefined, sqlite: string, params: Params, onWrite: OnWrite): { changes: number } {
  const out = psql(url, corpId, true, inline(sqlite, corpId, params), onWrite).trim().split("\n");
  const tag = /^(?:INSERT \d+|UPDATE|DELETE) (\d+)$/.exec(out[out.length - 1] ?? "");
  return { changes: tag ? Number(tag[1]) : 0 };
}

/** A synchronous, bun:sqlite-shaped view of the app's PostgreSQL database for one corporation (or the platform). */
function connection(url: string, corpId: string | undefined, write: boolean, onWrite?: OnWrite): Database {
  /** Inside `transaction(fn)`: the writes gathered, sent as one script (one psql, one transaction). */
  let batch: string[] | null = null;
  const statement = (sqlite: string) => ({
    get: (...p: Params) => rows(url, corpId, write, sqlite, p)[0] ?? null,
    all: (...p: Params) => rows(url, corpId, write, sqlite, p),
    values: (...p: Params) => rows(url, corpId, write, sqlite, p).map((r) => Object.values(r)),
    run: (...p: Params) => {
      if (!write) throw new Error("t.sql is read-only: t.sqlWrite writes");
      if (batch) {
        batch.push(inline(sqlite, corpId, p));
        return { changes: 1 };
      }
      return changes(url, corpId, sqlite, p, onWrite);
    },
  });
  const db = {
    query: statement,
    prepare: statement,
    // bun:sqlite's Database.run takes the bindings as one array.
    run: (sqlite: string, bindings: Params = []) => statement(sqlite).run(...bindings),
    exec: (sqlite: string) => {
      if (!write) throw new Error("t.sql is read-only: t.sqlWrite writes");
      psql(url, corpId, true, sqliteNumbers(translate(sqlite, { tenant: !!corpId }).sql), onWrite);
    },
    close: () => {},
    transaction:
      (fn: (...a: unknown[]) => unknown) =>
      (...a: unknown[]) => {
        // Nested: part of the outer transaction (one script), as bun:sqlite nests a savepoint.
        if (batch) return fn(...a);
        batch = [];
        try {
          const out = fn(...a);
          if (batch.length) psql(url, corpId, true, `BEGIN;\n${batch.join(";\n")};\nCOMMIT`, onWrite);
          return out;
        } finally {
          batch = null;
        }
      },
  };
  return db as unknown as Database;
}

/** `t.sql` and `t.sqlWrite` over the app's database URL. */
/** `onWrite`: the in-process app's own signal that a corporation's data changed (see psql). */
export function pgReaders(url: string, onWrite?: (corpId: string) => void) {
  // One object per corporation and mode, as SQLite's readers keep one Database per file: a
  // transaction opened on one is joined by writes through another handle of the same database.
  const open = new Map<string, Database>();
  const get = (corpId: string | undefined, write: boolean): Database => {
    const key = `${write ? "w" : "r"}:${corpId ?? ""}`;
    let db = open.get(key);
    if (!db) open.set(key, (db = connection(url, corpId, write, write ? onWrite : undefined)));
    return db;
  };
  return {
    sql: (corpId?: string): Database => get(corpId, false),
    sqlWrite: (corpId?: string): Database => get(corpId, true),
    closeAll() {},
  };
}
