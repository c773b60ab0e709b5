// Start-up work on the databases: migrate the platform database, seed what the platform always
// has (the built-in server and the 16 built-in services), then migrate every corporation database.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import type { Logger } from "../lib/log";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import { applyMigrations, migrationStatus, migrationsOf, type Migration } from "./migrations";
import { corporations, servers, services } from "./platform/schema";
import { openPlatformDb, type SqliteDb } from "./sqlite";
import { TenantDbs } from "./tenants";

export const BUILTIN_SERVICES: [identifier: string, name: string][] = [
  ["platform.auth", "Authentication"],
  ["platform.corp", "Corporations"],
  ["platform.user", "Users"],
  ["platform.workgroup", "Workgroups"],
  ["platform.service", "Services and features"],
  ["platform.server", "Database servers"],
  ["platform.core", "Core"],
  ["platform.city", "Cities"],
  ["platform.externalapp", "External applications"],
  ["platform.person", "Persons"],
  ["platform.product", "Products"],
  ["platform.contract", "Contracts"],
  ["platform.webhook", "Webhooks"],
  ["platform.metric", "Metrics"],
  ["platform.isp", "ISP network"],
  ["platform.qrcode", "QR codes"],
];

export const BUILTIN_SERVER_NAME = "builtin";

export function bootstrapPlatform(db: SqliteDb, dataDir: string, migrations: Migration[] = migrationsOf("platform")): { builtinServerId: string } {
  applyMigrations(db, migrations);
  const corpsDir = join(dataDir, "corps");
  mkdirSync(corpsDir, { recursive: true });
  const now = nowIso();
  db.transaction(
    (tx) => {
      tx.insert(servers)
        .values({ id: newId(), name: BUILTIN_SERVER_NAME, path: corpsDir, description: "Built-in data directory", builtin: true })
        .onConflictDoNothing()
        .run();
      // The data directory may have moved since the last start; the built-in server follows it.
      tx.update(servers).set({ path: corpsDir, updated_at: now }).where(sql`${servers.builtin} = 1 AND ${servers.path} <> ${corpsDir}`).run();
      for (const [identifier, name] of BUILTIN_SERVICES) {
        tx.insert(services).values({ id: newId(), identifier, name, builtin: true }).onConflictDoNothing().run();
      }
    },
    { behavior: "immediate" },
  );
  const builtin = db.select({ id: servers.id }).from(servers).where(eq(servers.builtin, true)).get()!;
  return { builtinServerId: builtin.id };
}

/**
 * Migrates the corporation databases. A corporation whose migration fails is rolled back and
 * marked NEEDS_UPDATE so that the others keep serving; the error is logged.
 * `every`: open and check every file (`corpadmin migrate`); otherwise only the corporations whose
 * recorded schema version is behind, or that are marked NEEDS_UPDATE — start-up then opens no
 * file that is known to be current (opening a WAL database costs ≈ 0.5 ms).
 */
export function migrateAllCorps(db: SqliteDb, tenants: TenantDbs, logger: Logger, every = false) {
  const results: { corp_id: string; from: number; to: number; applied: string[]; error: string | null }[] = [];
  const all = db
    .select({ id: corporations.id, status: corporations.status, schema_version: corporations.schema_version })
    .from(corporations)
    .all();
  const latest = tenants.migrations.length;
  for (const corp of all.filter((c) => every || c.schema_version !== latest || c.status === "NEEDS_UPDATE")) {
    try {
      const r = tenants.migrate(corp.id);
      if (corp.status === "NEEDS_UPDATE") {
        db.update(corporations).set({ status: "ENABLED" }).where(eq(corporations.id, corp.id)).run();
      }
      results.push({ corp_id: corp.id, ...r, error: null });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      logger.error("corporation database migration failed", { corp_id: corp.id, error: message });
      db.update(corporations).set({ status: "NEEDS_UPDATE" }).where(eq(corporations.id, corp.id)).run();
      const version = migrationStatus(tenants.get(corp.id).$client, tenants.migrations).version;
      results.push({ corp_id: corp.id, from: version, to: version, applied: [], error: message });
    }
  }
  return results;
}

/**
 * `corpadmin migrate` on embedded mode: the platform database of `dataDir` (created when missing)
 * migrated and seeded, then every corporation's file opened and migrated; everything is closed
 * again. The corporations' results, each with its error (null when it succeeded).
 */
export function migrateDataDir(dataDir: string, logger: Logger) {
  mkdirSync(dataDir, { recursive: true });
  const platform = openPlatformDb(join(dataDir, "platform.db"));
  const tenants = new TenantDbs(platform, logger);
  try {
    bootstrapPlatform(platform, dataDir);
    return migrateAllCorps(platform, tenants, logger, true);
  } finally {
    tenants.closeAll();
    platform.$client.close();
  }
}
