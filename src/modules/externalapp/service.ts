// External apps (table external_apps): CRUD, API keys and resolving the app a route names. The
// API key (`<corp id>.<app id>.<secret>`) is shown only by create and rotation; only the secret's
// hash is stored.
import { timingSafeEqual } from "node:crypto";
import { eq } from "drizzle-orm";
import type { AuditLog } from "../../core/audit";
import type { TenantDoor } from "../../core/store";
import type { ApiKeyCheck, Principal } from "../../core/principal";
import { clientOf } from "../../db/rows";
import type { TogetherRead } from "../../db/handle";
import type { TenantDb } from "../../db/sqlite";
import { externalApps } from "../../db/tenant/schema";
import { randomBase62, sha256Hex } from "../../lib/ids";
import { listRows, type ListParams } from "../../db/list";
import { conflict, forbidden, notFound } from "../../lib/problem";
import { unchanged } from "../../lib/unchanged";
import { API_KEY_SECRET_LENGTH } from "../../http/guard";
import type { ExternalApp, ExternalAppInput, ExternalAppWithKey } from "./model";

export type ExternalAppRow = typeof externalApps.$inferSelect;

export const externalAppView = (r: ExternalAppRow): ExternalApp => ({
  id: r.id,
  name: r.name,
  description: r.description,
  status: r.status,
  key_prefix: r.key_prefix,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export async function getExternalApp(db: TenantDb, id: string): Promise<ExternalAppRow> {
  const row = await db.select().from(externalApps).where(eq(externalApps.id, id)).get();
  if (!row) throw notFound("External application");
  return row;
}

async function checkNameFree(db: TenantDb, name: string, exceptId: string | null): Promise<void> {
  const other = await db.select({ id: externalApps.id }).from(externalApps).where(eq(externalApps.name, name)).get();
  if (other && other.id !== exceptId) throw conflict("An external application with this name already exists");
}

/** A fresh secret (40 base62 characters, ≈ 238 bits) with what is stored of it. */
function newSecret(): { secret: string; key_prefix: string; key_hash: string } {
  const secret = randomBase62(API_KEY_SECRET_LENGTH);
  return { secret, key_prefix: secret.slice(0, 8), key_hash: sha256Hex(secret) };
}

const apiKeyOf = (corpId: string, appId: string, secret: string) => `${corpId}.${appId}.${secret}`;

/**
 * The guard's ApiKeyVerifier: the app's stored hash against the secret's, in constant time. Runs
 * on every request made with an API key: one statement, prepared once per connection (the driver's
 * query cache), on the read connection the guard's `tenant.read` hands in.
 */
export async function verifyApiKey(db: TenantDb, appId: string, secret: string): Promise<ApiKeyCheck | null> {
  const row = await clientOf(db)
    .query<{ id: string; name: string; status: number; key_hash: string }, [string]>("SELECT id, name, status, key_hash FROM external_apps WHERE id = ?1")
    .get(appId);
  if (!row) return null;
  const given = Buffer.from(sha256Hex(secret), "hex");
  const stored = Buffer.from(row.key_hash, "hex");
  if (given.length !== stored.length || !timingSafeEqual(given, stored)) return null;
  return { appId: row.id, name: row.name, active: row.status === 1 };
}

/** The guard's key check (ctx.apiKeys): the app's key, read in the corporation's door. */
export function checkApiKey(tenant: TenantDoor, appId: string, secret: string): Promise<ApiKeyCheck | null> {
  return tenant.read((db) => verifyApiKey(db, appId, secret));
}

/** findApp's statement, for a caller that reads it together with others (readTogether); appOfRow reads its row. */
export function appRead(by: { id?: string; name?: string }): TogetherRead {
  // Every external-app request resolves its app: a cached raw statement, not a query built per call.
  return by.id !== undefined ? { sql: "SELECT * FROM external_apps WHERE id = ?1", params: [by.id] } : { sql: "SELECT * FROM external_apps WHERE name = ?1", params: [by.name!] };
}

export function appOfRow(row: unknown): ExternalAppRow | undefined {
  const r = row as (ExternalAppRow & { status: unknown }) | null;
  return r ? { ...r, status: (r.status as unknown) === 1 } : undefined;
}

export async function findApp(db: TenantDb, by: { id?: string; name?: string }): Promise<ExternalAppRow | undefined> {
  const read = appRead(by);
  return appOfRow(await clientOf(db).query(read.sql).get(...read.params));
}

/**
 * The app a route names: 404 when unknown; with an API key, the key must be that app's (403).
 */
export async function resolveApp(db: TenantDb, principal: Principal, by: { externalAppId?: string; externalAppName?: string }): Promise<ExternalAppRow> {
  return checkedApp(await findApp(db, { id: by.externalAppId, name: by.externalAppName }), principal);
}

/** resolveApp's checks of the app found (appOfRow's): 404 when none; 403 for another app's key. */
export function checkedApp(app: ExternalAppRow | undefined, principal: Principal): ExternalAppRow {
  if (!app) throw notFound("External application");
  if (principal.kind === "key" && principal.externalAppId !== app.id) throw forbidden("The API key belongs to another external application");
  return app;
}

const LIST = { q: [externalApps.name], hidden: ["key_hash"] };

export function listExternalApps(tenant: TenantDoor, query: ListParams) {
  return tenant.read((db) => listRows(db, externalApps, LIST, query, externalAppView));
}

export function showExternalApp(tenant: TenantDoor, id: string): Promise<ExternalApp> {
  return tenant.read(async (db) => externalAppView(await getExternalApp(db, id)));
}

/** The app as its history compares it: its key (hash and prefix) as one `key`, shown ******** (core/history.ts). */
const appRecord = (r: ExternalAppRow) => {
  const { key_hash, key_prefix: _p, ...rest } = r;
  return { ...rest, key: key_hash };
};

/** Who changes an app, for the audit log (ctx.audit): each change is logged once committed, never the key. */
export type AppAudit = { log: AuditLog; by: Principal };
const logged = (a: AppAudit, action: string, appId: string) =>
  a.log.record({ action, outcome: "success", actor_user_id: a.by.userId, corp_id: a.by.corpId, target: appId, ip: a.by.ip, request_id: a.by.requestId });

export async function createExternalApp(tenant: TenantDoor, input: ExternalAppInput, audit: AppAudit): Promise<ExternalAppWithKey> {
  const key = newSecret();
  const app = await tenant.write(async (tx, w) => {
    await checkNameFree(tx, input.name, null);
    const r = await tx
      .insert(externalApps)
      .values({ name: input.name, description: input.description ?? null, status: input.status ?? true, key_prefix: key.key_prefix, key_hash: key.key_hash })
      .returning()
      .get();
    const view = externalAppView(r);
    w.emit("EXTERNALAPP_AFTER_INSERT", r.id, view);
    w.record({ type: "externalapp", id: r.id, action: "create", before: null, after: appRecord(r) });
    return { ...view, api_key: apiKeyOf(w.corpId, r.id, key.secret) };
  });
  await logged(audit, "externalapp.create", app.id);
  return app;
}

/** PUT semantics; the status turns the app's key on or off. A PUT that changes nothing writes nothing. */
export async function updateExternalApp(tenant: TenantDoor, id: string, input: ExternalAppInput, audit: AppAudit): Promise<ExternalApp> {
  const app = await tenant.write(async (tx, w) => {
    const current = await getExternalApp(tx, id);
    const columns = { name: input.name, description: input.description ?? null, status: input.status ?? true };
    if (unchanged(current, columns)) return externalAppView(current);
    await checkNameFree(tx, input.name, id);
    const row = await tx.update(externalApps).set(columns).where(eq(externalApps.id, id)).returning().get();
    const view = externalAppView(row);
    w.emit("EXTERNALAPP_AFTER_UPDATE", id, view);
    w.record({ type: "externalapp", id, action: "update", before: appRecord(current), after: appRecord(row) });
    return view;
  });
  await logged(audit, "externalapp.update", app.id);
  return app;
}

/** Deletes the app; its external links go with it (ON DELETE CASCADE). */
export async function deleteExternalApp(tenant: TenantDoor, id: string, audit: AppAudit): Promise<void> {
  await tenant.write(async (tx, w) => {
    const row = await getExternalApp(tx, id);
    const before = externalAppView(row);
    await tx.delete(externalApps).where(eq(externalApps.id, id)).run();
    w.record({ type: "externalapp", id, action: "delete", before: appRecord(row), after: null });
    w.emit("EXTERNALAPP_AFTER_DELETE", id, before);
  });
  await logged(audit, "externalapp.delete", id);
}

/** A new key; the old one stops working at the COMMIT. */
export async function rotateApiKey(tenant: TenantDoor, id: string, audit: AppAudit): Promise<ExternalAppWithKey> {
  const key = newSecret();
  const app = await tenant.write(async (tx, w) => {
    const current = await getExternalApp(tx, id);
    const row = await tx.update(externalApps).set({ key_prefix: key.key_prefix, key_hash: key.key_hash }).where(eq(externalApps.id, id)).returning().get();
    const view = externalAppView(row);
    // The key as ******** (key_hash; the prefix is shown in the app's view, and is no secret).
    w.record({ type: "externalapp", id, action: "key", before: appRecord(current), after: appRecord(row) });
    w.emit("EXTERNALAPP_AFTER_UPDATE", id, view);
    return { ...view, api_key: apiKeyOf(w.corpId, id, key.secret) };
  });
  await logged(audit, "externalapp.key_rotate", app.id);
  return app;
}
