// Core: the notepad (a tenant table) and the database maintenance operations, which report and
// apply the embedded migrations per database.
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { and, eq } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { applyMigrations, migrationStatus, migrationsOf } from "../../db/migrations";
import { corporations } from "../../db/platform/schema";
import type { TenantDb } from "../../db/sqlite";
import { writeTx } from "../../db/sqlite";
import { notes } from "../../db/tenant/schema";
import { newId } from "../../lib/ids";
import { listRows, type ListParams } from "../../lib/list";
import { conflict, invalid, notFound } from "../../lib/problem";
import { VERSION } from "../../version";
import { NOTE_CONTENT_MAX_BYTES, type CorpUpdate, type DatabaseCheck, type DatabaseUpdate, type Note, type NoteInput, type TablesResult } from "./model";

// ---- notepad -----------------------------------------------------------------------------------

const noteView = (row: typeof notes.$inferSelect): Note => ({
  id: row.id,
  title: row.title,
  content: row.content,
  user_id: row.user_id,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

export function createNote(db: TenantDb, userId: string, input: NoteInput): Note {
  if (Buffer.byteLength(input.content, "utf8") > NOTE_CONTENT_MAX_BYTES) throw invalid("content", "exceeds 64 KiB");
  const id = newId();
  writeTx(db, (tx) => {
    tx.insert(notes).values({ id, user_id: userId, title: input.title ?? null, content: input.content }).run();
  });
  return getNote(db, userId, id);
}

/** Another user's note is simply not there for the caller. */
export function getNote(db: TenantDb, userId: string, id: string): Note {
  const row = db.select().from(notes).where(and(eq(notes.id, id), eq(notes.user_id, userId))).get();
  if (!row) throw notFound("Note");
  return noteView(row);
}

export function listNotes(db: TenantDb, userId: string, query: ListParams) {
  return listRows(db, notes, { q: [notes.title, notes.content] }, query, noteView, [eq(notes.user_id, userId)]);
}

// ---- versions ----------------------------------------------------------------------------------

export function versions(ctx: AppContext) {
  return {
    api: VERSION,
    platform_schema: migrationsOf("platform").length,
    tenant_schema: ctx.tenants.migrations.length,
    runtime: `bun ${Bun.version}`,
  };
}

// ---- databases ---------------------------------------------------------------------------------

type CorpRef = { id: string; auth_name: string; server_id: string; status: string };

function allCorps(ctx: AppContext): CorpRef[] {
  return ctx.platform
    .select({ id: corporations.id, auth_name: corporations.auth_name, server_id: corporations.server_id, status: corporations.status })
    .from(corporations)
    .orderBy(corporations.id)
    .all();
}

function getCorpRef(ctx: AppContext, corpId: string): CorpRef {
  const corp = allCorps(ctx).find((c) => c.id === corpId);
  if (!corp) throw notFound("Corporation");
  return corp;
}

/** Checking must not create anything: a missing database file reads as version 0. */
function corpStatus(ctx: AppContext, corpId: string) {
  if (!ctx.tenants.isOpen(corpId) && !existsSync(ctx.tenants.pathOf(corpId))) {
    const m = ctx.tenants.migrations;
    return { version: 0, latest: m.length, pending: m.map((x) => x.tag) };
  }
  return migrationStatus(ctx.tenants.get(corpId).$client, ctx.tenants.migrations);
}

export function checkDatabases(ctx: AppContext): DatabaseCheck {
  return {
    platform: migrationStatus(ctx.platform.$client, migrationsOf("platform")),
    corps: allCorps(ctx).map((c) => ({ corp_id: c.id, auth_name: c.auth_name, server_id: c.server_id, status: c.status, ...corpStatus(ctx, c.id) })),
  };
}

function setStatus(ctx: AppContext, corpId: string, status: "ENABLED" | "NEEDS_UPDATE"): void {
  ctx.platform.update(corporations).set({ status }).where(eq(corporations.id, corpId)).run();
  ctx.corps.invalidate(corpId);
}

/**
 * Migrates one corporation database. The migrator runs everything pending in one transaction, so
 * a failure leaves the database as it was; the corporation is then marked NEEDS_UPDATE (its
 * tenant rows answer 503) until an update succeeds, which sets it ENABLED again.
 */
function migrateCorp(ctx: AppContext, corp: CorpRef): CorpUpdate & { error: string | null } {
  try {
    const r = ctx.tenants.migrate(corp.id);
    if (corp.status === "NEEDS_UPDATE") setStatus(ctx, corp.id, "ENABLED");
    return { corp_id: corp.id, ...r, error: null };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    ctx.logger.error("corporation database migration failed", { corp_id: corp.id, error });
    setStatus(ctx, corp.id, "NEEDS_UPDATE");
    let version = 0;
    try {
      version = migrationStatus(ctx.tenants.get(corp.id).$client, ctx.tenants.migrations).version;
    } catch {
      // the database cannot even be opened (its server directory is gone): report version 0
    }
    return { corp_id: corp.id, from: version, to: version, applied: [], error };
  }
}

/** The platform database first (everything else depends on it), then every corporation's. */
export function updateAll(ctx: AppContext): DatabaseUpdate {
  const platform = applyMigrations(ctx.platform, migrationsOf("platform"));
  return { platform, corps: allCorps(ctx).map((c) => migrateCorp(ctx, c)) };
}

export function updateOne(ctx: AppContext, corpId: string): CorpUpdate {
  const { error, ...result } = migrateCorp(ctx, getCorpRef(ctx, corpId));
  if (error !== null) throw conflict(`The migration failed and was rolled back; the corporation is NEEDS_UPDATE: ${error}`);
  return result;
}

function tableNames(sqlite: Database): Set<string> {
  const rows = sqlite
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '__drizzle_migrations'")
    .all();
  return new Set(rows.map((r) => r.name));
}

/** Creates the database file when missing and every table of the current schema; idempotent. */
export function createTables(ctx: AppContext, corpId: string): TablesResult {
  getCorpRef(ctx, corpId);
  // A cached handle to a file removed underneath would write into the unlinked inode: reopen.
  if (!existsSync(ctx.tenants.pathOf(corpId))) ctx.tenants.close(corpId);
  const before = tableNames(ctx.tenants.get(corpId).$client);
  const { error } = migrateCorp(ctx, getCorpRef(ctx, corpId));
  if (error !== null) throw conflict(`Creating the tables failed and was rolled back; the corporation is NEEDS_UPDATE: ${error}`);
  const sqlite = ctx.tenants.get(corpId).$client;
  const created = [...tableNames(sqlite)].filter((n) => !before.has(n)).sort();
  return { corp_id: corpId, created, version: migrationStatus(sqlite, ctx.tenants.migrations).version };
}
