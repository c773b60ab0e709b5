import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { idColumn, timestamps } from "../columns";

/** Notepad notes: private to their author (a platform user id) within the corporation. */
export const notes = sqliteTable(
  "notes",
  {
    id: idColumn(),
    user_id: text("user_id").notNull(),
    title: text("title"),
    content: text("content").notNull(),
    ...timestamps,
  },
  (t) => [index("notes_user").on(t.user_id, t.id)],
);
