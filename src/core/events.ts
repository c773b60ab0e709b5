// The event outbox. Modules call recordEvent inside the transaction of their change, then
// ctx.events.committed(corpId) after it commits so the dispatcher wakes without waiting for a sweep.
import { gt, max } from "drizzle-orm";
import { events } from "../db/tenant/schema";
import type { TenantDb } from "../db/sqlite";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";

export const EVENT_AREAS = ["CITY", "PERSON", "PRODUCT", "CONTRACT", "EXTERNALAPP", "METRIC", "QRCODE"] as const;
export const EVENT_ACTIONS = ["INSERT", "UPDATE", "DELETE"] as const;
export type EventArea = (typeof EVENT_AREAS)[number];
export type EventAction = (typeof EVENT_ACTIONS)[number];
/** The ISP groups (routes.md, Events): not a record's INSERT/UPDATE/DELETE but a change of its state. */
export const ISP_EVENT_GROUPS = ["ISP_AFTER_THROTTLE", "ISP_AFTER_RESTORE", "ISP_AFTER_TRUST_UNBLOCK", "ISP_AFTER_NAS_QUIET", "ISP_AFTER_NAS_BACK"] as const;
export type EventGroup = `${EventArea}_AFTER_${EventAction}` | (typeof ISP_EVENT_GROUPS)[number];
export const EVENT_GROUPS: EventGroup[] = [...EVENT_AREAS.flatMap((a) => EVENT_ACTIONS.map((x) => `${a}_AFTER_${x}` as EventGroup)), ...ISP_EVENT_GROUPS];

export interface EventPayload {
  type: EventGroup;
  timestamp: string;
  data: unknown;
}

/**
 * Writes one event row; `data` is the record as its GET returns it (never with secrets). A cached
 * raw statement: every write with an event runs it (Drizzle's insert builder cost ≈ 40 µs of the
 * contract upsert's ≈ 600).
 */
