// owner: core/events — moves at merge
// The outbox queries the webhook dispatcher and the delivery replay need. The `events` table
// belongs to src/core/events.ts; these functions are kept apart here, on the handle the caller
// hands in (a read, or the caller's write transaction), so that they can move there unchanged.
import type { TenantDb } from "../../db/sqlite";

export interface UndispatchedEvent {
  seq: number;
  id: string;
  type: string;
}

/** The oldest events not yet fanned out to webhooks, in commit order. */
export function undispatchedEvents(db: TenantDb, limit: number): UndispatchedEvent[] {
  return db.$client
    .query<UndispatchedEvent, [number]>("SELECT seq, id, type FROM events WHERE dispatched_at IS NULL ORDER BY seq LIMIT ?1")
    .all(limit);
}

/** Marks an event fanned out; runs in the transaction that created its deliveries. */
export function markDispatched(db: TenantDb, seq: number, at: string): void {
  db.$client.query("UPDATE events SET dispatched_at = ?2 WHERE seq = ?1").run(seq, at);
}

/** The payload a delivery sends, or null when retention deleted the event. */
export function eventPayload(db: TenantDb, eventId: string): string | null {
  return db.$client.query<{ payload: string }, [string]>("SELECT payload FROM events WHERE id = ?1").get(eventId)?.payload ?? null;
}

/** Whether the event is still kept (retention deletes it once no pending delivery needs it). */
export function eventKept(db: TenantDb, eventId: string): boolean {
  return !!db.$client.query("SELECT 1 FROM events WHERE id = ?1").get(eventId);
}
