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
// Besides the tables, the `unaccent` extension and its immutable form `corpadmin_unaccent` (list
// searches, src/db/list.ts), and — when the `pg_trgm` extension exists or the role may create it —
// trigram GIN indexes on the searched columns (TRIGRAM_INDEXES): drizzle-kit's schema cannot hold
// an index whose operator class may be absent, so these are made here, after every migration, and
// left out when pg_trgm cannot be had (searches then scan, as before). `corpadmin doctor` says which.
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
      // Each asked for only when missing: a role without CREATE on the database (a DBA made the
      // extension and the schema) is refused even an IF NOT EXISTS that would change nothing.
      const [has] = await conn`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'unaccent') AS unaccent,
        EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'drizzle') AS drizzle`;
      if (!has.unaccent) await conn.unsafe("CREATE EXTENSION IF NOT EXISTS unaccent");
      await ensureFoldFunction(conn);
      if (!has.drizzle) await conn.unsafe("CREATE SCHEMA IF NOT EXISTS drizzle");
      await conn.unsafe("CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id serial PRIMARY KEY, hash text NOT NULL, created_at bigint)");
      const [last] = await conn`SELECT max(created_at)::text AS at FROM drizzle.__drizzle_migrations`;
      const lastAt = last?.at === null || last?.at === undefined ? null : Number(last.at);
      const pending = migrations.filter((m) => lastAt === null || m.folderMillis > lastAt);
      const from = migrations.length - pending.length;
      if (pending.length === 0) {
        await ensureFillFactors(conn);
        await ensureTrigramIndexes(conn);
        return { from, to: from, applied: [] };
      }
      await conn.unsafe("BEGIN");
      try {
        for (const m of pending) {
          for (const statement of m.sql) if (statement.trim()) await conn.unsafe(statement);
          await conn`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${m.hash}, ${m.folderMillis})`;
        }
        await forceRowSecurity(conn);
        await ensureFillFactors(conn);
        await conn.unsafe("COMMIT");
      } catch (err) {
        await conn.unsafe("ROLLBACK");
        throw err;
      }
      await ensureTrigramIndexes(conn);
      return { from, to: migrations.length, applied: pending.map((m) => m.tag) };
    } finally {
      await conn`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY.toString()}::bigint)`;
    }
  } finally {
    conn.release();
  }
}

/**
 * Tables whose rows are rewritten in place often, with room left on each page (fillfactor, %) so
 * that an update that changes no indexed column stays on its page (HOT) and writes no index entry:
 * a contract's upsert changes `json_original` and `updated_at` only, and a contract has 15
 * indexes (measured on full pages: 33 of 400 upsert updates HOT; docs/architecture.md, "The
 * external-app upsert side by side"). Existing pages keep their rows; a row moved by its next
 * update lands on a page with room.
 */
export const FILL_FACTORS: Record<string, number> = { contracts: 80 };

/**
 * Sets FILL_FACTORS where the table's storage parameter is not already so (no DDL otherwise), on
 * the tables the role owns (tables a DBA made and kept are left as they are: a setting, not a
 * reason to refuse the start).
 */
async function ensureFillFactors(conn: SQL): Promise<void> {
  for (const [table, percent] of Object.entries(FILL_FACTORS)) {
    const [row] = await conn`SELECT coalesce(${`fillfactor=${percent}`} = ANY (c.reloptions), false) AS set FROM pg_class c
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ${table} AND c.relkind = 'r' AND pg_has_role(c.relowner, 'MEMBER')`;
    if (row && !row.set) await conn.unsafe(`ALTER TABLE "${table}" SET (fillfactor = ${percent})`);
  }
}

/** FORCE on every table of the current schema with row-level security enabled and not yet forced. */
async function forceRowSecurity(conn: SQL): Promise<void> {
  const rows = await conn`SELECT c.relname AS name FROM pg_class c
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relrowsecurity AND NOT c.relforcerowsecurity`;
  for (const { name } of rows as { name: string }[]) await conn.unsafe(`ALTER TABLE "${name.replaceAll('"', '""')}" FORCE ROW LEVEL SECURITY`);
}

/**
 * The searched columns with a trigram index where pg_trgm is there: the person search's (?q on
 * persons, and on contracts through their persons, src/modules/person/service.ts). Each indexes
 * `corpadmin_unaccent(column)`, the expression the searches compare (src/db/list.ts wordMatch).
 */
export const TRIGRAM_INDEXES = [
  { name: "persons_name_trgm", table: "persons", column: "name" },
  { name: "persons_display_name_trgm", table: "persons", column: "display_name" },
  { name: "persons_doc_identity_trgm", table: "persons", column: "doc_identity" },
] as const;

/** The function the searches fold accents with: unaccent is only STABLE, an index needs IMMUTABLE. */
export const FOLD_FUNCTION = "corpadmin_unaccent";

