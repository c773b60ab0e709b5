import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { idColumn } from "../columns";

/**
 * The history of platform records (users, workgroups, corporations, services, safe IP ranges):
 * as the tenant table `history` (core/history.ts), plus the corporation the change is listed
 * under. No foreign keys. Pruned after --history-retention-days.
 */
export const platformHistory = sqliteTable(
  "platform_history",
  {
    id: idColumn(),
    at: text("at").notNull(),
    actor: text("actor").notNull(),
    actor_user_id: text("actor_user_id"),
    actor_app_id: text("actor_app_id"),
    /** The corporation the record belongs to, or the actor's working one. */
    corp_id: text("corp_id"),
    target_type: text("target_type").notNull(),
    target_id: text("target_id").notNull(),
    action: text("action").notNull(),
    /** The changed fields' names, comma-separated (a scalar: listed, filtered, in the CSV export). */
    fields: text("fields").notNull(),
    changes: text("changes").notNull(),
    request_id: text("request_id"),
  },
  (t) => [index("platform_history_at").on(t.at), index("platform_history_target").on(t.target_type, t.target_id, t.at), index("platform_history_corp").on(t.corp_id, t.at)],
);
