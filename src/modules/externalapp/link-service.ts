// External links (table external_links): which city, person or contract record an external
// app's identity names. A record has one identity per app and an identity names one record of a
// type. The records' modules call these inside their own reads and writes.
import { and, eq, inArray, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { TenantDoor } from "../../core/store";
import { clientOf } from "../../db/rows";
import type { TogetherRead } from "../../db/handle";
import type { TenantDb } from "../../db/sqlite";
import { externalApps, externalLinks } from "../../db/tenant/schema";
import { conflict, invalid } from "../../lib/problem";
import { nowIso } from "../../lib/time";
import type { ExternalLinkInput, ExternalLinkView, RecordType } from "./model";
import { findApp } from "./service";

export async function linkedRecordId(db: TenantDb, appId: string, type: RecordType, identity: string): Promise<string | null> {
  const row = await clientOf(db)
    .query<{ id: string }, [string, string, string]>(
      "SELECT record_id AS id FROM external_links WHERE external_app_id = ?1 AND record_type = ?2 AND identity = ?3",
    )
    .get(appId, type, identity);
  return row?.id ?? null;
}

/**
 * The records that `keys` ([type, identity]) name for the app `app` names (by id or by name), in
 * one query (the external-app upsert asks for every identity of its body at once, beside its
 * findApp): keyed by `linkKey(type, identity)`; identities linked to nothing are absent, and so is
 * everything when no such app exists.
 */
export async function linkedRecordIds(db: TenantDb, app: { id?: string; name?: string }, keys: [RecordType, string][]): Promise<Map<string, string>> {
  const read = linkedRecordIdsRead(app, keys);
  return linksOfRows(await clientOf(db).query(read.sql).all(...read.params));
}

/** linkedRecordIds' statement, for a caller that reads it together with others (readTogether); linksOfRows reads its rows. */
export function linkedRecordIdsRead(app: { id?: string; name?: string }, keys: [RecordType, string][]): TogetherRead {
  // A correlated lookup per key, not a join: PostgreSQL planned the join as a hash of every link
  // of the app (a scan that grows with the corporation's contracts); the subquery names the whole
  // primary key, so each key is one index probe whatever the statistics say.
  return {
    sql:
      "WITH k(t, i) AS (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?3)), " +
      "a(id) AS (SELECT id FROM external_apps WHERE id = ?1 OR name = ?2) " +
      "SELECT k.t AS type, k.i AS identity, (SELECT l.record_id FROM external_links l " +
      "WHERE l.external_app_id = (SELECT id FROM a) AND l.record_type = k.t AND l.identity = k.i) AS id FROM k",
    params: [app.id ?? null, app.id === undefined ? (app.name ?? null) : null, JSON.stringify(keys)],
    all: true,
  };
}

export function linksOfRows(rows: unknown): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of rows as { type: RecordType; identity: string; id: string | null }[]) if (r.id !== null) out.set(linkKey(r.type, r.identity), r.id);
  return out;
}

/** The key of linkedRecordIds' answer. */
export const linkKey = (type: RecordType, identity: string) => `${type}\n${identity}`;

/**
 * Links a record to an app's identity. The identity may name only one record of the type (409),
 * and a record has one identity per app, so linking again replaces the old identity.
 */
export async function linkRecord(tx: TenantDb, appId: string, type: RecordType, recordId: string, identity: string): Promise<void> {
  const holder = await linkedRecordId(tx, appId, type, identity);
  if (holder === recordId) return;
  if (holder !== null) throw conflict(`The identity is already linked to another ${type}`);
  const client = clientOf(tx);
  await client.query("DELETE FROM external_links WHERE external_app_id = ?1 AND record_type = ?2 AND record_id = ?3").run(appId, type, recordId);
  await client
    .query("INSERT INTO external_links (external_app_id, record_type, record_id, identity, created_at) VALUES (?1, ?2, ?3, ?4, ?5)")
    .run(appId, type, recordId, identity, nowIso());
}

