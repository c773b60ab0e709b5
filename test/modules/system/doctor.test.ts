// `corpadmin doctor [--fix] [--json]` (from source) and GET /api/system/doctor (routes.md,
// Network operations additions: DoctorCheck): a healthy data directory, then one broken on
// purpose (a key file 0644, a corrupted corporation file, a backup schedule whose backups
// stopped), each failing check named, and --fix repairing the modes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, closeSync, mkdirSync, openSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { addCorp, addUser, makeApp, startAndLogin, tempDir, type TestApp } from "../../support/helpers";
import { sqliteOnly, TEST_BACKEND } from "../../support/backend";

interface Check {
  name: string;
  status: "ok" | "warn" | "fail";
  detail: string;
  fix: string | null;
}

const TOKEN_SECRET = "test-secret-key-0123456789abcdef";
const NAMES = ["data-dir", "disk-free", "wal-size", "backup-age", "webhooks", "nas-quiet", "stale-sessions", "network-layouts", "egress-policy", "radius-reachable", "corp-integrity"];
/** Findings that depend on the machine running the tests, not on the data directory. */
const MACHINE = new Set(["disk-free", "ntp-sync"]);

/** FreeRADIUS's view: the public URL, a real socket in front of the app under test. */
function publicFront() {
  let app: TestApp | null = null;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(r) {
      if (!app) return new Response("not yet", { status: 503 });
      const url = new URL(r.url);
      return app.fetch(url.pathname + url.search, { method: r.method, headers: r.headers });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, serve: (t: TestApp) => void (app = t), stop: () => server.stop(true) };
}

