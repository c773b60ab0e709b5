import { sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Small platform-wide key/value facts (e.g. when the instance was started). */
export const settings = sqliteTable("settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});
