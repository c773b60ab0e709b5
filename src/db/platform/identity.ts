// Identity and access tables: safe IP ranges, linked external (OIDC) identities, remembered 2FA
// devices, password-reset keys and login-failure counters. Each hangs off a corporation or a
// user with ON DELETE CASCADE, so deleting either cleans them up.
import { index, integer, primaryKey, sqliteTable, text, unique } from "drizzle-orm/sqlite-core";
import { idColumn, timestamps } from "../columns";
import { corporations } from "./corporations";
import { users } from "./users";

/** Canonical CIDRs (host bits cleared) a corporation's tokens may be used from. */
export const safeIpRanges = sqliteTable(
  "safe_ip_ranges",
  {
    id: idColumn(),
    corp_id: text("corp_id").notNull().references(() => corporations.id, { onDelete: "cascade" }),
    range: text("range").notNull(),
    description: text("description"),
    ...timestamps,
  },
  (t) => [unique("safe_ip_ranges_corp_range").on(t.corp_id, t.range)],
);

/** An OIDC account (provider, sub) linked to a user. */
export const externalIdentities = sqliteTable(
  "external_identities",
  {
    id: idColumn(),
    provider: text("provider", { enum: ["google", "microsoft"] }).notNull(),
    subject: text("subject").notNull(),
    email: text("email"),
    user_id: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    ...timestamps,
  },
  (t) => [unique("external_identities_provider_subject").on(t.provider, t.subject), index("external_identities_user").on(t.user_id)],
);

/** A device that may skip the 2FA code; only the SHA-256 of the cookie value is kept. */
export const rememberedDevices = sqliteTable(
  "remembered_devices",
  {
    id: idColumn(),
    user_id: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    token_hash: text("token_hash").notNull().unique(),
    created_at: timestamps.created_at,
    expires_at: text("expires_at").notNull(),
  },
  (t) => [index("remembered_devices_user").on(t.user_id)],
);

/** Single-use password-reset keys; only the SHA-256 of the key is kept. */
export const passwordResetKeys = sqliteTable(
  "password_reset_keys",
  {
    id: idColumn(),
    user_id: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    key_hash: text("key_hash").notNull().unique(),
    created_at: timestamps.created_at,
    expires_at: text("expires_at").notNull(),
    used_at: text("used_at"),
  },
  (t) => [index("password_reset_keys_user").on(t.user_id)],
);

/**
 * Consecutive failed logins per (corporation, login). The login is not a foreign key: unknown
 * logins are counted too, so the lock does not reveal which logins exist.
 */
export const loginFailures = sqliteTable(
  "login_failures",
  {
    corp_id: text("corp_id").notNull().references(() => corporations.id, { onDelete: "cascade" }),
    login: text("login").notNull(),
    failures: integer("failures").notNull().default(0),
    locked_until: text("locked_until"),
    updated_at: text("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.corp_id, t.login] })],
);

/**
 * The per-client-IP limit of the public auth rows in cluster mode (auth/shared-rate-limit.ts): one
 * counter per (key, fixed window), the window's start in epoch ms, so that every app node counts
 * against the same limit. On SQLite (one process) the limiter stays in memory (lib/rate-limit.ts)
 * and this table stays empty. Windows that ended are pruned by housekeeping.
 */
export const rateLimitWindows = sqliteTable(
  "rate_limit_windows",
  {
    key: text("key").notNull(),
    window_start: integer("window_start").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.key, t.window_start] }), index("rate_limit_windows_start").on(t.window_start)],
);
