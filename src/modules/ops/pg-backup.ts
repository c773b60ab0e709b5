// Cluster mode's backups (issue 19 item 4): the whole PostgreSQL database with PostgreSQL's own
// tools, into the same directories, names and manifest idea as the SQLite backups (backup.ts).
//
// Backup: `pg_dump --format=custom` (corpadmin.dump) of everything in the database, from ONE
// snapshot: a REPEATABLE READ transaction exports it (pg_export_snapshot), reads the counts the
// manifest records (migrations, corporations, users), and pg_dump runs on it (`--snapshot`), so
// the manifest and the dump agree. The tenant tables FORCE row-level security, which also holds
// the app's role (their owner), so pg_dump needs a role that bypasses it (BYPASSRLS or superuser:
// --backup-database-url); checked first, with a message saying so. The node's secret.key and
// data.key are copied beside it as on SQLite. manifest.json is written last.
//
// Restore: into the configured database, connected as the app's role (the one the nodes use, so it
// owns what the restore creates). The dump's schema is created before its rows and row-level
// security is enabled only in its post-data section, so the rows load with COPY as that role.
// One transaction in psql: the migration lock, the corpadmin tables dropped, the archive's script
// (pg_restore -f -, without ownership, grants and the extension, which the migrator owns), and
// COMMIT sent only once pg_restore has exited 0; then the migrator brings an older backup up to date.
//
// Tools: pg_dump/pg_restore/psql (postgresql-client), the highest version found on PATH or under
// /usr/lib/postgresql/*/bin, and at least the server's major version. The password never goes into
// argv or a log: PGPASSWORD in the child's environment.
import { SQL } from "bun";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import type { Logger } from "../../lib/log";
import { toIso } from "../../lib/time";
import { migrationsOf } from "../../db/migrations";
import { FOLD_FUNCTION, migratePg, MIGRATION_LOCK_KEY, TRIGRAM_INDEXES } from "../../db/pg/migrate";
import { PLATFORM_TABLES, siteCounts, targetState, TENANT_TABLES } from "../../db/pg/copy";
import { redactedDatabaseUrl } from "../../db/pg/url";
import { VERSION } from "../../version";
import { BACKUP_FORMAT, BackupError, BackupUnavailable, checkEngine, copyKeyFiles, ensureEmptyDir, fsyncPath, keyFilePaths, measureFiles, PG_DUMP_FILE, writeManifest, type Manifest, type ManifestFile } from "./backup-manifest";

type Tool = "pg_dump" | "pg_restore" | "psql";

/** A connection URL for libpq without its password, and the environment that carries it. */
function libpq(url: string): { url: string; env: Record<string, string> } {
  const u = new URL(url);
  const password = decodeURIComponent(u.password);
  u.password = "";
  const env: Record<string, string> = { PGAPPNAME: "corpadmin-backup", PGCONNECT_TIMEOUT: "10" };
  if (password) env.PGPASSWORD = password;
  return { url: u.toString(), env };
}

/** libpq's variables that name a target or a credential: the URL alone says where and as whom. */
const TARGET_VARS = new Set(["PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD", "PGPASSFILE", "PGSERVICE", "PGSERVICEFILE", "PGOPTIONS"]);

function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !TARGET_VARS.has(k)) env[k] = v;
  return { ...env, ...extra };
}

