// source-only: applies the embedded PostgreSQL migrations (src/db/pg/migrate.ts) to a throwaway server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { migrationsOf, type Migration } from "../../../src/db/migrations";
import { FILL_FACTORS, MIGRATION_LOCK_KEY, migratePg, TRIGRAM_INDEXES } from "../../../src/db/pg/migrate";
import * as pgPlatform from "../../../src/db/pg/platform";
import * as pgTenant from "../../../src/db/pg/tenant";
import { throwawayPostgres } from "../../support/postgres";

const names = (schema: Record<string, unknown>) =>
  Object.values(schema)
    .filter((v): v is PgTable => is(v, PgTable))
    .map((t) => getTableConfig(t).name)
    .sort();

const pg = await throwawayPostgres();

/** What the Drizzle PostgreSQL schema declares, in the catalog's terms. */
function declared(schema: Record<string, unknown>) {
  return Object.values(schema)
    .filter((v): v is PgTable => is(v, PgTable))
    .map((t) => {
      const c = getTableConfig(t);
      return {
        table: c.name,
        columns: c.columns.map((x) => `${x.name} ${x.getSQLType()}${x.notNull ? " not null" : ""}`),
        indexes: [...c.primaryKeys.map((k) => k.getName()), ...c.uniqueConstraints.map((u) => u.getName()!), ...c.indexes.map((i) => i.config.name!)].sort(),
        foreignKeys: c.foreignKeys.map((f) => f.getName()).sort(),
      };
    });
}

