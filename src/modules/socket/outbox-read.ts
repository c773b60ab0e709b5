// owner: core/events — moves at merge
// What the realtime socket reads of the event outbox, by `seq`.
import { gt, max } from "drizzle-orm";
import { events } from "../../db/tenant/schema";
import type { TenantDb } from "../../db/sqlite";

export interface OutboxRow {
  seq: number;
  type: string;
  payload: string;
}

/** The last event's seq (0 when the outbox is empty). */
export function lastEventSeq(db: TenantDb): number {
  return db.select({ seq: max(events.seq) }).from(events).get()?.seq ?? 0;
}

/** Events after `seq`, oldest first, at most `limit`. */
export function eventsAfter(db: TenantDb, seq: number, limit: number): OutboxRow[] {
  return db.select({ seq: events.seq, type: events.type, payload: events.payload }).from(events).where(gt(events.seq, seq)).orderBy(events.seq).limit(limit).all();
}
