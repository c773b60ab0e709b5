// The address form (contracts, the customer page, persons), apart from the contract screens so
// that the persons' screen, in the console's first load, does not pull those in.
import { asText } from "../api";
import type { FieldDef, Values } from "../ui";

export const ADDRESS_FIELDS: FieldDef[] = [
  { name: "line1", label: "f.line1", required: true },
  { name: "line2", label: "f.line2" },
  { name: "district", label: "f.district" },
  { name: "postal_code", label: "f.postal_code" },
  { name: "city_id", label: "f.city", type: "ref", required: true, ref: { path: "/api/city", label: (c) => `${c.name} / ${c.state}` } },
  { name: "detail", label: "f.addressDetail" },
  { name: "latitude", label: "f.latitude", type: "number", step: "any" },
  { name: "longitude", label: "f.longitude", type: "number", step: "any" },
];

export function addressOf(v: Values) {
  const coordinate = (x: unknown) => (x === "" || x === null || x === undefined ? null : Number(x));
  const orNull = (x: unknown) => asText(x) || null;
  return { line1: asText(v.line1), line2: orNull(v.line2), district: orNull(v.district), postal_code: orNull(v.postal_code), detail: orNull(v.detail), latitude: coordinate(v.latitude), longitude: coordinate(v.longitude), city_id: asText(v.city_id) };
}

/** An Address as responses carry it. */
export interface AddressLike {
  line1?: string;
  line2?: string | null;
  district?: string | null;
  postal_code?: string | null;
  detail?: string | null;
  latitude?: number | null;
  longitude?: number | null;
  city?: { id: string } | null;
}

/** The address form's values from an Address of a response. */
export function addressValues(a: AddressLike | null | undefined): Values {
  return { line1: a?.line1 ?? "", line2: a?.line2 ?? "", district: a?.district ?? "", postal_code: a?.postal_code ?? "", detail: a?.detail ?? "", latitude: a?.latitude ?? "", longitude: a?.longitude ?? "", city_id: a?.city?.id ?? "" };
}
