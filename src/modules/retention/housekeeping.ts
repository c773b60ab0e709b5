// Housekeeping: deletes rows that have outlived their use, so that a box running unattended for
// years does not grow its databases without bound. A pass runs at start and then hourly (judged
// on ctx.now(), so tests move time by hand); once a day it also runs PRAGMA optimize.
//
// What goes (cutoffs relative to ctx.now()):
//   platform  sessions             revoked or expired more than a day ago
//             password_reset_keys  used or expired (either way the reset row answers "unknown")
//             remembered_devices   expired (the 2FA check ignores them already)
//             login_failures       idle for a day and not locked (the lockout's own rule)
//             rate_limit_windows   per-IP windows that ended (cluster mode's shared limit)
//   each corporation (ENABLED or BLOCKED; MAINTENANCE and NEEDS_UPDATE are left alone)
//             events               dispatched before --event-retention-days, unless a pending
//                                  (first try or retrying) delivery still needs its payload
//             webhook_deliveries   succeeded or failed, last touched before the same retention
//             isp_radius_accounting received before --accounting-retention-days (0: kept)
//             isp_radius_sessions  stale (no record) since before the same retention
//             isp_usage_daily      days before the same retention (less a day of timezone slack)
//             isp_radius_attempts  made before --radius-attempt-retention-days (0: kept)
//             metric_values        timed (their own `at`, which a client may set in the past)
//                                  before --metric-value-retention-days (0: kept)
//             qr_accesses          scanned before --qr-access-retention-days (0: kept); a code's
//                                  `scans` stays the count of every scan it ever had, while its
//                                  accesses and reports cover the retention window
//             history              Changes made before --history-retention-days (platform_history
//                                  in the platform database, by the same setting)
// The audit log has its own retention and is not touched here.
//
// Each table is emptied in batches of at most `batchSize` rows, one write (IMMEDIATE transaction)
// per batch, and the pass yields to the event loop between batches, so requests and other writers
// are held up by one short batch at most. The DELETEs live with the tables' owners (their
// prune… functions), each bounded by an index so that the batch that finds nothing left does not
// scan a large table under the write lock; this file only says what goes when.
import type { AppContext } from "../../core/context";
import { pruneEvents } from "../../core/events";
import { pruneHistory } from "../../core/history";
import type { Door, TenantDoor, WriteScope } from "../../core/store";
import type { PlatformDb, TenantDb } from "../../db/sqlite";
import { toIso } from "../../lib/time";
import { pruneLoginFailures, pruneRateLimitWindows, pruneRememberedDevices } from "../auth/service";
import { PUBLIC_AUTH_WINDOW_MS } from "../../lib/rate-limit";
import { allCorpRefs } from "../corp/service";
import { pruneIspRadiusAccounting, pruneIspRadiusSessions } from "../isp/accounting-service";
import { pruneIspRadiusAttempts } from "../isp/attempt-service";
import { pruneIspUsageDaily } from "../isp/usage-service";
import { pruneMetricValues } from "../metric/service";
import { pruneQrAccesses } from "../qrcode/analytics-service";
import { prunePasswordResetKeys } from "../user/service";
import { pendingSourceEventIds, pruneWebhookDeliveries } from "../webhook/service";
import { yieldToRequests } from "../../lib/yield";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export const PRUNED_TABLES = [
  "sessions",
  "password_reset_keys",
  "remembered_devices",
  "login_failures",
  "rate_limit_windows",
  "events",
  "webhook_deliveries",
  "isp_radius_accounting",
  "isp_radius_sessions",
  "isp_radius_attempts",
  "isp_usage_daily",
  "metric_values",
  "qr_accesses",
  "history",
  "platform_history",
] as const;
export type PrunedTable = (typeof PRUNED_TABLES)[number];

export const METRIC_PRUNED = "corpadmin_retention_pruned_rows_total";
export const METRIC_RUNS = "corpadmin_retention_runs_total";
export const METRIC_LAST_RUN = "corpadmin_retention_last_run_seconds";

