// City rows of routes.md: request and response schemas.
import { t, type Static } from "elysia";
import { Uuid } from "../../lib/schemas";

export const CityInput = t.Object({
  name: t.String({ minLength: 1, maxLength: 200 }),
  state: t.String({ minLength: 1, maxLength: 200 }),
  country: t.String({ minLength: 1, maxLength: 200 }),
});
export type CityInput = Static<typeof CityInput>;

export const City = t.Object({ id: Uuid, name: t.String(), state: t.String(), country: t.String(), created_at: t.String(), updated_at: t.String() });
export type City = Static<typeof City>;
export const CityWithIdentity = t.Object({ ...City.properties, identity: t.String() });
export type CityWithIdentity = Static<typeof CityWithIdentity>;
/** The city part of an address (the address module's view). */
export const CityRef = t.Object({ id: Uuid, name: t.String(), state: t.String(), country: t.String() });
export type CityRef = Static<typeof CityRef>;
