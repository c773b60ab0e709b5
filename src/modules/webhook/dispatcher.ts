// The webhook dispatcher (routes.md, Events): fans each corporation's outbox out into one
// durable delivery row per (event, active webhook linked to the group), then POSTs them with the
// Standard Webhooks headers, retrying on the schedule until success, final failure or disabling.
//
// At least once: an event is marked dispatched in the transaction that creates its deliveries, and
// a delivery is marked done only after a 2xx has been received and its row committed; a crash at
// any point leaves rows that the start-up sweep picks up again, with the same webhook-id.
import { createHmac } from "node:crypto";
import type { AppContext } from "../../core/context";
import { writeTx, type TenantDb } from "../../db/sqlite";
import { EgressRefused } from "../../lib/egress";
import { newId } from "../../lib/ids";
import { toIso } from "../../lib/time";
import { cancelPending } from "./service";

/** Waits after attempts 1..7; the 8th failed attempt is final. */
export const RETRY_DELAYS_MS = [30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Consecutive finally-failed events that make a webhook inactive. */
export const FAILURES_TO_DISABLE = 10;
/** Requests in flight per webhook and in all: one slow receiver holds at most its own share. */
export const PER_WEBHOOK_CONCURRENCY = 16;
export const TOTAL_CONCURRENCY = 64;
const FANOUT_BATCH = 500;
/** Longest Retry-After honoured; beyond it the receiver is treated as gone for the day. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

interface Due {
  id: string;
  event_id: string;
  attempts: number;
  payload: string;
}

interface Target {
  id: string;
  target: string;
  secret: string;
  body_content: string | null;
}

interface Outcome {
  corpId: string;
  deliveryId: string;
  webhookId: string;
  ok: boolean;
  responseStatus: number | null;
  error: string | null;
  retryAfterMs: number | null;
}

/** `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, key = base64-decoded secret after `whsec_`. */
export function signature(secret: string, msgId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${msgId}.${timestamp}.${body}`).digest("base64")}`;
}

/**
 * body_content: every `{{path.to.field}}` resolved against the payload. Strings are JSON-escaped
 * without their quotes (so they fit inside a quoted template string), numbers, booleans and null
 * as literals, objects and arrays as JSON, missing paths empty.
 */
export function renderTemplate(template: string, payload: unknown): string {
  return template.replace(/\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g, (_m, path: string) => {
    let v: unknown = payload;
    for (const key of path.split(".")) {
      if (v === null || typeof v !== "object" || !Object.hasOwn(v as object, key)) return "";
      v = (v as Record<string, unknown>)[key];
    }
    if (v === undefined) return "";
    if (typeof v === "string") return JSON.stringify(v).slice(1, -1);
    return JSON.stringify(v);
  });
}

/** Seconds or an HTTP date; null when absent or unreadable. */
function retryAfterMs(header: string | null, now: number): number | null {
  if (!header) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

function describeFailure(err: unknown, timeoutMs: number): string {
  if (err instanceof EgressRefused) return `refused by the egress policy: ${err.message}`;
  const name = (err as { name?: string })?.name;
  if (name === "TimeoutError" || name === "AbortError") return `no answer within ${timeoutMs / 1000} s`;
  return `request failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 500);
}

export interface Attempt {
  ok: boolean;
  responseStatus: number | null;
  error: string | null;
  retryAfterMs: number | null;
}

/**
 * One signed POST of `payload` (or the webhook's body template rendered from it) with the
 * Standard Webhooks headers; the outcome, never an exception. Used by the dispatcher and by the
 * test event (which is sent at once, whatever the webhook's status).
 */
export async function deliverOnce(
  ctx: Pick<AppContext, "egress" | "now" | "dispatchTuning">,
  hook: Pick<Target, "target" | "secret" | "body_content">,
  msgId: string,
  payload: string,
): Promise<Attempt> {
  const timeoutMs = ctx.dispatchTuning.deliveryTimeoutMs;
  let body = payload;
  if (hook.body_content) {
    try {
      body = renderTemplate(hook.body_content, JSON.parse(payload));
    } catch {
      body = payload;
    }
  }
  const timestamp = Math.floor(ctx.now() / 1000);
  try {
    const res = await ctx.egress.fetch(hook.target, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "corpadmin-webhooks",
        "webhook-id": msgId,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signature(hook.secret, msgId, timestamp, body),
      },
      body,
      timeoutMs,
    });
    // Only the status matters; the body is not read.
    await res.body?.cancel().catch(() => {});
    const ok = res.status >= 200 && res.status < 300;
    let error: string | null = null;
    if (!ok) error = res.status >= 300 && res.status < 400 ? `HTTP ${res.status}: redirects are not followed` : `HTTP ${res.status}`;
    const retry = res.status === 429 || res.status === 503 ? retryAfterMs(res.headers.get("retry-after"), ctx.now()) : null;
    return { ok, responseStatus: res.status, error, retryAfterMs: retry };
  } catch (err) {
    return { ok: false, responseStatus: null, error: describeFailure(err, timeoutMs), retryAfterMs: null };
  }
}

export class WebhookDispatcher {
  private inFlight = new Set<string>();
  private perWebhook = new Map<string, number>();
  private sends = new Set<Promise<void>>();
  /** Earliest next_attempt_at (ms) of a pending delivery, per corporation. */
  private nextDue = new Map<string, number>();
  private queued = new Set<string>();
  /** Corporations that found every global slot taken; woken when one frees. */
  private starved = new Set<string>();
  private outcomes: Outcome[] = [];
  private runScheduled = false;
  private flushScheduled = false;
  private timers: ReturnType<typeof setInterval>[] = [];
  private unsubscribe: (() => void) | null = null;
  private closed = false;

  constructor(private ctx: AppContext) {}

  start(): void {
    this.unsubscribe = this.ctx.events.subscribe((corpId) => this.wake(corpId));
    const { tickMs, sweepMs } = this.ctx.dispatchTuning;
    this.timers.push(setInterval(() => this.tick(), tickMs), setInterval(() => this.sweep(), sweepMs));
    for (const t of this.timers) (t as { unref?: () => void }).unref?.();
    // Whatever a crash left behind (undispatched events, pending deliveries) goes out right after
    // start-up (deferred so that the API answers first).
    this.ctx.deferStart(() => this.sweep());
  }

  /** Stops taking work and waits a little for requests in flight; unrecorded ones are resent later. */
  async stop(graceMs = 3_000): Promise<void> {
    this.unsubscribe?.();
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    if (this.sends.size) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.allSettled([...this.sends]), new Promise((res) => (timer = setTimeout(res, graceMs)))]);
      clearTimeout(timer);
    }
    this.flush();
    this.closed = true;
  }

  /** Looks at a corporation soon (coalesced: many commits, one pass). */
  wake(corpId: string): void {
    if (this.closed) return;
    this.queued.add(corpId);
    if (this.runScheduled) return;
    this.runScheduled = true;
    setTimeout(() => this.run(), 0);
  }

  /** Every corporation whose database may hold work: at start-up and periodically. */
  sweep(): void {
    if (this.closed) return;
    try {
      const corps = this.ctx.platform.$client
        .query<{ id: string }, []>("SELECT id FROM corporations WHERE status IN ('ENABLED', 'BLOCKED')")
        .all();
      for (const c of corps) this.wake(c.id);
    } catch (err) {
      this.ctx.logger.error("webhook sweep failed", { error: String(err) });
    }
  }

  private tick(): void {
    const now = this.ctx.now();
    for (const [corpId, at] of this.nextDue) if (at <= now) this.wake(corpId);
  }

  private run(): void {
    this.runScheduled = false;
    if (this.closed) return;
    const corps = [...this.queued];
    this.queued.clear();
    for (const corpId of corps) {
      try {
        const db = this.ctx.tenants.get(corpId);
        this.fanOut(db);
        this.startDue(corpId, db);
      } catch (err) {
        // A corporation deleted meanwhile, or a database not yet migrated: the next sweep retries.
        this.nextDue.delete(corpId);
        this.ctx.logger.warn("webhook dispatch of a corporation failed", { corp_id: corpId, error: String(err) });
      }
    }
  }

  /** Undispatched events → delivery rows, committed together with the events' dispatched mark. */
  private fanOut(db: TenantDb): void {
    const sqlite = db.$client;
    for (;;) {
      const count = writeTx(db, () => {
        const events = sqlite
          .query<{ seq: number; id: string; type: string }, [number]>(
            "SELECT seq, id, type FROM events WHERE dispatched_at IS NULL ORDER BY seq LIMIT ?1",
          )
          .all(FANOUT_BATCH);
        if (events.length === 0) return 0;
        const now = toIso(this.ctx.now());
        const targets = sqlite.query<{ id: string }, [string]>(
          "SELECT w.id FROM webhooks w JOIN webhook_groups g ON g.webhook_id = w.id WHERE g.\"group\" = ?1 AND w.status = 1",
        );
        const insert = sqlite.query(
          `INSERT INTO webhook_deliveries (id, webhook_id, source_event_id, event_id, type, status, attempts, next_attempt_at, created_at, updated_at)
           VALUES (?1, ?2, ?3, ?4, ?5, 'pending', 0, ?6, ?6, ?6)`,
        );
        const mark = sqlite.query("UPDATE events SET dispatched_at = ?2 WHERE seq = ?1");
        const byType = new Map<string, { id: string }[]>();
        for (const e of events) {
          let hooks = byType.get(e.type);
          if (!hooks) byType.set(e.type, (hooks = targets.all(e.type)));
          for (const h of hooks) {
            const id = newId();
            insert.run(id, h.id, e.id, `msg_${id}`, e.type, now);
          }
          mark.run(e.seq, now);
        }
        return events.length;
      });
      if (count < FANOUT_BATCH) return;
    }
  }

  /** Starts the due deliveries that the concurrency bounds allow. */
  private startDue(corpId: string, db: TenantDb): void {
    const sqlite = db.$client;
    const now = toIso(this.ctx.now());
    const hooks = sqlite
      .query<Target, [string]>(
        `SELECT w.id, w.target, w.secret, w.body_content FROM webhooks w
         WHERE w.status = 1 AND EXISTS (SELECT 1 FROM webhook_deliveries d
           WHERE d.status = 'pending' AND d.webhook_id = w.id AND d.next_attempt_at <= ?1)`,
      )
      .all(now);
    const dueOf = sqlite.query<Due, [string, string, number]>(
      `SELECT d.id, d.event_id, d.attempts, e.payload FROM webhook_deliveries d JOIN events e ON e.id = d.source_event_id
       WHERE d.status = 'pending' AND d.webhook_id = ?1 AND d.next_attempt_at <= ?2
       ORDER BY d.next_attempt_at, d.id LIMIT ?3`,
    );
    this.starved.delete(corpId);
    for (const hook of hooks) {
      const busy = this.perWebhook.get(hook.id) ?? 0;
      if (busy >= PER_WEBHOOK_CONCURRENCY) continue;
      if (this.inFlight.size >= TOTAL_CONCURRENCY) {
        this.starved.add(corpId);
        break;
      }
      for (const d of dueOf.all(hook.id, now, PER_WEBHOOK_CONCURRENCY + busy)) {
        if (this.inFlight.has(d.id)) continue;
        if ((this.perWebhook.get(hook.id) ?? 0) >= PER_WEBHOOK_CONCURRENCY) break;
        if (this.inFlight.size >= TOTAL_CONCURRENCY) {
          this.starved.add(corpId);
          break;
        }
        this.launch(corpId, hook, d);
      }
    }
    const next = sqlite
      .query<{ at: string | null }, []>("SELECT MIN(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'")
      .get();
    if (next?.at) this.nextDue.set(corpId, Date.parse(next.at));
    else this.nextDue.delete(corpId);
  }

  private launch(corpId: string, hook: Target, d: Due): void {
    this.inFlight.add(d.id);
    this.perWebhook.set(hook.id, (this.perWebhook.get(hook.id) ?? 0) + 1);
    const p = this.send(corpId, hook, d).then((o) => {
      this.sends.delete(p);
      this.outcomes.push(o);
      this.scheduleFlush();
    });
    this.sends.add(p);
  }

  private async send(corpId: string, hook: Target, d: Due): Promise<Outcome> {
    const result = await deliverOnce(this.ctx, hook, d.event_id, d.payload);
    return { corpId, deliveryId: d.id, webhookId: hook.id, ...result };
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // A few milliseconds gather the outcomes of concurrent requests into one commit (one fsync).
    setTimeout(() => this.flush(), 5);
  }

  /** Records finished attempts, one transaction per corporation, then frees their slots. */
  private flush(): void {
    this.flushScheduled = false;
    if (this.closed || this.outcomes.length === 0) return;
    const byCorp = new Map<string, Outcome[]>();
    for (const o of this.outcomes.splice(0)) {
      const list = byCorp.get(o.corpId);
      if (list) list.push(o);
      else byCorp.set(o.corpId, [o]);
    }
    for (const [corpId, list] of byCorp) {
      let alerts: { to: string; name: string; target: string }[] = [];
      try {
        alerts = this.record(this.ctx.tenants.get(corpId), list);
      } catch (err) {
        // Left pending: the attempts are made again, with the same webhook-id.
        this.ctx.logger.warn("recording webhook deliveries failed", { corp_id: corpId, error: String(err) });
      }
      for (const o of list) {
        this.inFlight.delete(o.deliveryId);
        const n = (this.perWebhook.get(o.webhookId) ?? 1) - 1;
        if (n <= 0) this.perWebhook.delete(o.webhookId);
        else this.perWebhook.set(o.webhookId, n);
      }
      for (const a of alerts) {
        void this.ctx.mailer.send({
          to: a.to,
          subject: `Webhook "${a.name}" was deactivated`,
          text:
            `The webhook "${a.name}" (${a.target}) failed to deliver ${FAILURES_TO_DISABLE} events in a row ` +
            `after every retry, so it was made inactive. Fix the receiver, then activate the webhook again ` +
            `(PUT /api/webhook/{id}/active); events raised while it was inactive are not sent.`,
        });
      }
      this.wake(corpId);
    }
    for (const corpId of this.starved) this.wake(corpId);
  }

  /** Applies outcomes in one transaction; returns the e-mail alerts of webhooks it disabled. */
  private record(db: TenantDb, list: Outcome[]): { to: string; name: string; target: string }[] {
    const sqlite = db.$client;
    const alerts: { to: string; name: string; target: string }[] = [];
    writeTx(db, () => {
      const nowMs = this.ctx.now();
      const now = toIso(nowMs);
      const rowOf = sqlite.query<{ attempts: number; log_enabled: number }, [string]>(
        `SELECT d.attempts, w.log_enabled FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
         WHERE d.id = ?1 AND d.status = 'pending'`,
      );
      const finish = sqlite.query(
        `UPDATE webhook_deliveries SET status = ?2, attempts = ?3, response_status = ?4, error = ?5, next_attempt_at = NULL, updated_at = ?6
         WHERE id = ?1`,
      );
      const retry = sqlite.query(
        `UPDATE webhook_deliveries SET attempts = ?2, response_status = ?3, error = ?4, next_attempt_at = ?5, updated_at = ?6 WHERE id = ?1`,
      );
      const drop = sqlite.query("DELETE FROM webhook_deliveries WHERE id = ?1");
      for (const o of list) {
        // Gone meanwhile (webhook deleted or made inactive): nothing to record.
        const row = rowOf.get(o.deliveryId);
        if (!row) continue;
        const attempts = row.attempts + 1;
        const end = (status: "succeeded" | "failed") => {
          if (row.log_enabled) finish.run(o.deliveryId, status, attempts, o.responseStatus, o.error, now);
          else drop.run(o.deliveryId);
        };
        if (o.ok) {
          end("succeeded");
          sqlite.query("UPDATE webhooks SET failure_count = 0 WHERE id = ?1 AND failure_count <> 0").run(o.webhookId);
          continue;
        }
        if (o.responseStatus === 410) {
          end("failed");
          const changed = sqlite.query("UPDATE webhooks SET status = 0, updated_at = ?2 WHERE id = ?1 AND status = 1").run(o.webhookId, now);
          if (changed.changes) {
            cancelPending(sqlite, o.webhookId, "the receiver answered 410 Gone; the webhook was made inactive", now);
            this.ctx.logger.warn("webhook made inactive: the receiver answered 410 Gone", { webhook_id: o.webhookId });
          }
          continue;
        }
        if (attempts < MAX_ATTEMPTS) {
          const wait = Math.max(RETRY_DELAYS_MS[attempts - 1], o.retryAfterMs ?? 0);
          retry.run(o.deliveryId, attempts, o.responseStatus, o.error, toIso(nowMs + wait), now);
          continue;
        }
        end("failed");
        const hook = sqlite
          .query<{ failure_count: number; status: number; email: string; name: string; target: string }, [string]>(
            "UPDATE webhooks SET failure_count = failure_count + 1 WHERE id = ?1 RETURNING failure_count, status, email, name, target",
          )
          .get(o.webhookId);
        if (hook && hook.status && hook.failure_count >= FAILURES_TO_DISABLE) {
          sqlite.query("UPDATE webhooks SET status = 0, updated_at = ?2 WHERE id = ?1").run(o.webhookId, now);
          cancelPending(sqlite, o.webhookId, `${FAILURES_TO_DISABLE} consecutive events failed; the webhook was made inactive`, now);
          alerts.push({ to: hook.email, name: hook.name, target: hook.target });
          this.ctx.logger.warn("webhook made inactive after consecutive failed events", { webhook_id: o.webhookId, failures: hook.failure_count });
        }
      }
    });
    return alerts;
  }
}
