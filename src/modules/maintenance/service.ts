// Maintenance (routes.md, Core: versions and databases): the versions of the application and its
// schemas, and the database operations that report and apply the embedded migrations per database.
import { existsSync } from "node:fs";
import { and, eq, sql } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { CORPS_TOPIC } from "../../core/corp-cache";
import { migrationsOf } from "../../db/migrations";
import type { TenantDb } from "../../db/sqlite";
import { conflict, invalid, notFound } from "../../lib/problem";
import { VERSION } from "../../version";
import { allCorpRefs, writeCorpStatus, type CorpRef } from "../corp/service";
import type { CorpUpdate, DatabaseCheck, DatabaseUpdate, TablesResult } from "./model";

// ---- versions ----------------------------------------------------------------------------------

export function versions(ctx: AppContext) {
  return {
    api: VERSION,
    // One shared database (PostgreSQL): one migration set covers the platform's tables and the corporations'.
    platform_schema: ctx.tenants.filesPerCorp ? migrationsOf("platform").length : ctx.tenants.migrations.length,
    tenant_schema: ctx.tenants.migrations.length,
    runtime: `bun ${Bun.version}`,
  };
}

// ---- databases ---------------------------------------------------------------------------------
// Migration state is the storage's to read (ctx.tenants.schemaStatus: each SQLite file's own
// migrator table, or the shared PostgreSQL database's), as last committed.

function getCorpRef(corps: CorpRef[], corpId: string): CorpRef {
  const corp = corps.find((c) => c.id === corpId);
  if (!corp) throw notFound("Corporation");
  return corp;
}

const allCorps = (ctx: AppContext) => ctx.store.platform.read(allCorpRefs);

/** Checking creates nothing: a corporation's missing database file reads as version 0. */
const corpStatus = (ctx: AppContext, corpId: string) => ctx.tenants.schemaStatus(corpId);
const platformStatus = (ctx: AppContext) => ctx.tenants.schemaStatus(null);

export async function checkDatabases(ctx: AppContext): Promise<DatabaseCheck> {
  const platform = await platformStatus(ctx);
  const corps: DatabaseCheck["corps"] = [];
  // One corporation after another: each may open a database file.
  for (const c of await allCorps(ctx)) {
    corps.push({ corp_id: c.id, auth_name: c.auth_name, server_id: c.server_id, status: c.status, ...(await corpStatus(ctx, c.id)) });
  }
  return { platform, corps };
}

function setStatus(ctx: AppContext, corpId: string, status: "ENABLED" | "NEEDS_UPDATE"): Promise<void> {
  return ctx.store.platform.write(async (tx, w) => {
    await writeCorpStatus(tx, corpId, status);
    await ctx.changes.publish(tx, w, CORPS_TOPIC, corpId);
  });
}

/**
 * Migrates one corporation database. The migrator runs everything pending in one transaction, so
 * a failure leaves the database as it was; the corporation is then marked NEEDS_UPDATE (its
 * tenant rows answer 503) until an update succeeds, which sets it ENABLED again.
 */
async function migrateCorp(ctx: AppContext, corp: CorpRef): Promise<CorpUpdate & { error: string | null }> {
  let result;
  try {
    result = await ctx.tenants.migrateLive(corp.id);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    ctx.logger.error("corporation database migration failed", { corp_id: corp.id, error });
    await setStatus(ctx, corp.id, "NEEDS_UPDATE");
    let version = 0;
    try {
      version = (await corpStatus(ctx, corp.id)).version;
    } catch {
      // the database cannot even be opened (its server directory is gone): report version 0
    }
    return { corp_id: corp.id, from: version, to: version, applied: [], error };
  }
  if (corp.status === "NEEDS_UPDATE") await setStatus(ctx, corp.id, "ENABLED");
  return { corp_id: corp.id, ...result, error: null };
}

/**
 * The platform database first (everything else depends on it), then every corporation's. The
 * platform database is migrated when the service starts, before it answers, with the migrations
 * this binary embeds: a running service finds nothing pending there.
 */
export async function updateAll(ctx: AppContext): Promise<DatabaseUpdate> {
  const status = await platformStatus(ctx);
  if (status.pending.length) throw conflict("The platform database has pending migrations: they are applied when the service starts");
  const corps: DatabaseUpdate["corps"] = [];
  for (const c of await allCorps(ctx)) corps.push(await migrateCorp(ctx, c));
  return { platform: { from: status.version, to: status.version, applied: [] }, corps };
}

export async function updateOne(ctx: AppContext, corpId: string): Promise<CorpUpdate> {
  const { error, ...result } = await migrateCorp(ctx, getCorpRef(await allCorps(ctx), corpId));
  if (error !== null) throw conflict(`The migration failed and was rolled back; the corporation is NEEDS_UPDATE: ${error}`);
  return result;
}

async function tableNames(db: TenantDb): Promise<Set<string>> {
  const rows = await db.all<{ name: string }>(
    sql`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '__drizzle_migrations'`,
  );
  return new Set(rows.map((r) => r.name));
}

/** Creates the database file when missing and every table of the current schema; idempotent. */
export async function createTables(ctx: AppContext, corpId: string): Promise<TablesResult> {
  const corp = getCorpRef(await allCorps(ctx), corpId);
  if (!ctx.tenants.filesPerCorp) {
    // The shared tables exist since start-up (migrated there): nothing to create.
    const { error, to } = await migrateCorp(ctx, corp);
    if (error !== null) throw conflict(`Creating the tables failed; the corporation is NEEDS_UPDATE: ${error}`);
    return { corp_id: corpId, created: [], version: to };
  }
  // A cached handle to a file removed underneath would write into the unlinked inode: reopen.
  if (!existsSync(ctx.tenants.pathOf(corpId))) ctx.tenants.close(corpId);
  const door = ctx.store.tenant(corpId);
  const before = await door.read(tableNames);
  const { error, to } = await migrateCorp(ctx, corp);
  if (error !== null) throw conflict(`Creating the tables failed and was rolled back; the corporation is NEEDS_UPDATE: ${error}`);
  const created = [...(await door.read(tableNames))].filter((n) => !before.has(n)).sort();
  return { corp_id: corpId, created, version: to };
}
