// source-only: starts a throwaway PostgreSQL server (test/support/postgres.ts), no app involved.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync } from "node:fs";
import { startPostgres, throwawayPostgres } from "../../support/postgres";

const pg = await throwawayPostgres();

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

  test("a test process killed outright leaves no server behind (the watchdog stops it)", async () => {
    const child = Bun.spawn(
      ["bun", "-e", `const { startPostgres } = await import(${JSON.stringify(`${import.meta.dir}/../../support/postgres.ts`)}); const pg = await startPostgres(); console.log(pg.pid); await Bun.sleep(60_000);`],
      { stdout: "pipe", stderr: "inherit" },
    );
    const reader = child.stdout.getReader();
    let out = "";
    while (!out.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    const pid = Number(out.trim());
    expect(pid).toBeGreaterThan(0);
    expect(existsSync(`/proc/${pid}`)).toBe(true);
    child.kill("SIGKILL");
    await child.exited;
    let gone = false;
    for (let i = 0; i < 100 && !gone; i++) {
      await Bun.sleep(100);
      gone = !existsSync(`/proc/${pid}`);
    }
    expect(gone).toBe(true);
  }, 60_000);
});
