import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { idColumn } from "../columns";

/**
 * The history of the corporation's records (core/history.ts): one row per record per write that
 * changed it, written in that write's transaction. No foreign keys: it outlives the records and
 * users it names. Pruned after --history-retention-days.
 */
export const history = sqliteTable(
  "history",
  {
    id: idColumn(),
    at: text("at").notNull(),
    /** The user's login, the external app's name, or `system:<job>`. */
    actor: text("actor").notNull(),
    actor_user_id: text("actor_user_id"),
    actor_app_id: text("actor_app_id"),
    target_type: text("target_type").notNull(),
    target_id: text("target_id").notNull(),
    action: text("action").notNull(),
    /** The changed fields' names, comma-separated (a scalar: listed, filtered, in the CSV export). */
    fields: text("fields").notNull(),
    /** JSON: [[field, before, after, keys?], ...] (core/history.ts storedChanges); secrets as "********". */
    changes: text("changes").notNull(),
    request_id: text("request_id"),
  },
  // No index by actor: every index costs each Change row its insert (≈ 9 µs of ≈ 70 on the shared
  // machine), and ?actor_user_id= lists walk history_at instead.
  (t) => [index("history_at").on(t.at), index("history_target").on(t.target_type, t.target_id, t.at)],
);
