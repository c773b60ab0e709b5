// Backups through the API (routes.md, Operator additions): list, create now, download as tar.gz,
// delete; `*` only; names validated strictly. Both engines (cluster mode: a pg_dump archive).
import { beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { notes } from "../../../src/db/tenant/schema";
import { newId } from "../../../src/lib/ids";
import { TEST_BACKEND } from "../../support/backend";
import { addCorp, addUser, makeApp, startAndLogin, tempDir, testSourceOnly, openApp } from "../../support/helpers";
import { waitFor } from "../../support/wait";

const { t, admin } = await openApp();

beforeAll(async () => {
  await addCorp(t, "beta");
  await t.req("POST", "/api/city", { token: admin.token, body: { name: "Curitiba", state: "PR", country: "BR" } });
});

const API_NAME = /^corpadmin-\d{8}T\d{6}Z$/;

test("create now, list newest first, download as tar.gz of the backup directory, delete", async () => {
  expect((await t.req("GET", "/api/backup", { token: admin.token })).body).toEqual({ items: [] });
  const created = await t.req("POST", "/api/backup", { token: admin.token });
  expect(created.status).toBe(200);
  expect(created.body).toMatchObject({ corporations: 2, scheduled: false, verified: true });
  expect(created.body.name).toMatch(API_NAME);
  expect(created.body.size_bytes).toBeGreaterThan(0);
  const dir = join(t.config.backupDir, created.body.name);
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
  expect(created.body.created_at).toBe(manifest.created_at);

  await Bun.sleep(1100); // the next name is a second later
  const second = await t.req("POST", "/api/backup", { token: admin.token });
  expect(second.status).toBe(200);
  const list = await t.req("GET", "/api/backup", { token: admin.token });
  expect(list.body.items.map((b: any) => b.name)).toEqual([second.body.name, created.body.name]);

  const res = await t.req("GET", `/api/backup/${created.body.name}/download`, { token: admin.token });
  // t.req reads text; fetch the bytes.
  expect(res.status).toBe(200);
  const raw = await t.fetch(`/api/backup/${created.body.name}/download`, { headers: { authorization: `Bearer ${admin.token}` } });
  expect(raw.headers.get("content-type")).toBe("application/gzip");
  expect(raw.headers.get("content-disposition")).toBe(`attachment; filename="${created.body.name}.tar.gz"`);
  const out = tempDir("corpadmin-download-");
  const archive = join(out, "backup.tar.gz");
  writeFileSync(archive, Buffer.from(await raw.arrayBuffer()));
  // The system's tar reads it: the top level holds the backup directory's files.
  const listing = Bun.spawnSync(["tar", "-tzf", archive]).stdout.toString().trim().split("\n").sort();
  // A cluster-mode backup holds one archive and no corps/ directory.
  const expected = [...(manifest.engine === "pg" ? [] : ["corps/"]), "manifest.json", ...manifest.files.map((f: any) => f.path)].sort();
  expect(listing).toEqual(expected);
  mkdirSync(join(out, "x"));
  const extract = Bun.spawnSync(["tar", "-xzf", archive, "-C", join(out, "x")]);
  expect(extract.exitCode).toBe(0);
  expect(readFileSync(join(out, "x", "manifest.json"), "utf8")).toBe(readFileSync(join(dir, "manifest.json"), "utf8"));
  for (const f of manifest.files) {
    const bytes = readFileSync(join(out, "x", f.path));
    expect({ path: f.path, sha: createHash("sha256").update(bytes).digest("hex") }).toEqual({ path: f.path, sha: f.sha256 });
  }
  if (manifest.engine !== "pg") {
    const db = new Database(join(out, "x", "platform.db"), { readonly: true });
    expect((db.query("PRAGMA integrity_check").get() as any).integrity_check).toBe("ok");
    expect((db.query("SELECT count(*) AS n FROM corporations").get() as any).n).toBe(2);
    db.close();
  }

  expect((await t.req("DELETE", `/api/backup/${created.body.name}`, { token: admin.token })).status).toBe(204);
  expect(existsSync(dir)).toBe(false);
  // Both are in the audit log, naming the backup (the service writes them, not the route).
  const audited = async (action: string) => (await t.req("GET", `/api/audit?action=${action}`, { token: admin.token })).body.items.map((e: any) => [e.outcome, e.target]);
  expect(await audited("backup.create")).toContainEqual(["success", created.body.name]);
  expect(await audited("backup.delete")).toEqual([["success", created.body.name]]);
  expect((await t.req("DELETE", `/api/backup/${created.body.name}`, { token: admin.token })).status).toBe(404);
  expect((await t.req("GET", `/api/backup/${created.body.name}/download`, { token: admin.token })).status).toBe(404);
  expect((await t.req("GET", "/api/backup", { token: admin.token })).body.items.map((b: any) => b.name)).toEqual([second.body.name]);
});

test("409 while a backup is running", async () => {
  await Bun.sleep(1100); // not in the second of the previous test's backup (same name: 409 too)
  const [a, b] = await Promise.all([t.req("POST", "/api/backup", { token: admin.token }), t.req("POST", "/api/backup", { token: admin.token })]);
  expect([a.status, b.status].sort()).toEqual([200, 409]);
  expect((a.status === 409 ? a : b).body.type).toBe("urn:corpadmin:problem:conflict");
});

test("a backup deleted while it is being downloaded still downloads whole", async () => {
  await Bun.sleep(1100); // a name of its own
  const created = await t.req("POST", "/api/backup", { token: admin.token });
  expect(created.status).toBe(200);
  const manifest = JSON.parse(readFileSync(join(t.config.backupDir, created.body.name, "manifest.json"), "utf8"));
  const raw = await t.fetch(`/api/backup/${created.body.name}/download`, { headers: { authorization: `Bearer ${admin.token}` } });
  expect(raw.status).toBe(200);
  const reader = raw.body!.getReader();
  const chunks: Uint8Array[] = [(await reader.read()).value!];
  expect((await t.req("DELETE", `/api/backup/${created.body.name}`, { token: admin.token })).status).toBe(204);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
  }
  const out = tempDir("corpadmin-download-");
  writeFileSync(join(out, "b.tar.gz"), Buffer.concat(chunks));
  mkdirSync(join(out, "x"));
  expect(Bun.spawnSync(["tar", "-xzf", join(out, "b.tar.gz"), "-C", join(out, "x")]).exitCode).toBe(0);
  for (const f of manifest.files) {
    const sha = createHash("sha256").update(readFileSync(join(out, "x", f.path))).digest("hex");
    expect({ path: f.path, sha }).toEqual({ path: f.path, sha: f.sha256 });
  }
  rmSync(out, { recursive: true, force: true });
});