async function cli(dir: string, env: Record<string, string>, ...args: string[]) {
  const proc = Bun.spawn(["bun", "src/main.ts", "doctor", ...args, "--data-dir", dir], {
    env: { ...process.env, CORPADMIN_TOKEN_SECRET: TOKEN_SECRET, CORPADMIN_BACKUP_CRON: "", CORPADMIN_DATABASE_URL: "", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { out, err, code };
}
const byName = (checks: Check[]) => Object.fromEntries(checks.map((c) => [c.name, c]));

describe("a healthy installation", () => {
  const front = publicFront();
  let t: TestApp;
  let admin: { token: string; corpId: string };
  beforeAll(async () => {
    t = await makeApp({ env: { CORPADMIN_PUBLIC_URL: front.url } });
    front.serve(t);
    admin = await startAndLogin(t);
  });
  afterAll(async () => {
    await t.close();
    front.stop();
  });

  test("GET /api/system/doctor: every check, ok but for what the machine itself shows", async () => {
    const res = await t.req("GET", "/api/system/doctor", { token: admin.token });
    expect(res.status).toBe(200);
    const checks = res.body.checks as Check[];
    for (const name of NAMES) expect(checks.map((c) => c.name)).toContain(name);
    if (TEST_BACKEND === "pg") {
      expect(checks.map((c) => c.name)).toContain("clock-skew");
      // The test app connects as a role held to row-level security (APP_ROLE).
      expect(checks.find((c) => c.name === "role-isolation")).toMatchObject({ status: "ok" });
      // The test database has pg_trgm and its functions declared LEAKPROOF (support/backend.ts).
      expect(checks.find((c) => c.name === "search-index")).toMatchObject({ status: "ok" });
    }
    for (const c of checks) {
      expect(Object.keys(c).sort()).toEqual(["detail", "fix", "name", "status"]);
      if (!MACHINE.has(c.name)) expect({ name: c.name, status: c.status, fix: c.fix }).toEqual({ name: c.name, status: "ok", fix: null });
    }
    const named = byName(checks);
    expect(named["radius-reachable"].detail).toContain(`${front.url}/api/isp/radius/authorize`);
    expect(named["backup-age"].detail).toContain("no backup schedule");
  });

  test("401 without a token, 403 for anyone but a super-admin", async () => {
    expect((await t.req("GET", "/api/system/doctor")).status).toBe(401);
    const boss = await addUser(t, admin.corpId, { login: "doctor-boss", services: ["platform.corp", "platform.core"] });
    expect((await t.req("GET", "/api/system/doctor", { token: boss.token })).status).toBe(403);
  });

  sqliteOnly("corpadmin doctor", () => {
    test("the same checks; exit 0 (1 when only the machine's disk or clock warns); --json", async () => {
      const json = await cli(t.dir, { CORPADMIN_PUBLIC_URL: front.url }, "--json");
      const checks = JSON.parse(json.out).checks as Check[];
      expect(checks.map((c) => c.name)).toEqual((await t.req("GET", "/api/system/doctor", { token: admin.token })).body.checks.map((c: Check) => c.name));
      const warned = checks.filter((c) => c.status !== "ok");
      expect(warned.every((c) => MACHINE.has(c.name) && c.status === "warn")).toBe(true);
      expect(json.code).toBe(warned.length ? 1 : 0);
      const text = await cli(t.dir, { CORPADMIN_PUBLIC_URL: front.url });
      expect(text.code).toBe(json.code);
      expect(text.out).toMatch(/^OK {4}data-dir/m);
      expect(text.out).toMatch(/^OK {4}corp-integrity +PRAGMA quick_check ok on 2 databases/m);
      console.log(`corpadmin doctor, a healthy installation (exit ${text.code}):\n${text.out}`);
    });
  });
});

// A corrupted corporation file and key modes are SQLite's data directory.
sqliteOnly("a broken installation", () => {
  const front = publicFront();
  const dir = tempDir();
  const backups = join(dir, "backups");
  const env = { CORPADMIN_PUBLIC_URL: front.url, CORPADMIN_BACKUP_CRON: "0 3 * * *", CORPADMIN_BACKUP_DIR: backups };
  let t: TestApp;
  let admin: { token: string; corpId: string };
  beforeAll(async () => {
    t = await makeApp({ dir, env });
    admin = await startAndLogin(t);
    const beta = await addCorp(t, "beta");
    await t.close(false);
    // The newest scheduled backup is three days old: the daily schedule stopped producing them.
    const old = "corpadmin-20200101T030000.000Z";
    mkdirSync(join(backups, old), { recursive: true });
    await Bun.write(join(backups, old, "manifest.json"), JSON.stringify({ created_at: new Date(Date.now() - 3 * 86_400_000).toISOString(), files: [] }));
    // Beta's database overwritten past its header.
    const corpFile = join(dir, "corps", `${beta}.db`);
    const fd = openSync(corpFile, "r+");
    writeSync(fd, Buffer.alloc(statSync(corpFile).size - 100, 0xa5), 0, statSync(corpFile).size - 100, 100);
    closeSync(fd);
    t = await makeApp({ dir, env });
    front.serve(t);
    // The data key made readable by anyone while the service runs.
    chmodSync(join(dir, "data.key"), 0o644);
    const login = await t.req("POST", "/api/login", { body: { corp: "acme", login: "admin", password: "admin-password-1" } });
    admin = { token: login.body.access_token, corpId: admin.corpId };
  });
  afterAll(async () => {
    await t.close();
    front.stop();
  });

  test("GET /api/system/doctor names each failing check", async () => {
    const res = await t.req("GET", "/api/system/doctor", { token: admin.token });
    expect(res.status).toBe(200);
    const named = byName(res.body.checks);
    expect(named["data-dir"]).toMatchObject({ status: "fail" });
    expect(named["data-dir"].detail).toContain("data.key is mode 0644");
    expect(named["data-dir"].fix).toContain("chmod 600");
    expect(named["corp-integrity"].status).toBe("fail");
    expect(named["corp-integrity"].detail).toContain("beta:");
    expect(named["corp-integrity"].detail).not.toContain("acme:");
    expect(named["backup-age"].status).toBe("fail");
    expect(named["backup-age"].detail).toContain("corpadmin-20200101T030000.000Z");
    expect(named["radius-reachable"].status).toBe("ok");
  });

  test("corpadmin doctor: exit 2 naming them; --fix repairs the modes (the rest stays)", async () => {
    const before = await cli(dir, env, "--json");
    expect(before.code).toBe(2);
    const failing = (JSON.parse(before.out).checks as Check[]).filter((c) => c.status === "fail").map((c) => c.name);
    expect(failing.sort()).toEqual(["backup-age", "corp-integrity", "data-dir"]);
    const text = await cli(dir, env);
    console.log(`corpadmin doctor, a broken installation (exit ${text.code}):\n${text.out}`);
    expect(text.out).toMatch(/^FAIL {2}data-dir/m);
    const fixed = await cli(dir, env, "--fix", "--json");
    expect(fixed.code).toBe(2);
    const after = byName(JSON.parse(fixed.out).checks);
    expect(after["data-dir"].status).toBe("ok");
    expect(statSync(join(dir, "data.key")).mode & 0o777).toBe(0o600);
    expect(after["corp-integrity"].status).toBe("fail");
    expect(after["backup-age"].status).toBe("fail");
    const again = await cli(dir, env, "--json");
    expect(byName(JSON.parse(again.out).checks)["data-dir"].status).toBe("ok");
  });
});