export async function recordEvent(tx: TenantDb, type: EventGroup, recordId: string, data: unknown): Promise<void> {
  const timestamp = nowIso();
  const payload: EventPayload = { type, timestamp, data };
  await tx.$client
    .query("INSERT INTO events (id, type, record_id, payload, created_at) VALUES (?1, ?2, ?3, ?4, ?5)")
    .run(newId(), type, recordId, JSON.stringify(payload), timestamp);
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

// ---- reading the outbox (the webhook dispatcher, delivery replays, the realtime socket) ---------
// Each takes the caller's handle: a read, or the caller's write transaction.

export interface UndispatchedEvent {
  seq: number;
  id: string;
  type: string;
}

// Ordered as the events_pending index (dispatched_at, seq) is, all NULL here: the index gives the
// rows in order and the LIMIT stops the scan at once. On `ORDER BY seq` alone PostgreSQL walked
// the primary key from the outbox's first event past every dispatched one (17 ms a call beside
// 3,000 dispatched events, planned that way while a backlog made undispatched rows look common).
const UNDISPATCHED_SQL = "SELECT seq, id, type FROM events WHERE dispatched_at IS NULL ORDER BY dispatched_at, seq LIMIT ?1";

/**
 * The oldest events not yet fanned out to webhooks, in commit order. `claim` (PostgreSQL, in a
 * write): the rows are locked until the COMMIT and rows another transaction holds are skipped, so
 * two fan-outs running at once (two nodes; they take no writer lock) never take the same event.
 */
export async function undispatchedEvents(db: TenantDb, limit: number, claim = false): Promise<UndispatchedEvent[]> {
  return await db.$client.query<UndispatchedEvent, [number]>(claim ? `${UNDISPATCHED_SQL} FOR UPDATE SKIP LOCKED` : UNDISPATCHED_SQL).all(limit);
}

/**
 * Marks every event not yet fanned out up to `seq` (SQLite, in the write that created their
 * deliveries): one statement for a batch, a range of the events_pending index. The caller read
 * them as the oldest undispatched events under the writer lock, and seq grows in commit order, so
 * the range holds exactly the batch.
 */
export async function markDispatchedThrough(db: TenantDb, seq: number, at: string): Promise<void> {
  await db.$client.query("UPDATE events SET dispatched_at = ?1 WHERE dispatched_at IS NULL AND seq <= ?2").run(at, seq);
}

/** Marks the events of `seqs` fanned out in one statement (PostgreSQL: one round trip, the rows the caller holds). */
export async function markManyDispatched(db: TenantDb, seqs: number[], at: string): Promise<void> {
  // `dispatched_at IS NULL` (true of every one: the caller holds them) puts the planner on the
  // index of undispatched events; on `seq IN (...)` alone PostgreSQL hashed the list and scanned
  // the whole outbox (22 ms a call beside 10,000 contracts' events).
  await db.$client
    .query("UPDATE events SET dispatched_at = ?1 WHERE dispatched_at IS NULL AND seq IN (SELECT CAST(value AS INTEGER) FROM json_each(?2))")
    .run(at, JSON.stringify(seqs));
}

/**
 * Marks every event not yet fanned out as dispatched: the first webhook of a corporation runs it
 * in its own transaction, since with no webhook those events had no receiver (and a corporation
 * without webhooks is not visited by the dispatcher's start-up sweep, so a crash may have left
 * some). Returns how many.
 */
export async function markAllDispatched(db: TenantDb, at: string): Promise<number> {
  return (await db.$client.query("UPDATE events SET dispatched_at = ?1 WHERE dispatched_at IS NULL").run(at)).changes;
}

/** The payload a delivery sends, or null when retention deleted the event. */
export async function eventPayload(db: TenantDb, eventId: string): Promise<string | null> {
  return (await db.$client.query<{ payload: string }, [string]>("SELECT payload FROM events WHERE id = ?1").get(eventId))?.payload ?? null;
}

/**
 * eventPayload for many events in one statement (PostgreSQL: one round trip): the payload of each
 * id still kept. One index probe per id (a subquery per element: an `IN (list)` was planned as a
 * scan of the outbox).
 */
export async function eventPayloads(db: TenantDb, ids: string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await db.$client
    .query<{ id: string; payload: string | null }, [string]>("SELECT value AS id, (SELECT e.payload FROM events e WHERE e.id = value) AS payload FROM json_each(?1)")
    .all(JSON.stringify(ids));
  const out = new Map<string, string>();
  for (const r of rows) if (r.payload !== null) out.set(r.id, r.payload);
  return out;
}

/**
 * An SQL expression for the payload of the event whose id is `idColumn` (NULL once retention took
 * it), for an owner's statement that returns its rows with their payloads in one round trip (the
 * webhook dispatcher's claim); the outbox's table stays named here.
 */
export const eventPayloadExpr = (idColumn: string): string => `(SELECT e.payload FROM events e WHERE e.id = ${idColumn})`;

/** Whether the event is still kept (retention deletes it once no pending delivery needs it). */
export async function eventKept(db: TenantDb, eventId: string): Promise<boolean> {
  return !!(await db.$client.query("SELECT 1 FROM events WHERE id = ?1").get(eventId));
}

export interface OutboxRow {
  seq: number;
  type: string;
  payload: string;
}

/** The last event's seq (0 when the outbox is empty). */
export async function lastEventSeq(db: TenantDb): Promise<number> {
  return (await db.select({ seq: max(events.seq) }).from(events).get())?.seq ?? 0;
}

/** Events after `seq`, oldest first, at most `limit`. */
export async function eventsAfter(db: TenantDb, seq: number, limit: number): Promise<OutboxRow[]> {
  return await db.select({ seq: events.seq, type: events.type, payload: events.payload }).from(events).where(gt(events.seq, seq)).orderBy(events.seq).limit(limit).all();
}

/**
 * Retention: deletes at most `limit` events dispatched before `cutoff`, except those named in
 * `keep` (the events a pending delivery still reads its payload from; the webhook module knows
 * them). Uses the events_pending index (dispatched_at, seq). Run inside a write, with `keep` read
 * in the same transaction. Returns how many went.
 */
export async function pruneEvents(tx: TenantDb, cutoff: string, keep: readonly string[], limit: number): Promise<number> {
  const { changes } = await tx.$client
    .query(
      `DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE dispatched_at < ?1
         AND id NOT IN (SELECT value FROM json_each(?3)) ORDER BY dispatched_at LIMIT ?2)`,
    )
    .run(cutoff, limit, JSON.stringify(keep));
  return changes;
}