test("names are validated strictly: anything else is 404, nothing outside the backup directory is reached", async () => {
  // A directory that looks almost like a backup, and one with no manifest.
  mkdirSync(join(t.config.backupDir, "corpadmin-20260101T000000Z.partial"), { recursive: true });
  mkdirSync(join(t.config.backupDir, "corpadmin-20260101T000001Z"), { recursive: true });
  for (const name of [
    "..",
    "..%2Fplatform.db",
    "..%2F..%2Fetc",
    "corpadmin-2026",
    "corpadmin-20260101T000000Z.partial",
    "corpadmin-20260101T000001Z",
    "corpadmin-20260101T000000Z%00",
    "%2Fetc%2Fpasswd",
    "x".repeat(80),
  ]) {
    expect({ name, status: (await t.req("GET", `/api/backup/${name}/download`, { token: admin.token })).status }).toEqual({ name, status: 404 });
    expect({ name, status: (await t.req("DELETE", `/api/backup/${name}`, { token: admin.token })).status }).toEqual({ name, status: 404 });
  }
  // The data directory is intact (on PostgreSQL it holds no database file).
  expect(existsSync(TEST_BACKEND === "pg" ? t.dir : join(t.dir, "platform.db"))).toBe(true);
  expect(existsSync(join(t.config.backupDir, "corpadmin-20260101T000001Z"))).toBe(true);
  // Neither shows in the list.
  const names = (await t.req("GET", "/api/backup", { token: admin.token })).body.items.map((b: any) => b.name);
  expect(names).not.toContain("corpadmin-20260101T000001Z");
});

