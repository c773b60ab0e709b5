// owner: corp — moves at merge
// The corporations whose metrics the collector schedules at start-up. `corporations` belongs to
// the corp module; this query is kept apart here, on the platform handle the caller hands in, so
// that it can move there unchanged.
import type { PlatformDb } from "../../db/sqlite";

export function allCorpIds(db: PlatformDb): string[] {
  return db.$client
    .query<{ id: string }, []>("SELECT id FROM corporations")
    .all()
    .map((c) => c.id);
}
