// Backups: a consistent snapshot of the platform database and every corporation database, taken
// while the service keeps writing, and its restore into an empty data directory.
//
// Each database is copied with VACUUM INTO in a read transaction, so under WAL it sees one
// committed state and never blocks writers: inside the service on the read connection of the
// database's store door (storeSource), from the command line on a connection of its own
// (fileSource, the default). The copy is fsynced, then
// checked with PRAGMA integrity_check, then hashed into manifest.json, written last: a directory
// without a manifest is not a backup. The platform copy is taken first and the corporations to
// copy are read from it, so every corporation the copied platform knows has its database.
//
// Layout: manifest.json, platform.db, secret.key (the token signing key, when present), data.key
// (the key NAS secrets are sealed with),
// corps/<corp id>.db for every corporation whatever its server.
// In cluster mode (PostgreSQL) the database is one pg_dump archive instead: pg-backup.ts; the
// manifest says which (`engine`), and a restore refuses the other engine's backups. The manifest
// and the key files, common to both, are backup-manifest.ts's; the files are opened through
// src/db/files.ts.
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { isAbsolute, join, normalize } from "node:path";
import type { Logger } from "../../lib/log";
import { toIso } from "../../lib/time";
import { migrationsOf } from "../../db/migrations";
import { VERSION } from "../../version";
import type { AppContext } from "../../core/context";
import { appliedMigrationCount, checkDatabaseFile, copyDatabaseFile, withDatabaseFile } from "../../db/files";
import { allCorpRefs, moveCorpsToServer } from "../corp/service";
import { collectedIndex } from "../metric/service";
import { webhookIndex } from "../webhook/service";
import { builtinServerIdOf, serverDirs } from "../server/service";
import {
  BACKUP_FORMAT,
  BackupError,
  checkEngine,
  copyKeyFiles,
  ensureEmptyDir,
  fsyncPath,
  MANIFEST,
  measureFiles,
  PG_DUMP_FILE,
  sha256File,
  writeManifest,
  type Manifest,
  type ManifestFile,
} from "./backup-manifest";
import { yieldToRequests } from "../../lib/yield";

const integrity = (path: string): string => checkDatabaseFile(path, "full").join("; ");

/** Where a backup copies its databases from. */
export interface BackupSource {
  /** VACUUM INTO `target` from the platform database's last committed state. */
  copyPlatform(platformPath: string, target: string): Promise<void>;
  /** The same for a corporation's database at `path`; false when it has no database file. */
  copyCorp(corpId: string, path: string, target: string): Promise<boolean>;
}

/** Copies through connections of its own (the `corpadmin backup` command, beside a running service). */
export const fileSource: BackupSource = {
  async copyPlatform(platformPath, target) {
    copyDatabaseFile(platformPath, target);
  },
  async copyCorp(_corpId, path, target) {
    if (!existsSync(path)) return false;
    copyDatabaseFile(path, target);
    return true;
  },
};

/** Copies through the service's store: the read connections of its doors. */
export function storeSource(ctx: Pick<AppContext, "store">): BackupSource {
  return {
    copyPlatform: (_platformPath, target) => ctx.store.platform.copyTo(target),
    async copyCorp(corpId, path, target) {
      // Never opened for a backup when missing: opening would create the file.
      if (!existsSync(path)) return false;
      let copied = false;
      try {
        // A visit: the copy does not leave every corporation's database open behind it.
        await ctx.store.visit(corpId, (door) => {
          copied = true;
          return door.copyTo(target);
        });
      } catch (err) {
        // Deleted since the platform copy was taken: its file has moved to DATA_DIR/deleted/.
        if (!copied) return false;
        throw err;
      }
      return true;
    },
  };
}

/** fsync and integrity check of a fresh copy. */
function checkCopy(source: string, target: string): void {
  fsyncPath(target);
  const check = integrity(target);
  if (check !== "ok") throw new BackupError(`integrity check of the copy of ${source} failed: ${check}`);
}



