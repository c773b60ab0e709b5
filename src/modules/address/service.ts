// The embedded address's view and checks. It owns no table: the owner of the row stores the
// address columns (./columns.ts), and the city comes from the city service.
import type { TenantDb } from "../../db/sqlite";
import { finite } from "../../lib/finite";
import { invalid } from "../../lib/problem";
import { cityRef } from "../city/service";
import type { AddressColumns } from "./columns";
import type { CityRef } from "../city/model";
import type { AddressView } from "./model";

/**
 * `cities`: a memo of the cities already read in the same read (a list page, where most rows
 * share a few cities): one lookup per city instead of one per row.
 */
export async function addressView(db: TenantDb, row: AddressColumns, cities?: Map<string, CityRef | null>): Promise<AddressView | null> {
  if (row.address_line1 === null || row.address_city_id === null) return null;
  let city = cities?.get(row.address_city_id);
  if (city === undefined) {
    city = await cityRef(db, row.address_city_id);
    cities?.set(row.address_city_id, city);
  }
  if (!city) return null;
  return {
    line1: row.address_line1,
    line2: row.address_line2,
    district: row.address_district,
    postal_code: row.address_postal_code,
    detail: row.address_detail,
    latitude: finite(row.address_latitude),
    longitude: finite(row.address_longitude),
    city,
  };
}

/** A local address's city must exist: 400 naming `<path>.city_id` otherwise. */
export async function checkCityId(db: TenantDb, cityId: string, path: string): Promise<void> {
  if (!(await cityRef(db, cityId))) throw invalid(path ? `${path}.city_id` : "city_id", "unknown city");
}
