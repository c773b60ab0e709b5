// Backups taken while the service runs and a second process keeps writing; restore; the
// scheduled backup with retention; the CLI.
// source-only: reads the app's service metrics and closes its context mid-run.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { chownSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { servers } from "../../../src/db/platform/schema";
import { newId } from "../../../src/lib/ids";
import { createBackup, restoreBackup, verifyBackup } from "../../../src/modules/ops/backup";
import type { Manifest } from "../../../src/modules/ops/backup-manifest";
import { createCorporation } from "../../../src/modules/corp/service";
import { VERSION } from "../../../src/version";
import { ADMIN, addCorp, makeApp, startAndLogin, tempDir, type TestApp } from "../../support/helpers";
import { sqliteTenants } from "../../support/backend";
import { waitFor } from "../../support/wait";

const root = join(import.meta.dir, "../../..");
const dirs: string[] = [];
const fresh = (p = "corpadmin-backup-") => {
  const d = tempDir(p);
  dirs.push(d);
  return d;
};
const apps: TestApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.close();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

/** A data directory with three corporations, one of them on a second Server. */
async function populated() {
  const t = await makeApp();
  apps.push(t);
  const { token, corpId } = await startAndLogin(t);
  const beta = await addCorp(t, "beta");
  const otherServerDir = fresh("corpadmin-server2-");
  const serverId = newId();
  await t.ctx.store.platform.write((db) => db.insert(servers).values({ id: serverId, name: "second", path: otherServerDir, builtin: false }).run());
  const gamma = (await createCorporation(t.ctx, { auth_name: "gamma", company_name: "Gamma", server_id: serverId } as never)).id;
  const corpIds = [corpId, beta, gamma];
  for (const id of corpIds) sqliteTenants(t.ctx).migrate(id);
  return { t, token, corpIds, gamma, otherServerDir };
}

