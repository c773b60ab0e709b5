// Cluster mode (issue 19): the `Handle` of src/db/handle.ts over one PostgreSQL transaction, so the
// modules' SQLite-dialect queries run unchanged: Drizzle's SQLite builder in its async form
// (drizzle-orm/sqlite-proxy: Drizzle builds the SQL and maps the rows) whose callback translates
// the statement (./translate.ts) and runs it on the transaction's connection, and `$client.query`
// for hand-written statements. Values come back as SQLite would give them: int8 and numeric as
// numbers, booleans as 1/0, text as text, a jsonb value (metric_values.value) as the number or
// text it holds. Errors of unique, foreign-key and not-null constraints carry SQLite's code, so
// the app's error mapping (src/app.ts) answers 409 on either engine.
import type { SQL } from "bun";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { SqliteRemoteDatabase, SQLiteRemoteSession, type AsyncRemoteCallback } from "drizzle-orm/sqlite-proxy";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { invalid, unavailable, type Problem } from "../../lib/problem";
import type { Handle, RawClient, RawStatement, TogetherRead } from "../handle";
import { translate, type Translated } from "./translate";

/** The setting the tenant tables' policies and corp_id defaults read (scripts/pg-schema.ts). */
export const CORP_SETTING = "corpadmin.corp_id";

const INT8 = 20;
const INT2 = 21;
const NUMERIC = 1700;
const BOOL = 16;
const JSON_OID = 114;

/** One dialect for every handle (it holds no state of a transaction). */
const dialect = new SQLiteAsyncDialect();

/** SQLite's codes for PostgreSQL's constraint errors (src/app.ts maps them to 409). */
const SQLITE_CODES: Record<string, string> = {
  "23505": "SQLITE_CONSTRAINT_UNIQUE",
  "23503": "SQLITE_CONSTRAINT_FOREIGNKEY",
  "23502": "SQLITE_CONSTRAINT_NOTNULL",
};

/** A PostgreSQL error seen through the handle: the server's message, SQLite's code where one fits. */
export class PgStatementError extends Error {
  override name = "PgStatementError";
  constructor(
    readonly code: string,
    /** PostgreSQL's SQLSTATE (e.g. "23505"). */
    readonly errno: string | undefined,
    message: string,
    readonly sql: string,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Bun.sql's codes (and the socket's) for a connection that could not be opened or went away: a
 * failover, a restart, a cut network. Bun.sql drops such a connection from its pool once it has
 * read its close (measured after pg_terminate_backend and a restart).
 */
const CONNECTION_LOST = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
  "ERR_POSTGRES_TLS_UPGRADE_FAILED",
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
]);

/**
 * SQLSTATEs that say "not now" rather than "not this": 57P01-57P03 (the server is shutting down,
 * crashed, or still starting: a failover or a restart), 25006 (a write on a server in recovery:
 * HAProxy sent the connection to a replica promoted a moment later, or to a leader being demoted,
 * whose sessions HAProxy then cuts), 53300 (no connection slot left), 40001/40P01 (serialization
 * failure, deadlock: the transaction was rolled back and may simply be run again). A session that
 * met 25006 stays in the pool: PostgreSQL decides a transaction's read-only mode at its start from
 * the server's recovery state, so the same session writes again once its server is promoted.
 */
const TRANSIENT_SQLSTATES = new Set(["57P01", "57P02", "57P03", "25006", "53300", "40001", "40P01"]);

/**
 * Of those, the errors of a connection that was open and is now gone (a session the server ended,
 * a socket cut): a pooled connection the server ended while idle is handed out once more when its
 * close was not read yet, so the door runs a read, or a write whose callback had not started, again
 * on another connection (src/core/pg/door.ts). A refused connection or a server still starting is not
 * retried at once: it answers 503 until the server is back.
 */
const CONNECTION_ENDED = new Set(["ERR_POSTGRES_CONNECTION_CLOSED", "ECONNRESET", "EPIPE", "57P01", "57P02", "08000", "08003", "08006"]);

/** The 503 of unavailableOf, saying whether the transaction may simply be run again on another connection. */
export interface UnavailableProblem extends Problem {
  readonly connectionEnded: boolean;
}

/**
 * The 503 (Retry-After: 1) for an error of the database being away or changing hands, whichever
 * statement, BEGIN or COMMIT met it; the same problem when it is one already; null for any other
 * error. A write cut this way may or may not have committed (a COMMIT whose answer was lost): it
 * is not acknowledged, as the SQLite door's write whose fsync failed (src/db/door.ts).
 */