/** The first statement on a connection: a refused login or an unreachable server is the operator's to fix, said plainly. */
async function reach<T>(url: string, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new BackupUnavailable(`cannot reach ${what} ${redactedDatabaseUrl(url)}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Major version of a PostgreSQL client tool, from `--version` ("pg_dump (PostgreSQL) 15.18 ..."); null when it does not run. */
function toolMajor(path: string): number | null {
  try {
    const p = Bun.spawnSync([path, "--version"], { stdout: "pipe", stderr: "pipe" });
    const m = /\(PostgreSQL\)\s+(\d+)/.exec(p.stdout.toString());
    return p.exitCode === 0 && m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** The newest `tool` found on PATH or under /usr/lib/postgresql/<version>/bin, if it can read a server of `serverMajor`. */
export function findPgTool(tool: Tool, serverMajor: number, searchPath: string = process.env.PATH ?? ""): string {
  const candidates = new Set<string>();
  for (const dir of searchPath.split(delimiter)) if (dir && existsSync(join(dir, tool))) candidates.add(join(dir, tool));
  const lib = "/usr/lib/postgresql";
  if (existsSync(lib)) for (const v of readdirSync(lib)) if (existsSync(join(lib, v, "bin", tool))) candidates.add(join(lib, v, "bin", tool));
  let best: { path: string; major: number } | null = null;
  for (const path of candidates) {
    const major = toolMajor(path);
    if (major !== null && (!best || major > best.major)) best = { path, major };
  }
  const pkg = `postgresql-client-${serverMajor}`;
  if (!best) throw new BackupUnavailable(`${tool} is not installed: cluster-mode backups use PostgreSQL's own tools; install the ${pkg} package (apt-get install ${pkg})`);
  if (best.major < serverMajor)
    throw new BackupUnavailable(`${tool} ${best.major} (${best.path}) is older than the PostgreSQL ${serverMajor} server and cannot read it: install the ${pkg} package`);
  return best.path;
}

/** Runs a tool to its end; BackupError with its stderr (the password is never in it: not in argv). */
async function run(argv: string[], env: Record<string, string>, what: string): Promise<string> {
  const p = Bun.spawn(argv, { env: childEnv(env), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new BackupError(`${what} failed (exit ${code}): ${err.trim().slice(0, 2000)}`);
  return out;
}

async function serverMajor(conn: SQL): Promise<{ major: number; version: string }> {
  const [row] = await conn`SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS version`;
  return { major: Math.floor(Number(row.num) / 10000), version: String(row.version) };
}

/**
 * Dumps the database at `url` into `dest` (absent or empty): corpadmin.dump, the node's keys from
 * `dataDir`, manifest.json last. Throws BackupUnavailable when the role or the tools cannot do it.
 */
export async function createPgBackup(url: string, dataDir: string, dest: string, logger?: Logger, dataKeyFile: string | null = null): Promise<Manifest> {
  ensureEmptyDir(dest, "backup directory");
  const createdAt = toIso(Date.now());
  const conn = new SQL({ url, max: 1 });
  const files: ManifestFile[] = [];
  let counts: { migrations: number; corporations: number; users: number };
  let server: { major: number; version: string };
  try {
    const [role] = await reach(url, "the database to back up,", () => conn`SELECT current_user AS name, rolsuper OR rolbypassrls AS bypass FROM pg_roles WHERE rolname = current_user`);
    if (!role?.bypass)
      throw new BackupUnavailable(
        `PostgreSQL role ${role?.name ?? "?"} is held by row-level security and cannot read every corporation's rows: ` +
          "set --backup-database-url (CORPADMIN_BACKUP_DATABASE_URL) to a role with BYPASSRLS and SELECT on corpadmin's tables (deploy/cluster/README.md, Backups)",
      );
    server = await serverMajor(conn);
    const pgDump = findPgTool("pg_dump", server.major);
    const target = libpq(url);
    counts = await conn.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
      const [{ snapshot }] = await tx`SELECT pg_export_snapshot() AS snapshot`;
      const [row] = await tx`SELECT count(*)::int AS migrations FROM drizzle.__drizzle_migrations`;
      // An older database (a backup taken before this release's migrations) lacks newer tables.
      const held = await siteCounts(tx);
      // The snapshot lives as long as this transaction: pg_dump must finish inside it.
      // A lock pg_dump cannot get within a minute (a migration's) fails the backup instead of hanging it.
      await run([pgDump, "--format=custom", "--no-password", "--lock-wait-timeout=60000", `--snapshot=${snapshot}`, "--file", join(dest, PG_DUMP_FILE), "--dbname", target.url], target.env, "pg_dump");
      return { migrations: Number(row.migrations), corporations: held.corporations, users: held.users };
    });
  } finally {
    await conn.close();
  }
  fsyncPath(join(dest, PG_DUMP_FILE));
  // The integrity check of a custom-format archive: pg_restore reads its table of contents.
  await listArchive(join(dest, PG_DUMP_FILE), server.major);
  files.push({ path: PG_DUMP_FILE, kind: "database", size: 0, sha256: "", schema_version: counts.migrations });
  files.push(...copyKeyFiles(dataDir, dataKeyFile, dest));
  await measureFiles(dest, files);
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    engine: "pg",
    created_at: createdAt,
    app_version: VERSION,
    source_data_dir: dataDir,
    source_database: redactedDatabaseUrl(url),
    server_version: server.version,
    schema_versions: { pg: migrationsOf("pg").length },
    corporations: counts.corporations,
    users: counts.users,
    files,
    missing: [],
  };
  writeManifest(dest, manifest);
  logger?.debug("pg backup written", { dir: dest, corporations: counts.corporations });
  return manifest;
}

/** The archive's table of contents (pg_restore -l); BackupError when it cannot be read. */
async function listArchive(path: string, serverMajorVersion = 0): Promise<string> {
  return run([findPgTool("pg_restore", serverMajorVersion), "--list", path], {}, `reading ${PG_DUMP_FILE}`);
}

