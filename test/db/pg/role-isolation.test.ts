// Issue 29 defect 1: cluster mode fails closed. `corpadmin serve` over a role that row-level
// security does not hold (superuser, BYPASSRLS, owner of tables not FORCEd, a tenant table without
// row-level security or its policy) exits non-zero naming the role, what is wrong and the fix,
// before serving; over a proper role it serves; a serving node whose role loses its isolation
// stops at the next reconnect of its change feed. roleIsolationProblems is the check itself.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { roleIsolationProblems, TENANT_TABLES } from "../../../src/db/pg/isolation";
import { preparePostgres } from "../../../src/core/pg/store";
import { nodeSecrets, serveCommand, startAppNode } from "../../support/app-node";
import { APP_ROLE, startPostgres, type TestPostgres } from "../../support/postgres";

let pg: TestPostgres;
let su: SQL;
const dirs: string[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  su = new SQL({ url: pg.url, max: 1 });
  // The proper role's database, migrated (tables owned by APP_ROLE, FORCEd by the migrator).
  const start = await preparePostgres(pg.appUrl, "/nonexistent");
  await start.sql.close();
});

afterAll(async () => {
  await su?.close();
  await pg?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `corpadmin serve` over `url`: must exit (bounded) without ever answering; its code and stderr. */
async function refusedStart(url: string): Promise<{ code: number | null; stderr: string; served: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), "corpadmin-iso-"));
  dirs.push(dir);
  const port = 20000 + Math.floor(Math.random() * 20000);
  const proc = Bun.spawn(serveCommand(), {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, CORPADMIN_DATA_DIR: dir, CORPADMIN_HOST: "127.0.0.1", CORPADMIN_PORT: String(port), CORPADMIN_DATABASE_URL: url },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(30_000).then(() => false)]);
  const served = await fetch(`http://127.0.0.1:${port}/api/health`).then(
    (r) => r.ok,
    () => false,
  );
  if (!exited) proc.kill("SIGKILL");
  return { code: exited ? proc.exitCode : null, stderr: await new Response(proc.stderr).text(), served };
}

