import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { bool, idColumn, timestamps } from "../columns";

export const users = sqliteTable("users", {
  id: idColumn(),
  name: text("name").notNull(),
  email: text("email").notNull(),
  login: text("login").notNull().unique(),
  password_hash: text("password_hash").notNull(),
  super_admin: bool("super_admin").notNull().default(false),
  status: bool("status").notNull().default(true),
  builtin: bool("builtin").notNull().default(false),
  /** Confirmed TOTP secret (base32); null while two-factor is off. */
  two_factor_secret: text("two_factor_secret"),
  /** Secret handed out by enable, waiting for its first code. */
  two_factor_pending: text("two_factor_pending"),
  /** Last accepted TOTP time step: a code is accepted once. */
  two_factor_last_step: integer("two_factor_last_step"),
  ...timestamps,
});

/** One row per issued token (its `jti`); every request checks it, so revocation is immediate. */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    user_id: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    corp_id: text("corp_id").notNull(),
    created_at: text("created_at").notNull(),
    expires_at: text("expires_at").notNull(),
    revoked_at: text("revoked_at"),
    /** The client that obtained the token (GET /api/user/{id}/sessions). */
    ip: text("ip"),
    user_agent: text("user_agent"),
    /** Last authenticated request, written at most once a minute per session. */
    last_seen_at: text("last_seen_at"),
  },
  (t) => [index("sessions_user").on(t.user_id), index("sessions_corp").on(t.corp_id)],
);
