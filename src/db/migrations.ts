// Applies the migrations embedded in the binary (see scripts/embed-migrations.ts) the way
// drizzle's own migrator does, so `drizzle-kit migrate` and the binary agree on what is applied.
import type { Database } from "bun:sqlite";
import { sha256Hex } from "../lib/ids";
import { embeddedMigrations } from "./migrations.generated";
import { forgetStatements, type SqliteDb } from "./sqlite";

/** `pg`: cluster mode's one PostgreSQL set (platform and tenant tables), applied by src/db/pg/migrate.ts. */
export type MigrationSetName = "platform" | "tenant" | "pg";

export interface Migration {
  tag: string;
  sql: string[];
  bps: boolean;
  folderMillis: number;
  hash: string;
}

interface Journal {
  entries: { idx: number; when: number; tag: string; breakpoints: boolean }[];
}

function build(journal: Journal, files: Record<string, string>): Migration[] {
  return journal.entries.map((e) => {
    const text = files[e.tag];
    if (text === undefined) throw new Error(`migration ${e.tag} is in the journal but not embedded`);
    return {
      tag: e.tag,
      sql: text.split("--> statement-breakpoint"),
      bps: e.breakpoints,
      folderMillis: e.when,
      hash: sha256Hex(text),
    };
  });
}

const cache = new Map<MigrationSetName, Migration[]>();
/** The migrations of a set; tests may pass an extra list to simulate a newer (or broken) release. */
export function migrationsOf(set: MigrationSetName): Migration[] {
  let list = cache.get(set);
  if (!list) {
    const m = embeddedMigrations[set];
    list = build(m.journal as Journal, m.files);
    cache.set(set, list);
  }
  return list;
}

export interface MigrationStatus {
  /** Number of migrations applied (the schema version). */
  version: number;
  latest: number;
  pending: string[];
}

function lastApplied(sqlite: Database): number | null {
  const exists = sqlite.query("SELECT 1 FROM sqlite_master WHERE type='table' AND name='__drizzle_migrations'").get();
  if (!exists) return null;
  const row = sqlite.query("SELECT created_at AS at FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1").get() as
    | { at: number }
    | null;
  return row ? Number(row.at) : null;
}

export function migrationStatus(sqlite: Database, migrations: Migration[]): MigrationStatus {
  const last = lastApplied(sqlite);
  const pending = migrations.filter((m) => last === null || m.folderMillis > last).map((m) => m.tag);
  return { version: migrations.length - pending.length, latest: migrations.length, pending };
}

/**
 * Applies what is pending in one transaction; a failure rolls back everything and rethrows.
 * Foreign keys are off while migrating (drizzle-kit rebuilds tables to alter them, and a PRAGMA
 * inside a transaction is ignored), then checked before the database is used again.
 */
export function applyMigrations(db: SqliteDb, migrations: Migration[]): { from: number; to: number; applied: string[] } {
  const sqlite = db.$client;
  const before = migrationStatus(sqlite, migrations);
  if (before.pending.length === 0) return { from: before.version, to: before.version, applied: [] };
  sqlite.exec("PRAGMA foreign_keys = OFF");
  try {
    (db as any).dialect.migrate(migrations, (db as any).session, { migrationsFolder: "" });
    const broken = sqlite.query("PRAGMA foreign_key_check").all();
    if (broken.length) throw new Error(`foreign key check failed after migration: ${JSON.stringify(broken.slice(0, 3))}`);
  } finally {
    sqlite.exec("PRAGMA foreign_keys = ON");
    // The DDL is never run again on this connection: its statements and pages need not stay.
    forgetStatements(sqlite);
  }
  return { from: before.version, to: migrations.length, applied: before.pending };
}
