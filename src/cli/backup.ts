// `corpadmin backup <dir>` and `corpadmin restore <backup-dir>`. Both work while a service runs
// on the same data directory (backup) or before one is started on it (restore).
import { resolve } from "node:path";
import type { Config } from "../config";
import { createLogger } from "../lib/log";
import { BackupError, createBackup, restoreBackup } from "../modules/ops/backup";

const out = (line: string) => process.stdout.write(line + "\n");

export async function backup(config: Config, dir: string | undefined): Promise<number> {
  if (!dir) {
    process.stderr.write("usage: corpadmin backup <dir> [--data-dir DIR]\n");
    return 2;
  }
  try {
    const m = await createBackup(config.dataDir, resolve(dir), createLogger(config.logLevel));
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

export async function restore(config: Config, dir: string | undefined): Promise<number> {
  if (!dir) {
    process.stderr.write("usage: corpadmin restore <backup-dir> [--data-dir DIR]   (DIR must be empty or absent)\n");
    return 2;
  }
  try {
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
