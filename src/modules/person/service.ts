import { eq } from "drizzle-orm";
import { t, type Static } from "elysia";
import { persons } from "../../db/tenant/schema";
import { notFound } from "../../lib/problem";
import { Opt, Uuid } from "../../lib/schemas";
import { AddressInput, addressColumns, AddressView, addressView, checkCityId, clientOf, insertRow, updateRow, type AddressColumns, type Db } from "../registry-common";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";

const optText = (max = 200) => Opt(t.String({ maxLength: max }));

export const PersonInput = t.Object({
  name: t.String({ minLength: 1, maxLength: 200 }),
  display_name: optText(),
  tp_doc_identity: optText(32),
  doc_identity: optText(64),
  corporate: Opt(t.Boolean()),
  email: optText(254),
  phone: optText(40),
  address: Opt(AddressInput),
});
export type PersonInput = Static<typeof PersonInput>;

const NullableText = t.Union([t.String(), t.Null()]);
const personFields = {
  id: Uuid,
  name: t.String(),
  display_name: NullableText,
  tp_doc_identity: NullableText,
  doc_identity: NullableText,
  corporate: t.Boolean(),
  email: NullableText,
  phone: NullableText,
  address: t.Union([AddressView, t.Null()]),
  created_at: t.String(),
  updated_at: t.String(),
};
export const Person = t.Object(personFields);
export type Person = Static<typeof Person>;
export const PersonWithIdentity = t.Object({ ...personFields, identity: t.String() });

/** A Party inside a Contract carries only these. */
export const Party = t.Object({
  id: Uuid,
  name: t.String(),
  display_name: NullableText,
  tp_doc_identity: NullableText,
  doc_identity: NullableText,
  corporate: t.Boolean(),
  address: t.Union([AddressView, t.Null()]),
});
export type Party = Static<typeof Party>;

export type PersonRow = typeof persons.$inferSelect;

export function personView(db: Db, r: PersonRow): Person {
  return {
    id: r.id,
    name: r.name,
    display_name: r.display_name,
    tp_doc_identity: r.tp_doc_identity,
    doc_identity: r.doc_identity,
    corporate: r.corporate,
    email: r.email,
    phone: r.phone,
    address: addressView(db, r),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function findPerson(db: Db, id: string): PersonRow | undefined {
  // Read on every contract view (three parties): a cached raw statement.
  const row = clientOf(db).query<Omit<PersonRow, "corporate"> & { corporate: number }, [string]>("SELECT * FROM persons WHERE id = ?1").get(id);
  return row ? { ...row, corporate: row.corporate === 1 } : undefined;
}

export function getPerson(db: Db, id: string): PersonRow {
  const row = findPerson(db, id);
  if (!row) throw notFound("Person");
  return row;
}

/** The writable columns of a Person body (PUT semantics: omitted optional fields become null). */
export function personColumns(p: PersonInput) {
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

export function checkPersonInput(db: Db, p: PersonInput): void {
  if (p.address) checkCityId(db, p.address.city_id, "address");
}

/** Whether any person's address names the city (the city delete is refused then). */
export function personsUseCity(db: Db, cityId: string): boolean {
  return !!db.select({ id: persons.id }).from(persons).where(eq(persons.address_city_id, cityId)).limit(1).get();
}

/** The columns the external-app upsert writes (a party's data and address). */
export type PartyColumns = Pick<PersonRow, "name" | "display_name" | "tp_doc_identity" | "doc_identity" | "corporate"> & AddressColumns;

/** Inserts a party of an external-app upsert (a cached raw statement: the upsert's hot path); returns its id. */
export function addParty(tx: Db, data: PartyColumns): string {
  const id = newId();
  const at = nowIso();
  insertRow(tx, persons, { id, ...data, created_at: at, updated_at: at });
  return id;
}

/** Overwrites a party's data from an external-app upsert. */
export function setParty(tx: Db, id: string, data: PartyColumns): void {
  updateRow(tx, persons, id, data);
}
