import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { bool, idColumn, timestamps } from "../columns";

/** Webhooks of the corporation. `secret` is kept in clear because every delivery is signed with it. */
export const webhooks = sqliteTable("webhooks", {
  id: idColumn(),
  name: text("name").notNull(),
  target: text("target").notNull(),
  email: text("email").notNull(),
  body_content: text("body_content"),
  log_enabled: bool("log_enabled").notNull().default(false),
  status: bool("status").notNull().default(true),
  secret: text("secret").notNull(),
  /** Consecutive events whose delivery failed finally; 10 make the webhook inactive. */
  failure_count: integer("failure_count").notNull().default(0),
  ...timestamps,
});

export const webhookGroups = sqliteTable(
  "webhook_groups",
  {
    webhook_id: text("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    group: text("group").notNull(),
  },
  (t) => [primaryKey({ columns: [t.webhook_id, t.group] }), index("webhook_groups_group").on(t.group)],
);

/**
 * One row per (event, webhook): the dispatcher's durable queue and, while the webhook's
 * log_enabled holds, its visible delivery log. A finished row of a webhook without logging is
 * deleted, so the log only ever shows what was recorded while logging was on.
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: idColumn(),
    webhook_id: text("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    /** The outbox event (events.id) whose payload is sent. */
    source_event_id: text("source_event_id").notNull(),
    /** `msg_<uuid>`: the webhook-id header, the same on every retry. */
    event_id: text("event_id").notNull().unique(),
    type: text("type").notNull(),
    status: text("status", { enum: ["pending", "succeeded", "failed"] }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    response_status: integer("response_status"),
    error: text("error"),
    next_attempt_at: text("next_attempt_at"),
    ...timestamps,
  },
  (t) => [
    index("webhook_deliveries_due").on(t.status, t.webhook_id, t.next_attempt_at),
    index("webhook_deliveries_webhook").on(t.webhook_id, t.id),
  ],
);
