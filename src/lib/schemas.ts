// Schemas shared by every module. Types are derived from these, never re-declared.
import type { TLiteral, TUnion } from "@sinclair/typebox";
import { t, type TSchema } from "elysia";
import { MAX_LIMIT, MAX_PAGE } from "./list";

export const Uuid = t.String({ format: "uuid" });
export const IdParams = t.Object({ id: Uuid });
/** ISO 8601 instant with an offset; services canonicalise it (lib/time.ts). */
export const Instant = t.String({ minLength: 10, maxLength: 40, description: "ISO 8601 instant with offset" });
export const DateText = t.String({ minLength: 10, maxLength: 40, description: "YYYY-MM-DD" });

/**
 * One of the given strings. Not t.UnionEnum: Elysia fills a missing required UnionEnum property
 * with its first member instead of refusing the body.
 */
export const Enum = <const T extends string>(values: readonly T[], options: { description?: string } = {}): TUnion<[TLiteral<T>]> =>
  t.Union(values.map((v) => t.Literal(v)), options) as unknown as TUnion<[TLiteral<T>]>;

export const Nullable = <T extends TSchema>(s: T) => t.Union([s, t.Null()]);
/** Optional in requests: absent or null. */
export const Opt = <T extends TSchema>(s: T) => t.Optional(t.Union([s, t.Null()]));

export const ListQuery = t.Object(
  {
    page: t.Optional(t.Integer({ minimum: 1, maximum: MAX_PAGE })),
    limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_LIMIT })),
    q: t.Optional(t.String({ maxLength: 200 })),
    sort: t.Optional(t.String({ maxLength: 64 })),
  },
  { additionalProperties: true },
);

export const ListOf = <T extends TSchema>(item: T) =>
  t.Object({ items: t.Array(item), page: t.Integer(), limit: t.Integer(), total: t.Integer() });

export const ArrayOf = <T extends TSchema>(item: T) => t.Object({ items: t.Array(item) });

export const ProblemSchema = t.Object({
  type: t.String(),
  title: t.String(),
  status: t.Integer(),
  detail: t.String(),
  errors: t.Optional(t.Array(t.Object({ path: t.String(), message: t.String() }))),
});
