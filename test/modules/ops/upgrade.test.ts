// A newer binary started on an older data directory: the platform database migrates, then each
// corporation's; a corporation whose migration fails is rolled back and marked NEEDS_UPDATE while
// the others serve. The "older" directory is made at test time from the migration history, and
// the "newer release" is the embedded migrations plus one more per set.
// source-only: starts the app with simulated releases' migration lists.
// SQLite only (not in test/pg-backend.txt): builds and migrates older SQLite files (PostgreSQL's migrator: test/db/pg/migrate.test.ts).
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { migrationPlan } from "../../../src/cli/migrate";
import { applyMigrations, migrationsOf, type Migration } from "../../../src/db/migrations";
import { openPlatformDb } from "../../../src/db/sqlite";
import { sha256Hex } from "../../../src/lib/ids";
import type { Logger } from "../../../src/lib/log";
import { addCorp, addUser, makeApp, startAndLogin, tempDir, type TestApp } from "../../support/helpers";
import { sqliteTenants } from "../../support/backend";

const root = join(import.meta.dir, "../../..");
const dirs: string[] = [];
const apps: TestApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.close(false);
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

function migration(tag: string, text: string): Migration {
  // Newer than anything in the history, as a later drizzle-kit generate would be.
  return { tag, sql: text.split("--> statement-breakpoint"), bps: true, folderMillis: Date.now() + 1000, hash: sha256Hex(text) };
}

const NEXT_PLATFORM = migration("9001_probe", "CREATE TABLE `upgrade_probe` (`id` text PRIMARY KEY NOT NULL);\n--> statement-breakpoint\nALTER TABLE `settings` ADD `note` text;");
// Two statements: when the second fails, the first must be rolled back too.
const NEXT_TENANT = migration("9001_probe", "ALTER TABLE `events` ADD `probe` text;\n--> statement-breakpoint\nCREATE TABLE `upgrade_probe` (`id` text PRIMARY KEY NOT NULL);");
const newerRelease = () => ({ platformMigrations: [...migrationsOf("platform"), NEXT_PLATFORM], tenantMigrations: [...migrationsOf("tenant"), NEXT_TENANT] });

