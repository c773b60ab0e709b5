// A backup directory's format, whichever engine made it (backup.ts: SQLite files; pg-backup.ts: a
// PostgreSQL archive): manifest.json, written last and atomically (a directory without one is
// not a backup), each file's size and SHA-256 in it, the key files beside the data, and the
// refusal of another engine's backup. Both backup kinds build on this; neither imports the other
// statically (backup.ts loads pg-backup.ts only to check an archive).
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { yieldToRequests } from "../../lib/yield";


export const MANIFEST = "manifest.json";
export const BACKUP_FORMAT = 1;
/** The archive's name inside a cluster-mode backup directory (pg-backup.ts). */
export const PG_DUMP_FILE = "corpadmin.dump";

export interface ManifestFile {
  /** Relative to the backup directory. */
  path: string;
  /** database: the PostgreSQL archive of a cluster-mode backup (pg-backup.ts). */
  kind: "platform" | "corporation" | "database" | "secret";
  size: number;
  sha256: string;
  /** Migrations applied to this database when it was copied. */
  schema_version?: number;
  corp_id?: string;
  auth_name?: string;
  server_id?: string;
  /** false: the corporation lived on another Server (restore moves it to the built-in one). */
  builtin_server?: boolean;
}

export interface Manifest {
  format: number;
  /** What the backup holds: SQLite files, or a PostgreSQL archive (absent in older backups: sqlite). */
  engine?: "sqlite" | "pg";
  created_at: string;
  app_version: string;
  source_data_dir: string;
  /** Migrations the binary that made the backup knows, per database kind (pg: the one shared set). */
  schema_versions: { platform?: number; tenant?: number; pg?: number };
  /** pg: the database dumped (without its password), its server's version, what it held. */
  source_database?: string;
  server_version?: string;
  corporations?: number;
  users?: number;
  files: ManifestFile[];
  /** Corporations the platform names whose database file did not exist. */
  missing: { corp_id: string; auth_name: string; path: string }[];
}

export class BackupError extends Error {}
/** This node cannot take the backup at all (a missing tool, a role that cannot read every row): not a failure of the data. */
export class BackupUnavailable extends BackupError {}

/** Refuses a backup whose engine is not the one configured, saying what to do instead. */
export function checkEngine(manifest: Manifest, engine: "sqlite" | "pg"): void {
  const made = manifest.engine ?? "sqlite";
  if (made === engine) return;
  if (engine === "pg")
    throw new BackupError(
      "this is a backup of an embedded site (SQLite files), and --database-url names PostgreSQL: restore it into an empty data directory " +
        "without --database-url (corpadmin restore <backup-dir> --data-dir DIR), then move that site into PostgreSQL with `corpadmin copy-to-postgres`",
    );
  throw new BackupError("this is a backup of a cluster-mode site (a PostgreSQL dump): restore it with --database-url postgres://... (CORPADMIN_DATABASE_URL) naming the database to restore into");
}

export function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export async function sha256File(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk);
  return hasher.digest("hex");
}

export function ensureEmptyDir(dir: string, what: string): void {
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new BackupError(`${what} ${dir} is not a directory`);
    if (readdirSync(dir).length) throw new BackupError(`${what} ${dir} is not empty`);
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/**
 * The key files a backup carries, by their name in the backup, and where this node keeps them: the
 * token key in DATA_DIR (a --token-secret given as text is the operator's configuration, not a
 * file), the data key in --data-key-file when configured (cluster nodes share one), else DATA_DIR.
 */
export function keyFilePaths(dataDir: string, dataKeyFile: string | null): [name: "secret.key" | "data.key", path: string][] {
  return [
    ["secret.key", join(dataDir, "secret.key")],
    ["data.key", dataKeyFile ?? join(dataDir, "data.key")],
  ];
}

/**
 * The token key and the data key that NAS secrets are sealed with (without it they cannot be
 * opened: RFC 5176 requests answer "set the secret again") into the backup, mode 0600.
 */
export function copyKeyFiles(dataDir: string, dataKeyFile: string | null, dest: string): ManifestFile[] {
  const files: ManifestFile[] = [];
  for (const [name, secret] of keyFilePaths(dataDir, dataKeyFile)) {
    if (!existsSync(secret)) continue;
    writeFileSync(join(dest, name), readFileSync(secret), { mode: 0o600 });
    fsyncPath(join(dest, name));
    files.push({ path: name, kind: "secret", size: 0, sha256: "" });
  }
  return files;
}

/** Each file's size and SHA-256 into its manifest entry (yielding between files: a backup runs beside requests). */
export async function measureFiles(dest: string, files: ManifestFile[]): Promise<void> {
  for (const f of files) {
    await yieldToRequests();
    f.size = statSync(join(dest, f.path)).size;
    f.sha256 = await sha256File(join(dest, f.path));
  }
}

/** manifest.json written last and atomically (a backup without one is incomplete). */
export function writeManifest(dest: string, manifest: Manifest): void {
  const tmp = join(dest, `${MANIFEST}.tmp`);
  writeFileSync(tmp, JSON.stringify(manifest, null, 2) + "\n", { mode: 0o600 });
  fsyncPath(tmp);
  renameSync(tmp, join(dest, MANIFEST));
  fsyncPath(dest);
}
