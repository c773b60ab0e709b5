// Opening SQLite files the one way this service does: WAL, synchronous=FULL (an on-premises box
// can lose power; a door's own transactions commit with NORMAL and fsync the WAL themselves, off
// the event loop: src/db/door.ts), foreign keys on, a generous busy timeout, and IMMEDIATE write
// transactions.
import { constants, Database, type SQLQueryBindings, type Statement } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { Handle } from "./handle";

// No relational schema is handed to drizzle: the code uses the query builder only, and building
// the relational metadata costs ≈ 0.3 ms per handle (per corporation database opened).
/** A connection of the SQLite engine itself (src/db only: doors, migrations, files). */
export type SqliteDb = BunSQLiteDatabase & { $client: Database };
/** What modules get from a door, whichever engine is behind it (src/db/handle.ts). */
export type PlatformDb = Handle;
export type TenantDb = Handle;
export type AnyDb = Handle;
/** The driver connection and statement types, for owners' cached raw statements (bun:sqlite stays inside src/db). */
export type SqliteClient = Database;
export type SqliteStatement<R, P extends SQLQueryBindings[]> = Statement<R, P>;

/**
 * The bun:sqlite connection under a handle, for engine work that needs SQLite itself (the
 * migrator's own table, tests of the SQLite door); throws on a handle of another engine.
 */
export function requireSqliteClient(db: AnyDb): Database {
  const client = sqliteClientOf(db);
  if (!client) throw new Error("not a SQLite connection");
  return client;
}

/**
 * Drizzle compiles every query it runs with `client.prepare(sql)`, uncached, so a query built per
 * request pays SQLite's compile each time. Statements are reused by their SQL text instead (the
 * parameters are bound separately, so the set of texts is small); bun:sqlite is synchronous, so a
 * statement is never in use twice at once.
 */
const statementCaches = new WeakMap<Database, Map<string, ReturnType<Database["prepare"]>>>();

function cacheStatements(sqlite: Database, max: number): void {
  const compile = sqlite.prepare.bind(sqlite);
  const cache = new Map<string, ReturnType<Database["prepare"]>>();
  statementCaches.set(sqlite, cache);
  (sqlite as { prepare: unknown }).prepare = (sql: string, ...rest: unknown[]) => {
    if (rest.length) return (compile as (...a: unknown[]) => unknown)(sql, ...rest);
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = compile(sql);
      cache.set(sql, stmt);
      if (cache.size > max) cache.delete(cache.keys().next().value!);
    }
    return stmt;
  };
}

/**
 * A writer's `query()` statements, kept by their SQL text like the above. bun:sqlite keeps 20 per
 * connection (Database.MAX_QUERY_CACHE_SIZE, least recently used out): fewer than a writer runs
 * in turn once webhooks are dispatched beside the contract upsert (its own ≈ 18 texts, the
 * outbox, the deliveries), so its statements were compiled again and again (the person insert
 * ≈ 30 µs each time; 2–4% of the upsert's CPU). Read connections keep bun's 20: their texts
 * vary with list filters, and there the bound is worth more than the compile.
 */
const queryCaches = new WeakMap<Database, Map<string, ReturnType<Database["query"]>>>();

function cacheQueries(sqlite: Database, max: number): void {
  const cache = new Map<string, ReturnType<Database["query"]>>();
  queryCaches.set(sqlite, cache);
  (sqlite as { query: unknown }).query = (sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) {
      // Compiled as bun's query() compiles (a long-lived statement), outside the prepare cache.
      stmt = (sqlite.prepare as (sql: string, params: undefined, flags: number) => ReturnType<Database["query"]>)(sql, undefined, constants.SQLITE_PREPARE_PERSISTENT);
      cache.set(sql, stmt);
      if (cache.size > max) cache.delete(cache.keys().next().value!);
    }
    return stmt;
  };
}

/**
 * Drops a connection's cached statements (each is finalized when collected; one still held by its
 * user keeps working) and gives back its spare page cache: after migrations, whose hundreds of DDL
 * statements are never run again on it.
 */
export function forgetStatements(sqlite: Database): void {
  statementCaches.get(sqlite)?.clear();
  queryCaches.get(sqlite)?.clear();
  sqlite.exec("PRAGMA shrink_memory");
}

/**
 * A connection with this service's pragmas. `create: false` opens only a file that exists (the QR
 * access writer: a deleted corporation's database must stay deleted). `readonly`: the read
 * connection of a door (src/db/door.ts); `query_only` makes any write on it an error.
 */
export function openSqlite(
  path: string,
  { create = true, readonly = false, statements = 2000 }: { create?: boolean; readonly?: boolean; statements?: number } = {},
): Database {
  const sqlite = create ? new Database(path, { create: true, strict: true }) : new Database(path, { readwrite: true, create: false, strict: true });
  cacheStatements(sqlite, statements);
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA synchronous = FULL");
  sqlite.exec("PRAGMA foreign_keys = ON");
  sqlite.exec("PRAGMA busy_timeout = 10000");
  sqlite.exec("PRAGMA journal_size_limit = 67108864");
  if (readonly) {
    sqlite.exec("PRAGMA query_only = ON");
    readConnections.add(sqlite);
  } else {
    // A writer's savepoint sub-journal (group commit: one savepoint per write, each saving the
    // pages it changes that the group dirtied before) in memory rather than in a temp file past
    // 64 kB: a contract upsert made ≈ 44 pwrite calls to it (85% of its file writes), ≈ 100 µs
    // of CPU. Freed when the savepoint is released; the reads' sorts stay on temp files.
    sqlite.exec("PRAGMA temp_store = MEMORY");
    cacheQueries(sqlite, Math.min(statements, 128));
  }
  return sqlite;
}

const readConnections = new WeakSet<Database>();

/** A statement that answers without reading the file: is the connection usable at all (health). */
export function ping(db: AnyDb): Promise<unknown> {
  // Not async: on SQLite the statement answers at once, and a read whose callback returns a value
  // (not a promise) takes the door's synchronous path (src/db/door.ts read).
  return db.$client.query("SELECT 1").get();
}

/**
 * The bun:sqlite connection under a module's handle, for what only SQLite has (its change stamp,
 * prepared statements and caches keyed by the connection); null on another engine's handle.
 */
export function sqliteClientOf(db: AnyDb): Database | null {
  const client: unknown = db.$client;
  return client instanceof Database ? client : null;
}

/**
 * A SQLite connection as the handle modules take: the same object (bun:sqlite answers at once,
 * and `await` takes the value), for start-up work, tools and tests holding a connection.
 */
export function handleOf(db: SqliteDb): Handle {
  return db as unknown as Handle;
}

/** True for a door's read connection: it never writes, so nothing it reads can be rolled back. */
export function isReadConnection(client: Database): boolean {
  return readConnections.has(client);
}

export function openPlatformDb(path: string): SqliteDb {
  return drizzle({ client: openSqlite(path) }) as SqliteDb;
}

/** Statements cached per corporation connection: the hot paths use a few dozen; hundreds of open corporations share the memory. */
export const TENANT_STATEMENTS = 200;

export function openTenantDb(path: string): SqliteDb {
  return drizzle({ client: openSqlite(path, { statements: TENANT_STATEMENTS }) }) as SqliteDb;
}