/**
 * Links a record created in the caller's transaction to an identity the caller has just found
 * unlinked there (linkedRecordId): nothing to check or replace, one insert (the external-app
 * upsert's new persons and contracts): the statement, sent with others (writeTogether).
 */
export function linkNewRecordWrite(appId: string, type: RecordType, recordId: string, identity: string): TogetherRead {
  return { sql: "INSERT INTO external_links (external_app_id, record_type, record_id, identity, created_at) VALUES (?1, ?2, ?3, ?4, ?5)", params: [appId, type, recordId, identity, nowIso()] };
}

/** Removes every link of a deleted record. */
export async function unlinkAll(tx: TenantDb, type: RecordType, recordId: string): Promise<void> {
  await tx.delete(externalLinks).where(and(eq(externalLinks.record_type, type), eq(externalLinks.record_id, recordId))).run();
}

export async function linkView(db: TenantDb, appId: string, type: RecordType, recordId: string): Promise<ExternalLinkView> {
  const row = (await db
    .select({ link: externalLinks, name: externalApps.name })
    .from(externalLinks)
    .innerJoin(externalApps, eq(externalApps.id, externalLinks.external_app_id))
    .where(and(eq(externalLinks.external_app_id, appId), eq(externalLinks.record_type, type), eq(externalLinks.record_id, recordId)))
    .get())!;
  return {
    external_app_id: appId,
    identity: row.link.identity,
    external_app_name: row.name,
    record_type: type,
    record_id: recordId,
    created_at: row.link.created_at,
  };
}

/**
 * The link routes (POST /api/<record>/{id}/externalapp), in one write: `recordExists` first (the
 * record's module throws its 404), then the app must exist (400 naming external_app_id), then the
 * link. Link operations fire no event (routes.md, Events).
 */
export function linkFromRequest(
  tenant: TenantDoor,
  type: RecordType,
  recordId: string,
  body: ExternalLinkInput,
  recordExists?: (tx: TenantDb) => unknown,
): Promise<ExternalLinkView> {
  return tenant.write(async (tx, w) => {
    await recordExists?.(tx);
    if (!(await findApp(tx, { id: body.external_app_id }))) throw invalid("external_app_id", "unknown external application");
    const was = (await identitiesOf(tx, body.external_app_id, type, [recordId])).get(recordId) ?? null;
    await linkRecord(tx, body.external_app_id, type, recordId, body.identity);
    const field = `externalapp.${body.external_app_id}`;
    w.record({ type, id: recordId, action: "link", before: { [field]: was }, after: { [field]: body.identity } });
    return await linkView(tx, body.external_app_id, type, recordId);
  });
}

/** The records of one type linked to an app, as a subquery for list filters. */
export function linkedIdsOf(db: TenantDb, appId: string, type: RecordType) {
  return db
    .select({ id: externalLinks.record_id })
    .from(externalLinks)
    .where(and(eq(externalLinks.external_app_id, appId), eq(externalLinks.record_type, type)));
}

/** The `identity` of the lists by external app, as a list field (routes.md: sort and filter by any scalar field). */
export function identityListField(appId: string, type: RecordType, recordId: SQLiteColumn) {
  const expr = sql`(SELECT ${externalLinks.identity} FROM ${externalLinks} WHERE ${externalLinks.external_app_id} = ${appId} AND ${externalLinks.record_type} = ${type} AND ${externalLinks.record_id} = ${recordId})`;
  return { identity: { expr, dataType: "string" as const } };
}

/** Identities of a page of records (one query). */
export async function identitiesOf(db: TenantDb, appId: string, type: RecordType, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: externalLinks.record_id, identity: externalLinks.identity })
    .from(externalLinks)
    .where(and(eq(externalLinks.external_app_id, appId), eq(externalLinks.record_type, type), inArray(externalLinks.record_id, ids)))
    .all();
  return new Map(rows.map((r) => [r.id, r.identity]));
}
