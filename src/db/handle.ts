// The handle every module query runs on, whichever engine is behind the store (issue 19):
// Drizzle's SQLite query builder in its asynchronous form, plus `$client.query(sql)` for the
// statements a module writes by hand. Modules write SQLite's dialect once; on PostgreSQL the
// handle runs the same builder through a proxy that rewrites the few constructs that differ
// (src/db/pg/, docs/architecture.md "Cluster mode").
//
// Every call is typed as a Promise and must be awaited. On SQLite the value is in fact there at
// once (bun:sqlite is synchronous) and `await` costs a microtask; so never chain `.then` on a
// statement's result, only `await` it.
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";

/** A statement written by hand, in SQLite's dialect (`?`, `?1` placeholders). */
export interface RawStatement<R, P extends unknown[]> {
  /** The first row, or null. */
  get(...params: P): Promise<R | null>;
  all(...params: P): Promise<R[]>;
  /** The rows as arrays of column values, in the statement's column order. */
  values(...params: P): Promise<unknown[][]>;
  /** `changes`: rows inserted, updated or deleted. */
  run(...params: P): Promise<{ changes: number }>;
}

/** One read of readTogether (src/db/rows.ts): a statement, its `?N` parameters; `all`: every row, else the first or null. */
export interface TogetherRead {
  sql: string;
  params: unknown[];
  all?: boolean;
}

export interface RawClient {
  /** A statement by its SQL text, compiled once per connection and cached by that text. */
  query<R = Record<string, unknown>, P extends unknown[] = unknown[]>(sql: string): RawStatement<R, P>;
  /**
   * Where statements are round trips (PostgreSQL): the reads as ONE statement, each a column of its
   * one row; their rows as `query(sql).get/all` gives them. Absent on SQLite (a statement is a call).
   */
  together?(reads: TogetherRead[]): Promise<unknown[]>;
  /** Where statements are round trips: independent writes (no RETURNING) as ONE statement (src/db/rows.ts writeTogether). */
  writeTogether?(writes: TogetherRead[]): Promise<void>;
}

/** A read's or a write's handle (the platform's or a corporation's). */
export type Handle = BaseSQLiteDatabase<"async", unknown> & { $client: RawClient };