test("401 without a token, 403 for anyone but *", async () => {
  const name = (await t.req("GET", "/api/backup", { token: admin.token })).body.items[0].name;
  for (const [method, path] of [
    ["GET", "/api/backup"],
    ["POST", "/api/backup"],
    ["GET", `/api/backup/${name}/download`],
    ["DELETE", `/api/backup/${name}`],
  ]) {
    expect((await t.req(method, path)).status).toBe(401);
  }
  const corpAdmin = await addUser(t, admin.corpId, { services: ["platform.corp", "platform.user", "platform.server", "platform.core"] });
  for (const [method, path] of [
    ["GET", "/api/backup"],
    ["POST", "/api/backup"],
    ["GET", `/api/backup/${name}/download`],
    ["DELETE", `/api/backup/${name}`],
  ]) {
    expect({ path, status: (await t.req(method, path, { token: corpAdmin.token })).status }).toEqual({ path, status: 403 });
  }
});

test("scheduled backups are listed too, as scheduled", async () => {
  const s = await makeApp({ env: { CORPADMIN_BACKUP_CRON: "* * * * * *", CORPADMIN_BACKUP_KEEP: "2" } });
  try {
    const a = await startAndLogin(s);
    // The first run may come before the corporation exists: wait for one that holds it (on
    // PostgreSQL the schedule starts a lease grace, 5 s in the tests, after the app).
    const items: any[] = await waitFor(
      "a scheduled backup holding the corporation",
      async () => {
        const listed = (await s.req("GET", "/api/backup", { token: a.token })).body.items as any[];
        return listed.some((b) => b.corporations === 1) && listed;
      },
      30_000,
    );
    expect(items.length).toBeGreaterThan(0);
    expect(items[0]).toMatchObject({ scheduled: true, verified: true, corporations: 1 });
    expect(items[0].name).toMatch(/^corpadmin-\d{8}T\d{6}\.\d{3}Z$/);
  } finally {
    await s.close();
  }
});

// In-process: holds a write transaction of the app's store open across an await; reads the
// corporation's SQLite copy (on PostgreSQL, pg_dump's snapshot holds only committed rows by nature).
(TEST_BACKEND === "pg" ? test.skip : testSourceOnly)("POST /api/backup copies the last committed state: a write transaction open meanwhile is not in it and is not waited for", async () => {
  const s = await makeApp();
  try {
    const a = await startAndLogin(s);
    const noteId = newId();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inserted!: () => void;
    const insertedYet = new Promise<void>((r) => (inserted = r));
    // A write that stays open across an await, as an async handler's would.
    const open = s.ctx.store.tenant(a.corpId).write(async (tx) => {
      await tx.insert(notes).values({ id: noteId, user_id: a.userId, content: "uncommitted" }).run();
      inserted();
      await held;
    });
    await insertedYet;
    const created = await s.req("POST", "/api/backup", { token: a.token });
    expect(created.status).toBe(200);
    const copy = new Database(join(s.config.backupDir, created.body.name, "corps", `${a.corpId}.db`), { readonly: true });
    expect(copy.query("SELECT count(*) AS n FROM notes WHERE id = ?").get(noteId)).toEqual({ n: 0 });
    copy.close();
    release();
    await open;
    expect((await s.req("GET", `/api/notepad/${noteId}`, { token: a.token })).status).toBe(200);
  } finally {
    await s.close();
  }
});
