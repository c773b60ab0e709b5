import { index, integer, sqliteTable, text, type AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import { idColumn, timestamps } from "../columns";
import { features } from "./catalog";

/**
 * The application menu: a tree (parent_id null at the roots, siblings by position). A menu may
 * point at a feature, whose actions decide whether a caller may use it; deleting the feature
 * leaves the menu in place without one.
 */
export const menus = sqliteTable(
  "menus",
  {
    id: idColumn(),
    parent_id: text("parent_id").references((): AnySQLiteColumn => menus.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    icon: text("icon"),
    url: text("url"),
    position: integer("position").notNull().default(0),
    feature_id: text("feature_id").references(() => features.id, { onDelete: "set null" }),
    ...timestamps,
  },
  (t) => [index("menus_parent").on(t.parent_id), index("menus_feature").on(t.feature_id)],
);
