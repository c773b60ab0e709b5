import { and, eq } from "drizzle-orm";
import { t, type Static } from "elysia";
import type { TenantDb } from "../../db/sqlite";
import { cities, contracts, ispPops, persons } from "../../db/tenant/schema";
import { conflict, notFound } from "../../lib/problem";
import { Uuid } from "../../lib/schemas";
import { clientOf, type Db } from "../registry-common";

export const CityInput = t.Object({
  name: t.String({ minLength: 1, maxLength: 200 }),
  state: t.String({ minLength: 1, maxLength: 200 }),
  country: t.String({ minLength: 1, maxLength: 200 }),
});
export type CityInput = Static<typeof CityInput>;

export const City = t.Object({ id: Uuid, name: t.String(), state: t.String(), country: t.String(), created_at: t.String(), updated_at: t.String() });
export type City = Static<typeof City>;
export const CityWithIdentity = t.Object({ ...City.properties, identity: t.String() });

export type CityRow = typeof cities.$inferSelect;
export const cityView = (r: CityRow): City => ({ id: r.id, name: r.name, state: r.state, country: r.country, created_at: r.created_at, updated_at: r.updated_at });

export function getCity(db: Db, id: string): CityRow {
  // Read up to three times per external-app upsert: a cached raw statement.
  const row = clientOf(db).query<CityRow, [string]>("SELECT id, name, state, country, created_at, updated_at FROM cities WHERE id = ?1").get(id);
  if (!row) throw notFound("City");
  return row;
}

export function findCityByNames(db: Db, c: CityInput): CityRow | undefined {
  return db
    .select()
    .from(cities)
    .where(and(eq(cities.name, c.name), eq(cities.state, c.state), eq(cities.country, c.country)))
    .get();
}

/** (name, state, country) is unique: 409 when another city holds it. */
export function checkCityUnique(db: Db, c: CityInput, exceptId: string | null): void {
  const other = findCityByNames(db, c);
  if (other && other.id !== exceptId) throw conflict("A city with this name, state and country already exists");
}

export function insertCity(tx: Db, c: CityInput): CityRow {
  checkCityUnique(tx, c, null);
  return tx.insert(cities).values({ name: c.name, state: c.state, country: c.country }).returning().get();
}

export function updateCity(tx: Db, id: string, c: CityInput): CityRow {
  checkCityUnique(tx, c, id);
  return tx.update(cities).set({ name: c.name, state: c.state, country: c.country }).where(eq(cities.id, id)).returning().get();
}

export function cityInUse(db: TenantDb | Db, id: string): boolean {
  const p = db.select({ id: persons.id }).from(persons).where(eq(persons.address_city_id, id)).limit(1).get();
  if (p) return true;
  const c = db.select({ id: contracts.id }).from(contracts).where(eq(contracts.address_city_id, id)).limit(1).get();
  if (c) return true;
  // A point of presence's address counts too (ISP), or its foreign key would refuse with a vaguer 409.
  return !!db.select({ id: ispPops.id }).from(ispPops).where(eq(ispPops.address_city_id, id)).limit(1).get();
}


