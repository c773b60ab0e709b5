// `corpadmin migrate`: applies pending migrations to the platform database and every corporation
// database, then exits. (`serve` does the same at start.)
import { SQL } from "bun";
import { join } from "node:path";
import { existsSync } from "node:fs";
import type { Config } from "../config";
import { migrateDataDir } from "../db/bootstrap";
import { fileSchemaStatus, withDatabaseFile } from "../db/files";
import { migrationsOf, type Migration } from "../db/migrations";
import { allCorpRefs } from "../modules/corp/service";
import { serverDirs } from "../modules/server/service";
import { createLogger, type Logger } from "../lib/log";
import { redactedDatabaseUrl } from "../db/pg/url";

export async function migrate(config: Config): Promise<number> {
  const logger = createLogger(config.logLevel);
  if (config.databaseUrl) return migratePostgres(config.databaseUrl, config.dataDir, logger);
  const results = migrateDataDir(config.dataDir, logger);
  const failed = results.filter((r) => r.error);
  for (const r of results) logger.info("corporation database", r);
  logger.info("migrate done", { engine: "sqlite", corporations: results.length, failed: failed.length });
  return failed.length ? 1 : 0;
}

/**
 * PostgreSQL (cluster mode): the one database, platform and tenant tables together, under the
 * migrator's advisory lock (a node starting meanwhile waits), and the built-in rows seeded.
 */
async function migratePostgres(url: string, dataDir: string, logger: Logger): Promise<number> {
  const { preparePostgres } = await import("../core/pg/store");
  const start = await preparePostgres(url, dataDir);
  try {
    logger.info("migrate done", { engine: "postgres", database_url: redactedDatabaseUrl(url), ...start.migrated });
    return 0;
  } finally {
    await start.sql.close();
  }
}

/**
 * `migrate --dry-run` on PostgreSQL: what the one migration set of the shared database still has
 * pending, read without the lock and without writing anything.
 */
export async function postgresMigrationPlan(url: string, migrations: Migration[] = migrationsOf("pg")): Promise<string> {
  const sql = new SQL(url);
  try {
    const [table] = await sql`SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS found`;
    const last = table.found ? (await sql`SELECT max(created_at)::text AS at FROM drizzle.__drizzle_migrations`)[0].at : null;
    const pending = migrations.filter((m) => last === null || m.folderMillis > Number(last)).map((m) => m.tag);
    const head = `PostgreSQL ${redactedDatabaseUrl(url)}\n  schema version ${migrations.length - pending.length} of ${migrations.length}; `;
    return head + (pending.length ? `pending: ${pending.join(", ")}\n(nothing was applied: --dry-run)\n` : "up to date\n");
  } finally {
    await sql.close();
  }
}

export interface MigrationPlanEntry {
  database: "platform" | "corporation";
  corp_id?: string;
  auth_name?: string;
  path: string;
  exists: boolean;
  version: number;
  latest: number;
  pending: string[];
}

function statusOf(path: string, migrations: Migration[]): { exists: boolean; version: number; latest: number; pending: string[] } {
  if (!existsSync(path)) return { exists: false, version: 0, latest: migrations.length, pending: migrations.map((m) => m.tag) };
  return { exists: true, ...fileSchemaStatus(path, migrations) };
}

/**
 * What `migrate` (or a start) would apply, per database, without writing anything: databases are
 * opened read-only and a missing file or directory stays missing.
 */
export async function migrationPlan(dataDir: string, platformMigrations = migrationsOf("platform"), tenantMigrations = migrationsOf("tenant")): Promise<MigrationPlanEntry[]> {
  const platformPath = join(dataDir, "platform.db");
  const plan: MigrationPlanEntry[] = [{ database: "platform", path: platformPath, ...statusOf(platformPath, platformMigrations) }];
  if (!plan[0].exists) return plan;
  for (const c of await corporationFiles(dataDir)) plan.push({ database: "corporation", corp_id: c.id, auth_name: c.auth_name, path: c.path, ...statusOf(c.path, tenantMigrations) });
  return plan;
}

/**
 * Every corporation's database file, by auth name, read from the platform database (opened
 * read-only; it must exist): `migrate --dry-run` and `corpadmin sql --corp`.
 */
export async function corporationFiles(dataDir: string): Promise<{ id: string; auth_name: string; path: string }[]> {
  // The corporation and server modules read their own tables.
  return await withDatabaseFile(join(dataDir, "platform.db"), "read", async (db) => {
    const dirs = await serverDirs(db);
    return (await allCorpRefs(db))
      .map((c) => {
        const dir = dirs.get(c.server_id)!;
        return { id: c.id, auth_name: c.auth_name, path: join(dir.builtin ? join(dataDir, "corps") : dir.path, `${c.id}.db`) };
      })
      .sort((a, b) => (a.auth_name < b.auth_name ? -1 : a.auth_name > b.auth_name ? 1 : 0));
  });
}

export function formatMigrationPlan(plan: MigrationPlanEntry[]): string {
  const lines = plan.map((e) => {
    const name = e.database === "platform" ? "platform" : `corporation ${e.auth_name} (${e.corp_id})`;
    const state = !e.exists ? "missing: would be created" : `schema version ${e.version} of ${e.latest}`;
    const todo = e.pending.length ? `pending: ${e.pending.join(", ")}` : "up to date";
    return `${name}\n  ${e.path}\n  ${state}; ${todo}`;
  });
  const pending = plan.filter((e) => e.pending.length).length;
  lines.push(pending ? `${pending} of ${plan.length} database(s) have pending migrations (nothing was applied: --dry-run)` : `all ${plan.length} database(s) are up to date`);
  return lines.join("\n") + "\n";
}
