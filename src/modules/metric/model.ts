// Schemas of the Metric group (routes.md, Metric and MetricValue; the interface document's Metric).
import { t, type Static } from "elysia";
import { Instant, ListOf, ListQuery, Measure, Nullable, Opt, Uuid } from "../../lib/schemas";

export const DATA_TYPES = ["Int", "Float", "Bool", "Text"] as const;
export type DataType = (typeof DATA_TYPES)[number];
/** A union of literals, not t.UnionEnum: Elysia fills a missing UnionEnum property with its first
 *  member instead of reporting it. */
const DataTypeSchema = t.Union([t.Literal("Int"), t.Literal("Float"), t.Literal("Bool"), t.Literal("Text")], { description: "Int, Float, Bool or Text" });
export const DURATION_PATTERN = "^[1-9][0-9]*[smhdw]$";
export const DAILY_TIME_PATTERN = "^([01][0-9]|2[0-3]):[0-5][0-9]$";
/** Metric names travel in paths (`/api/metric/name/{name}`), hence no `/`. */
export const METRIC_NAME_PATTERN = "^[^/]+$";
export const TEXT_VALUE_MAX = 4096;
export const MAX_BUCKETS = 10_000;

export const Metric = t.Object({
  id: Uuid,
  name: t.String(),
  endpoint: Nullable(t.String()),
  data_type: DataTypeSchema,
  periodicity: t.String(),
  start_date: t.String(),
  end_date: Nullable(t.String()),
  daily_start_time: t.String(),
  daily_end_time: t.String(),
  created_at: t.String(),
  updated_at: t.String(),
});
export type Metric = Static<typeof Metric>;

export const MetricInput = t.Object({
  name: t.String({ minLength: 1, maxLength: 128, pattern: METRIC_NAME_PATTERN }),
  endpoint: Opt(t.String({ minLength: 1, maxLength: 2048, description: "http(s) URL the collector GETs" })),
  data_type: DataTypeSchema,
  periodicity: t.String({ maxLength: 16, pattern: DURATION_PATTERN, description: "e.g. 30s, 5m, 1h, 1d, 1w" }),
  start_date: Instant,
  end_date: Opt(Instant),
  daily_start_time: Opt(t.String({ pattern: DAILY_TIME_PATTERN, description: "HH:MM in the corporation's timezone (default 00:00)" })),
  daily_end_time: Opt(t.String({ pattern: DAILY_TIME_PATTERN, description: "HH:MM in the corporation's timezone (default 00:00)" })),
});
export type MetricInput = Static<typeof MetricInput>;

const ValueSchema = t.Union([t.Number(), t.Boolean(), t.String()], { description: "Int: integer, Float: number, Bool: boolean, Text: string ≤ 4096" });

export const MetricValueInput = t.Object({
  value: t.Union([Measure(), t.Boolean(), t.String()], { description: "Int: integer, Float: number (both within ±(2^53 − 1)), Bool: boolean, Text: string ≤ 4096" }),
  at: Opt(Instant),
});
export type MetricValueInput = Static<typeof MetricValueInput>;

export const MetricValue = t.Object({ metric_id: Uuid, value: ValueSchema, at: t.String() });
export type MetricValue = Static<typeof MetricValue>;

export const Bucket = t.Object({
  start: t.String(),
  count: t.Integer(),
  min: Nullable(t.Number()),
  max: Nullable(t.Number()),
  avg: Nullable(t.Number()),
  sum: Nullable(t.Number()),
});
export type Bucket = Static<typeof Bucket>;

/** The history: the raw values (paged), or the buckets when `bucket` is given. */
export const HistoryResponse = t.Union([ListOf(MetricValue), t.Object({ items: t.Array(Bucket) })]);

export const HistoryQuery = t.Object(
  {
    ...ListQuery.properties,
    from: t.Optional(Instant),
    to: t.Optional(Instant),
    bucket: t.Optional(t.String({ maxLength: 16, pattern: DURATION_PATTERN, description: "bucket width; without it the raw values are listed" })),
  },
  { additionalProperties: true },
);
export type HistoryQuery = Static<typeof HistoryQuery>;

export const NameParams = t.Object({ name: t.String({ minLength: 1, maxLength: 1024 }) });
