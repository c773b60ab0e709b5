// Person rows of routes.md (the document's Party): request and response schemas.
import { t, type Static } from "elysia";
import { Opt, Uuid } from "../../lib/schemas";
import { AddressInput, AddressView } from "../address/model";

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
export type PersonWithIdentity = Static<typeof PersonWithIdentity>;

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
