/**
 * Whether storing `columns` would leave `row` as it is: every column compared as stored (booleans
 * as 0/1, so a raw bun:sqlite row and a Drizzle row compare alike). Update routes that change
 * nothing write nothing, keep updated_at and fire no event (routes.md, Events: one event per
 * record changed), so `columns` must be normalized as they would be stored (canonical instants
 * and dates, JSON text, fields left out as null).
 */
export function unchanged(row: object, columns: object): boolean {
  const r = row as Record<string, unknown>;
  const c = columns as Record<string, unknown>;
  // A loop over the own keys rather than Object.entries(...).every: no array per call (the
  // contract upsert compares each party, city and the contract, ≈ 2% of its CPU).
  for (const k in c) if (Object.hasOwn(c, k) && stored(r[k]) !== stored(c[k])) return false;
  return true;
}

const stored = (v: unknown) => (typeof v === "boolean" ? (v ? 1 : 0) : v);