export function unavailableOf(err: unknown): UnavailableProblem | null {
  const e = err as { errno?: unknown; code?: unknown; message?: unknown; connectionEnded?: unknown } | null;
  if (!e || typeof e !== "object") return null;
  if (typeof e.connectionEnded === "boolean") return e as UnavailableProblem;
  const errno = typeof e.errno === "string" ? e.errno : undefined;
  const code = typeof e.code === "string" ? e.code : undefined;
  const lost = (code !== undefined && CONNECTION_LOST.has(code)) || (errno !== undefined && (errno.startsWith("08") || TRANSIENT_SQLSTATES.has(errno)));
  if (!lost) return null;
  // The server's or the client's own words stay out of the answer (they may name hosts or ports).
  const why =
    errno === "25006"
      ? "The database is read-only for now (a failover is under way)"
      : errno === "57P03"
        ? "The database is starting up"
        : errno === "53300"
          ? "The database has no connection slot left"
          : errno === "40001" || errno === "40P01"
            ? "The transaction met a concurrent one and was rolled back"
            : "The connection to the database failed or was lost";
  const problem = unavailable(`${why}; a write is not acknowledged: check and try again`, 1);
  // Not enumerable: never serialized with the problem.
  Object.defineProperty(problem, "connectionEnded", { value: CONNECTION_ENDED.has(errno ?? code ?? "") });
  return problem as UnavailableProblem;
}

/** A JS number no integer column can take (SQLite compares or stores it as a REAL instead). */
const notAnInteger = (v: unknown) => typeof v === "number" && !Number.isSafeInteger(v);

function failure(err: unknown, sql: string, args: unknown[] = []): unknown {
  const e = err as { errno?: string; code?: string; message?: string };
  const away = unavailableOf(err);
  if (away) return away;
  if (typeof e?.errno !== "string") return err;
  // A client's number (a filter such as ?scans=1e20, a field) beyond what the integer column it
  // meets can hold, or with a fraction: SQLite finds no row equal to it; PostgreSQL refuses the
  // value, and the transaction is then aborted, so the request is refused as out of range.
  if ((e.errno === "22P02" || e.errno === "22003") && args.some(notAnInteger)) return invalid("query", "a number is out of range for its field");
  // PostgreSQL's text cannot hold U+0000 (SQLite's can): a client's value carrying one is refused.
  // In a jsonb value (metric_values.value) the server meets it as the JSON escape \u0000 (22P05).
  if ((e.errno === "22021" && /0x00/.test(String(e.message))) || (e.errno === "22P05" && /\\u0000/.test(String((e as { detail?: unknown }).detail))))
    return invalid("body", "text must not contain the NUL character (U+0000)");
  return new PgStatementError(SQLITE_CODES[e.errno] ?? e.code ?? "ERR_POSTGRES_SERVER_ERROR", e.errno, String(e.message), sql, { cause: err });
}

/** A value as bun:sqlite binds it, for a parameter whose type PostgreSQL infers from its context. */
function param(v: unknown): unknown {
  // Bun.sql types a JS number as an integer (a boolean or bigint column would refuse it); text
  // is sent untyped, and PostgreSQL reads '1' as a boolean, a bigint or a double alike.
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  if (typeof v === "boolean") return v ? "1" : "0";
  if (v === undefined) return null;
  return v;
}

function jsonParam(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  return JSON.stringify(typeof v === "boolean" ? (v ? 1 : 0) : v);
}

function bind(t: Translated, args: unknown[]): unknown[] {
  let values: unknown[];
  if (t.names) {
    const obj = (args[0] ?? {}) as Record<string, unknown>;
    // bun:sqlite takes the key with its prefix ($id), or without it in strict mode.
    values = t.names.map((n) => (n in obj ? obj[n] : obj[n.slice(1)]));
  } else values = args;
  const out = new Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = t.json.includes(i) ? jsonParam(values[i]) : param(values[i]);
  return out;
}

interface Column {
  type: number;
  name: string;
}

/** The value as SQLite would return it, for the columns whose PostgreSQL type differs. */
function convert(type: number, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case INT8:
    case INT2:
    case NUMERIC:
      return typeof v === "number" ? v : Number(v);
    case BOOL:
      return v ? 1 : 0;
    case JSON_OID: // SQLite's JSON functions return text
      return typeof v === "string" ? v : JSON.stringify(v);
    default:
      return v;
  }
}

