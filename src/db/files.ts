// The database files themselves, apart from the store's doors (issue 30): what the offline tools
// need of SQLite — backups and restores (modules/ops/backup.ts), `migrate --dry-run` and
// `corpadmin sql` (src/cli), the doctor's file checks (modules/system/doctor.ts). They work on
// files no door serves (a backup copy, the data directory of a stopped service) or look at a
// file beside the running service, so each opens a connection of its own and closes it before
// returning; bun:sqlite stays in src/db.
import { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { statSync } from "node:fs";
import type { Handle } from "./handle";
import { migrationStatus, type Migration, type MigrationStatus } from "./migrations";
import { handleOf } from "./sqlite";

/** `read`: the file is opened SQLITE_OPEN_READONLY; `write`: an existing file, read-write (never created). */
export type FileAccess = "read" | "write";

/** `strict`: a missing parameter is an error (this code's own statements), not a NULL (an operator's, as sqlite3 binds it). */
function open(path: string, access: FileAccess, strict = true): Database {
  const db = access === "read" ? new Database(path, { readonly: true, strict }) : new Database(path, { readwrite: true, create: false, strict });
  // Beside a running service a file may be locked for a moment (a checkpoint): wait, do not fail.
  db.exec("PRAGMA busy_timeout = 10000");
  return db;
}

/** Runs `fn` on a connection of its own to the file, closed once `fn` is done. */
function withConnection<T>(path: string, access: FileAccess, fn: (db: Database) => T): T {
  const db = open(path, access);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/**
 * Runs `fn` on a handle of the file (the one the owners' functions take: a restored platform's
 * servers and corporations are read and moved by their modules), closed once `fn` has settled.
 */
export async function withDatabaseFile<T>(path: string, access: FileAccess, fn: (db: Handle) => Promise<T> | T): Promise<T> {
  const client = open(path, access);
  try {
    return await fn(handleOf(drizzle({ client })));
  } finally {
    client.close();
  }
}

/** The file's migration state against `migrations` (`migrate --dry-run`); the file must exist. */
export function fileSchemaStatus(path: string, migrations: Migration[]): MigrationStatus {
  return withConnection(path, "read", (db) => migrationStatus(db, migrations));
}

/**
 * How many migrations the file's migrator table records (0 without one): a backup copy's schema
 * version, counted rather than compared with this binary's list, so a newer release's shows.
 */
export function appliedMigrationCount(path: string): number {
  return withConnection(path, "read", (db) => {
    const exists = db.query("SELECT 1 FROM sqlite_master WHERE type='table' AND name='__drizzle_migrations'").get();
    if (!exists) return 0;
    return (db.query("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n;
  });
}

/**
 * SQLite's own check of the file, opened read-only: `full` PRAGMA integrity_check (a backup's
 * copies), `quick` PRAGMA quick_check (the doctor, over every live file). Its lines: ["ok"] when
 * the file is sound. Throws when the file cannot be opened at all.
 */
export function checkDatabaseFile(path: string, depth: "full" | "quick"): string[] {
  return withConnection(path, "read", (db) => {
    const pragma = depth === "full" ? "integrity_check" : "quick_check";
    return (db.query(`PRAGMA ${pragma}`).all() as Record<string, string>[]).map((r) => r[pragma]);
  });
}

/**
 * A consistent copy of an existing file into `target` (VACUUM INTO in a read transaction: under
 * WAL it sees one committed state and never blocks the service's writers).
 */
export function copyDatabaseFile(source: string, target: string): void {
  withConnection(source, "write", (db) => db.query("VACUUM INTO ?").run(target));
}

/** The size in bytes of the file's write-ahead log (0 when there is none). */
export function walBytes(path: string): number {
  return statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
}

/** One statement's answer: its column names (none for a statement that returns no rows) and its rows as arrays. */
export interface StatementRows {
  columns: string[];
  rows: unknown[][];
}

/**
 * A file opened for the operator's own statements (`corpadmin sql`): read-only twice, the file
 * opened SQLITE_OPEN_READONLY and the connection `query_only`, so no statement can change it,
 * also while the service runs on it.
 */
export class ReadOnlyDatabaseFile {
  private db: Database;

  constructor(readonly path: string) {
    this.db = open(path, "read", false);
    this.db.exec("PRAGMA query_only = ON");
  }

  /** Runs one statement (`?`/`?1` parameters); throws SQLite's error for a bad or refused one. */
  run(sql: string, ...params: (string | number | null)[]): StatementRows {
    const stmt = this.db.prepare(sql);
    try {
      const rows = stmt.values(...params) as unknown[][];
      return { columns: stmt.columnNames, rows };
    } finally {
      stmt.finalize();
    }
  }

  /** The SQLite library's version (the binary's own). */
  engineVersion(): string {
    return String(this.run("SELECT sqlite_version()").rows[0][0]);
  }

  close(): void {
    this.db.close();
  }
}