export interface HousekeepingOptions {
  /** Clock of the cutoffs and of the schedule; default ctx.now. */
  now?: () => number;
  /** Time between passes, on that clock (default one hour). */
  intervalMs?: number;
  /** How often the real-time timer looks whether a pass is due (default one minute). */
  tickMs?: number;
  /** Rows deleted per transaction (default 1,000). */
  batchSize?: number;
  /** Rows pruned from one database in a pass that make it worth a WAL checkpoint (default 10,000). */
  heavyPruneRows?: number;
}

export interface DatabaseReport {
  /** "platform" or the corporation's auth_name. */
  database: string;
  pruned: Partial<Record<PrunedTable, number>>;
  checkpointed: boolean;
  optimized: boolean;
  error?: string;
}

export interface HousekeepingReport {
  at: string;
  databases: DatabaseReport[];
  /** Rows pruned per table over every database. */
  pruned: Record<PrunedTable, number>;
}

interface Prune<H> {
  table: PrunedTable;
  /** Deletes at most `limit` rows of the table inside the write `tx`; returns how many went. */
  run: (tx: H, limit: number) => Promise<number>;
}

/**
 * The smallest UUID v7 text of an instant. Record ids are UUID v7 taken when the row is written,
 * so `id < uuidV7Floor(t)` selects, through the primary-key index, the rows written before t.
 */
export function uuidV7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
}

/** Rows written this long after the cutoff are still scanned, so an id taken a moment after the row's timestamp is caught. */
const ID_SLACK_MS = 60_000;

function platformPrunes(ctx: AppContext, now: number): Prune<PlatformDb>[] {
  const dayAgo = toIso(now - DAY_MS);
  return [
    { table: "sessions", run: (tx, limit) => ctx.sessions.prune(tx, dayAgo, limit) },
    { table: "password_reset_keys", run: (tx, limit) => prunePasswordResetKeys(tx, now, limit) },
    { table: "remembered_devices", run: (tx, limit) => pruneRememberedDevices(tx, now, limit) },
    // The lockout's own rule: a counter idle for a day is forgotten unless it still locks the login.
    { table: "login_failures", run: (tx, limit) => pruneLoginFailures(tx, now, limit) },
    // The per-IP counters of cluster mode, once their window ended (empty on SQLite).
    { table: "rate_limit_windows", run: (tx, limit) => pruneRateLimitWindows(tx, now - PUBLIC_AUTH_WINDOW_MS, limit) },
    { table: "platform_history", run: (tx, limit) => pruneHistory(tx, toIso(now - ctx.config.historyRetentionDays * DAY_MS), limit, true) },
  ];
}

interface TenantRetention {
  eventDays: number;
  accountingDays: number;
  radiusAttemptDays: number;
  metricValueDays: number;
  qrAccessDays: number;
  historyDays: number;
}

