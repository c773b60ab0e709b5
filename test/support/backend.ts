// The storage engine the suites run on: SQLite files (default), or with CORPADMIN_TEST_BACKEND=pg
// one throwaway PostgreSQL server per test process (test/support/postgres.ts) and a fresh database
// per app, handed to it as CORPADMIN_DATABASE_URL (in-process and binary alike). Each database is
// a copy of a template migrated once per process (CREATE DATABASE ... TEMPLATE: ≈ 10 ms instead
// of running every migration per app), dropped when the app closes.
import { describe, test } from "bun:test";
import { SQL } from "bun";
import type { TenantRegistry } from "../../src/db/registry";
import { LEAKPROOF_SQL } from "../../src/db/pg/migrate";
import { preparePostgres } from "../../src/core/pg/store";
import { TenantDbs } from "../../src/db/tenants";
import { startPostgres, APP_ROLE, type TestPostgres } from "./postgres";

export const TEST_BACKEND: "sqlite" | "pg" = process.env.CORPADMIN_TEST_BACKEND === "pg" ? "pg" : "sqlite";

/** Suites (or tests) that reach SQLite itself (database files, `t.sql`, PRAGMAs): skipped on PostgreSQL. */
export const sqliteOnly = TEST_BACKEND === "pg" ? describe.skip : describe;
export const testSqliteOnly = TEST_BACKEND === "pg" ? test.skip : test;

export interface TestDatabase {
  /** What the app's environment gains (nothing on SQLite). */
  readonly env: Record<string, string>;
  /** Drops the database (after the app closed). */
  drop(): Promise<void>;
}

const TEMPLATE = "corpadmin_template";

let server: Promise<{ pg: TestPostgres; admin: SQL }> | null = null;
let made = 0;

async function startServer(): Promise<{ pg: TestPostgres; admin: SQL }> {
  const pg = await startPostgres();
  const admin = new SQL({ url: pg.url, max: 1 });
  const { url, appUrl } = await pg.createDatabase(TEMPLATE);
  // Migrated and seeded once; a copy's built-in server follows its app's data directory at start.
  const start = await preparePostgres(appUrl, "/nonexistent");
  await start.sql.close();
  // As an installation's superuser would (corpadmin doctor, "search-index"): the person search
  // uses its trigram indexes under row-level security in every copy.
  const template = new SQL({ url, max: 1 });
  try {
    await template.unsafe(LEAKPROOF_SQL);
  } finally {
    await template.close();
  }
  return { pg, admin };
}

const NONE: TestDatabase = { env: {}, drop: async () => {} };

/** Databases by the data directory of their app: an app started again over the same directory finds its data. */
const byDir = new Map<string, Promise<TestDatabase>>();

/**
 * The database of the app over data directory `dir` (PostgreSQL backend): a fresh one for a new
 * directory, the same one for a directory met before and not yet dropped; nothing on SQLite.
 */
export function testDatabase(dir: string): Promise<TestDatabase> {
  if (TEST_BACKEND !== "pg") return Promise.resolve(NONE);
  let db = byDir.get(dir);
  if (!db) {
    db = createTestDatabase(dir);
    byDir.set(dir, db);
  }
  return db;
}

async function createTestDatabase(dir: string): Promise<TestDatabase> {
  server ??= startServer();
  const { pg, admin } = await server;
  const name = `app_${process.pid}_${++made}`;
  await admin.unsafe(`CREATE DATABASE ${name} OWNER ${APP_ROLE} TEMPLATE ${TEMPLATE}`);
  const url = `postgres://${APP_ROLE}@127.0.0.1:${pg.port}/${name}`;
  superusers.set(url, `postgres://postgres@127.0.0.1:${pg.port}/${name}`);
  return {
    env: {
      CORPADMIN_DATABASE_URL: url,
      // Backups read every corporation's rows: pg_dump connects as the superuser, which row-level security does not hold.
      CORPADMIN_BACKUP_DATABASE_URL: superusers.get(url)!,
      // The single-node jobs (metric scheduler, housekeeping, audit retention) start 5 s after
      // start-up instead of the lease's 10 s grace. Not less: the grace scales the heartbeat (a
      // fifth of it), and a lease proof that takes longer than the heartbeat stops the jobs. With
      // 1 s, a PostgreSQL stall of 200 ms on a loaded machine stopped the metric scheduler in the
      // middle of its tests (seen: "lease: lost, stopping ... proof ran out").
      CORPADMIN_LEASE_GRACE_MS: "5000",
    },
    async drop() {
      if (byDir.get(dir) === undefined) return;
      byDir.delete(dir);
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** The throwaway server of this process (PostgreSQL backend): tests that stop or restart it. */
export async function testPostgres(): Promise<TestPostgres> {
  if (TEST_BACKEND !== "pg") throw new Error("the throwaway PostgreSQL runs with CORPADMIN_TEST_BACKEND=pg only");
  server ??= startServer();
  return (await server).pg;
}

const superusers = new Map<string, string>();

/**
 * The superuser's URL of the test database an app reaches at `appUrl`: a test's check over every
 * corporation's rows at once (row-level security holds the app's role to one corporation).
 */
export function superuserUrl(appUrl: string): string {
  const url = superusers.get(appUrl);
  if (!url) throw new Error(`not a test database: ${appUrl}`);
  return url;
}

/** The app's corporation files, for a SQLite-only test that drives them (idle closing, migrations). */
export function sqliteTenants(ctx: { tenants: TenantRegistry }): TenantDbs {
  if (!(ctx.tenants instanceof TenantDbs)) throw new Error("this test drives SQLite's corporation files");
  return ctx.tenants;
}
