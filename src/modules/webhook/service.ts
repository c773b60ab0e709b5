// Webhooks of the working corporation: CRUD, group links, status, the delivery log and its replay,
// and the queue the dispatcher (jobs.ts) works through. The only code touching webhooks,
// webhook_groups and webhook_deliveries. Route-level functions take the corporation's door;
// the dispatcher's take the handle of the read or write it runs them in.
import { randomBytes } from "node:crypto";
import { and, eq, inArray, sql } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import type { Principal } from "../../core/principal";
import { CorpIndex } from "../../core/settings";
import { statementsAreRoundTrips, type PlatformDoor, type TenantDoor, type TenantWriteScope } from "../../core/store";
import type { PlatformDb, TenantDb } from "../../db/sqlite";
import { clientOf, rowLock } from "../../db/rows";
import { webhookDeliveries, webhookGroups, webhooks } from "../../db/tenant/schema";
import { EVENT_GROUPS, type EventGroup, eventKept, eventPayload, eventPayloadExpr, markAllDispatched, markDispatchedThrough, markManyDispatched, undispatchedEvents } from "../../core/events";
import { newId } from "../../lib/ids";
import { listRows, type ListParams, type Page } from "../../db/list";
import { conflict, invalid, notFound } from "../../lib/problem";
import { canonicalInstant, nowIso, toIso } from "../../lib/time";
import { deliverOnce, type Attempt, type Target } from "./deliver";
import type { Delivery, Webhook, WebhookAlter, WebhookCreate, WebhookWithSecret } from "./model";

type WebhookRow = typeof webhooks.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;

const GROUPS = new Set<string>(EVENT_GROUPS);

export function checkGroup(group: string, path = "group"): string {
  if (!GROUPS.has(group)) throw invalid(path, `unknown group '${group.slice(0, 64)}'; groups are ${EVENT_GROUPS.join(", ")}`);
  return group;
}

