// Persons (table persons): CRUD, the address, lookups by an external app's identity, and what the
// contract module needs of a person (a party's row, the external-app upsert's insert and update).
import { eq, inArray, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Principal } from "../../core/principal";
import type { TenantDoor, TenantWriteScope } from "../../core/store";
import { clientOf, insertRowWrite, updateRow } from "../../db/rows";
import { readStamp, stampHolds, stampScope } from "../../db/change-stamp";
import type { TogetherRead } from "../../db/handle";
import type { TenantDb } from "../../db/sqlite";
import { persons } from "../../db/tenant/schema";
import { newId } from "../../lib/ids";
import { keptPlainPage, listRows, wordCondition, wordRowids, type ListParams, type ListSpec, type Page, type SearchWord } from "../../db/list";
import { conflict, notFound } from "../../lib/problem";
import { nowIso } from "../../lib/time";
import { inUse, type UseCheck } from "../../core/context";
import { unchanged } from "../../lib/unchanged";
import type { AddressInput } from "../address/model";
import type { CityRef } from "../city/model";
import { ADDRESS_COLUMN_NAMES, addressColumns, type AddressColumns } from "../address/columns";
import { addressView, checkCityId } from "../address/service";
import { identitiesOf, identityListField, linkedIdsOf, linkedRecordId, linkFromRequest, unlinkAll } from "../externalapp/link-service";
import type { ExternalLinkInput, ExternalLinkView } from "../externalapp/model";
import { resolveApp } from "../externalapp/service";
import type { PersonViews } from "./kept-views";
import type { Person, PersonInput, PersonWithIdentity } from "./model";

// contract/model.ts imports the Party schema from here; its home is ./model.
export { Party } from "./model";

export type PersonRow = typeof persons.$inferSelect;

