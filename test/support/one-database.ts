// Several apps over one PostgreSQL database, as cluster mode's app nodes are (issue 19): each app
// its own data directory, all of them `makeApp({ env: db.env })`, on either test backend. With
// CORPADMIN_TEST_BACKEND=pg the database is one of the backend's (test/support/backend.ts); on
// SQLite a throwaway server is started for the file (test/support/postgres.ts).
import { SQL } from "bun";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEST_BACKEND, testDatabase } from "./backend";
import { startPostgres } from "./postgres";

export interface OneDatabase {
  /** The environment every node gets: the database URL and one data key file (the token key is TEST_ENV's). */
  readonly env: Record<string, string>;
  /** A connection to the database as the app's role (platform tables have no row-level security). */
  readonly sql: SQL;
  close(): Promise<void>;
}

let made = 0;

export async function oneDatabase(): Promise<OneDatabase> {
  const dir = mkdtempSync(join(tmpdir(), "corpadmin-one-db-"));
  if (TEST_BACKEND === "pg") {
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
  const keyFile = join(dir, "data.key");
  writeFileSync(keyFile, randomBytes(32).toString("base64") + "\n", { mode: 0o600 });
  const sql = new SQL({ url: appUrl, max: 2 });
  return {
    env: { CORPADMIN_DATABASE_URL: appUrl, CORPADMIN_DATA_KEY_FILE: keyFile },
    sql,
    async close() {
      await sql.close();
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
