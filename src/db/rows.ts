// Raw row writes and the connection under a handle, for the owners' hot paths (the external-app
// upsert writes cities, persons and contracts through these: Drizzle's builder costs tens of µs
// per call). Only a table's owning service calls them with its own table (issue 16).
import { getTableColumns, getTableName } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { nowIso } from "../lib/time";
import type { RawClient } from "./handle";
import { sqliteClientOf, type AnyDb } from "./sqlite";

/**
 * The statements client under a handle. Hot reads go through `client.query(sql)`, which is
 * prepared once per connection and cached; inside a write they run on the writer, so they see the
 * write's own rows.
 */
export function clientOf(db: AnyDb): RawClient {
  return db.$client;
}

type Cell = string | number | boolean | null;
const cell = (v: unknown): string | number | null => (typeof v === "boolean" ? (v ? 1 : 0) : (v as string | number | null));
/** A row for insertRow/updateRow: keys are the table's columns (tsc checks them), values plain cells. */
export type RowCells<T extends SQLiteTable> = { [K in keyof T["$inferInsert"]]?: Cell };

/**
 * Writes one row through a cached raw statement (the column list is the object's keys, constant
 * per call site, so the statement text is too). Values are stored as Drizzle stores them
 * (booleans as 0/1); timestamps are the caller's.
 */
export async function insertRow<T extends SQLiteTable>(db: AnyDb, table: T, row: RowCells<T>): Promise<void> {
  const columns = getTableColumns(table);
  const keys = Object.keys(row);
  await clientOf(db)
    .query(`INSERT INTO ${getTableName(table)} (${keys.map((k) => columns[k]!.name).join(", ")}) VALUES (${keys.map((_, i) => `?${i + 1}`).join(", ")})`)
    .run(...keys.map((k) => cell(row[k as keyof typeof row])));
}

/** Updates one row by `id` (see insertRow); `updated_at` is set as Drizzle's $onUpdate sets it. */
export async function updateRow<T extends SQLiteTable>(db: AnyDb, table: T, id: string, set: RowCells<T>): Promise<void> {
  const columns = getTableColumns(table);
  const keys = Object.keys(set);
  const n = keys.length;
  await clientOf(db)
    .query(`UPDATE ${getTableName(table)} SET ${keys.map((k, i) => `${columns[k]!.name} = ?${i + 1}`).join(", ")}, updated_at = ?${n + 1} WHERE id = ?${n + 2}`)
    .run(...keys.map((k) => cell(set[k as keyof typeof set])), nowIso(), id);
}

/**
 * `clause` (a `FOR UPDATE ...` row lock) where the engine takes row locks: PostgreSQL, where
 * several nodes may write the same rows; "" on SQLite, whose one writer per database holds them
 * all (and which has no such clause).
 */
export function rowLock(db: AnyDb, clause: string): string {
  return sqliteClientOf(db) ? "" : ` ${clause}`;
}

/**
 * A value column read as a double for aggregates (metric values): itself on SQLite; on
 * PostgreSQL a jsonb number, one stored beyond a double's range (`9e999`, Infinity on SQLite)
 * clamped to the largest double, which the cast would refuse.
 */
export function numericOf(db: AnyDb, column: string): string {
  return sqliteClientOf(db) ? column : `least(greatest(${column}::numeric, -${Number.MAX_VALUE}), ${Number.MAX_VALUE})::float8`;
}
