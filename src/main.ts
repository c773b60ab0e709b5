#!/usr/bin/env bun
// corpadmin: the command line. `corpadmin [serve]`, `migrate`, `backup`, `restore`,
// `copy-to-postgres`, `install-service`, `freeradius-config`, `sql`, `doctor`, `usage rebuild`, `version`, `help`.
import { ConfigError, loadConfig, parseFlags, settingsHelp } from "./config";
import { backup, BACKUP_HELP, restore, RESTORE_HELP } from "./cli/backup";
import { FREERADIUS_HELP, freeradiusConfig } from "./cli/freeradius-config";
import { doctor, DOCTOR_HELP } from "./cli/doctor";
import { installOptionsFrom, installService } from "./cli/install-service";
import { formatMigrationPlan, migrate, migrationPlan, postgresMigrationPlan } from "./cli/migrate";
import { serve } from "./cli/serve";
import { SQL_HELP, sqlShell } from "./cli/sql";
import { usageCommand, USAGE_HELP } from "./cli/usage";
import { VERSION } from "./version";

const USAGE = `corpadmin ${VERSION} — administration and registry service for ISPs

Usage: corpadmin [command] [--flag value ...]

Commands:
  serve      run the HTTP API, webhook dispatcher and metric scheduler (default)
  migrate    apply pending database migrations and exit
             --dry-run: list the pending migrations of every database, apply nothing
  backup <dir>
             consistent copy of every database (also while serving) into <dir>,
             which must be empty or absent; writes manifest.json with checksums.
             Cluster mode: pg_dump of the whole database (corpadmin backup --help)
  restore <backup-dir>
             verify a backup and restore it into --data-dir, which must be empty;
             cluster mode: into --database-url with pg_restore, --replace to
             overwrite a database with data (corpadmin restore --help)
  copy-to-postgres --database-url postgres://...
             copy the embedded site under --data-dir (platform.db and every
             corporation's file, read-only; the service must be stopped) into
             the PostgreSQL database of cluster mode, migrated first; verifies
             every table by row count and checksum, exits 1 on a difference.
             --replace: the target may hold data (every row of every corpadmin
             table there is deleted first); --verify-only: compare, copy nothing
  usage rebuild [--corp AUTH_NAME_OR_ID]
             recompute the daily traffic usage of every corporation (or one)
             from its RADIUS accounting records (after a restore)
  install-service
             install the hardened systemd unit (needs root): creates the user
             and directories, writes the unit, prints the systemctl commands
             --binary PATH (default: this executable; not under /tmp, /var/tmp,
             /home or /root, which the unit's sandbox hides), --user NAME (corpadmin),
             --unit-dir DIR (/etc/systemd/system), --root DIR (install under DIR),
             --dry-run (print what it would do, change nothing)
  freeradius-config --out DIR --client NAME,ADDRESS,SECRET
             (--corp AUTH_NAME | --key API_KEY) [--url URL]
             write the FreeRADIUS 3.2 configuration directory whose rest module
             asks this service (corpadmin freeradius-config --help)
  sql [--corp ID|AUTH_NAME] [-c "SQL"] [--csv]
             read-only SQL over the platform database or a corporation's, with
             this binary's SQLite; one statement with -c, else from standard
             input (corpadmin sql --help). Embedded mode only
  doctor     check the installation (modes, disk, WAL, backups, webhooks, NAS,
             sessions, egress, FreeRADIUS's reach, database integrity); each
             check ok, warn or fail with its fix. --fix repairs file modes,
             --json prints JSON. Exit 0 ok, 1 warn, 2 fail (corpadmin doctor --help)
  version    print the version
  help       print this text

Settings (a flag wins over its environment variable):
${settingsHelp()}
`;

async function main(argv: string[]): Promise<number | null> {
  const { flags, words } = parseFlags(argv);
  const command = words[0] ?? "serve";
  if (command === "help" || flags.has("help")) {
    process.stdout.write(command === "backup" ? BACKUP_HELP : command === "restore" ? RESTORE_HELP : command === "freeradius-config" ? FREERADIUS_HELP : command === "sql" ? SQL_HELP : command === "doctor" ? DOCTOR_HELP : command === "usage" ? USAGE_HELP : USAGE);
    return 0;
  }
  if (command === "version" || flags.has("version")) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  // Needs no settings: its flags are its own.
  if (command === "freeradius-config") return freeradiusConfig(argv, flags);
  const config = loadConfig(flags);
  switch (command) {
    case "serve":
      await serve(config);
      return null; // keeps running until a signal
    case "migrate":
      if (flags.has("dry-run") && flags.get("dry-run") !== "false") {
        process.stdout.write(config.databaseUrl ? await postgresMigrationPlan(config.databaseUrl) : formatMigrationPlan(await migrationPlan(config.dataDir)));
        return 0;
      }
      return migrate(config);
    case "backup":
      return backup(config, words[1]);
    case "restore":
      return restore(config, words[1], flags.has("replace") && flags.get("replace") !== "false");
    case "copy-to-postgres": {
      // Loaded for this command only: `serve` in embedded mode never evaluates PostgreSQL code.
      const { copyFlagsFrom, copyToPostgres } = await import("./cli/copy-to-postgres");
      return copyToPostgres(config, copyFlagsFrom(flags));
    }
    case "sql":
      return sqlShell(config, argv);
    case "usage":
      return usageCommand(config, words[1], flags.get("corp"));
    case "install-service":
      return installService(installOptionsFrom(flags));
    case "doctor":
      return doctor(config, { fix: flags.has("fix") && flags.get("fix") !== "false", json: flags.has("json") && flags.get("json") !== "false" });
    default:
      process.stderr.write(`unknown command '${command}'\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== null) process.exit(code);
  },
  (err) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`corpadmin: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`corpadmin: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
