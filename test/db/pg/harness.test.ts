// source-only: starts a throwaway PostgreSQL server (test/support/postgres.ts), no app involved.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync } from "node:fs";
import { startPostgres, type TestPostgres } from "../../support/postgres";

let pg: TestPostgres;
beforeAll(async () => {
  pg = await startPostgres();
}, 60_000);
afterAll(async () => {
  await pg?.stop();
});

describe("db/pg: the throwaway test server", () => {
  test("answers on its loopback port, as a superuser and as the app role without BYPASSRLS", async () => {
    const su = new SQL(pg.url);
    const app = new SQL(pg.appUrl);
    try {
      const [s] = await su`SELECT current_setting('fsync') AS fsync, version() AS v`;
      expect(s.fsync).toBe("off");
      expect(s.v).toContain("PostgreSQL 15");
      const [a] = await app`SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user`;
      expect(a).toEqual({ rolsuper: false, rolbypassrls: false });
    } finally {
      await su.close();
      await app.close();
    }
  });

  test("stop() ends the server by its PID", async () => {
    const other = await startPostgres();
    expect(() => process.kill(other.pid, 0)).not.toThrow();
    await other.stop();
    expect(() => process.kill(other.pid, 0)).toThrow();
    expect(existsSync(`/proc/${other.pid}`)).toBe(false);
  }, 60_000);
});
