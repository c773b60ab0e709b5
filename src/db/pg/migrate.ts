// Cluster mode (issue 19): applies the embedded PostgreSQL migrations (migrations/pg, one set for
// the platform and tenant tables) the way drizzle-kit's own migrator records them
// (drizzle.__drizzle_migrations: hash and the journal's `when`), so `drizzle-kit migrate` and the
// binary agree on what is applied. Two differences:
// - Under a session advisory lock: app nodes that start at once wait for each other, and the
//   second finds nothing left to do instead of running the DDL twice.
// - One transaction for everything pending, ending with the step drizzle-kit does not write:
//   FORCE ROW LEVEL SECURITY on every table that has row-level security enabled (drizzle-kit
//   enables it and creates the policies from src/db/pg/tenant.ts, but has no FORCE). Without FORCE
//   the tables' owner, which the app connects as, would bypass the policies.
// Besides the tables, the `unaccent` extension (list searches, src/db/list.ts).
// And a check first: the database compares text byte by byte (collation C), as SQLite does. The
// modules' queries, written once for both engines, order and compare ids and ISO instants as text
// (`at < ?`, `ORDER BY id`); a linguistic collation (en_US, ICU) would sort them otherwise.
import type { SQL } from "bun";
import { migrationsOf, type Migration } from "../migrations";

/** pg_advisory_lock key of migrations: any fixed bigint, the same on every node ("corpadmin"). */
export const MIGRATION_LOCK_KEY = 0x636f727061646d69n;

export interface PgMigrationResult {
  from: number;
  to: number;
  applied: string[];
}

/** Collations that compare text as SQLite's BINARY does (by code point: UTF-8 bytes). */
const BYTEWISE = new Set(["C", "POSIX", "C.UTF-8", "C.utf8"]);

export async function migratePg(sql: SQL, migrations: Migration[] = migrationsOf("pg")): Promise<PgMigrationResult> {
  const conn = await sql.reserve();
  try {
    const [db] = await conn`SELECT current_database() AS name, datcollate AS collate, datlocprovider AS provider, daticulocale AS icu
      FROM pg_database WHERE datname = current_database()`;
    if (db.provider !== "c" || !BYTEWISE.has(db.collate))
      throw new Error(
        `database ${db.name} sorts text by collation ${db.provider === "i" ? `ICU ${db.icu}` : db.collate}; corpadmin needs C (as SQLite compares): ` +
          `CREATE DATABASE ${db.name} TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER libc LC_COLLATE 'C' LC_CTYPE 'C'`,
      );
    await conn`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY.toString()}::bigint)`;
    try {
      // unaccent (contrib, a trusted extension: the database's owner may create it): list
      // searches fold accents and case on PostgreSQL as SQLite's trigram indexes do (src/db/list.ts).
      await conn.unsafe("CREATE EXTENSION IF NOT EXISTS unaccent");
      await conn.unsafe(
        `CREATE SCHEMA IF NOT EXISTS drizzle;
         CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id serial PRIMARY KEY, hash text NOT NULL, created_at bigint)`,
      );
      const [last] = await conn`SELECT max(created_at)::text AS at FROM drizzle.__drizzle_migrations`;
      const lastAt = last?.at === null || last?.at === undefined ? null : Number(last.at);
      const pending = migrations.filter((m) => lastAt === null || m.folderMillis > lastAt);
      const from = migrations.length - pending.length;
      if (pending.length === 0) return { from, to: from, applied: [] };
      await conn.unsafe("BEGIN");
      try {
        for (const m of pending) {
          for (const statement of m.sql) if (statement.trim()) await conn.unsafe(statement);
          await conn`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${m.hash}, ${m.folderMillis})`;
        }
        await forceRowSecurity(conn);
        await conn.unsafe("COMMIT");
      } catch (err) {
        await conn.unsafe("ROLLBACK");
        throw err;
      }
      return { from, to: migrations.length, applied: pending.map((m) => m.tag) };
    } finally {
      await conn`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY.toString()}::bigint)`;
    }
  } finally {
    conn.release();
  }
}

/** FORCE on every table of the current schema with row-level security enabled and not yet forced. */
async function forceRowSecurity(conn: SQL): Promise<void> {
  const rows = await conn`SELECT c.relname AS name FROM pg_class c
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relrowsecurity AND NOT c.relforcerowsecurity`;
  for (const { name } of rows as { name: string }[]) await conn.unsafe(`ALTER TABLE "${name.replaceAll('"', '""')}" FORCE ROW LEVEL SECURITY`);
}
