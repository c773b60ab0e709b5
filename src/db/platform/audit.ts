import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { idColumn } from "../columns";

/**
 * Security events (logins, logouts, permission changes, ...). No foreign keys: the log outlives
 * the users and corporations it names. Pruned after the configured retention.
 */
export const auditLog = sqliteTable(
  "audit_log",
  {
    id: idColumn(),
    at: text("at").notNull(),
    action: text("action").notNull(),
    outcome: text("outcome", { enum: ["success", "failure", "requested"] }).notNull(),
    actor_user_id: text("actor_user_id"),
    corp_id: text("corp_id"),
    target: text("target"),
    ip: text("ip"),
    reason: text("reason"),
    /** The x-request-id of the request that did it (also on its request log line). */
    request_id: text("request_id"),
  },
  (t) => [index("audit_log_at").on(t.at), index("audit_log_actor").on(t.actor_user_id, t.at), index("audit_log_corp").on(t.corp_id, t.at)],
);