/**
 * `corpadmin_unaccent(text)`: unaccent with its dictionary named (so the result cannot depend on
 * a search_path), declared IMMUTABLE so an index may hold it. In PL/pgSQL, not SQL: PostgreSQL
 * cannot inline a SQL function over a STABLE one (unaccent), so a SQL body was parsed, planned
 * and run through an executor of its own at every statement that called it (each person INSERT,
 * once per trigram index) and per row of a scan; PL/pgSQL keeps the compiled function and its
 * expression's plan for the session. Same results, so the indexes made over the SQL form stay
 * valid when it is replaced (no rebuild). Replaced only where the role owns it and no superuser
 * declared it LEAKPROOF (only a superuser may, and a replacement would drop it).
 */
async function ensureFoldFunction(conn: SQL): Promise<void> {
  const [has] = await conn`SELECT l.lanname AS language, p.proleakproof AS leakproof, pg_has_role(p.proowner, 'MEMBER') AS ours
    FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.proname = ${FOLD_FUNCTION} AND p.pronamespace = current_schema()::regnamespace`;
  if (has && (has.language === FOLD_LANGUAGE || has.leakproof || !has.ours)) return;
  const [ext] = await conn`SELECT extnamespace::regnamespace::text AS schema FROM pg_extension WHERE extname = 'unaccent'`;
  await conn.unsafe(foldFunctionSql(String(ext.schema)));
}

/** The language of corpadmin_unaccent (ensureFoldFunction). */
export const FOLD_LANGUAGE = "plpgsql";

/** corpadmin_unaccent's definition, over the unaccent extension in `schema`. */
export function foldFunctionSql(schema: string): string {
  const quoted = `"${schema.replaceAll('"', '""')}"`;
  return `CREATE OR REPLACE FUNCTION ${FOLD_FUNCTION}(text) RETURNS text LANGUAGE ${FOLD_LANGUAGE} IMMUTABLE PARALLEL SAFE STRICT
     AS $$ BEGIN RETURN ${quoted}.unaccent('${quoted.replaceAll("'", "''")}.unaccent'::regdictionary, $1); END $$`;
}

/**
 * What SQL a superuser runs so that the app's role searches through the trigram indexes. Every
 * tenant table forces row-level security, and PostgreSQL applies a query's own condition through
 * an index only when its functions are LEAKPROOF (else only after the policy's, row by row):
 * ILIKE's texticlike and the fold are not declared so, though neither can fail or say anything
 * about a row's value (an error depends on the pattern alone). Only a superuser may declare it.
 */
export const LEAKPROOF_SQL = `ALTER FUNCTION texticlike(text, text) LEAKPROOF; ALTER FUNCTION ${FOLD_FUNCTION}(text) LEAKPROOF;`;

/** What the trigram search has here: the extension, whether it may be had, the indexes made, and whether the role's searches may use them. */
export async function trigramState(conn: SQL): Promise<{ installed: boolean; available: boolean; indexes: string[]; leakproof: boolean }> {
  const [row] = await conn`SELECT
      EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') AS installed,
      EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') AS available,
      coalesce((SELECT bool_and(proleakproof) FROM pg_proc WHERE oid IN ('texticlike(text,text)'::regprocedure, ${FOLD_FUNCTION + "(text)"}::regprocedure)), false) AS leakproof`;
  const names = TRIGRAM_INDEXES.map((i) => i.name);
  const found = await conn`SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND indexname IN ${conn(names)}`;
  return { installed: !!row.installed, available: !!row.available, indexes: (found as { name: string }[]).map((r) => r.name).sort(), leakproof: !!row.leakproof };
}

/**
 * Creates pg_trgm when the role may (a trusted extension: CREATE on the database suffices), then
 * the indexes that are missing. Without pg_trgm nothing is made and nothing fails: the searches'
 * SQL is the same either way, an index only changes its plan.
 */
async function ensureTrigramIndexes(conn: SQL): Promise<void> {
  let state = await trigramState(conn);
  if (state.indexes.length === TRIGRAM_INDEXES.length) return;
  if (!state.installed && state.available) {
    try {
      await conn.unsafe("CREATE EXTENSION IF NOT EXISTS pg_trgm");
    } catch {
      // Not permitted to this role (no CREATE on the database): the searches scan; doctor says so.
    }
    state = await trigramState(conn);
  }
  if (!state.installed) return;
  const [ext] = await conn`SELECT extnamespace::regnamespace::text AS schema FROM pg_extension WHERE extname = 'pg_trgm'`;
  const ops = `"${String(ext.schema).replaceAll('"', '""')}".gin_trgm_ops`;
  for (const i of TRIGRAM_INDEXES) {
    if (state.indexes.includes(i.name)) continue;
    await conn.unsafe(`CREATE INDEX IF NOT EXISTS "${i.name}" ON "${i.table}" USING gin (${FOLD_FUNCTION}("${i.column}") ${ops})`);
  }
}
