import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The event outbox: one row per registry change, written in the change's own transaction.
 * `seq` orders dispatch; `id` is the stable event id that deliveries derive their webhook-id from.
 */
export const events = sqliteTable(
  "events",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    id: text("id").notNull().unique(),
    type: text("type").notNull(),
    record_id: text("record_id").notNull(),
    payload: text("payload").notNull(),
    created_at: text("created_at").notNull(),
    /** Set once the dispatcher has fanned the event out to deliveries and sockets. */
    dispatched_at: text("dispatched_at"),
  },
  (t) => [index("events_pending").on(t.dispatched_at, t.seq)],
);
