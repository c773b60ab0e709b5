// The event outbox. Modules call recordEvent inside the transaction of their change, then
// ctx.events.committed(corpId) after it commits so the dispatcher wakes without waiting for a sweep.
import type { TenantDb } from "../db/sqlite";
import { events } from "../db/tenant/schema";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";

export const EVENT_AREAS = ["CITY", "PERSON", "PRODUCT", "CONTRACT", "EXTERNALAPP", "METRIC", "QRCODE"] as const;
export const EVENT_ACTIONS = ["INSERT", "UPDATE", "DELETE"] as const;
export type EventArea = (typeof EVENT_AREAS)[number];
export type EventAction = (typeof EVENT_ACTIONS)[number];
export type EventGroup = `${EventArea}_AFTER_${EventAction}`;
export const EVENT_GROUPS: EventGroup[] = EVENT_AREAS.flatMap((a) => EVENT_ACTIONS.map((x) => `${a}_AFTER_${x}` as EventGroup));

export interface EventPayload {
  type: EventGroup;
  timestamp: string;
  data: unknown;
}

/** Writes one event row; `data` is the record as its GET returns it (never with secrets). */
export function recordEvent(tx: { insert: any }, type: EventGroup, recordId: string, data: unknown): void {
  const timestamp = nowIso();
  const payload: EventPayload = { type, timestamp, data };
  tx.insert(events)
    .values({ id: newId(), type, record_id: recordId, payload: JSON.stringify(payload), created_at: timestamp })
    .run();
}

type Listener = (corpId: string) => void;

/** In-process wake-ups after commits; the dispatcher and the realtime socket subscribe. */
export class EventBus {
  private listeners = new Set<Listener>();
  committed(corpId: string): void {
    for (const l of this.listeners) {
      try {
        l(corpId);
      } catch {
        // A listener's failure must not fail the request that committed.
      }
    }
  }
  subscribe(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}

/**
 * Retention: deletes at most `limit` events dispatched before `cutoff`, except those named in
 * `keep` (the events a pending delivery still reads its payload from; the webhook module knows
 * them). Uses the events_pending index (dispatched_at, seq). Run inside a write, with `keep` read
 * in the same transaction. Returns how many went.
 */
export function pruneEvents(tx: TenantDb, cutoff: string, keep: readonly string[], limit: number): number {
  return tx.$client
    .query(
      `DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE dispatched_at < ?1
         AND id NOT IN (SELECT value FROM json_each(?3)) ORDER BY dispatched_at LIMIT ?2)`,
    )
    .run(cutoff, limit, JSON.stringify(keep)).changes;
}
