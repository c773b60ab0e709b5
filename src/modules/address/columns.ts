// The address_* columns a person, a contract or a point of presence stores for its embedded
// address. No value imports on purpose: lists of the owners read ADDRESS_COLUMN_NAMES while their module
// loads, and the address service sits in an import cycle (city ↔ person ↔ address).
import type { AddressInput } from "./model";

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
