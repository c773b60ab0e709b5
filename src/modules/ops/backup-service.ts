// The backups of --backup-dir as the API shows them: listed from their manifests, taken now
// through the store (the same consistent copy as `corpadmin backup`, then verified).
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { AppContext } from "../../core/context";
import type { Principal } from "../../core/principal";
import { conflict, notFound, Problem } from "../../lib/problem";
import { tarStream, type TarEntry } from "../../lib/tar";
import { createBackup, storeSource, verifyBackup, type BackupLock, type BackupTaker } from "./backup";
import { BackupError, BackupUnavailable, fsyncPath, MANIFEST, type Manifest } from "./backup-manifest";
import type { Backup } from "./model";

/** Backups made through the API; scheduled ones carry milliseconds (ops/backup.ts). */
const API_NAME = /^corpadmin-\d{8}T\d{6}Z$/;
const SCHEDULED_NAME = /^corpadmin-\d{8}T\d{6}\.\d{3}Z$/;
const isBackupName = (name: string) => API_NAME.test(name) || SCHEDULED_NAME.test(name);

export const apiBackupName = (at: number) => `corpadmin-${new Date(at).toISOString().replace(/[-:]/g, "").replace(/\.\d{3}Z$/, "Z")}`;

function readManifest(dir: string): Manifest | null {
  try {
    const m = JSON.parse(readFileSync(join(dir, MANIFEST), "utf8")) as Manifest;
    return Array.isArray(m?.files) ? m : null;
  } catch {
    return null;
  }
}

function describe(backupDir: string, name: string): Backup | null {
  const dir = join(backupDir, name);
  const manifest = readManifest(dir);
  // A directory without a manifest is not a backup (an interrupted run).
  if (!manifest) return null;
  let complete = true;
  for (const f of manifest.files) {
    // statSync without throwing: the schedule may be pruning this very backup.
    const size = statSync(join(dir, String(f.path)), { throwIfNoEntry: false })?.size;
    if (size !== f.size) complete = false;
  }
  return {
    name,
    created_at: manifest.created_at,
    size_bytes: manifest.files.reduce((n, f) => n + (Number(f.size) || 0), 0),
    corporations: manifest.engine === "pg" ? Number(manifest.corporations) || 0 : manifest.files.filter((f) => f.kind === "corporation").length,
    scheduled: SCHEDULED_NAME.test(name),
    verified: complete,
  };
}

export function listBackups(backupDir: string): Backup[] {
  if (!existsSync(backupDir)) return [];
  const out: Backup[] = [];
  for (const name of readdirSync(backupDir)) {
    if (!isBackupName(name)) continue;
    const b = describe(backupDir, name);
    if (b) out.push(b);
  }
  return out.sort((a, b) => (a.created_at === b.created_at ? b.name.localeCompare(a.name) : b.created_at.localeCompare(a.created_at)));
}

/** The directory of a complete backup named `name`; 404 for any other name (no path ever leaves backupDir). */
function backupPath(backupDir: string, name: string): string {
  if (!isBackupName(name)) throw notFound("Backup");
  const dir = join(backupDir, name);
  if (!existsSync(join(dir, MANIFEST))) throw notFound("Backup");
  return dir;
}

/**
 * How this service takes a backup: the SQLite files through the store's read connections, or in
 * cluster mode the whole PostgreSQL database with pg_dump (as --backup-database-url's role).
 */
export function backupTaker(ctx: Pick<AppContext, "logger" | "store" | "config" | "tenants">): BackupTaker {
  const { dataDir, dataKeyFile, databaseUrl, backupDatabaseUrl } = ctx.config;
  // pg-backup.ts is loaded on the first cluster-mode backup: embedded mode never evaluates it.
  if (!ctx.tenants.filesPerCorp) return async (dest) => (await import("./pg-backup")).createPgBackup((backupDatabaseUrl ?? databaseUrl)!, dataDir, dest, ctx.logger, dataKeyFile);
  return (dest) => createBackup(dataDir, dest, ctx.logger, storeSource(ctx), dataKeyFile);
}

/** Takes a backup now into `<name>.partial`, verifies it, renames it. */
export async function createApiBackup(ctx: Pick<AppContext, "logger" | "store" | "config" | "tenants">, at: number): Promise<Backup> {
  const { backupDir } = ctx.config;
  const name = apiBackupName(at);
  const dir = join(backupDir, name);
  if (existsSync(dir)) throw conflict(`A backup named ${name} exists already: try again in a second`);
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  try {
    await backupTaker(ctx)(partial);
    // The whole check: every file against its size and SHA-256, and integrity_check (pg: the archive reads) again.
    await verifyBackup(partial);
    renameSync(partial, dir);
    fsyncPath(backupDir);
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
  ctx.logger.info("backup done", { dir, via: "api" });
  return describe(backupDir, name)!;
}

/** The files of a backup as archive entries: what its directory holds, manifest first. */
function entriesOf(dir: string): TarEntry[] {
  const entries: TarEntry[] = [{ name: MANIFEST, path: join(dir, MANIFEST) }];
  const walk = (rel: string) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const name = rel ? `${rel}/${e.name}` : e.name;
      if (name === MANIFEST) continue;
      if (e.isDirectory()) {
        entries.push({ name: `${name}/` });
        walk(name);
      } else if (e.isFile()) entries.push({ name, path: join(dir, name) });
    }
  };
  walk("");
  return entries;
}

/** A backup's files as one tar stream (404 for an unknown name). */
export function backupArchive(backupDir: string, name: string): ReadableStream<Uint8Array> {
  const dir = backupPath(backupDir, name);
  try {
    return tarStream(entriesOf(dir));
  } catch (err) {
    // Deleted or pruned between the check and the opening of its files.
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw notFound("Backup");
    throw err;
  }
}

export function deleteBackup(backupDir: string, name: string): void {
  rmSync(backupPath(backupDir, name), { recursive: true, force: true });
}

/** POST /api/backup: one backup at a time (409 while one runs), audited either way. */
export async function takeBackupFor(ctx: AppContext, lock: BackupLock, principal: Principal): Promise<Backup> {
  const run = lock.tryRun(() => createApiBackup(ctx, ctx.now()));
  if (!run) throw conflict("A backup is running: try again when it has finished");
  try {
    const backup = await run;
    await ctx.audit.record({ action: "backup.create", outcome: "success", actor_user_id: principal.userId, target: backup.name, ip: principal.ip, request_id: principal.requestId });
    return backup;
  } catch (err) {
    const reason = err instanceof BackupUnavailable ? "backup-unavailable" : err instanceof BackupError ? "backup-failed" : "error";
    await ctx.audit.record({ action: "backup.create", outcome: "failure", actor_user_id: principal.userId, ip: principal.ip, request_id: principal.requestId, reason });
    // Cluster mode without pg_dump, or with a role that cannot read every row: the operator's to set up.
    if (err instanceof BackupUnavailable) throw conflict(`This node cannot take a backup: ${err.message}`);
    // Not the client's doing: a 500 that says why (disk full, a database that fails its check).
    if (err instanceof BackupError) throw new Problem(500, "internal", "Internal error", `The backup failed: ${err.message}`);
    throw err;
  }
}

/** DELETE /api/backup/{name}, audited. */
export async function deleteBackupFor(ctx: AppContext, principal: Principal, name: string): Promise<void> {
  deleteBackup(ctx.config.backupDir, name);
  await ctx.audit.record({ action: "backup.delete", outcome: "success", actor_user_id: principal.userId, target: name, ip: principal.ip, request_id: principal.requestId });
}
