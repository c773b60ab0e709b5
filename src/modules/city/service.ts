// Cities (table cities): CRUD, lookup by an external app's identity, and what the other modules
// need of a city (an address's city reference, the external-app upsert's adopt-or-insert).
import { and, eq } from "drizzle-orm";
import { inUse, type UseCheck } from "../../core/context";
import type { Principal } from "../../core/principal";
import type { TenantDoor } from "../../core/store";
import { clientOf, insertRow } from "../../db/rows";
import type { TogetherRead } from "../../db/handle";
import type { TenantDb } from "../../db/sqlite";
import { cities } from "../../db/tenant/schema";
import { newId } from "../../lib/ids";
import { listRows, type ListParams } from "../../db/list";
import { conflict, notFound } from "../../lib/problem";
import { nowIso } from "../../lib/time";
import { unchanged } from "../../lib/unchanged";
import { linkedRecordId, linkFromRequest, unlinkAll } from "../externalapp/link-service";
import type { ExternalLinkInput, ExternalLinkView } from "../externalapp/model";
import { resolveApp } from "../externalapp/service";
import type { City, CityInput, CityRef, CityWithIdentity } from "./model";

export type CityRow = typeof cities.$inferSelect;
export const cityView = (r: CityRow): City => ({ id: r.id, name: r.name, state: r.state, country: r.country, created_at: r.created_at, updated_at: r.updated_at });

export async function getCity(db: TenantDb, id: string): Promise<CityRow> {
  const read = cityRead(id);
  return cityOfRow(await clientOf(db).query(read.sql).get(...read.params));
}

/** getCity's statement, for a caller that reads it together with others (readTogether); cityOfRow reads its row (404 when none). */
export function cityRead(id: string): TogetherRead {
  // Read up to three times per external-app upsert: a cached raw statement.
  return { sql: "SELECT id, name, state, country, created_at, updated_at FROM cities WHERE id = ?1", params: [id] };
}

export function cityOfRow(row: unknown): CityRow {
  if (!row) throw notFound("City");
  return row as CityRow;
}

/** The city part of an address response (the address module's view); null when unknown. */
export async function cityRef(db: TenantDb, id: string): Promise<CityRef | null> {
  return await clientOf(db).query<CityRef, [string]>("SELECT id, name, state, country FROM cities WHERE id = ?1").get(id);
}

async function findCityByNames(db: TenantDb, c: CityInput): Promise<CityRow | undefined> {
  return await db
    .select()
    .from(cities)
    .where(and(eq(cities.name, c.name), eq(cities.state, c.state), eq(cities.country, c.country)))
    .get();
}

/** (name, state, country) is unique: 409 when another city holds it. */
async function checkCityUnique(db: TenantDb, c: CityInput, exceptId: string | null): Promise<void> {
  const other = await findCityByNames(db, c);
  if (other && other.id !== exceptId) throw conflict("A city with this name, state and country already exists");
}

/** The id of the city holding these names, if any (the upsert adopts it): a cached raw statement. */
export async function cityIdByNames(db: TenantDb, c: CityInput): Promise<string | null> {
  return (
    (await clientOf(db)
      .query<{ id: string }, [string, string, string]>("SELECT id FROM cities WHERE name = ?1 AND state = ?2 AND country = ?3")
      .get(c.name, c.state, c.country))?.id ?? null
  );
}

/** Inserts a city whose names the caller found free (cityIdByNames), on the upsert's fast path; returns its id. */
export async function addCity(tx: TenantDb, c: CityInput): Promise<string> {
  const id = newId();
  const at = nowIso();
  await insertRow(tx, cities, { id, name: c.name, state: c.state, country: c.country, created_at: at, updated_at: at });
  return id;
}

async function insertCity(tx: TenantDb, c: CityInput): Promise<CityRow> {
  await checkCityUnique(tx, c, null);
  return await tx.insert(cities).values({ name: c.name, state: c.state, country: c.country }).returning().get();
}

export async function updateCity(tx: TenantDb, id: string, c: CityInput): Promise<CityRow> {
  await checkCityUnique(tx, c, id);
  return await tx.update(cities).set({ name: c.name, state: c.state, country: c.country }).where(eq(cities.id, id)).returning().get();
}

// ---- what the routes do, each in one read or one write ----

// cities_fts: the trigram index of the q columns (migrations/tenant/0010_search_fts.sql).
const LIST = { q: [cities.name, cities.state], search: "cities_fts" };

export function listCities(tenant: TenantDoor, query: ListParams) {
  return tenant.read((db) => listRows(db, cities, LIST, query, cityView));
}

export function showCity(tenant: TenantDoor, id: string): Promise<City> {
  return tenant.read(async (db) => cityView(await getCity(db, id)));
}

export function createCity(tenant: TenantDoor, input: CityInput): Promise<City> {
  return tenant.write(async (tx, w) => {
    const view = cityView(await insertCity(tx, input));
    w.emit("CITY_AFTER_INSERT", view.id, view);
    w.record({ type: "city", id: view.id, action: "create", before: null, after: view });
    return view;
  });
}

/** PUT semantics; a PUT that changes nothing writes nothing and fires no event. */
export function changeCity(tenant: TenantDoor, id: string, input: CityInput): Promise<City> {
  return tenant.write(async (tx, w) => {
    const current = await getCity(tx, id);
    if (unchanged(current, { name: input.name, state: input.state, country: input.country })) return cityView(current);
    const view = cityView(await updateCity(tx, id, input));
    w.emit("CITY_AFTER_UPDATE", id, view);
    w.record({ type: "city", id, action: "update", before: current, after: view });
    return view;
  });
}

/**
 * Deletes a city no address names (409 otherwise), with its external-app links. `users` are the
 * checks of the modules whose addresses name cities (ctx.usedBy.city: persons, contracts, and the
 * ISP's POPs, whose foreign key would otherwise refuse the delete with a vaguer 409).
 */
export function deleteCity(tenant: TenantDoor, id: string, users: UseCheck[]): Promise<void> {
  return tenant.write(async (tx, w) => {
    const before = cityView(await getCity(tx, id));
    if (await inUse(users, tx, id)) throw conflict("The city is used by an address");
    await unlinkAll(tx, "city", id);
    await tx.delete(cities).where(eq(cities.id, id)).run();
    w.emit("CITY_AFTER_DELETE", id, before);
    w.record({ type: "city", id, action: "delete", before, after: null });
  });
}

export function linkCity(tenant: TenantDoor, id: string, body: ExternalLinkInput): Promise<ExternalLinkView> {
  return linkFromRequest(tenant, "city", id, body, (tx) => getCity(tx, id));
}

export function cityByIdentity(tenant: TenantDoor, principal: Principal, params: { externalAppId?: string; externalAppName?: string; identity: string }): Promise<CityWithIdentity> {
  return tenant.read(async (db) => {
    const app = await resolveApp(db, principal, params);
    const id = await linkedRecordId(db, app.id, "city", params.identity);
    if (!id) throw notFound("City");
    return { ...cityView(await getCity(db, id)), identity: params.identity };
  });
}

/** The cities a ?q finds, as search hits (GET /api/search). */
export async function cityHits(db: TenantDb, q: string, limit: number): Promise<{ id: string; title: string; subtitle: string | null }[]> {
  const page = await listRows(db, cities, LIST, { q, limit }, (r: typeof cities.$inferSelect) => r);
  return page.items.map((r) => ({ id: r.id, title: r.name, subtitle: `${r.state}, ${r.country}` }));
}
