import { index, primaryKey, sqliteTable, text, unique } from "drizzle-orm/sqlite-core";
import { bool, idColumn, timestamps } from "../columns";
import { corporations } from "./corporations";

export const services = sqliteTable("services", {
  id: idColumn(),
  identifier: text("identifier").notNull().unique(),
  name: text("name").notNull(),
  description: text("description"),
  builtin: bool("builtin").notNull().default(false),
  ...timestamps,
});

export const features = sqliteTable(
  "features",
  {
    id: idColumn(),
    service_id: text("service_id").notNull().references(() => services.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    ...timestamps,
  },
  (t) => [unique("features_service_name").on(t.service_id, t.name)],
);

export const actions = sqliteTable(
  "actions",
  {
    id: idColumn(),
    feature_id: text("feature_id").notNull().references(() => features.id, { onDelete: "cascade" }),
    action: text("action").notNull(),
    name: text("name"),
    ...timestamps,
  },
  (t) => [unique("actions_feature_action").on(t.feature_id, t.action)],
);

/** Services enabled for a corporation. */
export const corpServices = sqliteTable(
  "corp_services",
  {
    corp_id: text("corp_id").notNull().references(() => corporations.id, { onDelete: "cascade" }),
    service_id: text("service_id").notNull().references(() => services.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.corp_id, t.service_id] }), index("corp_services_service").on(t.service_id)],
);
