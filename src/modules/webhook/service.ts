// Webhooks of the working corporation: CRUD, group links, status and the delivery log.
import { randomBytes } from "node:crypto";
import { and, eq, inArray, sql } from "drizzle-orm";
import { writeTx, type TenantDb } from "../../db/sqlite";
import { webhookDeliveries, webhookGroups, webhooks } from "../../db/tenant/schema";
import { EVENT_GROUPS } from "../../core/events";
import { newId } from "../../lib/ids";
import { listRows, type ListParams, type Page } from "../../lib/list";
import { conflict, invalid, notFound } from "../../lib/problem";
import { nowIso } from "../../lib/time";
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

function groupsOf(db: TenantDb, ids: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const rows = db.select().from(webhookGroups).where(inArray(webhookGroups.webhook_id, ids)).orderBy(webhookGroups.group).all();
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
    groups,
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function findRow(db: TenantDb, id: string): WebhookRow {
  const row = db.select().from(webhooks).where(eq(webhooks.id, id)).get();
  if (!row) throw notFound("Webhook");
  return row;
}

export function getWebhook(db: TenantDb, id: string): Webhook {
  const row = findRow(db, id);
  return view(row, groupsOf(db, [id]).get(id)!);
}

export function listWebhooks(db: TenantDb, query: ListParams): Page<Webhook> {
  const page = listRows<WebhookRow, WebhookRow>(db, webhooks, { q: [webhooks.name, webhooks.target], hidden: ["secret", "failure_count"] }, query, (r) => r);
  const groups = groupsOf(db, page.items.map((r) => r.id));
  return { ...page, items: page.items.map((r) => view(r, groups.get(r.id)!)) };
}

export function createWebhook(db: TenantDb, input: WebhookCreate): WebhookWithSecret {
  const target = checkTarget(input.target);
  const groups = [...new Set((input.groups ?? []).map((g, i) => checkGroup(g, `groups.${i}`)))];
  const id = newId();
  const secret = newSecret();
  writeTx(db, (tx) => {
    tx.insert(webhooks)
      .values({ id, name: input.name, target, email: input.email, body_content: input.body_content ?? null, log_enabled: input.log_enabled ?? false, secret })
      .run();
    if (groups.length) tx.insert(webhookGroups).values(groups.map((group) => ({ webhook_id: id, group }))).run();
  });
  return { ...getWebhook(db, id), secret };
}

export function alterWebhook(db: TenantDb, id: string, input: WebhookAlter): Webhook {
  const target = checkTarget(input.target);
  const logEnabled = input.log_enabled ?? false;
  writeTx(db, (tx) => {
    const row = tx.select({ id: webhooks.id }).from(webhooks).where(eq(webhooks.id, id)).get();
    if (!row) throw notFound("Webhook");
    tx.update(webhooks)
      .set({ name: input.name, target, email: input.email, body_content: input.body_content ?? null, log_enabled: logEnabled })
      .where(eq(webhooks.id, id))
      .run();
    // The log is kept only while logging is on; pending rows stay as the dispatcher's queue.
    if (!logEnabled) tx.delete(webhookDeliveries).where(and(eq(webhookDeliveries.webhook_id, id), sql`${webhookDeliveries.status} <> 'pending'`)).run();
  });
  return getWebhook(db, id);
}

export function linkGroup(db: TenantDb, id: string, group: string): Webhook {
  checkGroup(group);
  findRow(db, id);
  db.insert(webhookGroups).values({ webhook_id: id, group }).onConflictDoNothing().run();
  return getWebhook(db, id);
}

export function unlinkGroup(db: TenantDb, id: string, group: string): Webhook {
  checkGroup(group);
  findRow(db, id);
  const removed = db.delete(webhookGroups).where(and(eq(webhookGroups.webhook_id, id), eq(webhookGroups.group, group))).returning({ group: webhookGroups.group }).all();
  if (removed.length === 0) throw notFound("Group link");
  return getWebhook(db, id);
}

/**
 * Ends the queue of a webhook that stops receiving: its pending deliveries become failed (or go,
 * when it keeps no log). Runs inside the caller's transaction.
 */
export function cancelPending(sqlite: TenantDb["$client"], webhookId: string, reason: string, now: string): void {
  const logged = sqlite.query<{ log_enabled: number }, [string]>("SELECT log_enabled FROM webhooks WHERE id = ?1").get(webhookId);
  if (logged?.log_enabled) {
    sqlite
      .query("UPDATE webhook_deliveries SET status = 'failed', error = ?2, next_attempt_at = NULL, updated_at = ?3 WHERE webhook_id = ?1 AND status = 'pending'")
      .run(webhookId, reason, now);
  } else {
    sqlite.query("DELETE FROM webhook_deliveries WHERE webhook_id = ?1 AND status = 'pending'").run(webhookId);
  }
}

export function setStatus(db: TenantDb, id: string, active: boolean): Webhook {
  writeTx(db, (tx) => {
    const row = tx.select({ id: webhooks.id }).from(webhooks).where(eq(webhooks.id, id)).get();
    if (!row) throw notFound("Webhook");
    if (active) tx.update(webhooks).set({ status: true, failure_count: 0 }).where(eq(webhooks.id, id)).run();
    else {
      tx.update(webhooks).set({ status: false }).where(eq(webhooks.id, id)).run();
      cancelPending(db.$client, id, "the webhook was made inactive", nowIso());
    }
  });
  return getWebhook(db, id);
}

export function deleteWebhook(db: TenantDb, id: string): void {
  const removed = db.delete(webhooks).where(eq(webhooks.id, id)).returning({ id: webhooks.id }).all();
  if (removed.length === 0) throw notFound("Webhook");
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

export function listDeliveries(db: TenantDb, id: string, query: ListParams): Page<Delivery> {
  const row = findRow(db, id);
  return listRows(
    db,
    webhookDeliveries,
    { q: [webhookDeliveries.type, webhookDeliveries.event_id], hidden: ["webhook_id", "source_event_id"], defaultSort: "-id" },
    query,
    deliveryView,
    // Recorded only while log_enabled: with logging off the queue rows are not a log.
    [eq(webhookDeliveries.webhook_id, id), row.log_enabled ? undefined : sql`0`],
  );
}

/** The outbox event a delivery sends; retention deletes it once no pending delivery needs it. */
function eventKept(db: TenantDb, eventId: string): boolean {
  return !!db.$client.query("SELECT 1 FROM events WHERE id = ?1").get(eventId);
}

/**
 * Resend one delivery (routes.md, Operator additions): back to pending and due now, with the same
 * webhook-id; the attempt counts on from where it stopped, so a delivery that had all its retries
 * gets exactly one more. The caller wakes the dispatcher.
 */
export function resendDelivery(db: TenantDb, webhookId: string, deliveryId: string, now: string): Delivery {
  const hook = findRow(db, webhookId);
  return writeTx(db, (tx) => {
    const row = tx.select().from(webhookDeliveries).where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhook_id, webhookId))).get();
    // With logging off a finished delivery leaves no row: there is nothing to resend.
    if (!row || (!hook.log_enabled && row.status !== "pending")) throw notFound("Delivery");
    if (row.status === "pending") throw conflict("The delivery is pending: it is sent (or retried) already");
    if (!hook.status) throw conflict("The webhook is inactive: activate it first");
    if (row.type === TEST_EVENT) throw conflict("A test delivery is not resent: send a new test event");
    if (!eventKept(db, row.source_event_id)) throw conflict("The event of this delivery is no longer kept (--event-retention-days)");
    const updated = tx
      .update(webhookDeliveries)
      .set({ status: "pending", next_attempt_at: now, updated_at: now })
      .where(eq(webhookDeliveries.id, deliveryId))
      .returning()
      .get();
    return deliveryView(updated!);
  });
}

