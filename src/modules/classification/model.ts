// Classification schemas: the input and the resource.
import { t, type Static } from "elysia";
import { Opt, Uuid } from "../../lib/schemas";

export const ClassificationInput = t.Object({
  name: t.String({ pattern: "^[^/]{1,64}$" }),
  description: Opt(t.String({ maxLength: 500 })),
  color: Opt(t.String({ pattern: "^#[0-9A-Fa-f]{6}$" })),
});
export type ClassificationInput = Static<typeof ClassificationInput>;

const NullableText = t.Union([t.String(), t.Null()]);
export const Classification = t.Object({ id: Uuid, name: t.String(), description: NullableText, color: NullableText, created_at: t.String(), updated_at: t.String() });
export type Classification = Static<typeof Classification>;

export const ClassificationNameParams = t.Object({ name: t.String({ minLength: 1, maxLength: 64 }) });
