// source-only: runs `bun src/main.ts backup/restore` against a PostgreSQL of its own and opens a NAS secret through the app's context.
// Backups in cluster mode (issue 19 item 4): a pg_dump archive taken through the API, the schedule
// and the CLI, restored with `corpadmin restore` into a fresh database where every corporation's
// data reads back equal and a NAS secret still opens; a database with data is refused without
// --replace; the role that row-level security holds, an old pg_dump, and the other engine's
// backups are refused saying what to do.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ispNas } from "../../src/db/tenant/isp";
import { nasSecret } from "../../src/modules/isp/nas-service";
import { SQL } from "bun";
import { migrationsOf } from "../../src/db/migrations";
import { migratePg } from "../../src/db/pg/migrate";
import { verifyBackup } from "../../src/modules/ops/backup";
import { BackupUnavailable, PG_DUMP_FILE } from "../../src/modules/ops/backup-manifest";
import { createPgBackup, findPgTool } from "../../src/modules/ops/pg-backup";
import { contractBody } from "../support/contract-body";
import { ADMIN, addCorp, addUser, adminIn, makeApp, startAndLogin, tempDir, type TestApp } from "../support/helpers";
import { startPostgres, type TestPostgres } from "../support/postgres";
import { waitFor } from "../support/wait";

const MAIN = join(import.meta.dir, "../../src/main.ts");
const NAS_SECRET = "nas-secret-for-coa-1";

let pg: TestPostgres;
let source: TestApp;
let sourceDb: { url: string; appUrl: string };
const corps: string[] = [];