describe("cluster mode refuses to serve a role that row-level security does not hold", () => {
  test("the superuser: exit non-zero, naming the role, superuser and the fix; nothing migrated", async () => {
    const { url } = await pg.createDatabase("as_superuser");
    const r = await refusedStart(url);
    expect(r.code).not.toBe(0);
    expect(r.code).not.toBeNull();
    expect(r.served).toBe(false);
    expect(r.stderr).toContain('database role "postgres"');
    expect(r.stderr).toContain("is a superuser");
    expect(r.stderr).toContain("Fix:");
    expect(r.stderr).toContain("CREATE DATABASE corpadmin OWNER corpadmin");
    // Refused before migrating: the superuser created no table.
    const probe = new SQL({ url, max: 1 });
    try {
      expect((await probe`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`)[0].n).toBe(0);
    } finally {
      await probe.close();
    }
  });

  test("a BYPASSRLS role (owner of its database, not superuser)", async () => {
    await su.unsafe("CREATE ROLE bypasser LOGIN NOSUPERUSER BYPASSRLS");
    await su.unsafe("CREATE DATABASE as_bypasser OWNER bypasser");
    const r = await refusedStart(`postgres://bypasser@127.0.0.1:${pg.port}/as_bypasser`);
    expect(r.code).not.toBe(0);
    expect(r.code).not.toBeNull();
    expect(r.served).toBe(false);
    expect(r.stderr).toContain('database role "bypasser"');
    expect(r.stderr).toContain("has BYPASSRLS");
    expect(r.stderr).toContain('ALTER ROLE "bypasser" NOBYPASSRLS');
  });

  test("the owner of a tenant table without FORCE ROW LEVEL SECURITY", async () => {
    await su.unsafe("ALTER TABLE cities NO FORCE ROW LEVEL SECURITY");
    try {
      const r = await refusedStart(pg.appUrl);
      expect(r.code).not.toBe(0);
      expect(r.code).not.toBeNull();
      expect(r.served).toBe(false);
      expect(r.stderr).toContain(`role "${APP_ROLE}" owns tenant table "cities"`);
      expect(r.stderr).toContain('ALTER TABLE "cities" FORCE ROW LEVEL SECURITY');
    } finally {
      await su.unsafe("ALTER TABLE cities FORCE ROW LEVEL SECURITY");
    }
  });

  test("a tenant table without its policy, or with row-level security disabled", async () => {
    await su.unsafe("DROP POLICY tenant ON persons");
    await su.unsafe("ALTER TABLE contracts DISABLE ROW LEVEL SECURITY");
    try {
      const r = await refusedStart(pg.appUrl);
      expect(r.code).not.toBe(0);
      expect(r.code).not.toBeNull();
      expect(r.served).toBe(false);
      expect(r.stderr).toContain('tenant table "persons" has no policy "tenant"');
      expect(r.stderr).toContain("CREATE POLICY tenant ON \"persons\"");
      expect(r.stderr).toContain('tenant table "contracts" has row-level security disabled');
      expect(r.stderr).toContain('ALTER TABLE "contracts" ENABLE ROW LEVEL SECURITY');
    } finally {
      await su.unsafe("CREATE POLICY tenant ON persons AS PERMISSIVE FOR ALL TO public USING (corp_id = current_setting('corpadmin.corp_id')) WITH CHECK (corp_id = current_setting('corpadmin.corp_id'))");
      await su.unsafe("ALTER TABLE contracts ENABLE ROW LEVEL SECURITY");
    }
  });

  test("roleIsolationProblems: none for the proper role; a widening policy and a wrong one are problems; a non-owner needs no FORCE", async () => {
    const app = new SQL({ url: pg.appUrl, max: 1 });
    try {
      expect(await roleIsolationProblems(app)).toEqual([]);
      expect(TENANT_TABLES).toContain("cities");
      await su.unsafe("CREATE POLICY open ON cities FOR SELECT USING (true)");
      await su.unsafe("ALTER POLICY tenant ON products USING (true)");
      const problems = await roleIsolationProblems(app);
      expect(problems.map((p) => [p.kind, p.table])).toEqual([
        ["policy-extra", "cities"],
        ["policy-wrong", "products"],
      ]);
      for (const p of problems) expect(p.role).toBe(APP_ROLE);
    } finally {
      await su.unsafe("DROP POLICY IF EXISTS open ON cities");
      await su.unsafe("ALTER POLICY tenant ON products USING (corp_id = current_setting('corpadmin.corp_id'))");
      await app.close();
    }
    // A role that only has privileges on the tables is held by the policy without FORCE.
    await su.unsafe("CREATE ROLE reader LOGIN");
    await su.unsafe("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader");
    await su.unsafe("ALTER TABLE cities NO FORCE ROW LEVEL SECURITY");
    const reader = new SQL({ url: `postgres://reader@127.0.0.1:${pg.port}/corpadmin`, max: 1 });
    try {
      expect(await roleIsolationProblems(reader)).toEqual([]);
    } finally {
      await reader.close();
      await su.unsafe("ALTER TABLE cities FORCE ROW LEVEL SECURITY");
    }
  });

  test("the proper role serves; when it gains BYPASSRLS the node stops at its feed's next reconnect", async () => {
    const node = await startAppNode("proper", { databaseUrl: pg.appUrl, secrets: nodeSecrets() });
    try {
      expect((await fetch(`${node.base}/api/health`)).status).toBe(200);
      await su.unsafe(`ALTER ROLE ${APP_ROLE} BYPASSRLS`);
      await su.close();
      await pg.restart(200);
      su = new SQL({ url: pg.url, max: 1 });
      const deadline = performance.now() + 30_000;
      while (node.died === null && performance.now() < deadline) await Bun.sleep(100);
      expect(node.died).toBe("exited with code 1");
      expect(node.logTail(50)).toContain(`database role "${APP_ROLE}"`);
      expect(node.logTail(50)).toContain("NOBYPASSRLS");
    } finally {
      await su.unsafe(`ALTER ROLE ${APP_ROLE} NOBYPASSRLS`);
      await node.stop();
    }
  });
});