test("backup under a concurrent write load loses nothing acknowledged before it began; restore; the app starts on it", async () => {
  const { t, token, corpIds, gamma, otherServerDir } = await populated();
  const writer = Bun.spawn(["bun", join(root, "test/support/ops-writer.ts"), t.dir, corpIds.join(",")], { stdout: "pipe", stderr: "inherit" });
  const acked: string[] = [];
  let stopReading = false;
  const reading = (async () => {
    const reader = writer.stdout.getReader();
    let buffered = "";
    while (!stopReading) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += new TextDecoder().decode(value);
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      acked.push(...lines);
    }
  })();
  try {
    await waitFor("200 acknowledged writes", () => acked.length >= 200, 30_000);
    const ackedBefore = [...acked];
    const backupDir = join(fresh(), "b1");
    // The service keeps answering while the backup runs in the same process.
    const [manifest, health] = await Promise.all([createBackup(t.dir, backupDir), t.req("GET", "/api/health")]);
    expect(health.status).toBe(200);
    const countAtEnd = acked.length;
    // The writer kept committing after the backup: the load was real throughout.
    await waitFor("writes acknowledged after the backup", () => acked.length > countAtEnd);

    expect(manifest.app_version).toBe(VERSION);
    // The token key comes from configuration here; data.key (NAS secrets are sealed with it) is a file.
    expect(manifest.files.map((f) => f.kind).sort()).toEqual(["corporation", "corporation", "corporation", "platform", "secret"]);
    expect(manifest.files.find((f) => f.kind === "secret")?.path).toBe("data.key");
    for (const f of manifest.files) {
      expect(statSync(join(backupDir, f.path)).size).toBe(f.size);
      expect(f.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(manifest.files.find((f) => f.corp_id === gamma)?.builtin_server).toBe(false);
    expect(JSON.parse(readFileSync(join(backupDir, "manifest.json"), "utf8"))).toEqual(manifest);

    const restoredDir = join(fresh(), "restored");
    const result = await restoreBackup(backupDir, restoredDir);
    expect(result.corporations).toBe(3);
    expect(result.moved.map((m) => m.corp_id)).toEqual([gamma]);
    expect(existsSync(join(restoredDir, "corps", `${gamma}.db`))).toBe(true);
    expect(readFileSync(join(restoredDir, "data.key"), "utf8")).toBe(readFileSync(join(t.dir, "data.key"), "utf8"));
    // The platform was copied before the corporations: the metric collector's index is not
    // trusted, so the first start-up reads every corporation (modules/metric/service.ts).
    const collectorKeys = (file: string) => {
      const db = new Database(file, { readonly: true });
      try {
        return (db.query("SELECT key FROM settings WHERE key LIKE 'metric-collector:%'").all() as { key: string }[]).map((r) => r.key);
      } finally {
        db.close();
      }
    };
    expect(collectorKeys(join(backupDir, "platform.db"))).toContain("metric-collector:indexed");
    expect(collectorKeys(join(restoredDir, "platform.db"))).not.toContain("metric-collector:indexed");

    const t2 = await makeApp({ dir: restoredDir });
    apps.push(t2);
    const missing: string[] = [];
    const settingsKeys = new Set((t2.sql().query("SELECT key FROM settings").all() as { key: string }[]).map((r) => r.key));
    const eventIds = new Map<string, Set<string>>();
    for (const id of corpIds) {
      const rows = t2.sql(id).query("SELECT record_id FROM events").all() as { record_id: string }[];
      eventIds.set(id, new Set(rows.map((r) => r.record_id)));
    }
    for (const line of ackedBefore) {
      const [db, id] = line.split(" ");
      const present = db === "platform" ? settingsKeys.has(id) : eventIds.get(db)?.has(id);
      if (!present) missing.push(line);
    }
    console.log(`backup under load: ${ackedBefore.length} rows acknowledged before, ${countAtEnd - ackedBefore.length} during; ${missing.length} missing`);
    expect(missing).toEqual([]);
    // The copy of a database that lived on another server now lives under the data directory.
    expect(t2.ctx.tenants.pathOf(gamma)).toBe(join(restoredDir, "corps", `${gamma}.db`));
    expect(t2.ctx.tenants.pathOf(gamma)).not.toContain(otherServerDir);
    // The sessions came back (the test apps share one configured signing key): the old token
    // still works, logins too.
    expect((await t2.req("GET", "/api/auth/credentials", { token })).status).toBe(200);
    expect((await t2.req("POST", "/api/login", { body: { corp: "beta", login: ADMIN.login, password: ADMIN.password } })).status).toBe(200);
  } finally {
    stopReading = true;
    writer.kill("SIGKILL");
    await writer.exited;
    await reading.catch(() => {});
  }
}, 60_000);

test("restore refuses a non-empty data directory and a backup that does not verify, and leaves the target empty", async () => {
  const { t } = await populated();
  const backupDir = join(fresh(), "b");
  const manifest: Manifest = await createBackup(t.dir, backupDir);
  await expect(createBackup(t.dir, backupDir)).rejects.toThrow("not empty");

  const nonEmpty = fresh();
  writeFileSync(join(nonEmpty, "keep.txt"), "x");
  await expect(restoreBackup(backupDir, nonEmpty)).rejects.toThrow("not empty");
  expect(readdirSync(nonEmpty)).toEqual(["keep.txt"]);

  // One flipped byte in a corporation database: the checksum catches it.
  const corpFile = manifest.files.find((f) => f.kind === "corporation")!;
  const path = join(backupDir, corpFile.path);
  const bytes = readFileSync(path);
  bytes[bytes.length - 10] ^= 0xff;
  writeFileSync(path, bytes);
  const target = fresh();
  await expect(restoreBackup(backupDir, target)).rejects.toThrow(`${corpFile.path}: sha256 does not match`);
  expect(readdirSync(target)).toEqual([]);

  // A manifest naming a file outside the backup directory is refused, and so is a missing manifest.
  const edited = JSON.parse(readFileSync(join(backupDir, "manifest.json"), "utf8")) as Manifest;
  edited.files.push({ path: "../../escape.db", kind: "corporation", size: 1, sha256: "0".repeat(64), corp_id: newId() });
  writeFileSync(join(backupDir, "manifest.json"), JSON.stringify(edited));
  await expect(verifyBackup(backupDir)).rejects.toThrow("../../escape.db");
  rmSync(join(backupDir, "manifest.json"));
  await expect(verifyBackup(backupDir)).rejects.toThrow("no manifest.json");
});

test("scheduled backups run inside the service and keep the newest N", async () => {
  const backupDir = join(fresh(), "scheduled");
  const t = await makeApp({ env: { CORPADMIN_BACKUP_CRON: "* * * * * *", CORPADMIN_BACKUP_KEEP: "2", CORPADMIN_BACKUP_DIR: backupDir } });
  apps.push(t);
  await startAndLogin(t);
  const runs = () => t.ctx.serviceMetrics.counter("corpadmin_backups_total").get({ outcome: "success" });
  // One a second, or fewer when a run outlasts its second (a loaded machine): waited for.
  await waitFor("three scheduled backups", () => runs() >= 3, 30_000);
  await t.ctx.close(); // stops the schedule and waits for a run in progress
  const left = readdirSync(backupDir).sort();
  expect(left.length).toBe(2);
  for (const name of left) {
    expect(name).toMatch(/^corpadmin-\d{8}T\d{6}\.\d{3}Z$/);
    await verifyBackup(join(backupDir, name));
  }
  expect(t.ctx.serviceMetrics.counter("corpadmin_backups_total").get({ outcome: "failure" })).toBe(0);
}, 60_000);

test("restore refuses a backup whose databases are newer than this binary", async () => {
  const { t, corpIds } = await populated();
  // As if a newer release had applied one more migration to this corporation.
  t.sqlWrite(corpIds[1]).run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', ?)", [Date.now() + 1e9]);
  const backupDir = join(fresh(), "b");
  await createBackup(t.dir, backupDir);
  const target = join(fresh(), "t");
  await expect(restoreBackup(backupDir, target)).rejects.toThrow(`corps/${corpIds[1]}.db has schema version`);
  expect(existsSync(target)).toBe(false);
});

test("restore as root into an existing directory hands the files to the directory's owner", async () => {
  if (process.getuid?.() !== 0) {
    console.log("not root: skipping the ownership check");
    return;
  }
  const { t } = await populated();
  const backupDir = join(fresh(), "b");
  await createBackup(t.dir, backupDir);
  const target = fresh();
  chownSync(target, 4242, 4343);
  await restoreBackup(backupDir, target);
  for (const p of [join(target, "platform.db"), join(target, "corps"), ...readdirSync(join(target, "corps")).map((f) => join(target, "corps", f))]) {
    expect([statSync(p).uid, statSync(p).gid]).toEqual([4242, 4343]);
  }
});

test("corpadmin backup and restore through the command line", async () => {
  const { t, corpIds } = await populated();
  // A generated signing key (test apps configure theirs) travels with the backup, still 0600.
  writeFileSync(join(t.dir, "secret.key"), "generated-key\n", { mode: 0o600 });
  const cli = (...args: string[]) => Bun.spawnSync(["bun", join(root, "src/main.ts"), ...args], { stdout: "pipe", stderr: "pipe" });
  const backupDir = join(fresh(), "cli-backup");
  const b = cli("backup", backupDir, "--data-dir", t.dir);
  expect(b.stderr.toString()).toBe("");
  expect(b.exitCode).toBe(0);
  expect(b.stdout.toString()).toContain("3 corporation database(s)");
  const manifest = await verifyBackup(backupDir);
  expect(manifest.files.filter((f) => f.kind === "corporation").map((f) => f.corp_id).sort()).toEqual([...corpIds].sort());

  const refused = cli("restore", backupDir, "--data-dir", t.dir);
  expect(refused.exitCode).toBe(1);
  expect(refused.stderr.toString()).toContain("not empty");

  const target = join(fresh(), "new-data");
  const r = cli("restore", backupDir, "--data-dir", target);
  expect(r.exitCode).toBe(0);
  expect(r.stdout.toString()).toContain("gamma");
  expect(r.stdout.toString()).toContain("built-in server");
  expect(statSync(join(target, "secret.key")).mode & 0o777).toBe(0o600);
  const dry = cli("migrate", "--dry-run", "--data-dir", target);
  expect(dry.stdout.toString()).toContain("all 4 database(s) are up to date");

  const missingArg = cli("backup");
  expect(missingArg.exitCode).toBe(2);
}, 30_000);