// jsonb needs nothing: Bun.sql parses it, so a stored number is a number and a stored text a text.
const converted = (type: number) => type === INT8 || type === INT2 || type === NUMERIC || type === BOOL || type === JSON_OID;

/** The indexes of the result's columns that need converting (none for most statements). */
function toConvert(columns: Column[] | null | undefined): number[] {
  const out: number[] = [];
  if (columns) for (let i = 0; i < columns.length; i++) if (converted(columns[i].type)) out.push(i);
  return out;
}

type Result = unknown[] & { columns?: Column[] | null; affectedRows?: number };

async function execute(conn: SQL, t: Translated, args: unknown[], arrays: boolean): Promise<Result> {
  try {
    const q = conn.unsafe(t.sql, bind(t, args));
    return (await (arrays ? q.values() : q)) as Result;
  } catch (err) {
    throw failure(err, t.sql, t.names ? Object.values((args[0] ?? {}) as object) : args);
  }
}

function arrayRows(r: Result): unknown[][] {
  const rows = r as unknown as unknown[][];
  const idx = toConvert(r.columns);
  if (idx.length) for (const row of rows) for (const i of idx) row[i] = convert(r.columns![i].type, row[i]);
  return rows;
}

function objectRows(r: Result): Record<string, unknown>[] {
  const rows = r as unknown as Record<string, unknown>[];
  const idx = toConvert(r.columns);
  if (idx.length)
    for (const row of rows)
      for (const i of idx) {
        const c = r.columns![i];
        row[c.name] = convert(c.type, row[c.name]);
      }
  return rows;
}

function rawClient(conn: SQL, tenant: boolean): RawClient {
  return {
    query<R, P extends unknown[]>(sqlite: string): RawStatement<R, P> {
      const t = translate(sqlite, { tenant });
      return {
        async get(...params: P) {
          const rows = objectRows(await execute(conn, t, params, false));
          return (rows[0] as R | undefined) ?? null;
        },
        async all(...params: P) {
          return objectRows(await execute(conn, t, params, false)) as R[];
        },
        async values(...params: P) {
          return arrayRows(await execute(conn, t, params, true));
        },
        async run(...params: P) {
          return { changes: (await execute(conn, t, params, false)).affectedRows ?? 0 };
        },
      };
    },
    async writeTogether(writes: TogetherRead[]) {
      const { sql, args } = togetherStatement(writes, tenant, true);
      try {
        await conn.unsafe(sql, args);
      } catch (err) {
        throw failure(err, sql, args);
      }
    },
    async together(reads: TogetherRead[]) {
      const { sql, args } = togetherStatement(reads, tenant, false);
      let row: unknown[];
      try {
        // Not through execute: its conversions would turn the json columns back into text.
        row = ((await conn.unsafe(sql, args).values()) as unknown[][])[0];
      } catch (err) {
        throw failure(err, sql, args);
      }
      return reads.map((r, i) => {
        const v = typeof row[i] === "string" ? (JSON.parse(row[i] as string) as unknown) : row[i];
        if (r.all) return ((v ?? []) as Record<string, unknown>[]).map(sqliteRow);
        return v === null || v === undefined ? null : sqliteRow(v as Record<string, unknown>);
      });
    },
  };
}

const togetherTexts = new Map<string, string>();

/**
 * readTogether's statement: `SELECT (SELECT to_json(x) FROM (<read 1>) x LIMIT 1), (SELECT
 * coalesce(json_agg(x), '[]') FROM (<read 2>) x), ...`, each read translated, its placeholders
 * moved past the previous reads' (cached by the reads' texts), and the values bound in order;
 * writeTogether's (`writes`): `WITH w1 AS (<write 1>), ... <write n>`.
 */