function tenantPrunes(now: number, { eventDays, accountingDays, radiusAttemptDays, metricValueDays, qrAccessDays, historyDays }: TenantRetention): Prune<TenantDb>[] {
  const historyIso = toIso(now - historyDays * DAY_MS);
  const eventCutoff = now - eventDays * DAY_MS;
  const eventIso = toIso(eventCutoff);
  const deliveryIdBelow = uuidV7Floor(eventCutoff + ID_SLACK_MS);
  const out: Prune<TenantDb>[] = [
    // A pending delivery (first attempt or retrying) reads its payload from the event, so its
    // event stays; the pending ids are read in the batch's own transaction.
    { table: "events", run: async (tx, limit) => pruneEvents(tx, eventIso, await pendingSourceEventIds(tx), limit) },
    { table: "webhook_deliveries", run: (tx, limit) => pruneWebhookDeliveries(tx, eventIso, deliveryIdBelow, limit) },
    { table: "history", run: (tx, limit) => pruneHistory(tx, historyIso, limit, false) },
  ];
  if (accountingDays > 0) {
    const cutoff = now - accountingDays * DAY_MS;
    const iso = toIso(cutoff);
    const idBelow = uuidV7Floor(cutoff + ID_SLACK_MS);
    out.push({ table: "isp_radius_accounting", run: (tx, limit) => pruneIspRadiusAccounting(tx, iso, limit, idBelow) });
    // A session goes with its records (its stale_at follows its last record).
    out.push({ table: "isp_radius_sessions", run: (tx, limit) => pruneIspRadiusSessions(tx, iso, limit) });
    // Usage goes with the records it was added from; days are the corporation's, so a day of slack
    // keeps a local day whose records are not all gone in any timezone.
    const usageBefore = toIso(cutoff - DAY_MS).slice(0, 10);
    out.push({ table: "isp_usage_daily", run: (tx, limit) => pruneIspUsageDaily(tx, usageBefore, limit) });
  }
  if (radiusAttemptDays > 0) {
    const iso = toIso(now - radiusAttemptDays * DAY_MS);
    out.push({ table: "isp_radius_attempts", run: (tx, limit) => pruneIspRadiusAttempts(tx, iso, limit) });
  }
  if (metricValueDays > 0) {
    // A value's `at` is whatever instant a client posted (possibly in the past).
    const cutoffMs = now - metricValueDays * DAY_MS;
    out.push({ table: "metric_values", run: (tx, limit) => pruneMetricValues(tx, cutoffMs, limit) });
  }
  if (qrAccessDays > 0) {
    // A code's `scans` stays the count of every scan it ever had; its accesses cover the window.
    const iso = toIso(now - qrAccessDays * DAY_MS);
    out.push({ table: "qr_accesses", run: (tx, limit) => pruneQrAccesses(tx, iso, limit) });
  }
  return out;
}


class Stopped extends Error {}

export class Housekeeping {
  private readonly now: () => number;
  private readonly intervalMs: number;
  private readonly tickMs: number;
  private readonly batchSize: number;
  private readonly heavyPruneRows: number;
  private lastRunAt: number | null = null;
  private lastOptimizeAt: number | null = null;
  private running: Promise<HousekeepingReport> | null = null;
  private stopped = false;

  constructor(
    private ctx: AppContext,
    options: HousekeepingOptions = {},
  ) {
    this.now = options.now ?? ctx.now;
    this.intervalMs = options.intervalMs ?? HOUR_MS;
    this.tickMs = options.tickMs ?? 60_000;
    this.batchSize = options.batchSize ?? 1_000;
    this.heavyPruneRows = options.heavyPruneRows ?? 10_000;
    const m = ctx.serviceMetrics;
    const pruned = m.counter(METRIC_PRUNED, "Rows deleted by housekeeping, by table");
    // Every table's series exists from the start, at 0.
    for (const table of PRUNED_TABLES) pruned.inc({ table }, 0);
    m.counter(METRIC_RUNS, "Housekeeping passes, by outcome (error: a database could not be pruned)");
    m.gauge(METRIC_LAST_RUN, "When the last housekeeping pass ended, in Unix seconds");
  }

  /**
   * Starts the schedule (ctx.jobs calls it once the app is up): a pass on the next turn of the
   * event loop (never inside the caller's turn), then whenever one is due. Returns the stop function.
   */
  start(pass: () => Promise<unknown> = () => this.runOnce()): () => Promise<void> {
    // Started again after a stop in cluster mode (its lease lost, then taken again).
    this.stopped = false;
    const tick = () => {
      if (this.stopped || this.running) return;
      const now = this.now();
      // A clock set back (or forward) makes a pass due at once rather than never.
      if (this.lastRunAt === null || now >= this.lastRunAt + this.intervalMs || now < this.lastRunAt) void pass().catch(() => {});
    };
    const first = setTimeout(tick, 0);
    const timer = setInterval(tick, this.tickMs);
    (timer as { unref?: () => void }).unref?.();
    return async () => {
      this.stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      // The pass stops at its next batch boundary; the databases close only after it has.
      await this.running;
    };
  }

