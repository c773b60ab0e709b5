// Several apps over one PostgreSQL database, as cluster mode's app nodes are (issue 19): each app
// its own data directory, all of them `makeApp({ env: db.env })`, on either test backend. With
// CORPADMIN_TEST_BACKEND=pg the database is one of the backend's (test/support/backend.ts); on
// SQLite a throwaway server is started for the file (test/support/postgres.ts). The apps hold the
// same keys as cluster nodes must: makeApp gives each the process's token and data keys.
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEST_BACKEND, testDatabase } from "./backend";
import { startPostgres } from "./postgres";

export interface OneDatabase {
  /** The environment every node gets: the database's URL. */
  readonly env: Record<string, string>;
  /** A connection to the database as the app's role (platform tables have no row-level security). */
  readonly sql: SQL;
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
      async close() {
        await sql.close();
        await db.drop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const pg = await startPostgres();
  const { appUrl } = await pg.createDatabase(`one_${process.pid}_${++made}`);
  const sql = new SQL({ url: appUrl, max: 2 });
  return {
    env: { CORPADMIN_DATABASE_URL: appUrl },
    sql,
    async close() {
      await sql.close();
      await pg.stop();
    },
  };
}