/**
 * Backs up the data directory `dataDir` into `dest` (absent or empty). Between databases it
 * yields to the event loop, so a running service keeps answering while a backup runs.
 */
export async function createBackup(dataDir: string, dest: string, logger?: Logger, source: BackupSource = fileSource, dataKeyFile: string | null = null): Promise<Manifest> {
  const platformPath = join(dataDir, "platform.db");
  if (!existsSync(platformPath)) throw new BackupError(`no platform database in ${dataDir}`);
  ensureEmptyDir(dest, "backup directory");
  mkdirSync(join(dest, "corps"), { mode: 0o700 });
  const createdAt = toIso(Date.now());
  const files: ManifestFile[] = [];
  const missing: Manifest["missing"] = [];

  await source.copyPlatform(platformPath, join(dest, "platform.db"));
  checkCopy(platformPath, join(dest, "platform.db"));
  files.push({ path: "platform.db", kind: "platform", size: 0, sha256: "", schema_version: appliedMigrationCount(join(dest, "platform.db")) });
  // The corporation and server modules read their own tables, here those of the copy.
  const corps = await withDatabaseFile(join(dest, "platform.db"), "read", async (db) => {
    const dirs = await serverDirs(db);
    return (await allCorpRefs(db)).map((c) => ({ ...c, ...dirs.get(c.server_id)! }));
  });

  for (const corp of corps) {
    await yieldToRequests();
    // The built-in server is wherever this data directory is now (it may have moved).
    const dir = corp.builtin ? join(dataDir, "corps") : corp.path;
    const path = join(dir, `${corp.id}.db`);
    const rel = `corps/${corp.id}.db`;
    if (!(await source.copyCorp(corp.id, path, join(dest, rel)))) {
      missing.push({ corp_id: corp.id, auth_name: corp.auth_name, path });
      logger?.warn("backup: corporation database missing", { corp_id: corp.id, path });
      continue;
    }
    checkCopy(path, join(dest, rel));
    const version = appliedMigrationCount(join(dest, rel));
    files.push({
      path: rel,
      kind: "corporation",
      size: 0,
      sha256: "",
      schema_version: version,
      corp_id: corp.id,
      auth_name: corp.auth_name,
      server_id: corp.server_id,
      builtin_server: !!corp.builtin,
    });
  }

  files.push(...copyKeyFiles(dataDir, dataKeyFile, dest));
  await measureFiles(dest, files);
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    engine: "sqlite",
    created_at: createdAt,
    app_version: VERSION,
    source_data_dir: dataDir,
    schema_versions: { platform: migrationsOf("platform").length, tenant: migrationsOf("tenant").length },
    files,
    missing,
  };
  fsyncPath(join(dest, "corps"));
  writeManifest(dest, manifest);
  return manifest;
}




/**
 * Reads a backup's manifest and checks every file against it; throws BackupError listing what is
 * wrong. `engine`: refuse first, with what to do instead, a backup of the other engine.
 */
