// `corpadmin migrate`: applies pending migrations to the platform database and every corporation
// database, then exits. (`serve` does the same at start.)
import { join } from "node:path";
import { mkdirSync } from "node:fs";
import type { Config } from "../config";
import { bootstrapPlatform, migrateAllCorps } from "../db/bootstrap";
import { openPlatformDb } from "../db/sqlite";
import { TenantDbs } from "../db/tenants";
import { createLogger } from "../lib/log";

export function migrate(config: Config): number {
  const logger = createLogger(config.logLevel);
  mkdirSync(config.dataDir, { recursive: true });
  const platform = openPlatformDb(join(config.dataDir, "platform.db"));
  const tenants = new TenantDbs(platform, logger);
  try {
    bootstrapPlatform(platform, config.dataDir);
    const results = migrateAllCorps(platform, tenants, logger);
    const failed = results.filter((r) => r.error);
    for (const r of results) logger.info("corporation database", r);
    logger.info("migrate done", { corporations: results.length, failed: failed.length });
    return failed.length ? 1 : 0;
  } finally {
    tenants.closeAll();
    platform.$client.close();
  }
}
