import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { bool, idColumn, timestamps } from "../columns";
import { users } from "./users";

/** A Server is a directory holding corporation databases; the built-in one is DATA_DIR/corps. */
export const servers = sqliteTable("servers", {
  id: idColumn(),
  name: text("name").notNull().unique(),
  path: text("path").notNull().unique(),
  description: text("description"),
  builtin: bool("builtin").notNull().default(false),
  ...timestamps,
});

export const corporations = sqliteTable("corporations", {
  id: idColumn(),
  auth_name: text("auth_name").notNull().unique(),
  company_name: text("company_name").notNull(),
  trade_name: text("trade_name"),
  doc_identity: text("doc_identity"),
  email: text("email"),
  phone: text("phone"),
  timezone: text("timezone").notNull().default("UTC"),
  server_id: text("server_id").notNull().references(() => servers.id),
  status: text("status", { enum: ["ENABLED", "BLOCKED", "MAINTENANCE", "NEEDS_UPDATE"] }).notNull().default("ENABLED"),
  /** Tenant migrations applied to its database, as last recorded: start-up opens only those behind. */
  schema_version: integer("schema_version").notNull().default(0),
  ...timestamps,
  // Added after the first release: declared after the timestamps, where ADD COLUMN puts it, so a
  // migrated database and a new one have the same column order.
  /** Where the network operations centre is told of trouble (a NAS turning quiet); null: nobody. */
  noc_email: text("noc_email"),
});

export const corpMembers = sqliteTable(
  "corp_members",
  {
    corp_id: text("corp_id").notNull().references(() => corporations.id, { onDelete: "cascade" }),
    user_id: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    created_at: timestamps.created_at,
  },
  (t) => [primaryKey({ columns: [t.corp_id, t.user_id] }), index("corp_members_user").on(t.user_id)],
);
