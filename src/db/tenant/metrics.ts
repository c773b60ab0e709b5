import { customType, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { idColumn, timestamps } from "../columns";

/** A collected or posted value. The column has no type affinity (declared BLOB), so SQLite keeps
 *  integers, reals and text as they are and aggregates numbers without conversion. Bool is 0/1. */
const metricValue = customType<{ data: number | string; driverData: number | string }>({ dataType: () => "blob" });

export const metrics = sqliteTable("metrics", {
  id: idColumn(),
  name: text("name").notNull().unique(),
  endpoint: text("endpoint"),
  data_type: text("data_type", { enum: ["Int", "Float", "Bool", "Text"] }).notNull(),
  periodicity: text("periodicity").notNull(),
  start_date: text("start_date").notNull(),
  end_date: text("end_date"),
  daily_start_time: text("daily_start_time").notNull().default("00:00"),
  daily_end_time: text("daily_end_time").notNull().default("00:00"),
  ...timestamps,
});

/**
 * Values of a metric. `at_ms` (epoch milliseconds) duplicates `at` so that history ranges and
 * epoch-aligned buckets are integer arithmetic; the index covers (metric, time, value), so a
 * bucketed history reads only the index, never the table.
 */
export const metricValues = sqliteTable(
  "metric_values",
  {
    seq: integer("seq").primaryKey({ autoIncrement: false }),
    metric_id: text("metric_id")
      .notNull()
      .references(() => metrics.id, { onDelete: "cascade" }),
    at: text("at").notNull(),
    at_ms: integer("at_ms").notNull(),
    value: metricValue("value").notNull(),
  },
  (t) => [index("metric_values_metric_at").on(t.metric_id, t.at_ms, t.value)],
);
