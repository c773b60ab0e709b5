import { index, primaryKey, sqliteTable, text, unique } from "drizzle-orm/sqlite-core";
import { idColumn, timestamps } from "../columns";
import { features, services } from "./catalog";
import { corporations } from "./corporations";
import { users } from "./users";

export const workgroups = sqliteTable(
  "workgroups",
  {
    id: idColumn(),
    corp_id: text("corp_id").notNull().references(() => corporations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    ...timestamps,
  },
  (t) => [unique("workgroups_corp_name").on(t.corp_id, t.name)],
);

export const workgroupMembers = sqliteTable(
  "workgroup_members",
  {
    workgroup_id: text("workgroup_id").notNull().references(() => workgroups.id, { onDelete: "cascade" }),
    user_id: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.workgroup_id, t.user_id] }), index("workgroup_members_user").on(t.user_id)],
);

export const workgroupServices = sqliteTable(
  "workgroup_services",
  {
    workgroup_id: text("workgroup_id").notNull().references(() => workgroups.id, { onDelete: "cascade" }),
    service_id: text("service_id").notNull().references(() => services.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.workgroup_id, t.service_id] })],
);

export const workgroupFeatures = sqliteTable(
  "workgroup_features",
  {
    workgroup_id: text("workgroup_id").notNull().references(() => workgroups.id, { onDelete: "cascade" }),
    feature_id: text("feature_id").notNull().references(() => features.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.workgroup_id, t.feature_id] })],
);
