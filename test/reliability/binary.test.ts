// The compiled binary works alone: copied into an empty directory it creates and migrates its
// databases, serves the API, and stops cleanly on SIGTERM.
// source-only: builds and runs the binary itself.
// SQLite only (not in test/pg-backend.txt): the binary alone in an empty directory makes its own files.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { ADMIN, freePort, tempDir } from "../support/helpers";
import { STARTUP_MS, waitFor } from "../support/wait";

const root = join(import.meta.dir, "../..");
const dir = tempDir("corpadmin-bin-");

beforeAll(async () => {
  const build = Bun.spawnSync(["bun", "build.ts"], { cwd: root, stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`);
  copyFileSync(join(root, "dist/corpadmin"), join(dir, "corpadmin"));
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));


test("dist/corpadmin alone: start, log in, credentials, SIGTERM → exit 0", async () => {
  expect(statSync(join(dir, "corpadmin")).mode & 0o111).toBeGreaterThan(0);
  const version = Bun.spawnSync([join(dir, "corpadmin"), "version"], { cwd: dir });
  expect(version.stdout.toString().trim()).toMatch(/^\d+\.\d+\.\d+$/);
  const port = freePort();
  const proc = Bun.spawn([join(dir, "corpadmin"), "serve", "--port", String(port), "--host", "127.0.0.1"], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor("the binary up", () => fetch(`${base}/api/health`).then((r) => r.ok, () => false), STARTUP_MS);
    // Our own process answers: it made its data directory beside the binary.
    expect(existsSync(join(dir, "data", "platform.db"))).toBe(true);
    expect(statSync(join(dir, "data", "secret.key")).mode & 0o777).toBe(0o600);
    const post = (path: string, body: unknown) => fetch(base + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const start = await post("/api/start", { user: ADMIN, corp: { auth_name: "bin-corp", company_name: "Binary Corp" } });
    expect(start.status).toBe(200);
    const corpId = ((await start.json()) as any).corp.id;
    expect(existsSync(join(dir, "data", "corps", `${corpId}.db`))).toBe(true);
    const login = await post("/api/login", { corp: "bin-corp", login: ADMIN.login, password: ADMIN.password });
    expect(login.status).toBe(200);
    const { access_token } = (await login.json()) as any;
    const creds = await fetch(`${base}/api/auth/credentials`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(creds.status).toBe(200);
    expect(((await creds.json()) as any).credentials.corp).toBe(corpId);
    const docs = await fetch(`${base}/api/docs/scalar.js`);
    expect(docs.status).toBe(200);
    const page = await fetch(`${base}/api/docs`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("/api/docs/scalar.js");
    // The binary serves the document its build generated: the one the running code publishes.
    const served = await fetch(`${base}/api/openapi.json`);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toContain("application/json");
    expect(served.headers.get("x-request-id")).toBeTruthy();
    // Generated afresh in another process whose settings differ from the build's defaults (the
    // document must not depend on them); this process has served other tests' requests.
    const fresh = Bun.spawnSync(["bun", "scripts/openapi-document.ts"], {
      cwd: root,
      env: { ...process.env, CORPADMIN_PUBLIC_URL: "https://isp.example.net", CORPADMIN_PORT: "9999", CORPADMIN_AUTH_RATE_LIMIT: "5", CORPADMIN_OIDC_GOOGLE_CLIENT_ID: "client-1", CORPADMIN_SMTP_URL: "smtp://127.0.0.1:2525", CORPADMIN_METRICS_TOKEN: "metrics-token-0123456789" },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(fresh.exitCode).toBe(0);
    const fromSource = JSON.parse(fresh.stdout.toString());
    expect(Object.keys(fromSource.paths).length).toBeGreaterThan(100);
    expect(await served.json()).toEqual(fromSource);
  } finally {
    proc.kill("SIGTERM");
  }
  expect(await proc.exited).toBe(0);
  const out = await new Response(proc.stdout).text();
  expect(out).toContain('"msg":"stopped"');
  expect(out).not.toContain(ADMIN.password);
}, 60_000);