  /** One pass over every database; a pass already under way is joined, not doubled. */
  runOnce(): Promise<HousekeepingReport> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<HousekeepingReport> {
    const { ctx } = this;
    const now = this.now();
    this.lastRunAt = now;
    const optimize = this.lastOptimizeAt === null || now - this.lastOptimizeAt >= DAY_MS || now < this.lastOptimizeAt;
    const report: HousekeepingReport = {
      at: toIso(now),
      databases: [],
      pruned: Object.fromEntries(PRUNED_TABLES.map((t) => [t, 0])) as Record<PrunedTable, number>,
    };
    try {
      report.databases.push(await this.pruneDatabase("platform", ctx.store.platform, platformPrunes(ctx, now), optimize));
      const corps = (await ctx.store.platform.read(allCorpRefs)).filter((c) => c.status === "ENABLED" || c.status === "BLOCKED");
      const { config } = ctx;
      const prunes = tenantPrunes(now, {
        eventDays: config.eventRetentionDays,
        accountingDays: config.accountingRetentionDays,
        radiusAttemptDays: config.radiusAttemptRetentionDays,
        metricValueDays: config.metricValueRetentionDays,
        qrAccessDays: config.qrAccessRetentionDays,
        historyDays: config.historyRetentionDays,
      });
      for (const corp of corps) {
        if (this.stopped) throw new Stopped();
        // Opening the door would create a missing file: a corporation whose database is gone is
        // reported elsewhere (backup, metrics), not papered over here.
        if (ctx.tenants.isMissing(corp.id)) continue;
        // A visit: the pass does not leave every corporation's database open behind it.
        let opened = false;
        try {
          report.databases.push(
            await ctx.store.visit(corp.id, (door: TenantDoor) => {
              opened = true;
              return this.pruneDatabase(corp.auth_name, door, prunes, optimize);
            }),
          );
        } catch (err) {
          if (err instanceof Stopped || opened) throw err;
          report.databases.push({ database: corp.auth_name, pruned: {}, checkpointed: false, optimized: false, error: String(err) });
        }
      }
      if (optimize) this.lastOptimizeAt = now;
    } catch (err) {
      if (!(err instanceof Stopped)) {
        ctx.logger.error("housekeeping pass failed", { error: String(err) });
        report.databases.push({ database: "?", pruned: {}, checkpointed: false, optimized: false, error: String(err) });
      }
    }
    for (const d of report.databases) for (const [t, n] of Object.entries(d.pruned)) report.pruned[t as PrunedTable] += n;
    const failed = report.databases.filter((d) => d.error);
    for (const d of failed) ctx.logger.warn("housekeeping of a database failed", { database: d.database, error: d.error });
    const total = Object.values(report.pruned).reduce((a, b) => a + b, 0);
    if (total) ctx.logger.info("housekeeping pruned rows", { ...report.pruned });
    ctx.serviceMetrics.counter(METRIC_RUNS).inc({ outcome: failed.length ? "error" : "ok" });
    ctx.serviceMetrics.gauge(METRIC_LAST_RUN).set({}, Math.floor(this.now() / 1000));
    return report;
  }

  private async pruneDatabase<H, S extends WriteScope>(name: string, door: Door<H, S>, prunes: Prune<H>[], optimize: boolean): Promise<DatabaseReport> {
    const out: DatabaseReport = { database: name, pruned: {}, checkpointed: false, optimized: false };
    const counter = this.ctx.serviceMetrics.counter(METRIC_PRUNED);
    const { batchSize } = this;
    let total = 0;
    try {
      for (const p of prunes) {
        for (;;) {
          if (this.stopped) throw new Stopped();
          const n = await door.write((tx) => p.run(tx, batchSize));
          if (n) {
            out.pruned[p.table] = (out.pruned[p.table] ?? 0) + n;
            counter.inc({ table: p.table }, n);
            total += n;
          }
          if (n < batchSize) break;
          await yieldToRequests();
        }
        await yieldToRequests();
      }
      // A heavy prune wrote much into the WAL: the checkpoint gives that space back (it waits one
      // second at most for readers such as a backup; a busy WAL is retried at the next heavy prune).
      const checkpoint = total >= this.heavyPruneRows;
      if (checkpoint || optimize) {
        const done = await door.maintain({ checkpoint, optimize });
        out.checkpointed = done.checkpointed;
        out.optimized = done.optimized;
      }
    } catch (err) {
      if (err instanceof Stopped) throw err;
      out.error = String(err);
    }
    return out;
  }
}