describe("db/pg: migrations on PostgreSQL", () => {
  test("the app role applies every migration: each table of both schemas, tenant tables forced to their policy", async () => {
    const db = await pg.createDatabase("applied");
    const sql = new SQL(db.appUrl);
    try {
      const all = migrationsOf("pg");
      expect(await migratePg(sql)).toEqual({ from: 0, to: all.length, applied: all.map((m) => m.tag) });
      const tables = await sql`SELECT relname, relrowsecurity, relforcerowsecurity, (SELECT count(*)::int FROM pg_policy p WHERE p.polrelid = c.oid) AS policies
        FROM pg_class c WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' ORDER BY relname`;
      expect(tables.map((t: { relname: string }) => t.relname)).toEqual([...names(pgPlatform), ...names(pgTenant)].sort());
      const tenant = new Set(names(pgTenant));
      for (const t of tables) {
        const secured = tenant.has(t.relname);
        expect({ table: t.relname, rls: t.relrowsecurity, force: t.relforcerowsecurity, policies: t.policies }).toEqual({
          table: t.relname,
          rls: secured,
          force: secured,
          policies: secured ? 1 : 0,
        });
      }
      // The migrations are in step with the schema the code is typed on (migrations/pg was
      // regenerated after src/db/pg/*.ts): same columns, types, nullability, indexes, keys.
      const cols = await sql`SELECT table_name AS t, column_name AS c, data_type AS ty, is_nullable AS n FROM information_schema.columns
        WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`;
      // The trigram indexes are made beside the migrations, where pg_trgm is (search-index.test.ts).
      const trigram: string[] = TRIGRAM_INDEXES.map((i) => i.name);
      const idx = (await sql`SELECT tablename AS t, indexname AS i FROM pg_indexes WHERE schemaname = 'public'`).filter((r: { i: string }) => !trigram.includes(r.i));
      const fks = await sql`SELECT conrelid::regclass::text AS t, conname AS f FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace`;
      const inDb = declared({ ...pgPlatform, ...pgTenant }).map(({ table }) => ({
        table,
        columns: cols.filter((r: { t: string }) => r.t === table).map((r: { c: string; ty: string; n: string }) => `${r.c} ${r.ty}${r.n === "NO" ? " not null" : ""}`),
        indexes: idx.filter((r: { t: string }) => r.t === table).map((r: { i: string }) => r.i).sort(),
        foreignKeys: fks.filter((r: { t: string }) => r.t === table).map((r: { f: string }) => r.f).sort(),
      }));
      expect(inDb).toEqual(declared({ ...pgPlatform, ...pgTenant }));
      const contracts = inDb.find((x) => x.table === "contracts")!;
      expect(contracts.columns[0]).toBe("corp_id text not null");
      expect(contracts.indexes).toContain("contracts_pkey");
      expect(contracts.foreignKeys.length).toBeGreaterThan(0);
      // Applied once: a second run finds nothing to do.
      expect(await migratePg(sql)).toEqual({ from: all.length, to: all.length, applied: [] });
      const [{ n }] = await sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
      expect(n).toBe(all.length);
      // Tables updated in place keep room on their pages (HOT updates); a database migrated
      // before the setting gets it at the next start, with nothing pending.
      const fillFactors = async () =>
        Object.fromEntries((await sql`SELECT relname, reloptions FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relname IN ${sql(Object.keys(FILL_FACTORS))}`).map((r: { relname: string; reloptions: string[] | null }) => [r.relname, r.reloptions]));
      const expected = Object.fromEntries(Object.entries(FILL_FACTORS).map(([t, f]) => [t, [`fillfactor=${f}`]]));
      expect(await fillFactors()).toEqual(expected);
      await sql`ALTER TABLE contracts RESET (fillfactor)`;
      expect(await migratePg(sql)).toEqual({ from: all.length, to: all.length, applied: [] });
      expect(await fillFactors()).toEqual(expected);
    } finally {
      await sql.close();
    }
  }, 60_000);

  test("a failing migration rolls back whole, leaves the lock free and the set retryable", async () => {
    const db = await pg.createDatabase("failing");
    const sql = new SQL(db.appUrl);
    try {
      const broken: Migration = { tag: "9999_broken", sql: ["CREATE TABLE half_done (x int)", "SELECT no_such_function()"], bps: true, folderMillis: Date.now() + 1e9, hash: "x" };
      await expect(migratePg(sql, [...migrationsOf("pg"), broken])).rejects.toThrow(/no_such_function/);
      const [{ n }] = await sql`SELECT count(*)::int AS n FROM pg_class WHERE relname IN ('half_done', 'contracts')`;
      expect(n).toBe(0);
      expect((await migratePg(sql)).applied).toEqual(migrationsOf("pg").map((m) => m.tag));
    } finally {
      await sql.close();
    }
  }, 60_000);

  test("a database that does not sort text bytewise (an ICU collation) is refused before anything is created", async () => {
    const admin = new SQL(pg.url);
    try {
      await admin.unsafe("CREATE DATABASE linguistic TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C' OWNER corpadmin");
    } finally {
      await admin.close();
    }
    const app = new SQL(pg.url.replace(/\/corpadmin(\?|$)/, "/linguistic$1").replace("postgres@", "corpadmin@"));
    try {
      await expect(migratePg(app)).rejects.toThrow(/collation ICU en-US; corpadmin needs C/);
      expect((await app`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`)[0].n).toBe(0);
    } finally {
      await app.close();
    }
  });

  test("two nodes starting at once: one migrates, the other waits on the advisory lock and finds nothing to do", async () => {
    const db = await pg.createDatabase("racing");
    const holder = new SQL(db.appUrl);
    const nodeA = new SQL(db.appUrl);
    const nodeB = new SQL(db.appUrl);
    try {
      // Hold the lock so both nodes are surely inside migratePg, waiting, before either goes on.
      const held = await holder.reserve();
      await held`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY.toString()}::bigint)`;
      const runs = [migratePg(nodeA), migratePg(nodeB)];
      const waiting = async () => {
        const [{ n }] = await holder`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`;
        return n as number;
      };
      for (let i = 0; i < 100 && (await waiting()) < 2; i++) await Bun.sleep(50);
      expect(await waiting()).toBe(2);
      await held`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY.toString()}::bigint)`;
      held.release();
      const [a, b] = await Promise.all(runs);
      const all = migrationsOf("pg").map((m) => m.tag);
      expect([a.applied, b.applied].sort((x, y) => y.length - x.length)).toEqual([all, []]);
      const [{ n }] = await holder`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
      expect(n).toBe(all.length);
    } finally {
      await Promise.all([holder.close(), nodeA.close(), nodeB.close()]);
    }
  }, 60_000);
});
