// Raw row writes and the connection under a handle, for the owners' hot paths (the external-app
// upsert writes cities, persons and contracts through these: Drizzle's builder costs tens of µs
// per call). Only a table's owning service calls them with its own table (issue 16).
import { getTableColumns, getTableName } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { nowIso } from "../lib/time";
import type { RawClient, TogetherRead } from "./handle";
import { sqliteClientOf, type AnyDb } from "./sqlite";

/**
 * The statements client under a handle. Hot reads go through `client.query(sql)`, which is
 * prepared once per connection and cached; inside a write they run on the writer, so they see the
 * write's own rows.
 */
export function clientOf(db: AnyDb): RawClient {
  return db.$client;
}

/**
 * Reads of independent statements, answered in order (`get`'s row or null, or `all`'s rows): one
 * statement on PostgreSQL (each statement costs the server far more than its rows), one by one on
 * SQLite (function calls).
 */
export async function readTogether(db: AnyDb, reads: TogetherRead[]): Promise<unknown[]> {
  const client = clientOf(db);
  if (client.together) return await client.together(reads);
  const out: unknown[] = [];
  for (const r of reads) out.push(r.all ? await client.query(r.sql).all(...r.params) : await client.query(r.sql).get(...r.params));
  return out;
}

/**
 * Writes (INSERT, UPDATE, DELETE without RETURNING) that are independent — none reads or changes
 * a row another writes, but for foreign keys, checked at the statement's end — as one statement on
 * PostgreSQL (`WITH w1 AS (...), ... last`), one by one, in order, on SQLite.
 */
export async function writeTogether(db: AnyDb, writes: TogetherRead[]): Promise<void> {
  const client = clientOf(db);
  if (client.writeTogether && writes.length > 1) return await client.writeTogether(writes);
  for (const w of writes) await client.query(w.sql).run(...w.params);
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
  const write = insertRowWrite(table, row);
  await clientOf(db).query(write.sql).run(...write.params);
}

/** insertRow's statement, for a caller that sends it with others (writeTogether). */
export function insertRowWrite<T extends SQLiteTable>(table: T, row: RowCells<T>): TogetherRead {
  const columns = getTableColumns(table);
  const keys = Object.keys(row);
  return {
    sql: `INSERT INTO ${getTableName(table)} (${keys.map((k) => columns[k]!.name).join(", ")}) VALUES (${keys.map((_, i) => `?${i + 1}`).join(", ")})`,
    params: keys.map((k) => cell(row[k as keyof typeof row])),
  };
}

/**
 * Updates one row by `id` (see insertRow); `updated_at` is set as Drizzle's $onUpdate sets it.
 * `stored`: the row as read in this write; only the columns whose value differs from it are set.
 * SQLite rewrites the entry of every index on a column named in SET, changed or not (and checks
 * its foreign keys): the contract's 15 indexes made its upsert UPDATE ≈ 10× a one-column one.
 */
export async function updateRow<T extends SQLiteTable>(db: AnyDb, table: T, id: string, set: RowCells<T>, stored?: object): Promise<void> {
  const write = updateRowWrite(table, id, set, stored);
  await clientOf(db).query(write.sql).run(...write.params);
}

/** updateRow's statement, for a caller that sends it with others (writeTogether). */
export function updateRowWrite<T extends SQLiteTable>(table: T, id: string, set: RowCells<T>, stored?: object): TogetherRead {
  const columns = getTableColumns(table);
  const was = stored as Record<string, unknown> | undefined;
  const keys = was ? Object.keys(set).filter((k) => cell(was[k]) !== cell(set[k as keyof typeof set])) : Object.keys(set);
  const n = keys.length;
  return {
    sql: `UPDATE ${getTableName(table)} SET ${[...keys.map((k, i) => `${columns[k]!.name} = ?${i + 1}`), `updated_at = ?${n + 1}`].join(", ")} WHERE id = ?${n + 2}`,
    params: [...keys.map((k) => cell(set[k as keyof typeof set])), nowIso(), id],
  };
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
