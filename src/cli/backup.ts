// `corpadmin backup <dir>` and `corpadmin restore <backup-dir>`, in both modes. Embedded (no
// --database-url): a copy of the SQLite files, while a service runs on the same data directory
// (backup), into an empty data directory before one is started on it (restore). Cluster mode
// (--database-url postgres://...): a pg_dump archive of the whole database, restored into the
// configured database with pg_restore (ops/pg-backup.ts).
import { resolve } from "node:path";
import type { Config } from "../config";
import { createLogger } from "../lib/log";
import { redactedDatabaseUrl } from "../db/pg/url";
import { createBackup, restoreBackup, verifyBackup } from "../modules/ops/backup";
import { BackupError } from "../modules/ops/backup-manifest";

const out = (line: string) => process.stdout.write(line + "\n");

export const BACKUP_HELP = `Usage: corpadmin backup <dir> [--data-dir DIR] [--database-url URL [--backup-database-url URL]]

Writes a consistent backup into <dir> (absent or empty), also while the service runs:
  embedded (no --database-url): a copy of platform.db and of every corporation's database
    (VACUUM INTO, integrity-checked), with secret.key and data.key;
  cluster mode (--database-url postgres://...): pg_dump --format=custom of the whole database from
    one snapshot (corpadmin.dump), with this node's secret.key and data.key. pg_dump connects as
    --backup-database-url (a role with BYPASSRLS, or the superuser; default --database-url) and
    must be at least the server's version (package postgresql-client-<version>).
manifest.json is written last: time, version, engine, migrations, sizes and SHA-256 of every file.
`;

export const RESTORE_HELP = `Usage: corpadmin restore <backup-dir> [--data-dir DIR] [--database-url URL [--replace]]

Verifies a backup (sizes, SHA-256, and each database's check) and restores it; stop the service first:
  embedded (no --database-url): into --data-dir, which must be empty or absent; a newer binary
    migrates the databases at start;
  cluster mode (--database-url postgres://..., the app's role): into that database with pg_restore,
    in one transaction, then migrated; refused while the database holds a corporation or a user
    unless --replace (every corpadmin table there is dropped and restored), and while another
    session is connected to it (stop every app node). The backup's keys go into --data-dir;
    copy them to the other app nodes too.
A backup of the other engine is refused: a SQLite backup reaches PostgreSQL through a restore into a
data directory, then \`corpadmin copy-to-postgres\`.
`;

export async function backup(config: Config, dir: string | undefined): Promise<number> {
  if (!dir) {
    process.stderr.write(BACKUP_HELP);
    return 2;
  }
  try {
    if (config.databaseUrl) {
      const url = config.backupDatabaseUrl ?? config.databaseUrl;
      const { createPgBackup } = await import("../modules/ops/pg-backup");
      const m = await createPgBackup(url, config.dataDir, resolve(dir), createLogger(config.logLevel), config.dataKeyFile);
      const bytes = m.files.reduce((n, f) => n + f.size, 0);
      out(`backup of ${redactedDatabaseUrl(url)} written to ${resolve(dir)}: pg_dump of the whole database (${m.corporations} corporation(s), ${m.users} user(s)), ${bytes} bytes, archive readable`);
      return 0;
    }
    const m = await createBackup(config.dataDir, resolve(dir), createLogger(config.logLevel), undefined, config.dataKeyFile);
    const bytes = m.files.reduce((n, f) => n + f.size, 0);
    const corps = m.files.filter((f) => f.kind === "corporation").length;
    out(`backup of ${config.dataDir} written to ${resolve(dir)}: platform + ${corps} corporation database(s), ${bytes} bytes, integrity ok`);
    for (const miss of m.missing) out(`warning: corporation ${miss.auth_name} (${miss.corp_id}) has no database file at ${miss.path}`);
    return 0;
  } catch (err) {
    if (err instanceof BackupError) {
      process.stderr.write(`corpadmin: backup failed: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

export async function restore(config: Config, dir: string | undefined, replace = false): Promise<number> {
  if (!dir) {
    process.stderr.write(RESTORE_HELP);
    return 2;
  }
  try {
    if (config.databaseUrl) {
      const manifest = await verifyBackup(resolve(dir), "pg");
      const { restorePgBackup } = await import("../modules/ops/pg-backup");
      const r = await restorePgBackup(manifest, resolve(dir), config.databaseUrl, config.dataDir, { replace, log: out, dataKeyFile: config.dataKeyFile });
      out(`restored the backup of ${manifest.created_at} (corpadmin ${manifest.app_version}) into ${redactedDatabaseUrl(config.databaseUrl)}: ${r.corporations} corporation(s)`);
      if (r.migrated.length) out(`migrated: ${r.migrated.length} migration(s) applied`);
      const where = (k: string) => (k === "data.key" && config.dataKeyFile ? config.dataKeyFile : `${config.dataDir}/${k}`);
      if (r.keys.written.length) out(`${r.keys.written.map(where).join(", ")} written: give every app node the same key files`);
      for (const k of r.keys.replaced) out(`the previous ${k} is kept as ${where(k)}.before-restore`);
      out("Start the app nodes.");
      return 0;
    }
    if (replace) {
      process.stderr.write("corpadmin: --replace is for cluster mode; an embedded restore goes into an empty data directory\n");
      return 2;
    }
    const r = await restoreBackup(resolve(dir), config.dataDir);
    out(`restored the backup of ${r.manifest.created_at} (corpadmin ${r.manifest.app_version}) into ${config.dataDir}: platform + ${r.corporations} corporation database(s)`);
    for (const m of r.moved) {
      out(`corporation ${m.auth_name ?? m.corp_id} lived on server ${m.from_server_id}; its database is now in ${config.dataDir}/corps (the built-in server)`);
    }
    out("Start the service on this data directory; it migrates the databases if this binary is newer.");
    return 0;
  } catch (err) {
    if (err instanceof BackupError) {
      process.stderr.write(`corpadmin: restore refused: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