function checkTarget(target: string): string {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw invalid("target", "must be an http or https URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid("target", "must be an http or https URL");
  if (url.username || url.password) throw invalid("target", "must not carry credentials");
  return target;
}

/** `whsec_` + base64 of 24 random bytes (the Standard Webhooks secret format). */
export const newSecret = (): string => `whsec_${randomBytes(24).toString("base64")}`;

async function groupsOf(db: TenantDb, ids: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const rows = await db.select().from(webhookGroups).where(inArray(webhookGroups.webhook_id, ids)).orderBy(webhookGroups.group).all();
  for (const r of rows) out.get(r.webhook_id)?.push(r.group);
  return out;
}

function view(row: WebhookRow, groups: string[]): Webhook {
  return {
    id: row.id,
    name: row.name,
    target: row.target,
    email: row.email,
    body_content: row.body_content,
    log_enabled: row.log_enabled,
    // Stored names are checked against EVENT_GROUPS when linked.
    groups: groups as EventGroup[],
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

async function findRow(db: TenantDb, id: string): Promise<WebhookRow> {
  const row = await db.select().from(webhooks).where(eq(webhooks.id, id)).get();
  if (!row) throw notFound("Webhook");
  return row;
}

/** The webhook as its GET returns it, on the handle given (a read, or a write's transaction). */
async function webhookOf(db: TenantDb, id: string): Promise<Webhook> {
  const row = await findRow(db, id);
  return view(row, (await groupsOf(db, [id])).get(id)!);
}

export function getWebhook(tenant: TenantDoor, id: string): Promise<Webhook> {
  return tenant.read((db) => webhookOf(db, id));
}

export function listWebhooks(tenant: TenantDoor, query: ListParams): Promise<Page<Webhook>> {
  return tenant.read(async (db) => {
    const page = await listRows<WebhookRow, WebhookRow>(db, webhooks, { q: [webhooks.name, webhooks.target], hidden: ["secret", "failure_count"] }, query, (r) => r);
    const groups = await groupsOf(db, page.items.map((r) => r.id));
    return { ...page, items: page.items.map((r) => view(r, groups.get(r.id)!)) };
  });
}

// ---- the index of corporations with webhooks ------------------------------------------------
//
// Only a corporation with a webhook has deliveries to make: an event fans out to the webhooks
// that exist when the dispatcher takes it, and delivery rows belong to a webhook (ON DELETE
// CASCADE). So that the dispatcher's start-up and hourly sweeps visit only those corporations,
// the platform's settings keep one key per corporation that may have a webhook. It is written
// (durably, in the platform database) before the COMMIT of the write that creates a corporation's
// first webhook, and dropped only under the corporation's write lock after checking that none is
// left, so a crash can leave a key too many (dropped at the next start-up), never one too few.
// Evented writes (the upsert, every module's changes) never touch it: their wake-up reaches the
// dispatcher directly, and the sweeps are only the net for what a crash left behind.
// The index's keys and its "complete" mark: `CorpIndex` (core/settings.ts).

/** The corporations that may have webhooks (the dispatcher's start-up and sweeps visit only those). */
/** The doctor's look at a corporation: webhooks turned off, and those whose deliveries are failing. */
export async function webhookTroubles(db: TenantDb): Promise<{ inactive: string[]; failing: string[] }> {
  const rows = await clientOf(db).query<{ name: string; status: number | boolean; failure_count: number }, []>("SELECT name, status, failure_count FROM webhooks WHERE status = 0 OR failure_count > 0").all();
  return {
    inactive: rows.filter((r) => !r.status).map((r) => r.name),
    failing: rows.filter((r) => r.status && Number(r.failure_count) > 0).map((r) => `${r.name} (${r.failure_count} in a row)`),
  };
}

export const webhookIndex = new CorpIndex("webhook-dispatcher");
const ANY_WEBHOOK = "SELECT 1 FROM webhooks LIMIT 1";

/** Whether the corporation has a webhook (active or not). */
export async function hasWebhooks(db: TenantDb): Promise<boolean> {
  return (await clientOf(db).query(ANY_WEBHOOK).get()) !== null;
}

/**
 * Drops the corporation from the index when it has no webhook left, under its write lock (a
 * create waits, then indexes it again). Best effort: a key left behind costs the next start-up
 * one visit of the corporation.
 */
export function unindexIfNoWebhooks(tenant: TenantDoor, platform: PlatformDoor): Promise<void> {
  return tenant
    .write(async (tx, w) => {
      if (!(await hasWebhooks(tx))) await webhookIndex.drop(platform, w.corpId);
    })
    .catch(() => {});
}

export function createWebhook(tenant: TenantDoor, platform: PlatformDoor, input: WebhookCreate): Promise<WebhookWithSecret> {
  const target = checkTarget(input.target);
  const groups = [...new Set((input.groups ?? []).map((g, i) => checkGroup(g, `groups.${i}`)))];
  const id = newId();
  const secret = newSecret();
  return tenant.write(async (tx, w) => {
    // The events raised before the first webhook had no receiver: the dispatcher would have
    // marked them so, unless a crash kept it from it (it visits only indexed corporations).
    if (!(await hasWebhooks(tx))) await markAllDispatched(tx, nowIso());
    // Indexed before this COMMIT (a platform read when it is already: creating webhooks is rare).
    await webhookIndex.add(platform, w.corpId);
    await tx.insert(webhooks)
      .values({ id, name: input.name, target, email: input.email, body_content: input.body_content ?? null, log_enabled: input.log_enabled ?? false, secret })
      .run();
    if (groups.length) await tx.insert(webhookGroups).values(groups.map((group) => ({ webhook_id: id, group }))).run();
    const view = await webhookOf(tx, id);
    // The secret as ******** (core/history.ts masks it by name).
    w.record({ type: "webhook", id, action: "create", before: null, after: { ...view, secret } });
    return { ...view, secret };
  });
}

export function alterWebhook(tenant: TenantDoor, id: string, input: WebhookAlter): Promise<Webhook> {
  const target = checkTarget(input.target);
  const logEnabled = input.log_enabled ?? false;
  return tenant.write(async (tx, w) => {
    const before = await webhookOf(tx, id);
    await tx.update(webhooks)
      .set({ name: input.name, target, email: input.email, body_content: input.body_content ?? null, log_enabled: logEnabled })
      .where(eq(webhooks.id, id))
      .run();
    // The log is kept only while logging is on; pending rows stay as the dispatcher's queue.
    if (!logEnabled) await tx.delete(webhookDeliveries).where(and(eq(webhookDeliveries.webhook_id, id), sql`${webhookDeliveries.status} <> 'pending'`)).run();
    const after = await webhookOf(tx, id);
    w.record({ type: "webhook", id, action: "update", before, after });
    return after;
  });
}

export function linkGroup(tenant: TenantDoor, id: string, group: string): Promise<Webhook> {
  checkGroup(group);
  return tenant.write(async (tx, w) => {
    const before = await webhookOf(tx, id);
    await tx.insert(webhookGroups).values({ webhook_id: id, group }).onConflictDoNothing().run();
    const after = await webhookOf(tx, id);
    w.record({ type: "webhook", id, action: "group", before, after });
    return after;
  });
}

export function unlinkGroup(tenant: TenantDoor, id: string, group: string): Promise<Webhook> {
  checkGroup(group);
  return tenant.write(async (tx, w) => {
    const before = await webhookOf(tx, id);
    const removed = await tx.delete(webhookGroups).where(and(eq(webhookGroups.webhook_id, id), eq(webhookGroups.group, group))).returning({ group: webhookGroups.group }).all();
    if (removed.length === 0) throw notFound("Group link");
    const after = await webhookOf(tx, id);
    w.record({ type: "webhook", id, action: "group", before, after });
    return after;
  });
}

/**
 * Ends the queue of a webhook that stops receiving: its pending deliveries become failed (or go,
 * when it keeps no log). Runs inside the caller's transaction.
 */
/**
 * Marks a delivery failed by cancellation (its webhook made inactive), not by its own attempts: an
 * attempt already in flight when it was cancelled is still recorded on it when its answer comes
 * (recordOutcomes), so the log shows what the receiver said.
 */
const CANCELLED = "cancelled: ";

async function cancelPending(tx: TenantDb, webhookId: string, reason: string, now: string): Promise<void> {
  const sqlite = clientOf(tx);
  const logged = await sqlite.query<{ log_enabled: number }, [string]>("SELECT log_enabled FROM webhooks WHERE id = ?1").get(webhookId);
  if (logged?.log_enabled) {
    await sqlite
      .query("UPDATE webhook_deliveries SET status = 'failed', error = ?2, next_attempt_at = NULL, updated_at = ?3 WHERE webhook_id = ?1 AND status = 'pending'")
      .run(webhookId, CANCELLED + reason, now);
  } else {
    await sqlite.query("DELETE FROM webhook_deliveries WHERE webhook_id = ?1 AND status = 'pending'").run(webhookId);
  }
}

export function setStatus(tenant: TenantDoor, id: string, active: boolean): Promise<Webhook> {
  return tenant.write(async (tx, w) => {
    const before = await webhookOf(tx, id);
    if (active) await tx.update(webhooks).set({ status: true, failure_count: 0 }).where(eq(webhooks.id, id)).run();
    else {
      await tx.update(webhooks).set({ status: false }).where(eq(webhooks.id, id)).run();
      await cancelPending(tx, id, "the webhook was made inactive", nowIso());
    }
    const after = await webhookOf(tx, id);
    w.record({ type: "webhook", id, action: "status", before, after });
    return after;
  });
}

export function deleteWebhook(tenant: TenantDoor, platform: PlatformDoor, id: string): Promise<void> {
  return tenant.write(async (tx, w) => {
    const before = await webhookOf(tx, id);
    await tx.delete(webhooks).where(eq(webhooks.id, id)).run();
    w.record({ type: "webhook", id, action: "delete", before, after: null });
    if (!(await hasWebhooks(tx))) w.afterCommit(() => void unindexIfNoWebhooks(tenant, platform));
  });
}

function deliveryView(r: DeliveryRow): Delivery {
  return {
    id: r.id,
    event_id: r.event_id,
    type: r.type,
    status: r.status,
    attempts: r.attempts,
    response_status: r.response_status,
    error: r.error,
    next_attempt_at: r.next_attempt_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function listDeliveries(tenant: TenantDoor, id: string, query: ListParams): Promise<Page<Delivery>> {
  return tenant.read(async (db) => {
    const row = await findRow(db, id);
    return listRows(
      db,
      webhookDeliveries,
      { q: [webhookDeliveries.type, webhookDeliveries.event_id], hidden: ["webhook_id", "source_event_id"], defaultSort: "-id" },
      query,
      deliveryView,
      // Recorded only while log_enabled: with logging off the queue rows are not a log.
      [eq(webhookDeliveries.webhook_id, id), row.log_enabled ? undefined : sql`0`],
    );
  });
}

/**
 * Resend one delivery (routes.md, Operator additions): back to pending and due now, with the same
 * webhook-id; the attempt counts on from where it stopped, so a delivery that had all its retries
 * gets exactly one more. `wake` (the dispatcher) runs after the COMMIT.
 */
export function resendDelivery(tenant: TenantDoor, webhookId: string, deliveryId: string, now: string, wake: () => void): Promise<Delivery> {
  return tenant.write(async (tx, w) => {
    const hook = await findRow(tx, webhookId);
    const row = await tx.select().from(webhookDeliveries).where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhook_id, webhookId))).get();
    // With logging off a finished delivery leaves no row: there is nothing to resend.
    if (!row || (!hook.log_enabled && row.status !== "pending")) throw notFound("Delivery");
    if (row.status === "pending") throw conflict("The delivery is pending: it is sent (or retried) already");
    if (!hook.status) throw conflict("The webhook is inactive: activate it first");
    if (row.type === TEST_EVENT) throw conflict("A test delivery is not resent: send a new test event");
    if (!(await eventKept(tx, row.source_event_id))) throw conflict("The event of this delivery is no longer kept (--event-retention-days)");
    const updated = await tx
      .update(webhookDeliveries)
      .set({ status: "pending", next_attempt_at: now, updated_at: now })
      .where(eq(webhookDeliveries.id, deliveryId))
      .returning()
      .get();
    w.afterCommit(wake);
    return deliveryView(updated!);
  });
}

/**
 * Re-queues every failed delivery of the webhook created since `since` whose event is still kept;
 * returns how many. Failed means finally: after the last retry, or at once on a 410. `wake` (the
 * dispatcher) runs after the COMMIT when any was queued.
 */
export async function recoverDeliveries(tenant: TenantDoor, webhookId: string, sinceText: string, now: string, wake: () => void): Promise<{ queued: number }> {
  const since = canonicalInstant(sinceText);
  if (!since) throw invalid("since", "must be an ISO 8601 instant with an offset");
  return tenant.write(async (tx, w) => {
    const hook = await findRow(tx, webhookId);
    if (!hook.status) throw conflict("The webhook is inactive: activate it first");
    const sqlite = clientOf(tx);
    const failed = await sqlite
      .query<{ id: string; source_event_id: string }, [string, string, string]>(
        `SELECT id, source_event_id FROM webhook_deliveries
         WHERE webhook_id = ?1 AND status = 'failed' AND created_at >= ?2 AND type <> ?3`,
      )
      .all(webhookId, since, TEST_EVENT);
    const requeue = sqlite.query("UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?2, updated_at = ?2 WHERE id = ?1");
    let queued = 0;
    for (const d of failed) {
      if (!(await eventKept(tx, d.source_event_id))) continue;
      await requeue.run(d.id, now);
      queued++;
    }
    if (queued) w.afterCommit(wake);
    return { queued };
  });
}

export const TEST_EVENT = "WEBHOOK_TEST";

/**
 * Sends a test event (`{type: WEBHOOK_TEST, timestamp, data: {webhook_id, name}}`) now, whatever
 * the webhook's status, and records the attempt in the delivery log (kept only while log_enabled,
 * as every delivery). The test event is not in the outbox: neither sockets nor other webhooks see
 * it. No transaction is open while the request runs.
 */
export async function sendTestEvent(
  ctx: Pick<AppContext, "egress" | "now" | "dispatchTuning">,
  tenant: TenantDoor,
  webhookId: string,
): Promise<{ attempt: Attempt; delivery: Delivery }> {
  const hook = await tenant.read((db) => findRow(db, webhookId));
  const payload = JSON.stringify({ type: TEST_EVENT, timestamp: toIso(ctx.now()), data: { webhook_id: hook.id, name: hook.name } });
  const deliveryId = newId();
  const msgId = `msg_${deliveryId}`;
  const attempt = await deliverOnce(ctx, hook, msgId, payload);
  const at = toIso(ctx.now());
  const row: DeliveryRow = {
    id: deliveryId,
    webhook_id: hook.id,
    source_event_id: deliveryId,
    event_id: msgId,
    type: TEST_EVENT,
    status: attempt.ok ? "succeeded" : "failed",
    attempts: 1,
    response_status: attempt.responseStatus,
    error: attempt.error,
    next_attempt_at: null,
    created_at: at,
    updated_at: at,
  };
  await tenant.write(async (tx) => {
    // Deleted meanwhile: the attempt was made, there is no log to keep it in.
    const live = await tx.select({ log: webhooks.log_enabled }).from(webhooks).where(eq(webhooks.id, hook.id)).get();
    if (live?.log) await tx.insert(webhookDeliveries).values(row).run();
  });
  return { attempt, delivery: deliveryView(row) };
}

// The replay rows as the routes call them: the change, then its entry in the audit log.
const replayAudit = (p: Principal, action: string, target: string) =>
  ({ action, actor_user_id: p.userId, corp_id: p.corpId, target, ip: p.ip, request_id: p.requestId }) as const;

export async function resendDeliveryAudited(ctx: AppContext, tenant: TenantDoor, p: Principal, webhookId: string, deliveryId: string, wake: () => void): Promise<Delivery> {
  const delivery = await resendDelivery(tenant, webhookId, deliveryId, toIso(ctx.now()), wake);
  await ctx.audit.record({ ...replayAudit(p, "webhook.delivery_resend", deliveryId), outcome: "success" });
  return delivery;
}

export async function recoverDeliveriesAudited(ctx: AppContext, tenant: TenantDoor, p: Principal, webhookId: string, since: string, wake: () => void): Promise<{ queued: number }> {
  const result = await recoverDeliveries(tenant, webhookId, since, toIso(ctx.now()), wake);
  await ctx.audit.record({ ...replayAudit(p, "webhook.recover", webhookId), outcome: "success" });
  return result;
}

/** The test event's attempt is audited as it went: success, or failure with its error. */
export async function sendTestEventAudited(ctx: AppContext, tenant: TenantDoor, p: Principal, webhookId: string): Promise<Delivery> {
  const { attempt, delivery } = await sendTestEvent(ctx, tenant, webhookId);
  await ctx.audit.record({ ...replayAudit(p, "webhook.test", webhookId), outcome: attempt.ok ? "success" : "failure", reason: attempt.error });
  return delivery;
}

// ---- the dispatcher's queue (jobs.ts) -------------------------------------------------------

/** A delivery due now, with the payload of its event. */
export interface Due {
  id: string;
  event_id: string;
  attempts: number;
  payload: string;
}

/** Whether the outbox holds events not fanned out yet (a read: no write when there is nothing). */
export async function hasEventsToFanOut(db: TenantDb): Promise<boolean> {
  return (await undispatchedEvents(db, 1)).length > 0;
}

const INSERT_DELIVERY = `INSERT INTO webhook_deliveries (id, webhook_id, source_event_id, event_id, type, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES (?1, ?2, ?3, ?4, ?5, 'pending', 0, ?6, ?6, ?6)`;
/** INSERT_DELIVERY for many rows at once: `[id, webhook_id, source_event_id, type]` each. */
const INSERT_DELIVERIES = `INSERT INTO webhook_deliveries (id, webhook_id, source_event_id, event_id, type, status, attempts, next_attempt_at, created_at, updated_at)
     SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), 'msg_' || json_extract(value, '$[0]'), json_extract(value, '$[3]'), 'pending', 0, ?1, ?1, ?1
     FROM json_each(?2)`;

/**
 * Fans out up to `limit` undispatched events: one pending delivery per (event, active webhook
 * linked to its group), and the events marked dispatched, in the caller's transaction. Returns
 * how many events it took. On PostgreSQL (`claim`) the events are read with
 * `FOR UPDATE SKIP LOCKED` (the dispatcher runs it without the corporation's writer lock: two
 * nodes take different events) and the rows are written by two statements, whatever their
 * number; on SQLite (under the writer lock) a statement is a function call: the deliveries are
 * inserted one by one, and the events marked by one range.
 */
export async function fanOutEvents(tx: TenantDb, now: string, limit: number, claim = false): Promise<number> {
  const events = await undispatchedEvents(tx, limit, claim);
  if (events.length === 0) return 0;
  const sqlite = clientOf(tx);
  const targets = sqlite.query<{ id: string }, [string]>(
    "SELECT w.id FROM webhooks w JOIN webhook_groups g ON g.webhook_id = w.id WHERE g.\"group\" = ?1 AND w.status = 1",
  );
  if (claim) {
    // Every type's targets asked at once (one wait), the deliveries in event order.
    const types = [...new Set(events.map((e) => e.type))];
    const lists = await Promise.all(types.map((type) => targets.all(type)));
    const hooksOf = new Map(types.map((type, i) => [type, lists[i]]));
    const rows: [string, string, string, string][] = [];
    for (const e of events) for (const h of hooksOf.get(e.type)!) rows.push([newId(), h.id, e.id, e.type]);
    await Promise.all([rows.length ? sqlite.query(INSERT_DELIVERIES).run(now, JSON.stringify(rows)) : null, markManyDispatched(tx, events.map((e) => e.seq), now)]);
    return events.length;
  }
  const byType = new Map<string, { id: string }[]>();
  const insert = sqlite.query(INSERT_DELIVERY);
  for (const e of events) {
    let hooks = byType.get(e.type);
    if (!hooks) byType.set(e.type, (hooks = await targets.all(e.type)));
    for (const h of hooks) {
      const id = newId();
      await insert.run(id, h.id, e.id, `msg_${id}`, e.type, now);
    }
  }
  await markDispatchedThrough(tx, events[events.length - 1].seq, now);
  return events.length;
}

/** Active webhooks with a delivery due at `now`. */
export async function dueTargets(db: TenantDb, now: string): Promise<Target[]> {
  return await clientOf(db)
    .query<Target, [string]>(
      `SELECT w.id, w.target, w.secret, w.body_content FROM webhooks w
       WHERE w.status = 1 AND EXISTS (SELECT 1 FROM webhook_deliveries d
         WHERE d.status = 'pending' AND d.webhook_id = w.id AND d.next_attempt_at <= ?1)`,
    )
    .all(now);
}

/**
 * The deliveries of a webhook due at `now` to launch, oldest due first, with their payloads
 * (SQLite: one process sends; the dispatcher's in-flight set keeps a row from being sent twice):
 * of the first `limit` due rows, up to `room` that `wanted` accepts (those not in flight). Their
 * payloads are read once they are taken: a pass under load meets every row still in flight or
 * answered again, and read each one's payload (≈ 25 µs each on the main thread under load).
 */
export async function dueDeliveries(db: TenantDb, webhookId: string, now: string, limit: number, room: number, wanted: (id: string) => boolean): Promise<Due[]> {
  const rows = await clientOf(db)
    .query<{ id: string; event_id: string; attempts: number; source_event_id: string }, [string, string, number]>(
      `SELECT id, event_id, attempts, source_event_id FROM webhook_deliveries
       WHERE status = 'pending' AND webhook_id = ?1 AND next_attempt_at <= ?2
       ORDER BY next_attempt_at, id LIMIT ?3`,
    )
    .all(webhookId, now, limit);
  const out: Due[] = [];
  for (const r of rows) {
    if (out.length >= room) break;
    if (!wanted(r.id)) continue;
    // Retention keeps the event of a pending delivery; one without it has nothing to send.
    const payload = await eventPayload(db, r.source_event_id);
    if (payload !== null) out.push({ id: r.id, event_id: r.event_id, attempts: r.attempts, payload });
  }
  return out;
}

/**
 * Claims up to `limit` of a webhook's deliveries due at `now` (but `skip`: this node's in flight),
 * oldest due first, in one statement of a write (PostgreSQL, several nodes): rows another node is
 * claiming are skipped (`FOR UPDATE SKIP LOCKED`), and the ones taken are due again only at `until`
 * (the send's timeout and a margin later), so no other node sends them meanwhile, and a node that
 * dies mid-send leaves them to be sent again, with the same webhook-id (which Standard Webhooks
 * allows). Recording the outcome replaces `next_attempt_at` as always. The payload comes with
 * each row (the outbox's event, read in the same statement: one round trip per webhook).
 * Planned to cost what it takes whatever the statistics say (a backlog grows in seconds, far
 * faster than ANALYZE follows): the due index gives the rows in `next_attempt_at` order, so the
 * LIMIT stops the scan (a tie-break on `id` sorted every due row of the webhook first: 5 ms a
 * claim behind 3,000), and the rows taken are updated by their ctid (joined on `id`, a table
 * believed empty was scanned once per row taken).
 */
export async function claimDueDeliveries(tx: TenantDb, webhookId: string, now: string, limit: number, until: string, skip: string[]): Promise<Due[]> {
  const rows = await clientOf(tx)
    .query<{ id: string; event_id: string; attempts: number; payload: string | null }, [string, string, number, string, string]>(
      `WITH c AS (SELECT ctid AS place FROM webhook_deliveries
         WHERE status = 'pending' AND webhook_id = ?1 AND next_attempt_at <= ?2 AND id NOT IN (SELECT value FROM json_each(?5))
         ORDER BY next_attempt_at LIMIT ?3 FOR UPDATE SKIP LOCKED)
       UPDATE webhook_deliveries d SET next_attempt_at = ?4 FROM c WHERE d.ctid = c.place
       RETURNING d.id, d.event_id, d.attempts, ${eventPayloadExpr("d.source_event_id")} AS payload`,
    )
    .all(webhookId, now, limit, until, JSON.stringify(skip));
  const out: Due[] = [];
  // Retention keeps the event of a pending delivery; one without it has nothing to send.
  for (const r of rows) if (r.payload !== null) out.push({ id: r.id, event_id: r.event_id, attempts: r.attempts, payload: r.payload });
  return out;
}

/** The earliest next attempt of a pending delivery, or null when the queue is empty. */
export async function nextAttemptAt(db: TenantDb): Promise<string | null> {
  // Per webhook: each MIN is the first entry of the due index under (status, webhook_id), one
  // probe whatever the statistics say. Over the whole table, PostgreSQL scanned every pending row
  // or, planned while a backlog made them look common, the whole table (11.7 ms a call beside
  // 10,000 contracts' deliveries, where the webhook keeps its log).
  return (
    (
      await clientOf(db)
        .query<{ at: string | null }, []>(
          "SELECT MIN((SELECT MIN(d.next_attempt_at) FROM webhook_deliveries d WHERE d.status = 'pending' AND d.webhook_id = w.id)) AS at FROM webhooks w",
        )
        .get()
    )?.at ?? null
  );
}

/** The outcome of one attempt of a queued delivery. */
export interface Outcome {
  corpId: string;
  deliveryId: string;
  webhookId: string;
  ok: boolean;
  responseStatus: number | null;
  error: string | null;
  retryAfterMs: number | null;
}

/** The retry rules the dispatcher records outcomes by. */
export interface RetryRules {
  /** Waits after attempts 1..n; the attempt after the last is final. */
  delaysMs: readonly number[];
  /** Consecutive finally-failed events that make a webhook inactive. */
  failuresToDisable: number;
}

/** A webhook the recorded outcomes made inactive. */
export interface Disabled {
  webhookId: string;
  /** `gone`: its receiver answered 410; `failures`: too many consecutive failed events. */
  why: "gone" | "failures";
  failures: number;
  email: string;
  name: string;
  target: string;
}

/** Applies attempts' outcomes in the caller's transaction; returns the webhooks it made inactive. */
export async function recordOutcomes(tx: TenantDb, list: Outcome[], nowMs: number, rules: RetryRules, w?: TenantWriteScope): Promise<Disabled[]> {
  // A webhook made inactive here is a change of the record, by the dispatcher (core/history.ts).
  const inactive = (id: string) => w?.record({ type: "webhook", id, action: "status", before: { status: true }, after: { status: false } });
  const sqlite = clientOf(tx);
  const disabled: Disabled[] = [];
  const now = toIso(nowMs);
  const maxAttempts = rules.delaysMs.length + 1;
  // PostgreSQL: the dispatcher records without the corporation's writer lock, so the row is
  // locked where it is read: two nodes recording the same delivery (a claim that ran out) count
  // one attempt each, one after the other, and the second finds it no longer pending once done.
  const rowOf = sqlite.query<{ attempts: number; log_enabled: number }, [string]>(
    `SELECT d.attempts, w.log_enabled FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
     WHERE d.id = ?1 AND d.status = 'pending'${rowLock(tx, "FOR UPDATE OF d")}`,
  );
  const finish = sqlite.query(
    `UPDATE webhook_deliveries SET status = ?2, attempts = ?3, response_status = ?4, error = ?5, next_attempt_at = NULL, updated_at = ?6
     WHERE id = ?1`,
  );
  const retry = sqlite.query(
    `UPDATE webhook_deliveries SET attempts = ?2, response_status = ?3, error = ?4, next_attempt_at = ?5, updated_at = ?6 WHERE id = ?1`,
  );
  const drop = sqlite.query("DELETE FROM webhook_deliveries WHERE id = ?1");
  // An attempt that was in flight when its delivery was cancelled (another delivery's 410 made the
  // webhook inactive): the attempt and the answer are still recorded, once (the mark goes with it).
  const lateAnswer = sqlite.query(
    `UPDATE webhook_deliveries SET attempts = attempts + 1, response_status = ?2, error = ?3 || ' (' || substr(error, ${CANCELLED.length + 1}) || ')', updated_at = ?4
     WHERE id = ?1 AND status = 'failed' AND substr(error, 1, ${CANCELLED.length}) = '${CANCELLED}'`,
  );
  const resetFailures = sqlite.query("UPDATE webhooks SET failure_count = 0 WHERE id = ?1 AND failure_count <> 0");
  // Successes (nearly every outcome under load) as a batch, a delivery met twice in the list and
  // every other outcome one at a time below. PostgreSQL: one statement for the batch (its rows
  // read and locked, finished or deleted as the webhook keeps its log, the webhooks' failure
  // counts reset; the rows written by the ctid read, which no statistics can misplan: joined on
  // `id` while the table was believed empty, each row finished scanned the whole queue);
  // SQLite: one statement per webhook and answer status (below).
  const seen = new Map<string, number>();
  for (const o of list) seen.set(o.deliveryId, (seen.get(o.deliveryId) ?? 0) + 1);
  const batched = (o: Outcome) => o.ok && seen.get(o.deliveryId) === 1;
  const successes = list.filter(batched);
  // A lone success beside other outcomes keeps the list's order (the one-at-a-time loop): an
  // earlier 410 that made the webhook inactive turns it into a late answer, as it came.
  const oneStatement = statementsAreRoundTrips(tx) && (successes.length > 1 || (successes.length === 1 && list.length === 1));
  if (oneStatement) {
    const found = new Set(
      (
        await sqlite
          .query<{ id: string }, [string, string]>(
            `WITH o AS (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS status, json_extract(value, '$[2]') AS error FROM json_each(?1)),
             d AS (SELECT d.ctid AS place, d.id, d.webhook_id, w.log_enabled, o.status, o.error FROM webhook_deliveries d JOIN o ON o.id = d.id JOIN webhooks w ON w.id = d.webhook_id
                   WHERE d.status = 'pending' FOR UPDATE OF d),
             fin AS (UPDATE webhook_deliveries x SET status = 'succeeded', attempts = x.attempts + 1, response_status = CAST(d.status AS INTEGER), error = d.error,
                     next_attempt_at = NULL, updated_at = ?2 FROM d WHERE x.ctid = d.place AND d.log_enabled),
             gone AS (DELETE FROM webhook_deliveries x USING d WHERE x.ctid = d.place AND NOT d.log_enabled),
             reset AS (UPDATE webhooks SET failure_count = 0 WHERE id IN (SELECT webhook_id FROM d) AND failure_count <> 0)
             SELECT id FROM d`,
          )
          .all(JSON.stringify(successes.map((o) => [o.deliveryId, o.responseStatus, o.error])), now)
      ).map((r) => r.id),
    );
    // Gone meanwhile (webhook deleted, or made inactive and its log off): nothing to record.
    for (const o of successes) if (!found.has(o.deliveryId)) await lateAnswer.run(o.deliveryId, o.responseStatus, o.error ?? "delivered", now);
  } else if (successes.length > 1) {
    // SQLite: the successes of a webhook with one answer status (all of them, nearly always)
    // finished or deleted by one statement, the rows still pending answered by RETURNING: no row
    // read per outcome (≈ 40 µs each on the main thread under the upsert's load).
    const logOf = sqlite.query<{ log_enabled: number }, [string]>("SELECT log_enabled FROM webhooks WHERE id = ?1");
    const finishMany = sqlite.query<{ id: string }, [string, number | null, string | null, string]>(
      `UPDATE webhook_deliveries SET status = 'succeeded', attempts = attempts + 1, response_status = ?2, error = ?3, next_attempt_at = NULL, updated_at = ?4
       WHERE id IN (SELECT value FROM json_each(?1)) AND status = 'pending' RETURNING id`,
    );
    const dropMany = sqlite.query<{ id: string }, [string]>("DELETE FROM webhook_deliveries WHERE id IN (SELECT value FROM json_each(?1)) AND status = 'pending' RETURNING id");
    const sets = new Map<string, Outcome[]>();
    for (const o of successes) {
      const key = JSON.stringify([o.webhookId, o.responseStatus, o.error]);
      const set = sets.get(key);
      if (set) set.push(o);
      else sets.set(key, [o]);
    }
    const logs = new Map<string, boolean | null>();
    const hooks = new Set<string>();
    for (const set of sets.values()) {
      const { webhookId, responseStatus, error } = set[0];
      if (!logs.has(webhookId)) {
        const hook = await logOf.get(webhookId);
        logs.set(webhookId, hook ? !!hook.log_enabled : null);
      }
      const log = logs.get(webhookId);
      // A webhook deleted meanwhile took its deliveries with it (nothing found below).
      const ids = JSON.stringify(set.map((o) => o.deliveryId));
      const found = new Set(log === null ? [] : (await (log ? finishMany.all(ids, responseStatus, error, now) : dropMany.all(ids))).map((r) => r.id));
      if (found.size) hooks.add(webhookId);
      // Gone meanwhile (webhook deleted, or made inactive and its log off): nothing to record.
      for (const o of set) if (!found.has(o.deliveryId)) await lateAnswer.run(o.deliveryId, o.responseStatus, o.error ?? "delivered", now);
    }
    for (const id of hooks) await resetFailures.run(id);
  }
  for (const o of oneStatement || successes.length > 1 ? list.filter((o) => !batched(o)) : list) {
    // Gone meanwhile (webhook deleted, or made inactive and its log off): nothing to record.
    const row = await rowOf.get(o.deliveryId);
    if (!row) {
      await lateAnswer.run(o.deliveryId, o.responseStatus, o.error ?? "delivered", now);
      continue;
    }
    const attempts = row.attempts + 1;
    const end = async (status: "succeeded" | "failed") => {
      if (row.log_enabled) await finish.run(o.deliveryId, status, attempts, o.responseStatus, o.error, now);
      else await drop.run(o.deliveryId);
    };
    if (o.ok) {
      await end("succeeded");
      await resetFailures.run(o.webhookId);
      continue;
    }
    if (o.responseStatus === 410) {
      await end("failed");
      const hook = await sqlite
        .query<{ failure_count: number; email: string; name: string; target: string }, [string, string]>(
          "UPDATE webhooks SET status = 0, updated_at = ?2 WHERE id = ?1 AND status = 1 RETURNING failure_count, email, name, target",
        )
        .get(o.webhookId, now);
      if (hook) {
        inactive(o.webhookId);
        await cancelPending(tx, o.webhookId, "the receiver answered 410 Gone; the webhook was made inactive", now);
        disabled.push({ webhookId: o.webhookId, why: "gone", failures: hook.failure_count, email: hook.email, name: hook.name, target: hook.target });
      }
      continue;
    }
    if (attempts < maxAttempts) {
      const wait = Math.max(rules.delaysMs[attempts - 1], o.retryAfterMs ?? 0);
      await retry.run(o.deliveryId, attempts, o.responseStatus, o.error, toIso(nowMs + wait), now);
      continue;
    }
    await end("failed");
    const hook = await sqlite
      .query<{ failure_count: number; status: number; email: string; name: string; target: string }, [string]>(
        "UPDATE webhooks SET failure_count = failure_count + 1 WHERE id = ?1 RETURNING failure_count, status, email, name, target",
      )
      .get(o.webhookId);
    if (hook && hook.status && hook.failure_count >= rules.failuresToDisable) {
      await sqlite.query("UPDATE webhooks SET status = 0, updated_at = ?2 WHERE id = ?1").run(o.webhookId, now);
      inactive(o.webhookId);
      await cancelPending(tx, o.webhookId, `${rules.failuresToDisable} consecutive events failed; the webhook was made inactive`, now);
      disabled.push({ webhookId: o.webhookId, why: "failures", failures: hook.failure_count, email: hook.email, name: hook.name, target: hook.target });
    }
  }
  return disabled;
}

// ---- retention ------------------------------------------------------------------------------

/**
 * Deletes up to `limit` finished deliveries (the log of webhooks with log_enabled; the others'
 * finished rows are deleted by the dispatcher at once) last touched before `cutoff`; returns how
 * many. A delivery's id (UUID v7) is taken when it is queued, before it finishes, so `idBelow`
 * (the smallest id of a little after the cutoff) bounds the scan to a primary-key range; `+status`
 * keeps the planner on that range. Housekeeping calls it once per batch, in its own transaction.
 */
export async function pruneWebhookDeliveries(db: TenantDb, cutoff: string, idBelow: string, limit: number): Promise<number> {
  const done = await clientOf(db)
    .query(
      `DELETE FROM webhook_deliveries WHERE rowid IN (SELECT rowid FROM webhook_deliveries
            WHERE id < ?3 AND +status IN ('succeeded', 'failed') AND updated_at < ?1 LIMIT ?2)`,
    )
    .run(cutoff, limit, idBelow);
  return done.changes;
}

/** The events a pending delivery (first try or retrying) still reads its payload from: retention keeps them. */
export async function pendingSourceEventIds(db: TenantDb): Promise<string[]> {
  const rows = await db
    .selectDistinct({ id: webhookDeliveries.source_event_id })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.status, "pending"))
    .all();
  return rows.map((r) => r.id);
}
