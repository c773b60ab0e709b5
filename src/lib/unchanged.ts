/**
 * Whether storing `columns` would leave `row` as it is: every column compared as stored (booleans
 * as 0/1, so a raw bun:sqlite row and a Drizzle row compare alike). Update routes that change
 * nothing write nothing, keep updated_at and fire no event (routes.md, Events: one event per
 * record changed), so `columns` must be normalized as they would be stored (canonical instants
 * and dates, JSON text, fields left out as null).
 */
export function unchanged(row: object, columns: object): boolean {
  const r = row as Record<string, unknown>;
  return Object.entries(columns).every(([k, v]) => stored(r[k]) === stored(v));
}

const stored = (v: unknown) => (typeof v === "boolean" ? (v ? 1 : 0) : v);
