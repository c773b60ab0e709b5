// Schemas shared by every module. Types are derived from these, never re-declared.
import { Kind, Type, TypeRegistry, type TLiteral, type TString, type TUnion } from "@sinclair/typebox";
import { t, type TSchema } from "elysia";
import { MAX_LIMIT, MAX_PAGE } from "./page";

export const Uuid = t.String({ format: "uuid" });
export const IdParams = t.Object({ id: Uuid });
/** ISO 8601 instant with an offset; services canonicalise it (lib/time.ts). */
export const Instant = t.String({ minLength: 10, maxLength: 40, description: "ISO 8601 instant with offset" });
export const DateText = t.String({ minLength: 10, maxLength: 40, description: "YYYY-MM-DD" });

/**
 * Marks a response field that holds a date as an instant (a contract date: midnight in the
 * corporation's timezone, routes.md "Time"): the CSV form of a list writes its date part
 * (lib/list-csv.ts). A symbol: the published document does not carry it.
 */
export const DATE_ONLY = Symbol("date only");
export function DateValue(): TString {
  return Object.assign(t.String(), { [DATE_ONLY]: true });
}

/**
 * One of the given strings. Not t.UnionEnum: Elysia fills a missing required UnionEnum property
 * with its first member instead of refusing the body.
 */
export const Enum = <const T extends string>(values: readonly T[], options: { description?: string } = {}): TUnion<[TLiteral<T>]> =>
  t.Union(values.map((v) => t.Literal(v)), options) as unknown as TUnion<[TLiteral<T>]>;

export const Nullable = <T extends TSchema>(s: T) => t.Union([s, t.Null()]);
/**
 * An integer of a response: TypeBox's plain Integer. Elysia's t.Integer is a Transform that also
 * accepts a numeric string (for queries); one Transform in a response schema runs the whole
 * response through TypeBox's interpreted TransformEncode (see ListOf). Published the same, except
 * inside a nullable union (the openapi plugin writes `type: [integer, null]` where t.Integer's
 * gives `anyOf`): nullable integers stay t.Integer, so the document does not change.
 */
export const Int = (options?: Parameters<typeof Type.Integer>[0]) => Type.Integer(options);
/** Optional in requests: absent or null. */
export const Opt = <T extends TSchema>(s: T) => t.Optional(t.Union([s, t.Null()]));

/**
 * Numbers that are stored, multiplied or summed are bounded (README, "Numbers and money"): JSON
 * cannot say Infinity, but `1e400` parses to it and `1e308 * 2` overflows to it, and a non-finite
 * value stored once breaks every later read of the record.
 */
export const MAX_MONEY = 1e12;
export const MAX_QUANTITY = 1e9;
/**
 * The message of a field error for a schema of its own kind (a `TypeRegistry` check), in place of
 * TypeBox's "Expected kind '...'" (app.ts `validationProblem`). A symbol: never published.
 */
export const FIELD_MESSAGE = Symbol("field error message");

// Money is in cents. JSON Schema's `multipleOf: 0.01` says so in the published document, but
// TypeBox checks it as `value % 0.01 === 0`, false for 0.07 in binary floating point. This kind's
// check asks whether the double is the one nearest to some k/100 (what "0.07" parses to): below
// 1e12, k = value × 100 rounded is exact, and k / 100 is correctly rounded. (`toFixed(2)` would
// say the same at ≈ 4× the cost: ≈ 200 ns a field.)
TypeRegistry.Set("Money", (_schema, value) => typeof value === "number" && value >= 0 && value <= MAX_MONEY && Math.round(value * 100) / 100 === value);
/** A price, unit price or contract value: 0..1e12 with at most 2 decimals. */
export const Money = () =>
  t.Unsafe<number>({
    [Kind]: "Money",
    [FIELD_MESSAGE]: "must be a number from 0 to 1000000000000 with at most 2 decimals",
    type: "number",
    minimum: 0,
    maximum: MAX_MONEY,
    multipleOf: 0.01,
  });
/** A quantity: more than 0, at most 1e9 (so quantity × price stays below 1e21). */
export const Quantity = () => t.Number({ exclusiveMinimum: 0, maximum: MAX_QUANTITY });
/** A measured number (metric values): an integer's exact range, ±(2^53 − 1), for floats too. */
export const Measure = () => t.Number({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });

export const ListQuery = t.Object(
  {
    page: t.Optional(t.Integer({ minimum: 1, maximum: MAX_PAGE })),
    limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_LIMIT })),
    q: t.Optional(t.String({ maxLength: 200 })),
    sort: t.Optional(t.String({ maxLength: 64 })),
  },
  { additionalProperties: true },
);

/**
 * A list page. page, limit and total are TypeBox's plain Integer, not Elysia's t.Integer: that one
 * is a Transform (it also accepts a numeric string), and one Transform anywhere in a response
 * schema makes Elysia encode the whole page through TypeBox's interpreted TransformEncode, which
 * re-checks every union of every item (a third of a 50-row page's CPU). The published document
 * is the same: it writes t.Integer as the plain integer too (system/openapi-publish.ts wireNumber).
 */
export const ListOf = <T extends TSchema>(item: T) =>
  t.Object({ items: t.Array(item), page: Type.Integer(), limit: Type.Integer(), total: Type.Integer() });

export const ArrayOf = <T extends TSchema>(item: T) => t.Object({ items: t.Array(item) });

export const ProblemSchema = t.Object({
  type: t.String(),
  title: t.String(),
  status: t.Integer(),
  detail: t.String(),
  errors: t.Optional(t.Array(t.Object({ path: t.String(), message: t.String() }))),
});
