// Cluster mode (issue 19 item 5): an embedded site's data (platform.db and every corporation's
// file) copied into the shared PostgreSQL database, and verified. `corpadmin copy-to-postgres`
// (src/cli/copy-to-postgres.ts) runs it; deploy/cluster/README.md section 4 is the procedure.
// - The SQLite files are opened read-only; each is read inside one read transaction, so what is
//   copied and what its checksum is computed from is one snapshot of that file. The service must be
//   stopped all the same (the caller refuses a file another process holds open): a write after the
//   copy would be lost, and the files' snapshots are taken one after the other.
// - The target, migrated first by the caller (migratePg, under its advisory lock), is filled: one
//   transaction for the platform tables, then one per corporation, each taking the writer lock its
//   door takes. A corporation's transaction commits only when its rows, read back inside it, match
//   the file's (count and checksum per table): a corporation is copied whole or not at all.
// - Tables are the PostgreSQL schema's (src/db/pg/platform.ts, tenant.ts), in foreign-key order
//   (menus' parent rows before their children); FTS5 and SQLite's own tables are not copied.
//   Values are converted by the target column's type: 0/1 → boolean, numbers → bigint / double
//   precision, blobs → bytea, any value → jsonb as its JSON (metric_values.value; a number or text
//   for a bytea column: its JSON's bytes).
// - The checksum of a table is order-independent: the sum (mod 2^64) of the first 8 bytes of the
//   SHA-256 of each row's canonical text, computed in the app from the SQLite rows and from the
//   PostgreSQL rows.
import { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { finite } from "../../lib/finite";
import { CORP_SETTING } from "./handle";
import * as platformSchema from "./platform";
import * as tenantSchema from "./tenant";
import { SEARCH_NOTES_TABLE } from "../search-pending";

/** Rows per INSERT (bounded below PostgreSQL's 65,535 parameters by the column count too). */
const BATCH_ROWS = 500;
const MAX_PARAMS = 30_000;
/** Rows per page when a table is read back (keyset pages by primary key). */
const PAGE_ROWS = 2000;
/** The writer lock key text of the platform door (src/core/pg/door.ts). */
const PLATFORM_LOCK = "corpadmin:platform";

interface TableSpec {
  name: string;
  /** A tenant table: rows get the corporation's corp_id. */
  tenant: boolean;
  primaryKey: string[];
  /** Foreign keys onto the same table (menus.parent_id): parents are inserted first. */
  selfRefs: { columns: string[]; foreignColumns: string[] }[];
  /** The identity column (`seq`), set past the copied maximum. */
  identity: string | null;
}

/** A column of the target: its name and PostgreSQL type (information_schema's data_type). */
interface Column {
  name: string;
  type: string;
}

export interface TableCheck {
  /** "platform" or the corporation's auth_name. */
  database: string;
  table: string;
  sourceRows: number;
  targetRows: number;
  sourceSum: string;
  targetSum: string;
  ok: boolean;
}

export interface CopySource {
  /** The platform file. */
  platform: string;
  corporations: { id: string; name: string; path: string }[];
}

export class CopyError extends Error {}

function tablesOf(schema: Record<string, unknown>, tenant: boolean): TableSpec[] {
  const specs = new Map<string, TableSpec & { deps: string[] }>();
  for (const t of (Object.values(schema) as unknown[]).filter((v): v is PgTable => is(v, PgTable))) {
    const c = getTableConfig(t);
    const own = (n: string) => !(tenant && n === "corp_id");
    const refs = c.foreignKeys.map((fk) => fk.reference());
    specs.set(c.name, {
      name: c.name,
      tenant,
      primaryKey: c.primaryKeys[0]?.columns.map((x) => x.name) ?? c.columns.filter((x) => x.primary).map((x) => x.name),
      selfRefs: refs
        .filter((r) => getTableConfig(r.foreignTable).name === c.name)
        .map((r) => ({ columns: r.columns.map((x) => x.name).filter(own), foreignColumns: r.foreignColumns.map((x) => x.name).filter(own) })),
      identity: c.columns.find((x) => (x as { generatedIdentity?: unknown }).generatedIdentity)?.name ?? null,
      deps: refs.map((r) => getTableConfig(r.foreignTable).name),
    });
  }
  for (const spec of specs.values()) if (!spec.primaryKey.length) throw new Error(`table ${spec.name} has no primary key: the copy pages its rows by it`);
  // Depth-first, by name: a table after every table it references (self-references aside).
  const out: TableSpec[] = [];
  const placed = new Set<string>();
  const visit = (name: string) => {
    const spec = specs.get(name);
    if (!spec || placed.has(name)) return;
    placed.add(name);
    for (const d of spec.deps) if (d !== name) visit(d);
    const { deps: _deps, ...table } = spec;
    out.push(table);
  };
  for (const name of [...specs.keys()].sort()) visit(name);
  return out;
}

/** The platform tables, then the tenant tables, each in foreign-key order. */
export const PLATFORM_TABLES = tablesOf(platformSchema, false);
export const TENANT_TABLES = tablesOf(tenantSchema, true);

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** SQLite's tables that are not data of their own: its internals, drizzle's journal, FTS5 indexes. */
function sqliteDataTables(db: Database): string[] {
  const rows = db.query("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all() as { name: string; sql: string | null }[];
  const virtual = rows.filter((r) => /^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(r.sql ?? "")).map((r) => r.name);
  return rows
    .map((r) => r.name)
    .filter((n) => !n.startsWith("sqlite_") && !n.startsWith("__drizzle") && n !== SEARCH_NOTES_TABLE && !virtual.includes(n) && !virtual.some((v) => n.startsWith(`${v}_`)));
}

/** A value as the target column takes it: text for a typed parameter ($n::type), or null. */
function toParam(v: unknown, col: Column, where: string): string | null {
  if (v === null || v === undefined) return null;
  switch (col.type) {
    case "boolean":
      if (v === 0 || v === 1 || v === 0n || v === 1n || typeof v === "boolean") return v === 1 || v === 1n || v === true ? "true" : "false";
      break;
    case "bigint":
    case "integer":
    case "smallint":
      if ((typeof v === "number" && Number.isInteger(v)) || typeof v === "bigint") return String(v);
      break;
    case "double precision":
    case "real":
    case "numeric":
      if (typeof v === "number" || typeof v === "bigint") return String(v);
      break;
    case "bytea":
      // A number or text of SQLite's untyped BLOB column (metric_values.value while the PostgreSQL
      // schema maps it to bytea): the bytes of its JSON.
      return `\\x${(v instanceof Uint8Array ? Buffer.from(v) : Buffer.from(canonicalJson(typeof v === "bigint" ? Number(v) : v))).toString("hex")}`;
    case "jsonb":
    case "json":
      return canonicalJson(typeof v === "bigint" ? Number(v) : v instanceof Uint8Array ? Buffer.from(v).toString("base64") : v);
    case "text":
    case "character varying":
      if (typeof v === "string") return v;
      if (typeof v === "number" || typeof v === "bigint") return String(v);
      break;
    default:
      throw new CopyError(`${where}: the target column's type ${col.type} has no conversion`);
  }
  throw new CopyError(`${where}: ${typeof v} ${JSON.stringify(String(v)).slice(0, 40)} does not fit the target column (${col.type})`);
}

/**
 * JSON with object keys sorted (jsonb keeps its own key order). JSON has no Infinity: a ±Infinity
 * an older version stored (a metric value of `1e400`) arrives as ±the largest double, what the API
 * answers for it (lib/finite.ts), not as null. (SQLite holds no NaN: it stores NULL.)
 */
function canonicalJson(v: unknown): string {
  if (typeof v === "number" && !Number.isNaN(v)) return JSON.stringify(finite(v));
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v && typeof v === "object")
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(v);
}

/** The canonical text of a value read back from PostgreSQL (selected as in `selectList`). */
function fromTarget(v: unknown, col: Column): string | null {
  if (v === null || v === undefined) return null;
  switch (col.type) {
    case "boolean":
      return v === true || v === "t" || v === "true" ? "true" : "false";
    case "double precision":
    case "real":
      return String(Number(v));
    case "jsonb":
    case "json":
      return canonicalJson(JSON.parse(String(v)));
    default:
      return String(v); // text, integers and bytea (\x...) selected as text
  }
}

/** What PostgreSQL hands back for the checksum: exact text except for floats (compared as numbers). */
const selectList = (cols: Column[]) =>
  cols.map((c) => (c.type === "boolean" || c.type === "double precision" || c.type === "real" ? quote(c.name) : `${quote(c.name)}::text`)).join(", ");

/** The order-independent checksum of a table: the sum of every row's hash, mod 2^64. */
class Checksum {
  rows = 0;
  private sum = 0n;
  add(canonical: (string | null)[]): void {
    const digest = new Bun.CryptoHasher("sha256").update(JSON.stringify(canonical)).digest();
    this.sum = (this.sum + digest.readBigUInt64BE(0)) & 0xffffffffffffffffn;
    this.rows++;
  }
  get hex(): string {
    return this.sum.toString(16).padStart(16, "0");
  }
}

/** The target's columns of every corpadmin table (the current schema), in column order. */
async function targetColumns(conn: SQL): Promise<Map<string, Column[]>> {
  const rows = (await conn`SELECT table_name, column_name, data_type FROM information_schema.columns
    WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`) as { table_name: string; column_name: string; data_type: string }[];
  const out = new Map<string, Column[]>();
  for (const r of rows) {
    if (!out.has(r.table_name)) out.set(r.table_name, []);
    out.get(r.table_name)!.push({ name: r.column_name, type: r.data_type });
  }
  return out;
}

/** One table's copy plan: the columns both sides share (the target's order), corp_id aside. */
function planTable(db: Database, table: TableSpec, target: Map<string, Column[]>, where: string): Column[] {
  const cols = target.get(table.name);
  if (!cols) throw new CopyError(`the target has no table ${table.name}: is it migrated by this binary's release?`);
  const source = (db.query(`PRAGMA table_info(${quote(table.name)})`).all() as { name: string }[]).map((c) => c.name);
  if (!source.length) throw new CopyError(`${where} has no table ${table.name}`);
  const own = cols.filter((c) => !(table.tenant && c.name === "corp_id"));
  const missing = own.filter((c) => !source.includes(c.name)).map((c) => c.name);
  const extra = source.filter((n) => !own.some((c) => c.name === n));
  if (missing.length || extra.length)
    throw new CopyError(`${where}, table ${table.name}: the columns differ from the target's (only in the target: ${missing.join(", ") || "none"}; only in the file: ${extra.join(", ") || "none"})`);
  return own;
}

/** The rows of a SQLite table, parents before children where the table references itself. */
function* sourceRows(db: Database, table: TableSpec, cols: Column[]): Generator<unknown[]> {
  const stmt = db.query(`SELECT ${cols.map((c) => quote(c.name)).join(", ")} FROM ${quote(table.name)}`);
  if (!table.selfRefs.length) {
    for (const row of stmt.iterate() as Iterable<Record<string, unknown>>) yield cols.map((c) => row[c.name]);
    return;
  }
  // Small tables (menus): held in memory, emitted in rounds, each after the rows it references.
  const key = (row: Record<string, unknown>, names: string[]) => JSON.stringify(names.map((n) => row[n]));
  let pending = stmt.all() as Record<string, unknown>[];
  const present = new Set<string>();
  for (const ref of table.selfRefs) for (const r of pending) present.add(`${ref.foreignColumns}:${key(r, ref.foreignColumns)}`);
  const emitted = new Set<string>();
  while (pending.length) {
    const ready = pending.filter((r) =>
      table.selfRefs.every((ref) => {
        if (ref.columns.some((n) => r[n] === null)) return true;
        const k = `${ref.foreignColumns}:${key(r, ref.columns)}`;
        return emitted.has(k) || !present.has(k); // a dangling reference is the database's to refuse
      }),
    );
    if (!ready.length) throw new CopyError(`table ${table.name}: its rows reference each other in a cycle`);
    for (const r of ready) {
      for (const ref of table.selfRefs) emitted.add(`${ref.foreignColumns}:${key(r, ref.foreignColumns)}`);
      yield cols.map((c) => r[c.name]);
    }
    const done = new Set(ready);
    pending = pending.filter((r) => !done.has(r));
  }
}

/**
 * Copies one database's tables (the platform's or a corporation's) on `tx`, then reads them back
 * in the same transaction; returns the per-table checks.
 */
async function copyTables(
  tx: SQL,
  db: Database,
  tables: TableSpec[],
  target: Map<string, Column[]>,
  database: string,
  where: string,
): Promise<TableCheck[]> {
  const checks: TableCheck[] = [];
  for (const table of tables) {
    const cols = planTable(db, table, target, where);
    const names = cols.map((c) => quote(c.name));
    const perBatch = Math.max(1, Math.min(BATCH_ROWS, Math.floor(MAX_PARAMS / cols.length)));
    const sum = new Checksum();
    let batch: (string | null)[] = [];
    let batchRows = 0;
    const flush = async () => {
      if (!batchRows) return;
      const tuples: string[] = [];
      // Every parameter is text, cast by the server: Bun.sql would encode a value for a parameter it
      // learns is jsonb as JSON itself (the JSON text "0" would arrive as the string "0").
      for (let r = 0; r < batchRows; r++) tuples.push(`(${cols.map((c, i) => `$${r * cols.length + i + 1}::text::${c.type}`).join(", ")})`);
      await tx.unsafe(`INSERT INTO ${quote(table.name)} (${names.join(", ")}) VALUES ${tuples.join(", ")}`, batch);
      batch = [];
      batchRows = 0;
    };
    for (const row of sourceRows(db, table, cols)) {
      const params = row.map((v, i) => toParam(v, cols[i], `${where}, ${table.name}.${cols[i].name}`));
      sum.add(params.map((p, i) => (p === null ? null : canonicalOf(p, cols[i]))));
      batch.push(...params);
      if (++batchRows === perBatch) await flush();
    }
    await flush();
    if (table.identity && sum.rows) {
      // One sequence for every corporation's rows: only ever moved forward, past the largest copied.
      await tx.unsafe(
        `WITH s AS (SELECT pg_get_serial_sequence($1, $2) AS name)
         SELECT setval(s.name, greatest((SELECT max(${quote(table.identity)}) FROM ${quote(table.name)}),
           coalesce((SELECT q.last_value FROM pg_sequences q WHERE format('%I.%I', q.schemaname, q.sequencename) = s.name), 0))) FROM s`,
        [table.name, table.identity],
      );
    }
    const back = await targetSum(tx, table, cols);
    checks.push(check(database, table.name, sum, back));
  }
  return checks;
}

/** A source parameter's canonical text: the same as fromTarget makes of the stored value. */
function canonicalOf(param: string, col: Column): string {
  return col.type === "double precision" || col.type === "real" ? String(Number(param)) : param;
}

async function targetSum(tx: SQL, table: TableSpec, cols: Column[]): Promise<Checksum> {
  const sum = new Checksum();
  // Qualified: a bare name in ORDER BY would be the select list's text of the column.
  const pk = table.primaryKey.map((n) => `src.${quote(n)}`).join(", ");
  // Keyset pages: a large table is never held in memory whole.
  let after: unknown[] | null = null;
  const pkCols = table.primaryKey.filter((n) => !(table.tenant && n === "corp_id"));
  const list = selectList(cols);
  const keyList = pkCols.map((n) => `${quote(n)}::text AS ${quote(`__k_${n}`)}`).join(", ");
  for (;;) {
    const cond = after ? `WHERE (${pkCols.map((n) => `src.${quote(n)}`).join(", ")}) > (${pkCols.map((n, i) => `$${i + 1}::text::${cols.find((c) => c.name === n)!.type}`).join(", ")})` : "";
    const rows = (await tx.unsafe(`SELECT ${list}, ${keyList} FROM ${quote(table.name)} AS src ${cond} ORDER BY ${pk} LIMIT ${PAGE_ROWS}`, after ?? [])) as Record<string, unknown>[];
    for (const r of rows) sum.add(cols.map((c) => fromTarget(r[c.name], c)));
    if (rows.length < PAGE_ROWS) return sum;
    const last = rows[rows.length - 1];
    after = pkCols.map((n) => last[`__k_${n}`]);
  }
}

function check(database: string, table: string, source: Checksum, target: Checksum): TableCheck {
  return {
    database,
    table,
    sourceRows: source.rows,
    targetRows: target.rows,
    sourceSum: source.hex,
    targetSum: target.hex,
    ok: source.rows === target.rows && source.hex === target.hex,
  };
}

/** The source checksums of a database's tables (verify-only: nothing is written). */
function sourceSums(db: Database, tables: TableSpec[], target: Map<string, Column[]>, where: string): Map<string, Checksum> {
  const out = new Map<string, Checksum>();
  for (const table of tables) {
    const cols = planTable(db, table, target, where);
    const sum = new Checksum();
    for (const row of sourceRows(db, table, cols)) {
      sum.add(
        row.map((v, i) => {
          const p = toParam(v, cols[i], `${where}, ${table.name}.${cols[i].name}`);
          return p === null ? null : canonicalOf(p, cols[i]);
        }),
      );
    }
    out.set(table.name, sum);
  }
  return out;
}

/** A SQLite file opened read-only, inside a read transaction (one snapshot) until `close`. */
function openSnapshot(path: string): Database {
  const db = new Database(path, { readonly: true });
  db.exec("PRAGMA busy_timeout = 10000");
  db.exec("BEGIN");
  // The snapshot starts at the first read.
  db.query("SELECT count(*) FROM sqlite_master").get();
  return db;
}

function closeSnapshot(db: Database): void {
  try {
    db.exec("COMMIT");
  } finally {
    db.close();
  }
}

/** Refuses SQLite tables holding data that the target has no table for (a data loss otherwise). */
function checkCoverage(db: Database, tables: TableSpec[], where: string): void {
  const known = new Set(tables.map((t) => t.name));
  const unknown = sqliteDataTables(db).filter((n) => !known.has(n));
  if (unknown.length) throw new CopyError(`${where} has tables the PostgreSQL schema lacks: ${unknown.join(", ")}`);
}

export interface TargetState {
  corporations: number;
  users: number;
  /** Rows per platform table (what --replace deletes, with every tenant table's rows). */
  rows: Map<string, number>;
}

/** The corporations and users a database holds (tables every schema version has, unlike some of PLATFORM_TABLES). */
export async function siteCounts(conn: SQL): Promise<{ corporations: number; users: number }> {
  const [row] = await conn`SELECT (SELECT count(*)::int FROM corporations) AS corporations, (SELECT count(*)::int FROM users) AS users`;
  return { corporations: Number(row.corporations), users: Number(row.users) };
}

export async function targetState(conn: SQL): Promise<TargetState> {
  const rows = new Map<string, number>();
  for (const t of PLATFORM_TABLES) rows.set(t.name, Number((await conn.unsafe(`SELECT count(*)::int AS n FROM ${quote(t.name)}`))[0].n));
  return { corporations: rows.get("corporations") ?? 0, users: rows.get("users") ?? 0, rows };
}

export interface CopyOptions {
  /** Progress lines (a corporation done, ...). */
  log: (line: string) => void;
  /** The target may hold corporations and users (deleted); else they make the copy fail. */
  replace: boolean;
}

export interface CopyResult {
  checks: TableCheck[];
  /** The corporations whose transaction rolled back (an error or a difference), with why. */
  failed: { database: string; error: string }[];
}

/**
 * The copy into a migrated database (migratePg): empties every corpadmin table in the platform's
 * transaction (refused there, without `replace`, when it holds a corporation or a user), copies and
 * checks the platform, then each corporation in its own transaction.
 */
export async function copySite(client: SQL, source: CopySource, { log, replace }: CopyOptions): Promise<CopyResult> {
  const target = await targetColumns(client);
  const checks: TableCheck[] = [];
  const failed: CopyResult["failed"] = [];
  const platform = openSnapshot(source.platform);
  try {
    checkCoverage(platform, PLATFORM_TABLES, "platform.db");
    const all = [...PLATFORM_TABLES, ...TENANT_TABLES].map((t) => quote(t.name)).join(", ");
    const platformChecks = await client.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtextextended(${PLATFORM_LOCK}, 0))`;
      if (!replace) {
        // Checked again under the platform's writer lock: an app node may have started meanwhile.
        const [held] = await tx`SELECT EXISTS (SELECT 1 FROM corporations) OR EXISTS (SELECT 1 FROM users) AS any`;
        if (held.any) throw new CopyError("the PostgreSQL database holds corporations or users (an app node started on it?); stop it, then copy with --replace");
      }
      // TRUNCATE is not subject to row-level security: it empties every corporation's rows too.
      await tx.unsafe(`TRUNCATE ${all} RESTART IDENTITY`);
      const out = await copyTables(tx, platform, PLATFORM_TABLES, target, "platform", "platform.db");
      if (out.some((c) => !c.ok)) throw new DifferenceError(out);
      return out;
    });
    checks.push(...platformChecks);
    log(`platform: ${platformChecks.reduce((n, c) => n + c.targetRows, 0)} rows copied and verified`);
  } catch (err) {
    // Rolled back: no corporation is copied without its platform rows.
    if (err instanceof DifferenceError) return { checks: err.checks, failed: [{ database: "platform", error: "the rows read back differ; rolled back, no corporation copied" }] };
    if (err instanceof CopyError) throw err;
    return { checks, failed: [{ database: "platform", error: `${(err as Error).message}; rolled back, no corporation copied` }] };
  } finally {
    closeSnapshot(platform);
  }
  for (const corp of source.corporations) {
    const db = openSnapshot(corp.path);
    try {
      checkCoverage(db, TENANT_TABLES, corp.path);
      const out = await client.begin(async (tx) => {
        await tx`SELECT set_config(${CORP_SETTING}, ${corp.id}, true), pg_advisory_xact_lock(hashtextextended(${corp.id}, 0))`;
        const out = await copyTables(tx, db, TENANT_TABLES, target, corp.name, corp.path);
        if (out.some((c) => !c.ok)) throw new DifferenceError(out);
        return out;
      });
      checks.push(...out);
      log(`corporation ${corp.name} (${corp.id}): ${out.reduce((n, c) => n + c.targetRows, 0)} rows copied and verified`);
    } catch (err) {
      if (err instanceof DifferenceError) {
        checks.push(...err.checks);
        failed.push({ database: corp.name, error: "the rows read back differ; rolled back" });
      } else failed.push({ database: corp.name, error: `${(err as Error).message}; rolled back` });
      log(`corporation ${corp.name} (${corp.id}): FAILED, rolled back`);
    } finally {
      closeSnapshot(db);
    }
  }
  return { checks, failed };
}

class DifferenceError extends Error {
  constructor(readonly checks: TableCheck[]) {
    super("the rows read back differ");
  }
}

/** Compares the site with what the target holds now (nothing is written). */
export async function verifySite(client: SQL, source: CopySource): Promise<CopyResult> {
  const target = await targetColumns(client);
  const checks: TableCheck[] = [];
  const failed: CopyResult["failed"] = [];
  const compare = async (db: Database, tables: TableSpec[], database: string, corpId: string | null, where: string) => {
    const sums = sourceSums(db, tables, target, where);
    await client.begin("isolation level repeatable read read only", async (tx) => {
      if (corpId) await tx`SELECT set_config(${CORP_SETTING}, ${corpId}, true)`;
      for (const table of tables) {
        const cols = planTable(db, table, target, where);
        checks.push(check(database, table.name, sums.get(table.name)!, await targetSum(tx, table, cols)));
      }
    });
  };
  const platform = openSnapshot(source.platform);
  try {
    await compare(platform, PLATFORM_TABLES, "platform", null, "platform.db");
  } finally {
    closeSnapshot(platform);
  }
  for (const corp of source.corporations) {
    const db = openSnapshot(corp.path);
    try {
      await compare(db, TENANT_TABLES, corp.name, corp.id, corp.path);
    } catch (err) {
      failed.push({ database: corp.name, error: (err as Error).message });
    } finally {
      closeSnapshot(db);
    }
  }
  return { checks, failed };
}

/** The checks as a table: database, table, rows on each side, checksums, and a mark on differences. */
export function formatChecks(checks: TableCheck[]): string {
  const head = ["database", "table", "rows (sqlite)", "rows (postgres)", "checksum (sqlite)", "checksum (postgres)", ""];
  const body = checks.map((c) => [c.database, c.table, String(c.sourceRows), String(c.targetRows), c.sourceSum, c.targetSum, c.ok ? "ok" : "DIFFERS"]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((v, i) => (i === 2 || i === 3 ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join("  ").trimEnd();
  return [line(head), ...body.map(line)].join("\n") + "\n";
}
