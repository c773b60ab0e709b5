// The webhook dispatcher (routes.md, Events): fans each corporation's outbox out into one
// durable delivery row per (event, active webhook linked to the group), then POSTs them with the
// Standard Webhooks headers, retrying on the schedule until success, final failure or disabling.
// Its queries are the webhook service's (service.ts); this file holds the timers, the wake-ups and
// the concurrency bounds.
//
// At least once: an event is marked dispatched in the transaction that creates its deliveries, and
// a delivery is marked done only after a 2xx has been received and its row committed; a crash at
// any point leaves rows that the start-up sweep picks up again, with the same webhook-id.
//
// The concurrency bounds count requests open at receivers. A success frees its slot when the
// answer arrives: its outcome joins the next batched commit meanwhile, and the delivery stays
// out of every launch and claim (`answered`, and on PostgreSQL its claim) until that commit. A
// failure keeps its slot until its outcome is committed (its retry time, a 410's disabling), so a
// failing receiver gets no more requests than before.
import { runAs } from "../../core/history";
import type { AppContext } from "../../core/context";
import type { Job } from "../../core/jobs";
import type { TenantDoor } from "../../core/store";
import type { TenantDb } from "../../db/sqlite";
import { toIso } from "../../lib/time";
import { allCorpIds, dispatchableCorpIds } from "../corp/service";
import { deliverOnce, type Target } from "./deliver";
import {
  claimDueDeliveries,
  dueDeliveries,
  dueTargets,
  fanOutEvents,
  hasEventsToFanOut,
  hasWebhooks,
  nextAttemptAt,
  recordOutcomes,
  unindexIfNoWebhooks,
  webhookIndex,
  type Due,
  type Outcome,
  type RetryRules,
} from "./service";

