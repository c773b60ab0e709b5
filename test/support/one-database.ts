// Several apps over one PostgreSQL database, as cluster mode's app nodes are (issue 19): each app
// its own data directory, all of them `makeApp({ env: db.env })`, on either test backend. With
// CORPADMIN_TEST_BACKEND=pg the database is one of the backend's (test/support/backend.ts); on
// SQLite a throwaway server is started for the file (test/support/postgres.ts). The apps hold the
// same keys as cluster nodes must: makeApp gives each the process's token and data keys.
import { afterAll } from "bun:test";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { superuserUrl, TEST_BACKEND, testDatabase } from "./backend";
import { makeApp, startAndLogin, type Admin, type MakeAppOptions, type TestApp } from "./helpers";
import { startPostgres } from "./postgres";

export interface OneDatabase {
  /** The environment every node gets: the database's URL. */
  readonly env: Record<string, string>;
  /** A connection to the database as the app's role (platform tables have no row-level security). */
  readonly sql: SQL;
  /** The superuser's URL of the same database (to end the nodes' connections, say). */
  readonly superuser: string;
  close(): Promise<void>;
}

let made = 0;

export async function oneDatabase(): Promise<OneDatabase> {
  if (TEST_BACKEND === "pg") {
    // The backend keeps a database per data directory: this one names the shared database.
    const dir = mkdtempSync(join(tmpdir(), "corpadmin-one-db-"));
    const db = await testDatabase(dir);
    const sql = new SQL({ url: db.env.CORPADMIN_DATABASE_URL, max: 2 });
    return {
      env: db.env,
      sql,
      superuser: superuserUrl(db.env.CORPADMIN_DATABASE_URL),
      async close() {
        await sql.close();
        await db.drop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const pg = await startPostgres();
  const { url, appUrl } = await pg.createDatabase(`one_${process.pid}_${++made}`);
  const sql = new SQL({ url: appUrl, max: 2 });
  return {
    env: { CORPADMIN_DATABASE_URL: appUrl },
    sql,
    superuser: url,
    async close() {
      await sql.close();
      await pg.stop();
    },
  };
}

type NodeOptions = Omit<MakeAppOptions, "dir">;

/**
 * The opening of the two-node suites, at a test file's top: `const { a, b, admin } = await
 * twoNodes();` — app nodes A and B over one database (each its own data directory and options),
 * the built-in admin logged in on A; the nodes, then the database, closed after the file's tests.
 */
export async function twoNodes(opts: { a?: NodeOptions; b?: NodeOptions } = {}): Promise<{ db: OneDatabase; a: TestApp; b: TestApp; admin: Admin }> {
  const db = await oneDatabase();
  let a: TestApp | undefined;
  let b: TestApp | undefined;
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await db.close();
  });
  const node = (o: NodeOptions = {}) => makeApp({ ...o, env: { ...o.env, ...db.env } });
  a = await node(opts.a);
  b = await node(opts.b);
  return { db, a, b, admin: await startAndLogin(a) };
}
