// A POP's Address (routes.md, Resources: Address). Cities belong to the registry module; this
// file reads them through the corporation database's `cities` table when it exists, so the ISP
// records work (and keep their city_id) in a database without cities yet.
import { sql } from "drizzle-orm";
import type { Q } from "./common";
import { invalid } from "../../lib/problem";
import type { Address, AddressInput } from "./model";

interface CityRow {
  id: string;
  name: string | null;
  state: string | null;
  country: string | null;
}

function hasCities(db: Q): boolean {
  // Raw queries on bun:sqlite come back as arrays of column values.
  return db.get<[number]>(sql`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'cities'`)![0] > 0;
}

function findCity(db: Q, id: string): CityRow | null {
  if (!hasCities(db)) return null;
  const row = db.get<[string, string | null, string | null, string | null]>(sql`SELECT id, name, state, country FROM cities WHERE id = ${id}`);
  return row ? { id: row[0], name: row[1], state: row[2], country: row[3] } : null;
}

/** The stored form: the fields as sent, optional ones null. Throws 400 for an unknown city. */
export function addressToStore(db: Q, input: AddressInput | null | undefined, field = "address"): { json: string | null; cityId: string | null } {
  if (!input) return { json: null, cityId: null };
  if (hasCities(db) && !findCity(db, input.city_id)) throw invalid(`${field}.city_id`, `no city with id ${input.city_id}`);
  const stored = {
    line1: input.line1,
    line2: input.line2 ?? null,
    district: input.district ?? null,
    postal_code: input.postal_code ?? null,
    detail: input.detail ?? null,
    latitude: input.latitude ?? null,
    longitude: input.longitude ?? null,
    city_id: input.city_id,
  };
  return { json: JSON.stringify(stored), cityId: input.city_id };
}

/** The response form: the city as {id, name, state, country} (null fields when it is gone). */
export function addressView(db: Q, json: string | null): Address | null {
  if (!json) return null;
  const { city_id, ...rest } = JSON.parse(json) as AddressInput & Record<string, unknown>;
  const city = findCity(db, city_id);
  return {
    ...(rest as Omit<Address, "city">),
    city: { id: city_id, name: city?.name ?? null, state: city?.state ?? null, country: city?.country ?? null },
  };
}
