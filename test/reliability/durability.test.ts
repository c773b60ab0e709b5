// Data is never lost: every write acknowledged before a kill -9 is present afterwards.
// source-only: runs its own processes; the same in both passes.
// SQLite only (not in test/pg-backend.txt): kill -9 of processes writing their own SQLite files.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openTenantDb } from "../../src/db/sqlite";
import { ADMIN, freePort, tempDir } from "../support/helpers";
import { STARTUP_MS, waitFor } from "../support/wait";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("kill -9 mid-write, many times: every acknowledged write survives, integrity ok", async () => {
  const acknowledged: string[] = [];
  const KILLS = 8;
  for (let i = 0; i < KILLS; i++) {
    const child = Bun.spawn(["bun", join(import.meta.dir, "../support/durable-writer.ts"), dir], { stdout: "pipe", stderr: "inherit" });
    const reader = child.stdout.getReader();
    let buffered = "";
    const deadline = Date.now() + 150 + Math.random() * 250;
    // Read acknowledgements until the deadline, then kill without warning.
    let started = false;
    while (Date.now() < deadline || !started) {
      const { value, done } = await Promise.race([reader.read(), Bun.sleep(50).then(() => ({ value: undefined, done: false }))]);
      if (done) break;
      if (value) {
        buffered += new TextDecoder().decode(value);
        started = true;
      }
    }
    child.kill("SIGKILL");
    await child.exited;
    // Whatever the pipe still holds was printed (so committed) before the kill.
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += new TextDecoder().decode(value);
    }
    const lines = buffered.split("\n");
    lines.pop(); // a partial last line was not fully acknowledged
    acknowledged.push(...lines.filter(Boolean));
  }
  const db = openTenantDb(join(dir, "tenant.db"));
  const present = new Set((db.$client.query("SELECT record_id FROM events").all() as { record_id: string }[]).map((r) => r.record_id));
  const lost = acknowledged.filter((id) => !present.has(id));
  console.log(`durability: ${KILLS} kills, ${acknowledged.length} acknowledged writes, ${lost.length} lost`);
  // Each kill came while writes were being acknowledged (a few per child at least: a loaded CI
  // machine's fsyncs gave exactly 10 each once, against the 10+ asked here before).
  expect(acknowledged.length).toBeGreaterThanOrEqual(KILLS * 4);
  expect(lost).toEqual([]);
  expect(db.$client.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  db.$client.close();
}, 120_000);


// The door answers only after its own fsync of the WAL (src/db/door.ts): a kill -9 right after
// an answer must find the row. (A kill does not test the fsync itself, which only a power cut
// would: test/core/store.test.ts checks that the answer waits for it and fails with it.)
test("POST /api/city: every 2xx answered before a kill -9 of the server is in the database after it", async () => {
  const data = join(dir, "server");
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = { ...process.env, CORPADMIN_DATA_DIR: data, CORPADMIN_PORT: String(port), CORPADMIN_HOST: "127.0.0.1", CORPADMIN_LOG_LEVEL: "error", CORPADMIN_AUTH_RATE_LIMIT: "100000" };
  const start = async () => {
    const proc = Bun.spawn(["bun", join(import.meta.dir, "../../src/main.ts"), "serve"], { env, stdout: "ignore", stderr: "inherit" });
    await waitFor("the server up", () => fetch(`${base}/api/health`).then((r) => r.ok, () => false), STARTUP_MS);
    return proc;
  };
  const json = async (path: string, body: unknown, token?: string) =>
    fetch(base + path, { method: "POST", headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
  let proc = await start();
  const started = await json("/api/start", { user: ADMIN, corp: { auth_name: "acme", company_name: "ACME", timezone: "America/Sao_Paulo" } });
  expect(started.status).toBe(200);
  const corpId = ((await started.json()) as { corp: { id: string } }).corp.id;
  const acknowledged: string[] = [];
  for (let round = 0; round < 3; round++) {
    if (round) proc = await start();
    const login = await json("/api/login", { corp: "acme", login: ADMIN.login, password: ADMIN.password });
    const token = ((await login.json()) as { access_token: string }).access_token;
    const server = proc;
    let killed = false;
    // Forty writes in flight; the first answer kills the server at once, before it sends more.
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const name = `Durable ${round}-${i}`;
        const r = await json("/api/city", { name, state: "SP", country: "BR" }, token).catch(() => null);
        // Every 200 received was sent before the kill, even one read after it.
        if (r?.status !== 200) return;
        acknowledged.push(name);
        if (!killed) {
          killed = true;
          server.kill("SIGKILL");
        }
      }),
    );
    await server.exited;
  }
  const file = readdirSync(data, { recursive: true }).map(String).find((f) => f.endsWith(`${corpId}.db`))!;
  const db = new Database(join(data, file), { readonly: true });
  const present = new Set((db.query("SELECT name FROM cities").all() as { name: string }[]).map((r) => r.name));
  expect(acknowledged.length).toBeGreaterThanOrEqual(3);
  expect(acknowledged.filter((name) => !present.has(name))).toEqual([]);
  expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  db.close();
}, 120_000);
