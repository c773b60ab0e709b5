import { and, eq } from "drizzle-orm";
import { t, type Static } from "elysia";
import { cities } from "../../db/tenant/schema";
import { conflict, notFound } from "../../lib/problem";
import { Uuid } from "../../lib/schemas";
import { contractsUseCity } from "../contract/service";
import { cityUsedByPop } from "../isp/pop-service";
import { personsUseCity } from "../person/service";
import { clientOf, insertRow, unlinkAll, type Db } from "../registry-common";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";

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

/** The id of the city holding these names, if any (the upsert adopts it): a cached raw statement. */
export function cityIdByNames(db: Db, c: CityInput): string | null {
  return (
    clientOf(db)
      .query<{ id: string }, [string, string, string]>("SELECT id FROM cities WHERE name = ?1 AND state = ?2 AND country = ?3")
      .get(c.name, c.state, c.country)?.id ?? null
  );
}

/** Inserts a city whose names the caller found free (cityIdByNames), on the upsert's fast path; returns its id. */
export function addCity(tx: Db, c: CityInput): string {
  const id = newId();
  const at = nowIso();
  insertRow(tx, cities, { id, name: c.name, state: c.state, country: c.country, created_at: at, updated_at: at });
  return id;
}

export function insertCity(tx: Db, c: CityInput): CityRow {
  checkCityUnique(tx, c, null);
  return tx.insert(cities).values({ name: c.name, state: c.state, country: c.country }).returning().get();
}

export function updateCity(tx: Db, id: string, c: CityInput): CityRow {
  checkCityUnique(tx, c, id);
  return tx.update(cities).set({ name: c.name, state: c.state, country: c.country }).where(eq(cities.id, id)).returning().get();
}

/** Whether an address names the city: a person's, a contract's or a point of presence's (ISP). */
export function cityInUse(db: Db, id: string): boolean {
  // The POP counts too, or its foreign key would refuse the delete with a vaguer 409.
  return personsUseCity(db, id) || contractsUseCity(db, id) || cityUsedByPop(db, id);
}

/** Deletes a city no address names (the caller checked), with its external-app links. */
export function deleteCity(tx: Db, id: string): void {
  unlinkAll(tx, "city", id);
  tx.delete(cities).where(eq(cities.id, id)).run();
}
