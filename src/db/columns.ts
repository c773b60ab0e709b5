// Column helpers shared by both schemas. Property names are the API's snake_case field names,
// so a row is already the response shape. Instants are canonical ISO text (see lib/time.ts).
import { integer, text } from "drizzle-orm/sqlite-core";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";

export const idColumn = () => text("id").primaryKey().$defaultFn(newId);
export const bool = (name: string) => integer(name, { mode: "boolean" });
export const timestamps = {
  created_at: text("created_at").notNull().$defaultFn(nowIso),
  updated_at: text("updated_at").notNull().$defaultFn(nowIso).$onUpdateFn(nowIso),
};