/** `cities`: see addressView (list pages pass one per page). */
export async function personView(db: TenantDb, r: PersonRow, cities?: Map<string, CityRef | null>): Promise<Person> {
  return {
    id: r.id,
    name: r.name,
    display_name: r.display_name,
    tp_doc_identity: r.tp_doc_identity,
    doc_identity: r.doc_identity,
    corporate: r.corporate,
    email: r.email,
    phone: r.phone,
    address: await addressView(db, r, cities),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function findPerson(db: TenantDb, id: string): Promise<PersonRow | undefined> {
  const read = personRead(id);
  return personOfRow(await clientOf(db).query(read.sql).get(...read.params));
}

/** findPerson's statement, for a caller that reads it together with others (readTogether); personOfRow reads its row. */
export function personRead(id: string): TogetherRead {
  // Read on every contract view (three parties): a cached raw statement.
  return { sql: "SELECT * FROM persons WHERE id = ?1", params: [id] };
}

export function personOfRow(row: unknown): PersonRow | undefined {
  const r = row as (Omit<PersonRow, "corporate"> & { corporate: number }) | null;
  return r ? { ...r, corporate: r.corporate === 1 } : undefined;
}

export async function getPerson(db: TenantDb, id: string): Promise<PersonRow> {
  const row = await findPerson(db, id);
  if (!row) throw notFound("Person");
  return row;
}

/** The writable columns of a Person body (PUT semantics: omitted optional fields become null). */
function personColumns(p: PersonInput) {
  return {
    name: p.name,
    display_name: p.display_name ?? null,
    tp_doc_identity: p.tp_doc_identity ?? null,
    doc_identity: p.doc_identity ?? null,
    corporate: p.corporate ?? false,
    email: p.email ?? null,
    phone: p.phone ?? null,
    ...addressColumns(p.address, p.address?.city_id ?? null),
  };
}

async function checkPersonInput(db: TenantDb, p: PersonInput): Promise<void> {
  if (p.address) await checkCityId(db, p.address.city_id, "address");
}

/** Whether any person's address names the city (the city delete is refused then). */
export async function personsUseCity(db: TenantDb, cityId: string): Promise<boolean> {
  return !!(await db.select({ id: persons.id }).from(persons).where(eq(persons.address_city_id, cityId)).limit(1).get());
}

/** The columns the external-app upsert writes (a party's data and address). */
export type PartyColumns = Pick<PersonRow, "name" | "display_name" | "tp_doc_identity" | "doc_identity" | "corporate"> & AddressColumns;

/** A party of an external-app upsert: its id and its INSERT, which the upsert sends with its contract's statement (writeTogether). */
export function addPartyWrite(data: PartyColumns): { id: string; write: TogetherRead } {
  const id = newId();
  const at = nowIso();
  return { id, write: insertRowWrite(persons, { id, ...data, created_at: at, updated_at: at }) };
}

/** Overwrites a party's data from an external-app upsert (`was`: its row as read in this write: only what differs is set). */
export async function setParty(tx: TenantDb, id: string, data: PartyColumns, was?: object): Promise<void> {
  await updateRow(tx, persons, id, data, was);
}

// ---- what the routes do, each in one read or one write ----

// persons_fts: the trigram index of the q columns (migrations/tenant/0010_search_fts.sql); the
// document is also found by its digits (db/list.ts SearchWord).
const LIST = { q: [persons.name, persons.display_name, persons.doc_identity], digits: [persons.doc_identity], search: "persons_fts", hidden: ADDRESS_COLUMN_NAMES } satisfies ListSpec;

/**
 * The ids of the persons one word of a ?q finds by a scan (`match` the scan's condition on a
 * column), as a subquery: another owner's ?q through its rows' persons (a contract by its customer).
 */
export function personIdsByText(match: (c: SQLiteColumn) => SQL, word: SearchWord): SQL {
  return sql`(SELECT ${persons.id} FROM ${persons} WHERE ${wordCondition(LIST, word, match)})`;
}

/** The same through the persons' trigram index, for a word of three characters or more (db/list.ts indexSearch). */
export function personIdsByWord(word: SearchWord): SQL {
  return sql`(SELECT id FROM persons WHERE rowid IN (${wordRowids(LIST, persons, word)}))`;
}

/**
 * The cities list pages have read, per database and change stamp (as db/list.ts keeps its totals):
 * a page's cities are read once between writes, not once per page (in cluster mode each is a
 * statement and a wait: the persons of 10,000 contracts over 5 cities cost a page 5). At most
 * MAX_KEPT_CITIES a database; the cities of a read that overlapped a write's end are dropped.
 */
const keptCities = new WeakMap<object, { stamp: number; cities: Map<string, CityRef | null> }>();
const MAX_KEPT_CITIES = 1024;

/** The views of a list page's persons, in its order; one city memo for the page (see addressView): the kept cities where the read has a stamp. */
async function personViews(db: TenantDb, rows: PersonRow[]): Promise<Person[]> {
  const stamp = readStamp(db);
  const scope = stampScope(db);
  let kept = scope ? keptCities.get(scope) : undefined;
  if (stamp === null || !scope) kept = undefined;
  else if (!kept || kept.stamp !== stamp || kept.cities.size >= MAX_KEPT_CITIES) keptCities.set(scope, (kept = { stamp, cities: new Map() }));
  const cities = kept?.cities ?? new Map<string, CityRef | null>();
  const views: Person[] = [];
  for (const r of rows) views.push(await personView(db, r, cities));
  if (kept && !stampHolds(db, kept.stamp) && keptCities.get(scope!) === kept) keptCities.delete(scope!);
  return views;
}

export function listPersons(tenant: TenantDoor, query: ListParams): Promise<Page<Person>> {
  return tenant.read(async (db) => {
    const page = await listRows(db, persons, LIST, query, (r: PersonRow) => r);
    return { ...page, items: await personViews(db, page.items) };
  });
}

/** A page's JSON text, the bytes JSON.stringify of listPersons' page gives (its keys in that order). */
function pageText(texts: string[], page: { page: number; limit: number; total: number }): string {
  return `{"items":[${texts.join(",")}],"page":${page.page},"limit":${page.limit},"total":${page.total}}`;
}

/**
 * listPersons' page as its JSON text, from the persons' texts kept per change stamp (`views`,
 * kept-views.ts). Where the door knows its stamp without reading (PostgreSQL), a plain ?q whose
 * match set and every person's text are kept for it is answered with no transaction at all.
 * Otherwise a read: each person's text kept for the read's stamp is taken as it is, the others are
 * built (one city memo for the page) and kept when the stamp held to the read's end.
 */
export async function personPageText(views: PersonViews, tenant: TenantDoor, query: ListParams): Promise<string> {
  const now = tenant.stampNow?.();
  if (now !== undefined) {
    const kept = keptPlainPage(now, persons, LIST, query);
    if (kept) {
      const texts: string[] = [];
      for (const id of kept.ids) {
        const text = views.get(now, id as string);
        if (text === undefined) break;
        texts.push(text);
      }
      if (texts.length === kept.ids.length) return pageText(texts, kept);
    }
  }
  return tenant.read(async (db) => {
    // Before the page's reads: a text is never older than its stamp.
    const stamp = readStamp(db);
    const page = await listRows(db, persons, LIST, query, (r: PersonRow) => r);
    const texts: string[] = new Array(page.items.length);
    const missing: number[] = [];
    page.items.forEach((r, i) => {
      const text = stamp === null ? undefined : views.get(stamp, r.id);
      if (text === undefined) missing.push(i);
      else texts[i] = text;
    });
    if (missing.length) {
      const built = await personViews(db, missing.map((i) => page.items[i]!));
      // A read that overlapped a write's end (PostgreSQL) is answered, not kept.
      const keepUnder = stamp !== null && stampHolds(db, stamp) ? stamp : null;
      missing.forEach((i, k) => {
        const text = JSON.stringify(built[k]);
        texts[i] = text;
        if (keepUnder !== null) views.set(keepUnder, page.items[i]!.id, text);
      });
    }
    return pageText(texts, page);
  });
}

type AppParams = { externalAppId?: string; externalAppName?: string };

/** The persons linked to an app, each with its identity (sortable and filterable like a column). */
export function listLinkedPersons(tenant: TenantDoor, principal: Principal, params: AppParams, query: ListParams): Promise<Page<PersonWithIdentity>> {
  return tenant.read(async (db) => {
    const app = await resolveApp(db, principal, params);
    const spec = { ...LIST, computed: identityListField(app.id, "person", persons.id) };
    const page = await listRows(db, persons, spec, query, (r: PersonRow) => r, [inArray(persons.id, linkedIdsOf(db, app.id, "person"))]);
    const views = await personViews(db, page.items);
    const identities = await identitiesOf(db, app.id, "person", views.map((p) => p.id));
    return { ...page, items: views.map((p) => ({ ...p, identity: identities.get(p.id)! })) };
  });
}

export function showPerson(tenant: TenantDoor, id: string): Promise<Person> {
  return tenant.read(async (db) => await personView(db, await getPerson(db, id)));
}

export function personByIdentity(tenant: TenantDoor, principal: Principal, params: AppParams & { identity: string }): Promise<PersonWithIdentity> {
  return tenant.read(async (db) => {
    const app = await resolveApp(db, principal, params);
    const id = await linkedRecordId(db, app.id, "person", params.identity);
    if (!id) throw notFound("Person");
    return { ...(await personView(db, await getPerson(db, id))), identity: params.identity };
  });
}

export function createPerson(tenant: TenantDoor, input: PersonInput): Promise<Person> {
  return tenant.write(async (tx, w) => {
    await checkPersonInput(tx, input);
    const row = await tx.insert(persons).values(personColumns(input)).returning().get();
    const view = await personView(tx, row);
    w.emit("PERSON_AFTER_INSERT", view.id, view);
    w.record({ type: "person", id: row.id, action: "create", before: null, after: row });
    return view;
  });
}

/** Stores `columns` over the person's; one that changes nothing writes nothing and fires no event. */
async function setPerson(tx: TenantDb, w: TenantWriteScope, action: string, current: PersonRow, columns: Partial<PersonRow>): Promise<Person> {
  if (unchanged(current, columns)) return await personView(tx, current);
  const row = await tx.update(persons).set(columns).where(eq(persons.id, current.id)).returning().get();
  const view = await personView(tx, row);
  w.emit("PERSON_AFTER_UPDATE", current.id, view);
  w.record({ type: "person", id: current.id, action, before: current, after: row });
  return view;
}

/** PUT semantics: 404 for an unknown person before 400 for an unknown city. */
export function changePerson(tenant: TenantDoor, id: string, input: PersonInput): Promise<Person> {
  return tenant.write(async (tx, w) => {
    const current = await getPerson(tx, id);
    await checkPersonInput(tx, input);
    return await setPerson(tx, w, "update", current, personColumns(input));
  });
}

export function changePersonAddress(tenant: TenantDoor, id: string, address: AddressInput): Promise<Person> {
  return tenant.write(async (tx, w) => {
    const current = await getPerson(tx, id);
    await checkCityId(tx, address.city_id, "");
    return await setPerson(tx, w, "address", current, addressColumns(address, address.city_id));
  });
}

/** Deletes a person no contract names as a party (`users`: ctx.usedBy.person; 409 otherwise), with its external-app links. */
export function deletePerson(tenant: TenantDoor, id: string, users: UseCheck[]): Promise<void> {
  return tenant.write(async (tx, w) => {
    const row = await getPerson(tx, id);
    const before = await personView(tx, row);
    if (await inUse(users, tx, id)) throw conflict("The person is a party of a contract");
    w.record({ type: "person", id, action: "delete", before: row, after: null });
    await unlinkAll(tx, "person", id);
    await tx.delete(persons).where(eq(persons.id, id)).run();
    w.emit("PERSON_AFTER_DELETE", id, before);
  });
}

export function linkPerson(tenant: TenantDoor, id: string, body: ExternalLinkInput): Promise<ExternalLinkView> {
  return linkFromRequest(tenant, "person", id, body, (tx) => getPerson(tx, id));
}

/** The persons a ?q finds, as search hits (GET /api/search): the first `limit` by id. */
export async function personHits(db: TenantDb, q: string, limit: number): Promise<{ id: string; title: string; subtitle: string | null }[]> {
  const page = await listRows(db, persons, LIST, { q, limit }, (r: PersonRow) => r);
  return page.items.map((r) => ({ id: r.id, title: r.name, subtitle: r.doc_identity ?? r.display_name ?? null }));
}