/**
 * Re-queues every failed delivery of the webhook created since `since` whose event is still kept;
 * returns how many. Failed means finally: after the last retry, or at once on a 410.
 */
export function recoverDeliveries(db: TenantDb, webhookId: string, since: string, now: string): { queued: number } {
  const hook = findRow(db, webhookId);
  if (!hook.status) throw conflict("The webhook is inactive: activate it first");
  const changed = db.$client
    .query(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?3, updated_at = ?3
       WHERE webhook_id = ?1 AND status = 'failed' AND created_at >= ?2 AND type <> ?4
         AND source_event_id IN (SELECT id FROM events)`,
    )
    .run(webhookId, since, now, TEST_EVENT);
  return { queued: changed.changes };
}

export const TEST_EVENT = "WEBHOOK_TEST";

/** The test event's payload: `{type: WEBHOOK_TEST, timestamp, data: {webhook_id, name}}`. */
export function testPayload(db: TenantDb, webhookId: string, now: string): { hook: WebhookRow; payload: string } {
  const hook = findRow(db, webhookId);
  return { hook, payload: JSON.stringify({ type: TEST_EVENT, timestamp: now, data: { webhook_id: hook.id, name: hook.name } }) };
}

/**
 * Records a test event's attempt in the delivery log (kept only while log_enabled, as every
 * delivery) and returns it. The test event is not in the outbox: neither sockets nor other
 * webhooks see it.
 */
export function recordTestDelivery(
  db: TenantDb,
  hook: WebhookRow,
  msgId: string,
  deliveryId: string,
  attempt: { ok: boolean; responseStatus: number | null; error: string | null },
  at: string,
): Delivery {
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
  // Deleted meanwhile: the attempt was made, there is no log to keep it in.
  const live = db.select({ log: webhooks.log_enabled }).from(webhooks).where(eq(webhooks.id, hook.id)).get();
  if (live?.log) db.insert(webhookDeliveries).values(row).run();
  return deliveryView(row);
}
