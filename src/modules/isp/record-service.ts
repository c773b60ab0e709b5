// Helpers of the ISP record services (isp_* tables only): lookups that 404, body references that
// 400, unique names that 409, "still in use" checks and the active/inactive toggle. Each takes the
// handle of the caller's read or write (a write's checks see its own rows).
import { and, eq, ne } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { trackedWrite as trackedRecordWrite } from "../../core/history";
import type { TenantDoor } from "../../core/store";
import type { TenantDb } from "../../db/sqlite";
import { conflict, invalid, notFound } from "../../lib/problem";
import { nowIso } from "../../lib/time";

/** A corporation database handle (a door's read or write handle). */
export type Q = TenantDb;

/** A table with the columns every ISP record has. */
export type RecordTable = SQLiteTable & { id: SQLiteColumn; status: SQLiteColumn; updated_at: SQLiteColumn };
type NamedTable = RecordTable & { name: SQLiteColumn };

export async function findRow<R>(db: Q, table: RecordTable, id: string): Promise<R | undefined> {
  return (await (db as any).select().from(table).where(eq(table.id, id)).get()) as R | undefined;
}

export async function requireRow<R>(db: Q, table: RecordTable, id: string, what: string): Promise<R> {
  const row = await findRow<R>(db, table, id);
  if (!row) throw notFound(what);
  return row;
}

/** An id inside a body that names nothing is 400 naming the field (routes.md, "Errors"). */
export async function checkRef(db: Q, table: RecordTable, id: string | null | undefined, field: string, what: string): Promise<string | null> {
  if (id === undefined || id === null) return null;
  if (!(await findRow(db, table, id))) throw invalid(field, `no ${what} with id ${id}`);
  return id;
}

export async function checkUniqueName(db: Q, table: NamedTable, name: string, exceptId: string | null, what: string): Promise<void> {
  const where = exceptId ? and(eq(table.name, name), ne(table.id, exceptId)) : eq(table.name, name);
  if (await (db as any).select({ id: table.id }).from(table).where(where).get()) throw conflict(`A ${what} named '${name}' already exists`);
}

/** True when some row of `table` has `column = id`: the record is still in use. */
export async function isUsed(db: Q, table: SQLiteTable, column: SQLiteColumn, id: string): Promise<boolean> {
  return (await (db as any).select({ one: column }).from(table).where(eq(column, id)).limit(1).get()) !== undefined;
}

/** Inside a write: sets the record's status; 404 when there is no such record. */
export async function setStatus<R>(tx: Q, table: RecordTable, id: string, status: boolean, what: string): Promise<R> {
  await requireRow(tx, table, id, what);
  await (tx as any).update(table).set({ status, updated_at: nowIso() }).where(eq(table.id, id)).run();
  return await requireRow<R>(tx, table, id, what);
}

/** core/history.ts trackedWrite over an ISP record: its row by default (null when absent). */
export function trackedWrite<T>(
  tenant: TenantDoor,
  type: string,
  table: RecordTable,
  id: string | null,
  fn: (tx: Q) => Promise<T>,
  options: { action?: string; snapshot?: (tx: Q, id: string) => Promise<object | null> } = {},
): Promise<T> {
  const snapshot = options.snapshot ?? (async (tx: Q, rowId: string) => (await findRow<object>(tx, table, rowId)) ?? null);
  return trackedRecordWrite(tenant, type, id, snapshot, fn, options.action);
}
