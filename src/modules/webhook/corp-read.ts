// owner: corp — moves at merge
// The corporations the dispatcher sweeps. `corporations` belongs to the corp module; this query
// is kept apart here, on the platform handle the caller hands in, so that it can move there unchanged.
import type { PlatformDb } from "../../db/sqlite";

/** Corporations whose outbox and queue are worked (MAINTENANCE and NEEDS_UPDATE are left alone). */
export function dispatchableCorpIds(db: PlatformDb): string[] {
  return db.$client
    .query<{ id: string }, []>("SELECT id FROM corporations WHERE status IN ('ENABLED', 'BLOCKED')")
    .all()
    .map((c) => c.id);
}
