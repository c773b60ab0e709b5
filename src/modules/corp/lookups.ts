// The corporation rows the kernel's cache (src/core/corp-cache.ts) asks for: by id and by
// auth_name, on the read connection it hands in. Raw cached statements: a miss of that cache
// happens at most once per corporation and change, but RADIUS names corporations on every request.
import type { CorpLookups, CorpRow } from "../../core/corp-cache";

export const corpLookups: CorpLookups = {
  byId: (db, id) => db.$client.query<CorpRow, [string]>("SELECT * FROM corporations WHERE id = ?1").get(id),
  byAuthName: (db, authName) => db.$client.query<CorpRow, [string]>("SELECT * FROM corporations WHERE auth_name = ?1").get(authName),
};
