// The embedded Address of routes.md (persons, contracts, points of presence): its request and
// response schemas.
import { t, type Static } from "elysia";
import { Opt, Uuid } from "../../lib/schemas";
import { CityRef } from "../city/model";

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