function cli(args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawnSync(["bun", MAIN, ...args], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, CORPADMIN_DATABASE_URL: "", CORPADMIN_BACKUP_DATABASE_URL: "", CORPADMIN_LOG_LEVEL: "error", ...env },
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

/** One corporation's content through the HTTP API: contracts, a user, a NAS with a secret. */
async function fill(corpId: string, n: number) {
  const as = (method: string, path: string, body?: unknown) => adminIn(source, corpId, method, path, body);
  await as("POST", "/api/externalapp", { name: "erp" });
  for (let i = 0; i < 3; i++) await as("POST", "/api/contract/create/externalapp/name/erp", contractBody(n * 10 + i));
  await addUser(source, corpId, { login: `user-${n}` });
  await as("POST", "/api/isp/nas", { name: `bng-${n}`, ip: `192.0.2.${10 + n}`, secret: NAS_SECRET });
}

/** What a site holds, read through the API as each corporation's admin. */
async function contentOf(t: TestApp) {
  const out: Record<string, unknown> = {};
  for (const corpId of corps) {
    const as = (path: string) => adminIn(t, corpId, "GET", path).then((r) => r.body);
    out[corpId] = { contracts: await as("/api/contract?limit=100"), persons: await as("/api/person?limit=100"), users: await as("/api/user?limit=100"), nas: await as("/api/isp/nas") };
  }
  out.corps = (await adminIn(t, corps[0], "GET", "/api/corp?limit=100")).body;
  return out;
}

/** Every NAS secret of the site, opened with the data key of the app's data directory. */
async function nasSecrets(t: TestApp): Promise<(string | null)[]> {
  const secrets: (string | null)[] = [];
  for (const corpId of corps) {
    const rows = await t.ctx.store.tenant(corpId).read((db) => db.select({ id: ispNas.id, secret_enc: ispNas.secret_enc }).from(ispNas).all());
    for (const row of rows) secrets.push(nasSecret(t.ctx.secrets, row));
  }
  return secrets;
}

beforeAll(async () => {
  pg = await startPostgres();
  sourceDb = await pg.createDatabase("backup_source");
  // The app's role is held by row-level security; pg_dump reads as the superuser (--backup-database-url).
  source = await makeApp({ env: { CORPADMIN_DATABASE_URL: sourceDb.appUrl, CORPADMIN_BACKUP_DATABASE_URL: sourceDb.url, CORPADMIN_BACKUP_CRON: "*/2 * * * * *", CORPADMIN_BACKUP_KEEP: "2", CORPADMIN_LEASE_GRACE_MS: "3000" } });
  corps.push((await startAndLogin(source)).corpId);
  corps.push(await addCorp(source, "beta"));
  corps.push(await addCorp(source, "gamma"));
  for (const [i, corpId] of corps.entries()) await fill(corpId, i + 1);
}, 120_000);

afterAll(async () => {
  await source?.close();
  await pg?.stop();
});

describe("POST /api/backup, GET /api/backup: cluster mode", () => {
  let apiBackup: string;
  let cliBackup: string;
  let before: Record<string, unknown>;
  const restored = tempDir();

  test("the API, the schedule and the CLI each write a verified pg_dump backup with the node's keys", async () => {
    const admin = { token: (await source.req("POST", "/api/login", { body: { corp: "acme", login: ADMIN.login, password: ADMIN.password } })).body.access_token as string };
    // The schedule runs every two seconds: a POST that meets it running is 409, the next one is not.
    const res = await waitFor(
      "a POST between two scheduled backups",
      async () => {
        const r = await source.req("POST", "/api/backup", { token: admin.token });
        return r.status !== 409 && r;
      },
      30_000,
    );
    expect(res.status).toBe(200);
    expect(res.body.corporations).toBe(3);
    expect(res.body.verified).toBe(true);
    apiBackup = join(source.config.backupDir, res.body.name);
    const manifest = await verifyBackup(apiBackup);
    expect(manifest.engine).toBe("pg");
    expect(manifest.files.map((f) => f.path).sort()).toEqual(["corpadmin.dump", "data.key"]);
    expect(manifest.source_database).not.toContain("@127.0.0.1:0");
    expect(statSync(join(apiBackup, "data.key")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(apiBackup, "data.key"))).toEqual(readFileSync(source.config.dataKeyFile ?? join(source.dir, "data.key")));

    // The schedule's lease starts it 3 s after the app (1 s let a proof slower than 200 ms stop it on a loaded machine).
    await waitFor("a scheduled backup", async () => (await source.req("GET", "/api/backup", { token: admin.token })).body.items.some((b: { scheduled: boolean }) => b.scheduled), 30_000);
    const listed = (await source.req("GET", "/api/backup", { token: admin.token })).body.items as { name: string; scheduled: boolean; corporations: number }[];
    const scheduled = listed.find((b) => b.scheduled)!;
    expect(scheduled.corporations).toBe(3);
    await verifyBackup(join(source.config.backupDir, scheduled.name));

    const download = await source.fetch(`/api/backup/${res.body.name}/download`, { headers: { authorization: `Bearer ${admin.token}` } });
    expect(download.status).toBe(200);
    expect((await download.arrayBuffer()).byteLength).toBeGreaterThan(1000);

    cliBackup = join(tempDir(), "cli");
    const made = cli(["backup", cliBackup, "--data-dir", source.dir, "--database-url", sourceDb.appUrl, "--backup-database-url", sourceDb.url]);
    expect(made.err).toBe("");
    expect(made.code).toBe(0);
    expect(made.out).toContain("3 corporation(s)");
    expect(existsSync(join(cliBackup, PG_DUMP_FILE))).toBe(true);
    before = await contentOf(source);
    expect((before[corps[2]] as { contracts: { items: unknown[] } }).contracts.items).toHaveLength(3);
  }, 120_000);

  test("restore into a fresh database: the same data, NAS secrets that open; a database with data needs --replace", async () => {
    const target = await pg.createDatabase("backup_target");
    const done = cli(["restore", apiBackup, "--data-dir", restored, "--database-url", target.appUrl]);
    expect(done.err).toBe("");
    expect(done.code).toBe(0);
    expect(done.out).toContain("3 corporation(s)");
    expect(readFileSync(join(restored, "data.key"))).toEqual(readFileSync(source.config.dataKeyFile ?? join(source.dir, "data.key")));

    const back = await makeApp({ dir: restored, env: { CORPADMIN_DATABASE_URL: target.appUrl, CORPADMIN_BACKUP_DATABASE_URL: "" } });
    try {
      expect(await contentOf(back)).toEqual(before);
      expect(await nasSecrets(back)).toEqual([NAS_SECRET, NAS_SECRET, NAS_SECRET]);
      // The restored site keeps working: a new contract in a restored corporation.
      expect((await adminIn(back, corps[1], "POST", "/api/contract/create/externalapp/name/erp", contractBody(99))).status).toBe(200);
      // Without BYPASSRLS, this node cannot dump every corporation's rows: 409 saying how to set it up.
      const token = (await back.req("POST", "/api/login", { body: { corp: "acme", login: ADMIN.login, password: ADMIN.password } })).body.access_token as string;
      const refused = await back.req("POST", "/api/backup", { token });
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toContain("--backup-database-url");
      // A node still connected to the database: the restore waits for it to be stopped.
      const busy = cli(["restore", cliBackup, "--data-dir", restored, "--database-url", target.appUrl, "--replace"]);
      expect(busy.code).toBe(1);
      expect(busy.err).toContain("stop every app node first");
    } finally {
      await back.close(false);
    }

    const again = cli(["restore", cliBackup, "--data-dir", restored, "--database-url", target.appUrl]);
    expect(again.code).toBe(1);
    expect(again.err).toContain("already holds data (3 corporation(s)");
    expect(again.err).toContain("--replace");

    const replaced = cli(["restore", cliBackup, "--data-dir", restored, "--database-url", target.appUrl, "--replace"]);
    expect(replaced.err).toBe("");
    expect(replaced.code).toBe(0);
    const after = await makeApp({ dir: restored, env: { CORPADMIN_DATABASE_URL: target.appUrl, CORPADMIN_BACKUP_DATABASE_URL: "" } });
    try {
      // The contract made after the first restore is gone: the database is the backup's again.
      expect(await contentOf(after)).toEqual(before);
      expect(await nasSecrets(after)).toEqual([NAS_SECRET, NAS_SECRET, NAS_SECRET]);
    } finally {
      await after.close();
    }
  }, 180_000);

  test("refusals: the app's role, the other engine's backups, --replace on SQLite", async () => {
    const asApp = cli(["backup", join(tempDir(), "b"), "--data-dir", source.dir, "--database-url", sourceDb.appUrl]);
    expect(asApp.code).toBe(1);
    expect(asApp.err).toContain("row-level security");
    expect(asApp.err).toContain("BYPASSRLS");
    const nowhere = cli(["backup", join(tempDir(), "c"), "--data-dir", source.dir, "--database-url", "postgres://corpadmin:secret-password@127.0.0.1:1/corpadmin"]);
    expect(nowhere.code).toBe(1);
    expect(nowhere.err).toContain("cannot reach the database to back up");
    expect(nowhere.err).not.toContain("secret-password");

    // A SQLite site's backup is not restored into PostgreSQL: copy-to-postgres is the way.
    const site = await makeApp({ env: { CORPADMIN_DATABASE_URL: "" } });
    const sqliteBackup = join(tempDir(), "sqlite");
    try {
      await startAndLogin(site);
      expect(cli(["backup", sqliteBackup, "--data-dir", site.dir]).code).toBe(0);
    } finally {
      await site.close();
    }
    const empty = await pg.createDatabase("backup_empty");
    const wrong = cli(["restore", sqliteBackup, "--data-dir", tempDir(), "--database-url", empty.appUrl]);
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain("corpadmin copy-to-postgres");

    // A data directory holding another data key: refused before the database is touched.
    const otherKeys = tempDir();
    writeFileSync(join(otherKeys, "data.key"), "another key\n", { mode: 0o600 });
    const keyed = cli(["restore", apiBackup, "--data-dir", otherKeys, "--database-url", empty.appUrl]);
    expect(keyed.code).toBe(1);
    expect(keyed.err).toContain("differs from the backup's data.key");
    const check = new SQL({ url: empty.url, max: 1 });
    try {
      expect((await check`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`)[0].n).toBe(0);
    } finally {
      await check.close();
    }

    const intoFiles = join(tempDir(), "site");
    const pgOnSqlite = cli(["restore", apiBackup, "--data-dir", intoFiles]);
    expect(pgOnSqlite.code).toBe(1);
    expect(pgOnSqlite.err).toContain("cluster-mode site");
    expect(existsSync(intoFiles) ? readdirSync(intoFiles) : []).toEqual([]);

    expect(cli(["restore", sqliteBackup, "--data-dir", intoFiles, "--replace"]).code).toBe(2);
  }, 120_000);

  test("a backup of an older schema is restored, then migrated up to date", async () => {
    const old = await pg.createDatabase("backup_old");
    const conn = new SQL({ url: old.appUrl, max: 1 });
    try {
      await migratePg(conn, migrationsOf("pg").slice(0, -1));
    } finally {
      await conn.close();
    }
    const dir = join(tempDir(), "old");
    const manifest = await createPgBackup(old.url, tempDir(), dir);
    expect(manifest.files.find((f) => f.kind === "database")?.schema_version).toBe(migrationsOf("pg").length - 1);
    const target = await pg.createDatabase("backup_old_target");
    const done = cli(["restore", dir, "--data-dir", tempDir(), "--database-url", target.appUrl]);
    expect(done.err).toBe("");
    expect(done.out).toContain("migrated: 1 migration(s) applied");
  }, 60_000);

  test("a pg_dump older than the server is a clear error naming the package; help says what each mode does", () => {
    expect(() => findPgTool("pg_dump", 99)).toThrow(BackupUnavailable);
    expect(() => findPgTool("pg_dump", 99)).toThrow("install the postgresql-client-99 package");
    const help = cli(["backup", "--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toContain("pg_dump --format=custom");
    expect(cli(["restore", "--help"]).out).toContain("--replace");
  });
});
