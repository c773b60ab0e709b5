// A page of a list answer (db/list.ts reads it, lib/list-csv.ts writes it as CSV).
export interface Page<T> {
  items: T[];
  page: number;
  limit: number;
  total: number;
}

export const MAX_LIMIT = 500;
/** Highest page: (page - 1) * limit stays far inside a safe integer and SQLite's int64. */
export const MAX_PAGE = 1_000_000;

/**
 * Page size of a CSV export (lib/list-csv.ts), above db/list.ts's MAX_LIMIT. A symbol on the
 * validated query object, so only server code can set it: no client spelling of `limit` reaches
 * past MAX_LIMIT.
 */
export const EXPORT_PAGE_SIZE = Symbol("export page size");