export async function verifyBackup(dir: string, engine?: "sqlite" | "pg"): Promise<Manifest> {
  const manifestPath = join(dir, MANIFEST);
  if (!existsSync(manifestPath)) throw new BackupError(`${dir} has no ${MANIFEST}: not a corpadmin backup`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  } catch (err) {
    throw new BackupError(`${MANIFEST} is not valid JSON: ${(err as Error).message}`);
  }
  if (manifest?.format !== BACKUP_FORMAT || !Array.isArray(manifest.files)) throw new BackupError(`${MANIFEST} is not a format ${BACKUP_FORMAT} manifest`);
  if (engine) checkEngine(manifest, engine);
  const problems: string[] = [];
  const pg = manifest.engine === "pg";
  if (pg ? manifest.files.filter((f) => f.kind === "database").length !== 1 : manifest.files.filter((f) => f.kind === "platform").length !== 1)
    problems.push(`the manifest must list exactly one ${pg ? "database archive" : "platform database"}`);
  for (const f of manifest.files) {
    const rel = String(f.path ?? "");
    // Paths come from a file anyone could edit: keep them inside the backup directory.
    if (!rel || isAbsolute(rel) || normalize(rel).startsWith("..") || normalize(rel) !== rel) {
      problems.push(`${rel}: not a plain relative path`);
      continue;
    }
    if (f.kind === "corporation" && (rel !== `corps/${f.corp_id}.db` || !/^[0-9a-f-]{36}$/.test(String(f.corp_id)))) {
      problems.push(`${rel}: not the database file of corporation ${f.corp_id}`);
      continue;
    }
    if ((f.kind === "database") !== (pg && rel === PG_DUMP_FILE) || (pg && (f.kind === "platform" || f.kind === "corporation"))) {
      problems.push(`${rel}: not a file of a ${pg ? "cluster-mode" : "SQLite"} backup`);
      continue;
    }
    const path = join(dir, rel);
    if (!existsSync(path)) {
      problems.push(`${rel}: missing`);
      continue;
    }
    const size = statSync(path).size;
    if (size !== f.size) {
      problems.push(`${rel}: size ${size}, the manifest says ${f.size}`);
      continue;
    }
    if ((await sha256File(path)) !== f.sha256) {
      problems.push(`${rel}: sha256 does not match the manifest`);
      continue;
    }
    if (f.kind === "database") {
      try {
        // pg-backup.ts (and the PostgreSQL code it pulls in) is loaded only when an archive is checked.
        await (await import("./pg-backup")).verifyPgArchive(dir);
      } catch (err) {
        problems.push(`${rel}: ${(err as Error).message}`);
      }
    } else if (f.kind !== "secret") {
      const check = integrity(path);
      if (check !== "ok") problems.push(`${rel}: integrity check failed: ${check}`);
    }
  }
  if (problems.length) throw new BackupError(`the backup does not verify:\n  ${problems.join("\n  ")}`);
  return manifest;
}

export interface RestoreResult {
  manifest: Manifest;
  corporations: number;
  /** Corporations that lived on a non-built-in Server, now on the built-in one. */
  moved: { corp_id: string; auth_name?: string; from_server_id?: string }[];
}

/**
 * Restores a verified backup into `dataDir`, which must be absent or empty. Every corporation
 * database goes to DATA_DIR/corps; corporations that lived on another Server are moved to the
 * built-in server, so a restore never writes outside the data directory (the other server's
 * directory may still hold live data, or belong to another machine).
 */
export async function restoreBackup(backupDir: string, dataDir: string): Promise<RestoreResult> {
  if (existsSync(dataDir) && (!statSync(dataDir).isDirectory() || readdirSync(dataDir).length)) {
    throw new BackupError(`data directory ${dataDir} is not empty: restore only into an empty or new directory`);
  }
  const manifest = await verifyBackup(backupDir, "sqlite");
  // A backup made by a newer release carries schema this binary does not know: starting on it
  // would run old code against it. Read the versions from the copies, not the editable manifest.
  const known = { platform: migrationsOf("platform").length, corporation: migrationsOf("tenant").length };
  for (const f of manifest.files) {
    if (f.kind !== "platform" && f.kind !== "corporation") continue;
    const version = appliedMigrationCount(join(backupDir, f.path));
    if (version > known[f.kind]) {
      throw new BackupError(`${f.path} has schema version ${version}, newer than this corpadmin ${VERSION} knows (${known[f.kind]}): restore it with the release that made the backup (${manifest.app_version}) or a newer one`);
    }
  }
  const created = !existsSync(dataDir);
  mkdirSync(join(dataDir, "corps"), { recursive: true, mode: 0o750 });
  try {
    for (const f of manifest.files) {
      const target = join(dataDir, f.path);
      copyFileSync(join(backupDir, f.path), target);
      if (f.kind === "secret") chmodSync(target, 0o600);
      fsyncPath(target);
    }
    const moved = manifest.files
      .filter((f) => f.kind === "corporation" && f.builtin_server === false)
      .map((f) => ({ corp_id: f.corp_id!, auth_name: f.auth_name, from_server_id: f.server_id }));
    await withDatabaseFile(join(dataDir, "platform.db"), "write", async (db) => {
      const builtin = await builtinServerIdOf(db);
      if (!builtin) throw new BackupError("the platform database has no built-in server");
      // One statement: all of them move, or none.
      await moveCorpsToServer(db, moved.map((m) => m.corp_id), builtin);
      // The platform was copied before the corporations: a metric given an endpoint (or a first
      // webhook) meanwhile is in no index yet, so the first start-up reads every corporation.
      await collectedIndex.forget(db);
      await webhookIndex.forget(db);
    });
    fsyncPath(join(dataDir, "platform.db"));
    // Run as root into a directory the service user owns (StateDirectory): hand the files over,
    // or the service could not open them.
    if (!created && process.getuid?.() === 0) {
      const { uid, gid } = statSync(dataDir);
      for (const p of [join(dataDir, "corps"), ...manifest.files.map((f) => join(dataDir, f.path))]) chownSync(p, uid, gid);
    }
    fsyncPath(join(dataDir, "corps"));
    fsyncPath(dataDir);
    return { manifest, corporations: manifest.files.filter((f) => f.kind === "corporation").length, moved };
  } catch (err) {
    // Leave the directory as it was found: empty (or absent).
    if (created) rmSync(dataDir, { recursive: true, force: true });
    else for (const e of readdirSync(dataDir)) rmSync(join(dataDir, e), { recursive: true, force: true });
    throw err;
  }
}