const columns = (db: Database, table: string) => (db.query(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
const applied = (db: Database) => (db.query("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n;
const hasTable = (db: Database, name: string) => !!db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name);

function capturingLogger(lines: { msg: string; fields?: Record<string, unknown> }[]): Logger {
  const push = (msg: string, fields?: Record<string, unknown>) => void lines.push({ msg, fields });
  return { debug: push, info: push, warn: push, error: push };
}

test("upgrade: platform then every corporation migrate; a failing corporation rolls back, is NEEDS_UPDATE, the others serve", async () => {
  // The older data directory: today's release with three corporations, a member in each, data.
  const old = await makeApp();
  const dir = old.dir;
  dirs.push(dir);
  await startAndLogin(old);
  const good = await addCorp(old, "good");
  const bad = await addCorp(old, "bad");
  const acme = (await old.ctx.corps.find("acme"))!.id;
  for (const id of [acme, good, bad]) sqliteTenants(old.ctx).migrate(id);
  const members = { good: await addUser(old, good), bad: await addUser(old, bad) };
  for (const id of [acme, good, bad]) old.sqlWrite(id).run("INSERT INTO events (id, type, record_id, payload, created_at) VALUES (?, 'CITY_AFTER_INSERT', ?, '{}', '2026-01-01T00:00:00.000+00:00')", [`old-${id}`, `rec-${id}`]);
  // Drift in one corporation's file (someone created the table by hand): its migration will fail.
  old.sqlWrite(bad).run("CREATE TABLE upgrade_probe (x)");
  await old.close(false);
  const oldTenantVersion = migrationsOf("tenant").length;

  // migrate --dry-run lists what the newer release would apply, per database, and applies nothing.
  const release = newerRelease();
  // Closed means closed: no file of the data directory is still open in this process. The WAL
  // checkpoint thread's connection once lingered until its statements were garbage collected
  // (4 runs in 10 at load 8), and its late close checkpointed the platform file under this test.
  const stillOpen = readdirSync("/proc/self/fd")
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return "";
      }
    })
    .filter((target) => target.startsWith(dir));
  expect(stillOpen).toEqual([]);
  expect(existsSync(join(dir, "platform.db-wal"))).toBe(false);
  const platformBytes = readFileSync(join(dir, "platform.db"));
  const plan = await migrationPlan(dir, release.platformMigrations, release.tenantMigrations);
  expect(plan.map((e) => [e.database, e.auth_name ?? null, e.pending])).toEqual([
    ["platform", null, ["9001_probe"]],
    ["corporation", "acme", ["9001_probe"]],
    ["corporation", "bad", ["9001_probe"]],
    ["corporation", "good", ["9001_probe"]],
  ]);
  expect(readFileSync(join(dir, "platform.db")).equals(platformBytes)).toBe(true);
  const probe = new Database(join(dir, "corps", `${good}.db`), { readonly: true });
  expect(columns(probe, "events")).not.toContain("probe");
  probe.close();

  // The newer release starts on it.
  const logs: { msg: string; fields?: Record<string, unknown> }[] = [];
  const t = await makeApp({ dir, options: { ...release, logger: capturingLogger(logs) } });
  apps.push(t);
  const platform = t.sqlWrite();
  expect(applied(platform)).toBe(release.platformMigrations.length);
  expect(hasTable(platform, "upgrade_probe")).toBe(true);
  expect(columns(platform, "settings")).toContain("note");

  for (const id of [acme, good]) {
    const db = t.sqlWrite(id);
    expect(applied(db)).toBe(oldTenantVersion + 1);
    expect(columns(db, "events")).toContain("probe");
    expect(db.query("SELECT record_id FROM events WHERE id = ?").get(`old-${id}`)).toEqual({ record_id: `rec-${id}` });
    expect((await t.ctx.corps.get(id))!.status).toBe("ENABLED");
  }
  const badDb = t.sqlWrite(bad);
  expect((await t.ctx.corps.get(bad))!.status).toBe("NEEDS_UPDATE");
  expect(applied(badDb)).toBe(oldTenantVersion);
  expect(columns(badDb, "events")).not.toContain("probe"); // the first statement was rolled back
  expect(badDb.query("SELECT record_id FROM events WHERE id = ?").get(`old-${bad}`)).toEqual({ record_id: `rec-${bad}` });
  expect(logs.some((l) => l.msg === "corporation database migration failed" && l.fields?.corp_id === bad)).toBe(true);

  // The others serve; the broken one answers 503 until it is fixed.
  const goodLogin = await t.req("POST", "/api/login", { body: { corp: "good", login: members.good.login, password: members.good.password } });
  expect(goodLogin.status).toBe(200);
  const badLogin = await t.req("POST", "/api/login", { body: { corp: "bad", login: members.bad.login, password: members.bad.password } });
  expect(badLogin.status).toBe(503);
  expect(badLogin.headers.get("retry-after")).toBeTruthy();
  expect((await t.req("GET", "/api/auth/credentials", { token: goodLogin.body.access_token })).status).toBe(200);
  await t.close(false);
  apps.pop();

  // The operator removes the drift; the next start migrates it and puts it back in service.
  const fix = new Database(join(dir, "corps", `${bad}.db`));
  fix.run("DROP TABLE upgrade_probe");
  fix.close();
  const again = await makeApp({ dir, options: newerRelease() });
  apps.push(again);
  expect((await again.ctx.corps.get(bad))!.status).toBe("ENABLED");
  expect(columns(again.sqlWrite(bad), "events")).toContain("probe");
  expect((await again.req("POST", "/api/login", { body: { corp: "bad", login: members.bad.login, password: members.bad.password } })).status).toBe(200);
}, 30_000);

test("a data directory made by an earlier platform schema: `migrate --dry-run` lists it, a start applies it", async () => {
  const history = migrationsOf("platform");
  if (history.length < 2) {
    console.log("the platform migration history has a single entry: no earlier schema to start from");
    return;
  }
  const dir = tempDir("corpadmin-older-");
  dirs.push(dir);
  const older = openPlatformDb(join(dir, "platform.db"));
  applyMigrations(older, history.slice(0, history.length - 1));
  older.$client.close();
  const latest = history[history.length - 1].tag;

  const dry = Bun.spawnSync(["bun", join(root, "src/main.ts"), "migrate", "--dry-run", "--data-dir", dir], { stdout: "pipe", stderr: "pipe" });
  expect(dry.exitCode).toBe(0);
  expect(dry.stdout.toString()).toContain(`schema version ${history.length - 1} of ${history.length}; pending: ${latest}`);
  const still = new Database(join(dir, "platform.db"), { readonly: true });
  expect(applied(still)).toBe(history.length - 1);
  still.close();

  const t = await makeApp({ dir });
  apps.push(t);
  expect(applied(t.sqlWrite())).toBe(history.length);
  await startAndLogin(t);
}, 30_000);
