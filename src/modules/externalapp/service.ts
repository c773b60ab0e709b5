import { timingSafeEqual } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { t, type Static } from "elysia";
import type { TenantDb } from "../../db/sqlite";
import { externalApps } from "../../db/tenant/schema";
import { randomBase62, sha256Hex } from "../../lib/ids";
import { conflict, notFound } from "../../lib/problem";
import { Opt, Uuid } from "../../lib/schemas";
import { API_KEY_SECRET_LENGTH } from "../auth/guard";
import type { ApiKeyCheck } from "../../core/principal";
import type { Db, ExternalAppRow } from "../registry-common";

export const APP_NAME_PATTERN = "^[A-Za-z0-9._-]{1,64}$";

export const ExternalAppInput = t.Object({
  name: t.String({ pattern: APP_NAME_PATTERN }),
  description: Opt(t.String({ maxLength: 500 })),
  status: Opt(t.Boolean()),
});
export type ExternalAppInput = Static<typeof ExternalAppInput>;

const fields = {
  id: Uuid,
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  status: t.Boolean(),
  key_prefix: t.String(),
  created_at: t.String(),
  updated_at: t.String(),
};
export const ExternalApp = t.Object(fields);
export type ExternalApp = Static<typeof ExternalApp>;
export const ExternalAppWithKey = t.Object({ ...fields, api_key: t.String() });

export const externalAppView = (r: ExternalAppRow): ExternalApp => ({
  id: r.id,
  name: r.name,
  description: r.description,
  status: r.status,
  key_prefix: r.key_prefix,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export function getExternalApp(db: Db, id: string): ExternalAppRow {
  const row = db.select().from(externalApps).where(eq(externalApps.id, id)).get();
  if (!row) throw notFound("External application");
  return row;
}

export function checkNameFree(db: Db, name: string, exceptId: string | null): void {
  const other = db.select({ id: externalApps.id }).from(externalApps).where(eq(externalApps.name, name)).get();
  if (other && other.id !== exceptId) throw conflict("An external application with this name already exists");
}

/** A fresh secret (40 base62 characters, ≈ 238 bits) with what is stored of it. */
export function newSecret(): { secret: string; key_prefix: string; key_hash: string } {
  const secret = randomBase62(API_KEY_SECRET_LENGTH);
  return { secret, key_prefix: secret.slice(0, 8), key_hash: sha256Hex(secret) };
}

export const apiKeyOf = (corpId: string, appId: string, secret: string) => `${corpId}.${appId}.${secret}`;

const keyLookup = new WeakMap<object, ReturnType<typeof prepareKeyLookup>>();
function prepareKeyLookup(db: TenantDb) {
  return db
    .select({ id: externalApps.id, status: externalApps.status, key_hash: externalApps.key_hash })
    .from(externalApps)
    .where(eq(externalApps.id, sql.placeholder("id")))
    .prepare();
}

/** The guard's ApiKeyVerifier: the app's stored hash against the secret's, in constant time. */
export function verifyApiKey(db: TenantDb, appId: string, secret: string): ApiKeyCheck | null {
  let stmt = keyLookup.get(db.$client);
  if (!stmt) {
    stmt = prepareKeyLookup(db);
    keyLookup.set(db.$client, stmt);
  }
  const row = stmt.get({ id: appId });
  if (!row) return null;
  const given = Buffer.from(sha256Hex(secret), "hex");
  const stored = Buffer.from(row.key_hash, "hex");
  if (given.length !== stored.length || !timingSafeEqual(given, stored)) return null;
  return { appId: row.id, active: row.status };
}