const SCHEDULED = /^corpadmin-\d{8}T\d{6}\.\d{3}Z$/;

/** Names scheduled backups so that they sort by time. */
export const scheduledBackupName = (at: number) => `corpadmin-${new Date(at).toISOString().replace(/[-:]/g, "")}`;

/** Deletes the oldest scheduled backups beyond `keep`, and leftovers of interrupted runs. */
export function pruneBackups(backupDir: string, keep: number): string[] {
  if (!existsSync(backupDir)) return [];
  const entries = readdirSync(backupDir);
  const removed: string[] = [];
  for (const e of entries) {
    if (e.endsWith(".partial") && SCHEDULED.test(e.slice(0, -".partial".length))) {
      rmSync(join(backupDir, e), { recursive: true, force: true });
      removed.push(e);
    }
  }
  const complete = entries.filter((e) => SCHEDULED.test(e) && existsSync(join(backupDir, e, MANIFEST))).sort();
  for (const e of complete.slice(0, Math.max(0, complete.length - keep))) {
    rmSync(join(backupDir, e), { recursive: true, force: true });
    removed.push(e);
  }
  return removed;
}

/**
 * One backup at a time in this process: the scheduled run and POST /api/backup share it, so they
 * never copy the databases twice over at the same moment.
 */
export class BackupLock {
  private running = false;
  get busy(): boolean {
    return this.running;
  }
  /** Runs `fn` unless a backup is running; null when one is. */
  tryRun<T>(fn: () => Promise<T>): Promise<T> | null {
    if (this.running) return null;
    this.running = true;
    return fn().finally(() => {
      this.running = false;
    });
  }
}

/** Takes one backup into `dest` (absent or empty): createBackup on SQLite, createPgBackup in cluster mode. */
export type BackupTaker = (dest: string) => Promise<Manifest>;

/** One scheduled run: back up into `<name>.partial`, rename when complete, prune. */
export async function runScheduledBackup(backupDir: string, keep: number, logger: Logger, take: BackupTaker): Promise<string> {
  mkdirSync(backupDir, { recursive: true, mode: 0o700 });
  // Interrupted runs leave `.partial` directories; only complete backups count toward `keep`.
  pruneBackups(backupDir, Number.MAX_SAFE_INTEGER);
  const name = scheduledBackupName(Date.now());
  const partial = join(backupDir, `${name}.partial`);
  try {
    await take(partial);
    renameSync(partial, join(backupDir, name));
    fsyncPath(backupDir);
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
  const removed = pruneBackups(backupDir, keep);
  logger.info("backup done", { dir: join(backupDir, name), removed });
  return join(backupDir, name);
}
