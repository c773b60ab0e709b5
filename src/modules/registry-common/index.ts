// What the registry modules share: embedded addresses, external-app links, resolving the app a
// route names (and checking that an API key belongs to it), and committing with events.
import type { Database } from "bun:sqlite";
import { and, eq, getTableColumns, getTableName, inArray, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { t, type Static } from "elysia";
import type { AppContext } from "../../core/context";
import { recordEvent, type EventGroup } from "../../core/events";
import type { TenantDb } from "../../db/sqlite";
import { externalApps, externalLinks } from "../../db/tenant/schema";
import { conflict, forbidden, invalid, notFound } from "../../lib/problem";
import { Opt, Uuid, Enum } from "../../lib/schemas";
import { nowIso } from "../../lib/time";
import type { Principal } from "../../core/principal";

export type Tx = Parameters<Parameters<TenantDb["transaction"]>[0]>[0];
export type Db = TenantDb | Tx;
export type RecordType = "city" | "person" | "contract";

const optText = (max = 200) => Opt(t.String({ maxLength: max }));

const addressFields = {
  line1: t.String({ minLength: 1, maxLength: 200 }),
  line2: optText(),
  district: optText(),
  postal_code: optText(32),
  detail: optText(500),
  latitude: Opt(t.Number({ minimum: -90, maximum: 90 })),
  longitude: Opt(t.Number({ minimum: -180, maximum: 180 })),
};

/** Address in local requests: the city by id. */
export const AddressInput = t.Object({ ...addressFields, city_id: Uuid });
export type AddressInput = Static<typeof AddressInput>;

export const CityExternalInput = t.Object({
  identity: t.String({ minLength: 1, maxLength: 128 }),
  name: t.String({ minLength: 1, maxLength: 200 }),
  state: t.String({ minLength: 1, maxLength: 200 }),
  country: t.String({ minLength: 1, maxLength: 200 }),
});
export type CityExternalInput = Static<typeof CityExternalInput>;

/** Address in external-app requests: the city by the app's identity, with its data. */
export const AddressExternalInput = t.Object({ ...addressFields, city: CityExternalInput });
export type AddressExternalInput = Static<typeof AddressExternalInput>;

export const CityRef = t.Object({ id: Uuid, name: t.String(), state: t.String(), country: t.String() });
const NullableText = t.Union([t.String(), t.Null()]);
const NullableNumber = t.Union([t.Number(), t.Null()]);
export const AddressView = t.Object({
  line1: t.String(),
  line2: NullableText,
  district: NullableText,
  postal_code: NullableText,
  detail: NullableText,
  latitude: NullableNumber,
  longitude: NullableNumber,
  city: CityRef,
});
export type AddressView = Static<typeof AddressView>;

export interface AddressColumns {
  address_line1: string | null;
  address_line2: string | null;
  address_district: string | null;
  address_postal_code: string | null;
  address_detail: string | null;
  address_latitude: number | null;
  address_longitude: number | null;
  address_city_id: string | null;
}

/** Columns that are the embedded address, never list filters of their own. */
export const ADDRESS_COLUMN_NAMES = [
  "address_line1",
  "address_line2",
  "address_district",
  "address_postal_code",
  "address_detail",
  "address_latitude",
  "address_longitude",
  "address_city_id",
];

export function addressColumns(a: Omit<AddressInput, "city_id"> | null | undefined, cityId: string | null): AddressColumns {
  return {
    address_line1: a ? a.line1 : null,
    address_line2: a?.line2 ?? null,
    address_district: a?.district ?? null,
    address_postal_code: a?.postal_code ?? null,
    address_detail: a?.detail ?? null,
    address_latitude: a?.latitude ?? null,
    address_longitude: a?.longitude ?? null,
    address_city_id: a ? cityId : null,
  };
}

/**
 * The bun:sqlite connection under a database or a transaction handle. Hot reads go through
 * `client.query(sql)`, which bun:sqlite prepares once per connection and caches; inside a
 * transaction they run on the same connection, so they see its uncommitted writes.
 */
export function clientOf(db: Db): Database {
  return (db as TenantDb).$client ?? (db as unknown as { session: { client: Database } }).session.client;
}

type Cell = string | number | boolean | null;
const cell = (v: unknown): string | number | null => (typeof v === "boolean" ? (v ? 1 : 0) : (v as string | number | null));
/** A row for insertRow/updateRow: keys are the table's columns (tsc checks them), values plain cells. */
export type RowCells<T extends SQLiteTable> = { [K in keyof T["$inferInsert"]]?: Cell };

/**
 * Writes one row through a cached raw statement (the column list is the object's keys, constant
 * per call site, so the statement text is too): Drizzle's builder costs tens of µs per call.
 * Values are stored as Drizzle stores them (booleans as 0/1); timestamps are the caller's.
 * Only the table's owning service calls it (issue 16: a table is written by its module only).
 */
export function insertRow<T extends SQLiteTable>(db: Db, table: T, row: RowCells<T>): void {
  const columns = getTableColumns(table);
  const keys = Object.keys(row);
  clientOf(db)
    .query(`INSERT INTO ${getTableName(table)} (${keys.map((k) => columns[k]!.name).join(", ")}) VALUES (${keys.map((_, i) => `?${i + 1}`).join(", ")})`)
    .run(...keys.map((k) => cell(row[k as keyof typeof row])));
}

/** Updates one row by `id` (see insertRow); `updated_at` is set as Drizzle's $onUpdate sets it. */
export function updateRow<T extends SQLiteTable>(db: Db, table: T, id: string, set: RowCells<T>): void {
  const columns = getTableColumns(table);
  const keys = Object.keys(set);
  const n = keys.length;
  clientOf(db)
    .query(`UPDATE ${getTableName(table)} SET ${keys.map((k, i) => `${columns[k]!.name} = ?${i + 1}`).join(", ")}, updated_at = ?${n + 1} WHERE id = ?${n + 2}`)
    .run(...keys.map((k) => cell(set[k as keyof typeof set])), nowIso(), id);
}

type CityRefRow = { id: string; name: string; state: string; country: string };

/** The city part of an address response. */
export function cityRef(db: Db, id: string): CityRefRow | null {
  return clientOf(db).query<CityRefRow, [string]>("SELECT id, name, state, country FROM cities WHERE id = ?1").get(id);
}

export function addressView(db: Db, row: AddressColumns): AddressView | null {
  if (row.address_line1 === null || row.address_city_id === null) return null;
  const city = cityRef(db, row.address_city_id);
  if (!city) return null;
  return {
    line1: row.address_line1,
    line2: row.address_line2,
    district: row.address_district,
    postal_code: row.address_postal_code,
    detail: row.address_detail,
    latitude: row.address_latitude,
    longitude: row.address_longitude,
    city,
  };
}

/** A local address's city must exist: 400 naming `<path>.city_id` otherwise. */
export function checkCityId(db: Db, cityId: string, path: string): void {
  if (!cityRef(db, cityId)) throw invalid(path ? `${path}.city_id` : "city_id", "unknown city");
}

// ---- external apps and links ----

export type ExternalAppRow = typeof externalApps.$inferSelect;

export const ExternalLinkInput = t.Object({ external_app_id: Uuid, identity: t.String({ minLength: 1, maxLength: 128 }) });
export const ExternalLinkView = t.Object({
  external_app_id: Uuid,
  identity: t.String(),
  external_app_name: t.String(),
  record_type: Enum(["city", "person", "contract"]),
  record_id: Uuid,
  created_at: t.String(),
});
export type ExternalLinkView = Static<typeof ExternalLinkView>;

export const AppByName = t.Object({ externalAppName: t.String({ minLength: 1, maxLength: 64 }) });
export const AppById = t.Object({ externalAppId: Uuid });
export const AppByNameIdentity = t.Object({ externalAppName: t.String({ minLength: 1, maxLength: 64 }), identity: t.String({ minLength: 1, maxLength: 128 }) });
export const AppByIdIdentity = t.Object({ externalAppId: Uuid, identity: t.String({ minLength: 1, maxLength: 128 }) });

export function findApp(db: Db, by: { id?: string; name?: string }): ExternalAppRow | undefined {
  // Every external-app request resolves its app: a cached raw statement, not a query built per call.
  const client = clientOf(db);
  const row =
    by.id !== undefined
      ? client.query<ExternalAppRow & { status: unknown }, [string]>("SELECT * FROM external_apps WHERE id = ?1").get(by.id)
      : client.query<ExternalAppRow & { status: unknown }, [string]>("SELECT * FROM external_apps WHERE name = ?1").get(by.name!);
  return row ? { ...row, status: (row.status as unknown) === 1 } : undefined;
}

/**
 * The app a route names: 404 when unknown; with an API key, the key must be that app's (403).
 */
export function resolveApp(db: Db, principal: Principal, by: { externalAppId?: string; externalAppName?: string }): ExternalAppRow {
  const app = findApp(db, { id: by.externalAppId, name: by.externalAppName });
  if (!app) throw notFound("External application");
  if (principal.kind === "key" && principal.externalAppId !== app.id) throw forbidden("The API key belongs to another external application");
  return app;
}

export function linkedRecordId(db: Db, appId: string, type: RecordType, identity: string): string | null {
  const row = clientOf(db)
    .query<{ id: string }, [string, string, string]>(
      "SELECT record_id AS id FROM external_links WHERE external_app_id = ?1 AND record_type = ?2 AND identity = ?3",
    )
    .get(appId, type, identity);
  return row?.id ?? null;
}

/**
 * Links a record to an app's identity. The identity may name only one record of the type (409),
 * and a record has one identity per app, so linking again replaces the old identity.
 */
export function linkRecord(tx: Db, appId: string, type: RecordType, recordId: string, identity: string): void {
  const holder = linkedRecordId(tx, appId, type, identity);
  if (holder === recordId) return;
  if (holder !== null) throw conflict(`The identity is already linked to another ${type}`);
  const client = clientOf(tx);
  client.query("DELETE FROM external_links WHERE external_app_id = ?1 AND record_type = ?2 AND record_id = ?3").run(appId, type, recordId);
  client
    .query("INSERT INTO external_links (external_app_id, record_type, record_id, identity, created_at) VALUES (?1, ?2, ?3, ?4, ?5)")
    .run(appId, type, recordId, identity, nowIso());
}

/** Removes every link of a deleted record. */
export function unlinkAll(tx: Db, type: RecordType, recordId: string): void {
  tx.delete(externalLinks).where(and(eq(externalLinks.record_type, type), eq(externalLinks.record_id, recordId))).run();
}

export function linkView(db: Db, appId: string, type: RecordType, recordId: string): ExternalLinkView {
  const row = db
    .select({ link: externalLinks, name: externalApps.name })
    .from(externalLinks)
    .innerJoin(externalApps, eq(externalApps.id, externalLinks.external_app_id))
    .where(and(eq(externalLinks.external_app_id, appId), eq(externalLinks.record_type, type), eq(externalLinks.record_id, recordId)))
    .get()!;
  return {
    external_app_id: appId,
    identity: row.link.identity,
    external_app_name: row.name,
    record_type: type,
    record_id: recordId,
    created_at: row.link.created_at,
  };
}

/** The link routes' body: the app must exist (400 naming external_app_id otherwise). */
export function linkFromRequest(db: TenantDb, type: RecordType, recordId: string, body: Static<typeof ExternalLinkInput>): ExternalLinkView {
  if (!findApp(db, { id: body.external_app_id })) throw invalid("external_app_id", "unknown external application");
  // Link operations fire no event (routes.md, Events).
  (db as TenantDb).transaction((tx) => linkRecord(tx, body.external_app_id, type, recordId, body.identity), { behavior: "immediate" });
  return linkView(db, body.external_app_id, type, recordId);
}

/** The records of one type linked to an app, as a subquery for list filters. */
export function linkedIdsOf(db: Db, appId: string, type: RecordType) {
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
export function identitiesOf(db: Db, appId: string, type: RecordType, ids: string[]): Map<string, string> {
  if (ids.length === 0) return new Map();
  const rows = db
    .select({ id: externalLinks.record_id, identity: externalLinks.identity })
    .from(externalLinks)
    .where(and(eq(externalLinks.external_app_id, appId), eq(externalLinks.record_type, type), inArray(externalLinks.record_id, ids)))
    .all();
  return new Map(rows.map((r) => [r.id, r.identity]));
}

/**
 * Runs a registry change in one IMMEDIATE transaction, writes its events inside it (each payload
 * built from the just-written state), then wakes the dispatcher after the commit.
 */
export function commit<T>(ctx: AppContext, db: TenantDb, corpId: string, fn: (tx: Tx, emit: (type: EventGroup, id: string, data: (tx: Tx) => unknown) => void) => T): T {
  let wrote = false;
  const result = db.transaction(
    (tx) => {
      const pending: { type: EventGroup; id: string; data: (tx: Tx) => unknown }[] = [];
      const out = fn(tx, (type, id, data) => void pending.push({ type, id, data }));
      for (const e of pending) recordEvent(tx, e.type, e.id, e.data(tx));
      wrote = pending.length > 0;
      return out;
    },
    { behavior: "immediate" },
  );
  if (wrote) ctx.events.committed(corpId);
  return result;
}

type Change<T> = (tx: Tx, emit: (type: EventGroup, id: string, data: (tx: Tx) => unknown) => void) => T;
interface Job {
  fn: Change<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}
interface Group {
  jobs: Job[];
  corpIds: Set<string>;
  scheduled: boolean;
}
const groups = new WeakMap<object, Group>();
/** Bounds one transaction (and so the wait of the job queued last in it). */
const MAX_GROUP = 64;

/**
 * `commit` for write bursts (the external-app upsert): changes queued on one database within the
 * same turn of the event loop share ONE transaction — one fsync under synchronous=FULL instead of
 * one each, which is what bounds the rate. Each change runs in its own savepoint, in arrival
 * order, so it sees the ones before it and a failing change rolls back alone (its promise
 * rejects with its error). Every promise settles only after the COMMIT returned: an
 * acknowledged change is durable. The changes must be synchronous, as `commit`'s.
 */
export function commitGrouped<T>(ctx: AppContext, db: TenantDb, corpId: string, fn: Change<T>): Promise<T> {
  let group = groups.get(db.$client);
  if (!group) {
    group = { jobs: [], corpIds: new Set(), scheduled: false };
    groups.set(db.$client, group);
  }
  const g = group;
  return new Promise<T>((resolve, reject) => {
    g.jobs.push({ fn, resolve: resolve as (v: unknown) => void, reject });
    g.corpIds.add(corpId);
    if (!g.scheduled) {
      g.scheduled = true;
      setImmediate(() => flushGroup(ctx, db, g));
    }
  });
}

function flushGroup(ctx: AppContext, db: TenantDb, g: Group): void {
  const jobs = g.jobs.splice(0, MAX_GROUP);
  const corpIds = [...g.corpIds];
  g.corpIds.clear();
  if (g.jobs.length) {
    for (const id of corpIds) g.corpIds.add(id);
    setImmediate(() => flushGroup(ctx, db, g));
  } else g.scheduled = false;
  const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
  let wrote = false;
  try {
    db.transaction(
      (tx) => {
        for (const job of jobs) {
          try {
            const value = tx.transaction((sp) => {
              const pending: { type: EventGroup; id: string; data: (tx: Tx) => unknown }[] = [];
              const out = job.fn(sp, (type, id, data) => void pending.push({ type, id, data }));
              for (const e of pending) recordEvent(sp, e.type, e.id, e.data(sp));
              if (pending.length) wrote = true;
              return out;
            });
            outcomes.push({ ok: true, value });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      },
      { behavior: "immediate" },
    );
  } catch (error) {
    // BEGIN or COMMIT failed: nothing of the group is durable, so nothing is acknowledged.
    for (const job of jobs) job.reject(error);
    return;
  }
  if (wrote) for (const id of corpIds) ctx.events.committed(id);
  jobs.forEach((job, i) => {
    const o = outcomes[i];
    if (o.ok) job.resolve(o.value);
    else job.reject(o.error);
  });
}
