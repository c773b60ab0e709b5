// Product schemas: the input and the resource.
import { t, type Static } from "elysia";
import { Money, Opt, Uuid } from "../../lib/schemas";

export const ProductInput = t.Object({
  identity: t.String({ minLength: 1, maxLength: 128 }),
  name: t.String({ minLength: 1, maxLength: 200 }),
  description: Opt(t.String({ maxLength: 2000 })),
  price: Opt(Money()),
});
export type ProductInput = Static<typeof ProductInput>;

export const Product = t.Object({
  id: Uuid,
  identity: t.String(),
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  price: t.Union([t.Number(), t.Null()]),
  classifications: t.Array(t.String()),
  created_at: t.String(),
  updated_at: t.String(),
});
export type Product = Static<typeof Product>;

export const ProductIdentityParams = t.Object({ identity: t.String({ minLength: 1, maxLength: 128 }) });