/** Waits after attempts 1..7; the 8th failed attempt is final. */
export const RETRY_DELAYS_MS = [30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Consecutive finally-failed events that make a webhook inactive. */
export const FAILURES_TO_DISABLE = 10;
/** Requests in flight per webhook and in all: one slow receiver holds at most its own share. */
export const PER_WEBHOOK_CONCURRENCY = 16;
export const TOTAL_CONCURRENCY = 64;
const FANOUT_BATCH = 500;
const RULES: RetryRules = { delaysMs: RETRY_DELAYS_MS, failuresToDisable: FAILURES_TO_DISABLE };
/**
 * The dispatcher's writes (fan-out, claims, outcomes) take no corporation writer lock on
 * PostgreSQL: they touch the outbox's undispatched events and the deliveries, whose rows they
 * lock themselves (FOR UPDATE [SKIP LOCKED]), and single webhook rows by atomic updates, so they
 * need not wait for, nor hold up, the corporation's other writers through a durable commit each
 * (docs/architecture.md, "Webhook deliveries across nodes"). Still durable: a delivery sent from
 * a fan-out a crash took back would be sent again under another webhook-id. SQLite ignores it.
 * Log-only: no cache keyed by the state stamp (RADIUS authorize's) holds the outbox, the
 * deliveries or the webhooks, so the dispatcher's commits, many a second under load, leave those
 * caches in place (core/store.ts, `logOnly`).
 */
const WRITE = { exclusive: false, logOnly: true };

export class WebhookDispatcher implements Job {
  /** The name a jobs registry knows it by. */
  readonly name = "webhook-dispatcher";
  /** Deliveries whose request is open (each holds a slot). */
  private inFlight = new Set<string>();
  private perWebhook = new Map<string, number>();
  /**
   * Deliveries answered with success whose outcome is not committed yet: their slot is free, but
   * they are still pending in the database, so no pass launches or claims them again meanwhile.
   */
  private answered = new Set<string>();
  private sends = new Set<Promise<void>>();
  /** Earliest next_attempt_at (ms) of a pending delivery, per corporation. */
  private nextDue = new Map<string, number>();
  private queued = new Set<string>();
  /** Corporations whose last pass failed: every sweep looks at them again. */
  private failed = new Set<string>();
  /** Corporations that found every global slot taken; woken when one frees. */
  private starved = new Set<string>();
  /**
   * Deliveries whose outcome was recorded (their slot freed) while a read of due deliveries was
   * under way: that read's rows may predate the recording, so they are not launched from it.
   */
  private freedDuringRead: Set<string> | null = null;
  private outcomes: Outcome[] = [];
  private runScheduled = false;
  /** The pass over queued corporations under way (one at a time; wake-ups meanwhile queue the next). */
  private running: Promise<void> | null = null;
  private flushScheduled = false;
  /** Recordings of outcomes under way; stop waits for them before the databases close. */
  private flushes = new Set<Promise<void>>();
  /** The recording under way: one at a time, outcomes answered meanwhile go in the next (fewer commits). */
  private recording: Promise<void> | null = null;
  /** Indexed corporations not yet seen to still have a webhook since start-up (service.ts, the index). */
  private unchecked = new Set<string>();
  private timers: ReturnType<typeof setInterval>[] = [];
  private unsubscribe: (() => void) | null = null;
  private closed = false;
  /**
   * Several nodes share the queue (PostgreSQL): due rows are claimed in a write before they are
   * sent (`claimDue`). On SQLite one process sends, and the in-flight set is enough.
   */
  private readonly claims: boolean;

  constructor(private ctx: AppContext) {
    this.claims = ctx.tenants.sharedByNodes;
  }

  start(): void {
    this.unsubscribe = this.ctx.events.subscribe((corpId) => this.wake(corpId));
    const { tickMs, sweepMs, fullSweepMs } = this.ctx.dispatchTuning;
    this.timers.push(
      setInterval(() => this.tick(), tickMs),
      setInterval(() => void this.sweep(false), sweepMs),
      setInterval(() => void this.sweep(true), fullSweepMs),
    );
    for (const t of this.timers) (t as { unref?: () => void }).unref?.();
    // Whatever a crash left behind (undispatched events, pending deliveries) goes out at once (the
    // app starts its jobs shortly after start-up, so that the API answers first).
    void this.startUp();
  }

  /**
   * The first full sweep, over the corporations the index names (service.ts, "the index of
   * corporations with webhooks"): its cost follows the corporations with webhooks, not their
   * number. Without a complete index (a data directory from before it, a restored backup) every
   * corporation is read once, indexed, and the ones with work are woken.
   */
  private async startUp(): Promise<void> {
    try {
      const [all, dispatchable, index] = await this.ctx.store.platform.read(async (db) => [await allCorpIds(db), await dispatchableCorpIds(db), await webhookIndex.read(db)] as const);
      const existing = new Set(all);
      const drop = index.corps.filter((id) => !existing.has(id)); // deleted corporations
      if (index.complete) {
        for (const id of index.corps) if (existing.has(id)) this.unchecked.add(id);
        if (drop.length) await this.ctx.store.platform.write((db) => webhookIndex.update(db, [], drop, false));
      } else if (await this.rebuildIndex(all, new Set(dispatchable), drop)) return;
    } catch (err) {
      this.ctx.logger.error("webhook index not read", { error: String(err) });
    }
    await this.sweep(true);
  }

  /** Reads every corporation once; true when the index is complete and the ones with work are woken. */
  private async rebuildIndex(all: string[], dispatchable: Set<string>, drop: string[]): Promise<boolean> {
    const add: string[] = [];
    let complete = true;
    for (const id of all) {
      if (this.closed) return true;
      try {
        const { hooks, events } = await this.ctx.store.visit(id, (tenant) => tenant.read(async (db) => ({ hooks: await hasWebhooks(db), events: await hasEventsToFanOut(db) })));
        if (hooks) add.push(id);
        if ((hooks || events) && dispatchable.has(id)) this.wake(id);
      } catch (err) {
        // Left out of the index, which stays incomplete: every full sweep visits every
        // corporation, and the next start-up reads them all again.
        complete = false;
        this.ctx.logger.warn("webhook index: a corporation could not be read", { corp_id: id, error: String(err) });
      }
    }
    await this.ctx.store.platform.write((db) => webhookIndex.update(db, add, drop, complete));
    return complete;
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
    this.closed = true;
    await this.running;
    // The outcomes received so far are recorded before the databases close.
    this.flushes.add(this.record());
    await Promise.allSettled([...this.flushes]);
  }

  /** Looks at a corporation soon (coalesced: many commits, one pass). */
  wake(corpId: string): void {
    if (this.closed) return;
    this.queued.add(corpId);
    if (this.runScheduled || this.running) return;
    this.runScheduled = true;
    setTimeout(() => this.startRun(), 0);
  }

  /**
   * The corporations that may have work without a wake-up pending: databases open (requests write
   * there), passes that failed, retries known in memory; `all` (start-up, then every fullSweepMs)
   * adds every corporation the index names as having webhooks, or every corporation while the
   * index is incomplete (each visit closes the database it opened). Every commit with events wakes
   * its corporation at once, so the narrow sweep is the safety net and the full one the net under
   * it, without opening every corporation each minute.
   */
  async sweep(all = true): Promise<void> {
    if (this.closed) return;
    try {
      await this.ctx.jobs.track(this.name, () => this.sweepPass(all));
    } catch (err) {
      this.ctx.logger.error("webhook sweep failed", { error: String(err) });
    }
  }

  /** POST /api/system/jobs/webhook-dispatcher/run: a full sweep. */
  runOnce(): Promise<void> {
    return this.sweepPass(true);
  }

  private async sweepPass(all: boolean): Promise<void> {
    if (this.closed) return;
    // Cluster mode: every sweep covers the index. No database is "open" there, and the work of
    // other nodes (their events, until the change feed wakes this node; claims left by a node that
    // died mid-send) is found only by looking.
    const indexed = all || this.claims;
    const [corps, index] = await this.ctx.store.platform.read(async (db) => [await dispatchableCorpIds(db), indexed ? await webhookIndex.read(db) : null] as const);
    const likely = index && !index.complete ? null : new Set([...this.ctx.tenants.openIds(), ...this.failed, ...this.nextDue.keys(), ...(index?.corps ?? [])]);
    for (const id of corps) if (!likely || likely.has(id)) this.wake(id);
    // A corporation deleted (or put under maintenance) is not retried for ever.
    const known = new Set(corps);
    for (const id of this.failed) if (!known.has(id)) this.failed.delete(id);
  }

  private tick(): void {
    const now = this.ctx.now();
    for (const [corpId, at] of this.nextDue) if (at <= now) this.wake(corpId);
  }

  private startRun(): void {
    this.runScheduled = false;
    if (this.closed || this.running) return;
    this.running = this.run()
      .catch((err) => this.ctx.logger.error("webhook dispatch pass failed", { error: String(err) }))
      .finally(() => {
        this.running = null;
        // Wake-ups that came during the pass.
        if (this.queued.size && !this.closed && !this.runScheduled) {
          this.runScheduled = true;
          setTimeout(() => this.startRun(), 0);
        }
      });
  }

  private async run(): Promise<void> {
    const corps = [...this.queued];
    this.queued.clear();
    for (const corpId of corps) {
      if (this.closed) return;
      try {
        // A visit: a corporation the pass opened is closed after it (deliveries carry what they send).
        await this.ctx.store.visit(corpId, async (tenant) => {
          // Read first: a sweep over corporations with nothing new takes no write lock (and does not
          // open their writer connections). Cluster mode asks in the same read whether anything is
          // due (claimDue writes only then).
          const { events, due } = this.claims
            ? await tenant.read(async (db) => {
                const [events, targets] = await Promise.all([hasEventsToFanOut(db), dueTargets(db, toIso(this.ctx.now()))]);
                if (!events && !targets.length) await this.noteNextDue(corpId, db);
                return { events, due: targets.length > 0 };
              })
            : { events: await tenant.read(hasEventsToFanOut), due: false };
          // Cluster mode fans out in the write that claims (claimDue).
          if (events && !this.claims) {
            for (;;) {
              const count = await tenant.write((tx) => fanOutEvents(tx, toIso(this.ctx.now()), FANOUT_BATCH), WRITE);
              if (count < FANOUT_BATCH) break;
            }
          }
          // What is read is launched unless it is in flight, or was until meanwhile (freedDuringRead).
          const freed = (this.freedDuringRead = new Set<string>());
          try {
            if (this.claims) {
              if (events || due) await this.claimDue(corpId, tenant, freed, events);
            } else
              await tenant.read(async (db) => {
              await this.startDue(corpId, db, freed, (hook, d) => this.launch(corpId, hook, d));
              await this.noteNextDue(corpId, db);
            });
          } finally {
            this.freedDuringRead = null;
          }
          // Indexed, but its last webhook went (a crash before the key's removal): the key goes.
          if (this.unchecked.delete(corpId) && !(await tenant.read(hasWebhooks))) await unindexIfNoWebhooks(tenant, this.ctx.store.platform);
        });
        this.failed.delete(corpId);
      } catch (err) {
        // A corporation deleted meanwhile, or a database not yet migrated: the next sweep retries.
        this.nextDue.delete(corpId);
        this.failed.add(corpId);
        this.ctx.logger.warn("webhook dispatch of a corporation failed", { corp_id: corpId, error: String(err) });
      }
    }
  }

  /**
   * Cluster mode: the due deliveries are read with `FOR UPDATE SKIP LOCKED` and claimed (pushed
   * forward past their send) in one short write, then sent after its COMMIT: two nodes awake at
   * once take different rows, and a row is not due again before its outcome is recorded (or its
   * claim runs out: the node died, and it is sent again with the same webhook-id).
   */
  private async claimDue(corpId: string, tenant: TenantDoor, freed: Set<string>, fanOut: boolean): Promise<void> {
    // The pass's read found events to fan out or deliveries due (run): nothing else takes a write.
    const taken: [Target, Due][] = [];
    let more = false;
    try {
      await tenant.write(async (tx) => {
        // The events' deliveries are made and the due ones claimed in one transaction (one
        // durable commit per pass, not two); a larger backlog goes on in the next pass.
        if (fanOut) more = (await fanOutEvents(tx, toIso(this.ctx.now()), FANOUT_BATCH, true)) === FANOUT_BATCH;
        const { deliveryTimeoutMs, claimMarginMs } = this.ctx.dispatchTuning;
        const until = toIso(this.ctx.now() + deliveryTimeoutMs + claimMarginMs);
        await this.startDue(corpId, tx, freed, (hook, d) => {
          this.reserve(hook.id, d.id);
          taken.push([hook, d]);
        }, until);
        await this.noteNextDue(corpId, tx);
      }, WRITE);
    } catch (err) {
      // Not claimed: nothing was sent, the slots go back.
      for (const [hook, d] of taken) this.release(hook.id, d.id);
      throw err;
    }
    for (const [hook, d] of taken) this.startSend(corpId, hook, d);
    if (more) this.wake(corpId);
  }

  /**
   * Takes the due deliveries that the concurrency bounds allow (`take`: launch them, or reserve
   * them for a claim). `claimUntil` (cluster mode, in a write): each webhook's share is claimed in
   * one statement, pushed forward to that instant (service.ts, claimDueDeliveries).
   */
  private async startDue(corpId: string, db: TenantDb, freed: Set<string>, take: (hook: Target, d: Due) => void, claimUntil?: string): Promise<void> {
    const now = toIso(this.ctx.now());
    this.starved.delete(corpId);
    for (const hook of await dueTargets(db, now)) {
      const busy = this.perWebhook.get(hook.id) ?? 0;
      if (busy >= PER_WEBHOOK_CONCURRENCY) continue;
      if (this.inFlight.size >= TOTAL_CONCURRENCY) {
        this.starved.add(corpId);
        break;
      }
      const room = Math.min(PER_WEBHOOK_CONCURRENCY - busy, TOTAL_CONCURRENCY - this.inFlight.size);
      if (claimUntil !== undefined) {
        // Exactly what the bounds allow, this node's rows in flight or answered left out (claimed
        // still, unless the claim ran out): a row claimed is sent.
        for (const d of await claimDueDeliveries(db, hook.id, now, room, claimUntil, [...this.inFlight, ...this.answered, ...freed])) take(hook, d);
      } else {
        // Room for what is in flight or answered (still pending until recorded), skipped.
        const wanted = (id: string) => !this.inFlight.has(id) && !this.answered.has(id) && !freed.has(id);
        for (const d of await dueDeliveries(db, hook.id, now, PER_WEBHOOK_CONCURRENCY + busy + this.answered.size, room, wanted)) take(hook, d);
      }
      if (this.inFlight.size >= TOTAL_CONCURRENCY) this.starved.add(corpId);
    }
  }

  /** Remembers when the corporation's next delivery is due (the tick wakes it then). */
  private async noteNextDue(corpId: string, db: TenantDb): Promise<void> {
    const next = await nextAttemptAt(db);
    if (next) this.nextDue.set(corpId, Date.parse(next));
    else this.nextDue.delete(corpId);
  }

  private launch(corpId: string, hook: Target, d: Due): void {
    this.reserve(hook.id, d.id);
    this.startSend(corpId, hook, d);
  }

  /** Takes a slot for a delivery (in flight until its outcome is recorded). */
  private reserve(webhookId: string, deliveryId: string): void {
    this.inFlight.add(deliveryId);
    this.perWebhook.set(webhookId, (this.perWebhook.get(webhookId) ?? 0) + 1);
  }

  private release(webhookId: string, deliveryId: string): void {
    this.inFlight.delete(deliveryId);
    const n = (this.perWebhook.get(webhookId) ?? 1) - 1;
    if (n <= 0) this.perWebhook.delete(webhookId);
    else this.perWebhook.set(webhookId, n);
  }

  private startSend(corpId: string, hook: Target, d: Due): void {
    const p = this.send(corpId, hook, d).then((o) => {
      this.sends.delete(p);
      this.outcomes.push(o);
      if (o.ok) this.answer(corpId, hook.id, d.id);
      this.scheduleFlush();
    });
    this.sends.add(p);
  }

  /**
   * A success's slot frees at its answer (the receiver is done with it); the row stays out of
   * launches and claims until its outcome is committed. The next pass comes once half the
   * webhook's slots are free (one pass refills many), or at once for a corporation that found
   * every global slot taken.
   */
  private answer(corpId: string, webhookId: string, deliveryId: string): void {
    this.release(webhookId, deliveryId);
    this.answered.add(deliveryId);
    if ((this.perWebhook.get(webhookId) ?? 0) <= PER_WEBHOOK_CONCURRENCY / 2) this.wake(corpId);
    for (const starved of this.starved) this.wake(starved);
  }

  private async send(corpId: string, hook: Target, d: Due): Promise<Outcome> {
    const result = await deliverOnce(this.ctx, hook, d.event_id, d.payload);
    return { corpId, deliveryId: d.id, webhookId: hook.id, ...result };
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.closed) return;
    this.flushScheduled = true;
    // A few milliseconds gather the outcomes of concurrent requests into one commit (one fsync).
    setTimeout(() => {
      this.flushScheduled = false;
      // After stop, stop itself records what is left; while a recording is under way, its end
      // schedules the next.
      if (this.closed || this.recording) return;
      const p = (this.recording = this.record().finally(() => {
        this.flushes.delete(p);
        this.recording = null;
        if (this.outcomes.length) this.scheduleFlush();
      }));
      this.flushes.add(p);
    }, 5);
  }

  /**
   * Records finished attempts, one transaction per corporation; then a success leaves `answered`
   * and a failure frees its slot (and the corporation is woken: its retry time is new).
   */
  private async record(): Promise<void> {
    if (this.outcomes.length === 0) return;
    const byCorp = new Map<string, Outcome[]>();
    for (const o of this.outcomes.splice(0)) {
      const list = byCorp.get(o.corpId);
      if (list) list.push(o);
      else byCorp.set(o.corpId, [o]);
    }
    for (const [corpId, list] of byCorp) {
      try {
        const nowMs = this.ctx.now();
        // The dispatcher's own write whichever request's commit woke it (core/history.ts: a webhook it makes inactive is its change).
        const disabled = await runAs(`system:${this.name}`, () => this.ctx.store.background(corpId).write((tx, w) => recordOutcomes(tx, list, nowMs, RULES, w), WRITE));
        for (const d of disabled) {
          if (d.why === "gone") {
            this.ctx.logger.warn("webhook made inactive: the receiver answered 410 Gone", { webhook_id: d.webhookId });
            continue;
          }
          this.ctx.logger.warn("webhook made inactive after consecutive failed events", { webhook_id: d.webhookId, failures: d.failures });
          void this.ctx.mailer.send({
            to: d.email,
            subject: `Webhook "${d.name}" was deactivated`,
            text:
              `The webhook "${d.name}" (${d.target}) failed to deliver ${FAILURES_TO_DISABLE} events in a row ` +
              `after every retry, so it was made inactive. Fix the receiver, then activate the webhook again ` +
              `(PUT /api/webhook/{id}/active); events raised while it was inactive are not sent.`,
          });
        }
      } catch (err) {
        // Left pending: the attempts are made again, with the same webhook-id.
        this.ctx.logger.warn("recording webhook deliveries failed", { corp_id: corpId, error: String(err) });
      }
      let failures = false;
      for (const o of list) {
        if (o.ok) this.answered.delete(o.deliveryId);
        else {
          this.release(o.webhookId, o.deliveryId);
          failures = true;
        }
        this.freedDuringRead?.add(o.deliveryId);
      }
      if (failures) this.wake(corpId);
    }
    for (const corpId of this.starved) this.wake(corpId);
  }
}