/** The dump's own check, after the manifest's sizes and checksums (verifyBackup): the archive reads. */
export async function verifyPgArchive(dir: string): Promise<void> {
  await listArchive(join(dir, PG_DUMP_FILE));
}

/** Migrations recorded in the archive's drizzle.__drizzle_migrations (its data, not the editable manifest). */
async function archiveMigrations(pgRestore: string, path: string): Promise<number> {
  const script = await run([pgRestore, "--data-only", "--schema=drizzle", "--table=__drizzle_migrations", "--file=-", path], {}, "reading the archive's migrations");
  // COPY ... FROM stdin; <one line a row> \.
  const m = /^COPY drizzle\.__drizzle_migrations [^\n]*\n([\s\S]*?)^\\\.$/m.exec(script);
  return m ? m[1].split("\n").filter(Boolean).length : 0;
}

export interface PgRestoreResult {
  manifest: Manifest;
  corporations: number;
  /** Migrations the migrator applied after the restore (an older backup). */
  migrated: string[];
  /** Key files written into the data directory, and those kept aside as `<name>.before-restore`. */
  keys: { written: string[]; replaced: string[] };
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Restores a verified cluster-mode backup into the database at `url` (the app's role): refused
 * when the database holds a corporation or a user, unless `replace`, and while another session
 * is connected to it. `dataDir` receives the backup's keys.
 */
export async function restorePgBackup(
  manifest: Manifest,
  backupDir: string,
  url: string,
  dataDir: string,
  opts: { replace: boolean; log?: (line: string) => void; dataKeyFile?: string | null },
): Promise<PgRestoreResult> {
  const archive = join(backupDir, PG_DUMP_FILE);
  const conn = new SQL({ url, max: 1 });
  try {
    const server = await reach(url, "the database to restore into,", () => serverMajor(conn));
    const pgRestore = findPgTool("pg_restore", server.major);
    const psql = findPgTool("psql", server.major);
    const known = migrationsOf("pg").length;
    const inArchive = await archiveMigrations(pgRestore, archive);
    if (inArchive > known)
      throw new BackupError(`${PG_DUMP_FILE} has schema version ${inArchive}, newer than this corpadmin ${VERSION} knows (${known}): restore it with the release that made the backup (${manifest.app_version}) or a newer one`);
    // Refused before anything is written: a data directory whose keys are not the backup's.
    restoreKeys(manifest, backupDir, dataDir, opts.dataKeyFile ?? null, opts.replace, true);
    // The tables exist (an empty database is migrated first), and the collation is checked.
    await migratePg(conn);
    const state = await targetState(conn);
    if ((state.corporations || state.users) && !opts.replace)
      throw new BackupError(
        `the PostgreSQL database already holds data (${state.corporations} corporation(s), ${state.users} user(s)); ` +
          "--replace deletes every corpadmin table there (every corporation's data and the platform's) and restores the backup in their place",
      );
    const others = await conn`SELECT pid, coalesce(nullif(application_name, ''), client_addr::text, 'local') AS who FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`;
    if (others.length)
      throw new BackupError(
        `${others.length} other session(s) are connected to the database (${others.map((o: { pid: number; who: string }) => `${o.pid} ${o.who}`).join(", ")}): ` +
          "stop every app node first (systemctl stop corpadmin on each)",
      );
    // Everything corpadmin keeps, whichever release made it: this binary's tables and the archive's.
    const toc = await listArchive(archive, server.major);
    const tables = new Set([...PLATFORM_TABLES, ...TENANT_TABLES].map((t) => t.name));
    for (const m of toc.matchAll(/^\d+; \d+ \d+ TABLE public (\S+) /gm)) tables.add(m[1]);
    // Entries the restore leaves out: the extensions (the migrator creates them; their comments
    // need their owner), the search fold function and the trigram indexes (the migrator makes them
    // here, after the restore, where pg_trgm may be had: src/db/pg/migrate.ts).
    const made = new Set<string>([FOLD_FUNCTION, ...TRIGRAM_INDEXES.map((i) => i.name)]);
    const list = toc
      .split("\n")
      .filter((l) => !/^\d+; \d+ \d+ (EXTENSION|COMMENT - EXTENSION) /.test(l))
      .filter((l) => !made.has(/^\d+; \d+ \d+ (?:FUNCTION|INDEX) \S+ ([^\s(]+)/.exec(l)?.[1] ?? ""))
      .join("\n");
    // Not in the backup directory, which may be read-only.
    const tmp = mkdtempSync(join(tmpdir(), "corpadmin-restore-"));
    const listFile = join(tmp, "toc.list");
    const target = libpq(url);
    const steps = [
      "BEGIN;",
      // A node starting meanwhile waits for the restore, then migrates what it finds.
      `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY.toString()});`,
      "DROP SCHEMA IF EXISTS drizzle CASCADE;",
      `DROP TABLE IF EXISTS ${[...tables].map(quote).join(", ")} CASCADE;`,
      "",
    ].join("\n");
    writeFileSync(listFile, list, { mode: 0o600 });
    opts.log?.(`restoring ${PG_DUMP_FILE} into ${redactedDatabaseUrl(url)} (one transaction)`);
    try {
      const script = Bun.spawn([pgRestore, "--no-owner", "--no-acl", "--use-list", listFile, "--file=-", archive], { env: childEnv({}), stdout: "pipe", stderr: "pipe" });
      const apply = Bun.spawn([psql, "--no-psqlrc", "--quiet", "--set=ON_ERROR_STOP=1", "--file=-", "--dbname", target.url], {
        // Only warnings and errors on stderr (not DROP ... CASCADE's notices).
        env: childEnv({ ...target.env, PGOPTIONS: "-c client_min_messages=warning" }),
        stdin: "pipe",
        stdout: "ignore",
        stderr: "pipe",
      });
      const scriptErr = new Response(script.stderr).text();
      const applyErr = new Response(apply.stderr).text();
      // The script is forwarded, and COMMIT written only once pg_restore has exited 0: a script cut
      // short (an unreadable archive) ends psql's session inside the transaction, which rolls back.
      // (psql --single-transaction would commit whatever it had read at end of input.)
      let applying = true;
      const send = async (chunk: string | Uint8Array) => {
        if (!applying) return;
        try {
          apply.stdin.write(chunk);
          await apply.stdin.flush();
        } catch {
          applying = false; // psql stopped on an error: its stderr says which
        }
      };
      await send(steps);
      for await (const chunk of script.stdout) {
        await send(chunk);
        if (!applying) break;
      }
      if (!applying) script.kill();
      const scriptCode = await script.exited;
      if (scriptCode === 0) await send("COMMIT;\n");
      try {
        await apply.stdin.end();
      } catch {
        // already closed by psql's exit
      }
      const applyCode = await apply.exited;
      // pg_restore failing on its own is the cause (psql then fails on the half statement it got);
      // killed here, it only followed psql's error.
      if (scriptCode !== 0 && applying) throw new BackupError(`pg_restore failed (exit ${scriptCode}), the restore was rolled back: ${(await scriptErr).trim().slice(0, 2000)}`);
      if (applyCode !== 0 || scriptCode !== 0) throw new BackupError(`the restore failed and was rolled back (psql exit ${applyCode}): ${(await applyErr).trim().slice(0, 2000)}`);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    // An older backup comes up to date (and FORCE row-level security is checked on every table).
    const migrated = await migratePg(conn);
    const restored = await targetState(conn);
    const keys = restoreKeys(manifest, backupDir, dataDir, opts.dataKeyFile ?? null, opts.replace, false);
    return { manifest, corporations: restored.corporations, migrated: migrated.applied, keys };
  } finally {
    await conn.close();
  }
}

/**
 * The backup's secret.key and data.key into the data directory: written when absent; a different
 * key is refused without `replace` (NAS secrets sealed under the backup's data key open only with it),
 * and kept aside as `<name>.before-restore` with it. `dryRun`: only the refusal, nothing written.
 */
function restoreKeys(manifest: Manifest, backupDir: string, dataDir: string, dataKeyFile: string | null, replace: boolean, dryRun: boolean): PgRestoreResult["keys"] {
  const keys: PgRestoreResult["keys"] = { written: [], replaced: [] };
  const paths = new Map<string, string>(keyFilePaths(dataDir, dataKeyFile));
  for (const f of manifest.files.filter((f) => f.kind === "secret")) {
    const content = readFileSync(join(backupDir, f.path));
    const path = paths.get(f.path) ?? join(dataDir, f.path);
    const differs = existsSync(path) && !readFileSync(path).equals(content);
    if (existsSync(path) && !differs) continue;
    if (differs && !replace) throw new BackupError(`${path} differs from the backup's ${f.path}: move it aside, or restore with --replace (which keeps it as ${path}.before-restore)`);
    if (dryRun) continue;
    mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
    if (differs) {
      renameSync(path, `${path}.before-restore`);
      keys.replaced.push(f.path);
    }
    writeFileSync(path, content, { mode: 0o600 });
    fsyncPath(path);
    fsyncPath(dirname(path));
    keys.written.push(f.path);
  }
  return keys;
}