function togetherStatement(reads: TogetherRead[], tenant: boolean, writes: boolean): { sql: string; args: unknown[] } {
  const args: unknown[] = [];
  const parts: string[] = [];
  for (const r of reads) {
    const t = translate(r.sql, { tenant });
    if (t.names) throw new Error("readTogether takes numbered parameters (?N) only");
    parts.push(t.sql, String(args.length), r.all ? "a" : "g");
    args.push(...bind(t, r.params));
  }
  const key = `${writes ? "w" : "r"}${parts.join("\0")}`;
  let sql = togetherTexts.get(key);
  if (!sql) {
    const columns: string[] = [];
    for (let i = 0; i < parts.length; i += 3) {
      const at = Number(parts[i + 1]);
      const text = at ? parts[i].replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + at}`) : parts[i];
      columns.push(writes ? text : parts[i + 2] === "a" ? `(SELECT coalesce(json_agg(x), '[]') FROM (${text}) x)` : `(SELECT to_json(x) FROM (${text}) x LIMIT 1)`);
    }
    sql = writes ? `WITH ${columns.slice(0, -1).map((c, i) => `w${i + 1} AS (${c})`).join(", ")} ${columns[columns.length - 1]}` : `SELECT ${columns.join(", ")}`;
    if (togetherTexts.size >= 1000) togetherTexts.clear();
    togetherTexts.set(key, sql);
  }
  return { sql, args };
}

/**
 * A row read back from JSON as the handle gives it: booleans as 1/0. Numbers (int8, numeric,
 * double) and text are JSON's already; a json/jsonb column would come back parsed, not as text:
 * none of the tables read together has one (metric_values.value is the only jsonb).
 */
function sqliteRow(row: Record<string, unknown>): Record<string, unknown> {
  for (const k in row) if (typeof row[k] === "boolean") row[k] = row[k] ? 1 : 0;
  return row;
}

type QueryRunner = (queryString: string, params: unknown[], query: () => Promise<unknown>) => Promise<unknown>;

/**
 * sqlite-proxy's session, whose statements throw the handle's own error: Drizzle's async path
 * wraps every failure in a DrizzleQueryError, while bun-sqlite's synchronous one throws the
 * driver's error itself, and callers (src/app.ts) read `code` on the error they catch.
 */
class Session extends SQLiteRemoteSession<Record<string, never>, never> {
  /** The callback of a statement with no fields to map (`db.all(sql)`): rows as bun-sqlite gives them. */
  objects!: AsyncRemoteCallback;
}
const prepareQuery = SQLiteRemoteSession.prototype.prepareQuery as (...args: unknown[]) => unknown;
(Session.prototype as unknown as { prepareQuery: (...args: unknown[]) => unknown }).prepareQuery = function (this: Session, ...args: unknown[]) {
  const q = prepareQuery.apply(this, args) as { queryWithCache: QueryRunner; client: AsyncRemoteCallback };
  // args: query, fields, executeMethod, isResponseInArrayMode, customResultMapper.
  if (!args[1] && !args[4]) q.client = this.objects;
  const inner = q.queryWithCache;
  q.queryWithCache = async function (this: unknown, queryString, params, query) {
    try {
      return await inner.call(this, queryString, params, query);
    } catch (e) {
      throw e instanceof DrizzleQueryError && e.cause ? e.cause : e;
    }
  };
  return q;
};

/**
 * A door's handle is already inside the door's transaction: sqlite-proxy's transaction() would
 * send BEGIN/COMMIT on that connection and end the door's transaction early. Refused, as the
 * SQLite door's callbacks must not call it either (docs/architecture.md).
 */
class Database extends SqliteRemoteDatabase<Record<string, never>> {
  override transaction(): never {
    throw new Error("a door's callback runs in the door's transaction: transaction() is not available");
  }
}

/**
 * The handle over `conn`, a transaction's (or savepoint's) connection of Bun.sql: `tenant` for a
 * corporation's tables (conflict targets gain corp_id). Made per transaction (≈ 0.2 µs: a
 * session and a database object over the shared dialect).
 */
export function pgHandle(conn: SQL, tenant: boolean): Handle {
  // sqlite-proxy's contract: rows as arrays of values in the order of the SELECT list (Drizzle
  // maps them to fields), `get` one such array or undefined, `run` whatever the caller reads.
  const callback: AsyncRemoteCallback = async (sqlite, params, method) => {
    const t = translate(sqlite, { tenant });
    if (method === "run") {
      const r = await execute(conn, t, params, false);
      return { rows: [], changes: r.affectedRows ?? 0 } as { rows: unknown[] };
    }
    const rows = arrayRows(await execute(conn, t, params, true));
    return { rows: method === "get" ? (rows[0] as unknown as unknown[]) : rows };
  };
  const session = new Session(callback, dialect, undefined, undefined, {});
  // bun-sqlite's `db.all(sql)` gives objects; its `db.get(sql)` and `db.values(sql)` give arrays.
  session.objects = async (sqlite, params, method) => {
    if (method !== "all") return callback(sqlite, params, method);
    return { rows: objectRows(await execute(conn, translate(sqlite, { tenant }), params, false)) };
  };
  const db = new Database("async", dialect, session, undefined) as unknown as Handle;
  (db as { $client: RawClient }).$client = rawClient(conn, tenant);
  return db;
}
