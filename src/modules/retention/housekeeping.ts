// Housekeeping: deletes rows that have outlived their use, so that a box running unattended for
// years does not grow its databases without bound. A pass runs at start and then hourly (judged
// on ctx.now(), so tests move time by hand); once a day it also runs PRAGMA optimize.
//
// What goes (cutoffs relative to ctx.now()):
//   platform  sessions             revoked or expired more than a day ago
//             password_reset_keys  used or expired (either way the reset row answers "unknown")
//             remembered_devices   expired (the 2FA check ignores them already)
//             login_failures       idle for a day and not locked (the lockout's own rule)
//   each corporation (ENABLED or BLOCKED; MAINTENANCE and NEEDS_UPDATE are left alone)
//             events               dispatched before --event-retention-days, unless a pending
//                                  (first try or retrying) delivery still needs its payload
//             webhook_deliveries   succeeded or failed, last touched before the same retention
//             isp_radius_accounting received before --accounting-retention-days (0: kept)
//             isp_radius_sessions  stale (no record) since before the same retention
//             isp_radius_attempts  made before --radius-attempt-retention-days (0: kept)
//             metric_values        timed (their own `at`, which a client may set in the past)
//                                  before --metric-value-retention-days (0: kept)
//             qr_accesses          scanned before --qr-access-retention-days (0: kept); a code's
//                                  `scans` stays the count of every scan it ever had, while its
//                                  accesses and reports cover the retention window
// The audit log has its own retention and is not touched here.
//
// Each table is emptied in batches of at most `batchSize` rows, one IMMEDIATE transaction per
// batch, and the pass yields to the event loop between batches, so requests and other writers are
// held up by one short batch at most. Every batch query is bounded by an index (see batchSql) so
// that the batch that finds nothing left does not scan a large table under the write lock.
import { existsSync } from "node:fs";
import type { Database } from "bun:sqlite";
import type { AppContext } from "../../core/context";
import { writeTx, type AnyDb } from "../../db/sqlite";
import { toIso } from "../../lib/time";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export const PRUNED_TABLES = [
  "sessions",
  "password_reset_keys",
  "remembered_devices",
  "login_failures",
  "events",
  "webhook_deliveries",
  "isp_radius_accounting",
  "isp_radius_sessions",
  "isp_radius_attempts",
  "metric_values",
  "qr_accesses",
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

interface Prune {
  table: PrunedTable;
  /** Selects the rowids (or seqs) of at most ?2 rows to delete; ?1.. are `params`. */
  sql: string;
  params: (string | number)[];
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

function platformPrunes(now: number): Prune[] {
  const iso = toIso(now);
  const dayAgo = toIso(now - DAY_MS);
  // These tables stay small once pruned and their rows are inserted oldest first, so a scan in
  // rowid order finds the old rows at its start.
  return [
    {
      table: "sessions",
      sql: "SELECT rowid FROM sessions WHERE revoked_at < ?1 OR expires_at < ?1 LIMIT ?2",
      params: [dayAgo],
    },
    {
      table: "password_reset_keys",
      sql: "SELECT rowid FROM password_reset_keys WHERE used_at IS NOT NULL OR expires_at < ?1 LIMIT ?2",
      params: [iso],
    },
    { table: "remembered_devices", sql: "SELECT rowid FROM remembered_devices WHERE expires_at < ?1 LIMIT ?2", params: [iso] },
    {
      // The same rule as the lockout's own pruning (src/modules/auth/lockout.ts): a counter idle
      // for a day is forgotten unless it still locks the login.
      table: "login_failures",
      sql: "SELECT rowid FROM login_failures WHERE updated_at < ?1 AND (locked_until IS NULL OR locked_until < ?3) LIMIT ?2",
      params: [dayAgo, iso],
    },
  ];
}

interface TenantRetention {
  eventDays: number;
  accountingDays: number;
  radiusAttemptDays: number;
  metricValueDays: number;
  qrAccessDays: number;
}

function tenantPrunes(now: number, { eventDays, accountingDays, radiusAttemptDays, metricValueDays, qrAccessDays }: TenantRetention): Prune[] {
  const eventCutoff = now - eventDays * DAY_MS;
  const out: Prune[] = [
    {
      // Uses the events_pending index (dispatched_at, seq). A pending delivery (first attempt or
      // retrying) reads its payload from the event, so its event stays; the NOT IN list is built
      // once per statement from the small pending queue.
      table: "events",
      sql: `SELECT seq FROM events WHERE dispatched_at < ?1
              AND id NOT IN (SELECT source_event_id FROM webhook_deliveries WHERE status = 'pending')
            ORDER BY dispatched_at LIMIT ?2`,
      params: [toIso(eventCutoff)],
    },
    {
      // Finished rows: the log of webhooks with log_enabled (the others' finished rows are
      // deleted by the dispatcher at once). A delivery's id is taken when it is queued, before it
      // finishes, so the id range bounds the scan; `+status` keeps the planner on that range.
      table: "webhook_deliveries",
      sql: `SELECT rowid FROM webhook_deliveries
            WHERE id < ?3 AND +status IN ('succeeded', 'failed') AND updated_at < ?1 LIMIT ?2`,
      params: [toIso(eventCutoff), uuidV7Floor(eventCutoff + ID_SLACK_MS)],
    },
  ];
  if (accountingDays > 0) {
    const cutoff = now - accountingDays * DAY_MS;
    // received_at is corpadmin's clock (event_at is the NAS's, which may be wrong); the id is
    // taken with it, so the primary-key range holds every candidate.
    out.push({
      table: "isp_radius_accounting",
      sql: "SELECT rowid FROM isp_radius_accounting WHERE id < ?3 AND received_at < ?1 LIMIT ?2",
      params: [toIso(cutoff), uuidV7Floor(cutoff + ID_SLACK_MS)],
    });
    // A session goes with its records. stale_at is its last record's received_at plus at most
    // three interim intervals, so a session goes that much after its last record (through the
    // (open, stale_at) index, which the accounting writer keeps anyway).
    out.push({
      table: "isp_radius_sessions",
      sql: "SELECT rowid FROM isp_radius_sessions WHERE open IN (0, 1) AND stale_at < ?1 LIMIT ?2",
      params: [toIso(cutoff)],
    });
  }
  if (radiusAttemptDays > 0) {
    out.push({
      table: "isp_radius_attempts",
      sql: "SELECT rowid FROM isp_radius_attempts WHERE at < ?1 LIMIT ?2",
      params: [toIso(now - radiusAttemptDays * DAY_MS)],
    });
  }
  if (metricValueDays > 0) {
    // A value's `at` may be any instant a client posted, so neither seq nor insertion order
    // follows it: each metric's old values are a range of the (metric_id, at_ms, value) index,
    // walked metric by metric (a few dozen per corporation), which also bounds the empty batch.
    out.push({
      table: "metric_values",
      sql: `SELECT v.seq FROM metrics m CROSS JOIN metric_values v INDEXED BY metric_values_metric_at ON v.metric_id = m.id
            WHERE v.at_ms < ?1 LIMIT ?2`,
      params: [now - metricValueDays * DAY_MS],
    });
  }
  if (qrAccessDays > 0) {
    // Scans have one index, (qrcode_id, at, visitor), and no other is worth its cost on every scan
    // (see the schema): the old scans are a range of it per code, walked code by code as the
    // all-codes report walks it. The QR writer thread commits scans on its own connection; a
    // batch here is one short IMMEDIATE transaction, which its busy timeout waits out.
    out.push({
      table: "qr_accesses",
      sql: `SELECT a.seq FROM qr_codes c CROSS JOIN qr_accesses a INDEXED BY qr_accesses_code_at ON a.qrcode_id = c.id
            WHERE a.at < ?1 LIMIT ?2`,
      params: [toIso(now - qrAccessDays * DAY_MS)],
    });
  }
  return out;
}

const KEY_OF: Record<PrunedTable, string> = {
  sessions: "rowid",
  password_reset_keys: "rowid",
  remembered_devices: "rowid",
  login_failures: "rowid",
  events: "seq",
  webhook_deliveries: "rowid",
  isp_radius_accounting: "rowid",
  isp_radius_sessions: "rowid",
  isp_radius_attempts: "rowid",
  metric_values: "seq",
  qr_accesses: "seq",
};

const yieldToRequests = () => new Promise<void>((r) => setImmediate(r));

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

  /** Starts the schedule: a pass now, then whenever one is due. Returns the stop function. */
  start(): () => Promise<void> {
    const tick = () => {
      if (this.stopped || this.running) return;
      const now = this.now();
      // A clock set back (or forward) makes a pass due at once rather than never.
      if (this.lastRunAt === null || now >= this.lastRunAt + this.intervalMs || now < this.lastRunAt) void this.runOnce();
    };
    this.ctx.deferStart(tick);
    const timer = setInterval(tick, this.tickMs);
    (timer as { unref?: () => void }).unref?.();
    return async () => {
      this.stopped = true;
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
      report.databases.push(await this.pruneDatabase("platform", ctx.platform, platformPrunes(now), optimize));
      const corps = ctx.platform.$client
        .query<{ id: string; auth_name: string }, []>("SELECT id, auth_name FROM corporations WHERE status IN ('ENABLED', 'BLOCKED') ORDER BY id")
        .all();
      const { config } = ctx;
      const prunes = tenantPrunes(now, {
        eventDays: config.eventRetentionDays,
        accountingDays: config.accountingRetentionDays,
        radiusAttemptDays: config.radiusAttemptRetentionDays,
        metricValueDays: config.metricValueRetentionDays,
        qrAccessDays: config.qrAccessRetentionDays,
      });
      for (const corp of corps) {
        if (this.stopped) throw new Stopped();
        let db: AnyDb;
        try {
          // tenants.get would create a missing file: a corporation whose database is gone is
          // reported elsewhere (backup, metrics), not papered over here.
          if (!ctx.tenants.isOpen(corp.id) && !existsSync(ctx.tenants.pathOf(corp.id))) continue;
          db = ctx.tenants.get(corp.id);
        } catch (err) {
          report.databases.push({ database: corp.auth_name, pruned: {}, checkpointed: false, optimized: false, error: String(err) });
          continue;
        }
        report.databases.push(await this.pruneDatabase(corp.auth_name, db, prunes, optimize));
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

  private async pruneDatabase(name: string, db: AnyDb, prunes: Prune[], optimize: boolean): Promise<DatabaseReport> {
    const out: DatabaseReport = { database: name, pruned: {}, checkpointed: false, optimized: false };
    const counter = this.ctx.serviceMetrics.counter(METRIC_PRUNED);
    const sqlite = db.$client;
    let total = 0;
    try {
      for (const p of prunes) {
        const remove = sqlite.query(`DELETE FROM ${p.table} WHERE ${KEY_OF[p.table]} IN (${p.sql})`);
        const args = [p.params[0], this.batchSize, ...p.params.slice(1)] as [string | number, number];
        for (;;) {
          if (this.stopped) throw new Stopped();
          const n = writeTx(db, () => remove.run(...args).changes);
          if (n) {
            out.pruned[p.table] = (out.pruned[p.table] ?? 0) + n;
            counter.inc({ table: p.table }, n);
            total += n;
          }
          if (n < this.batchSize) break;
          await yieldToRequests();
        }
        await yieldToRequests();
      }
      if (total >= this.heavyPruneRows) out.checkpointed = checkpoint(sqlite);
      if (optimize) {
        sqlite.exec("PRAGMA optimize");
        out.optimized = true;
      }
    } catch (err) {
      if (err instanceof Stopped) throw err;
      out.error = String(err);
    }
    return out;
  }
}

/**
 * Copies the WAL into the database and truncates it to zero bytes, giving back the space a large
 * prune wrote into it. It has to wait for readers (another process: a backup); it waits one
 * second at most instead of the connection's usual ten, and a busy result is simply retried at
 * the next heavy prune. Returns whether the WAL was emptied.
 */
function checkpoint(sqlite: Database): boolean {
  const previous = (sqlite.query("PRAGMA busy_timeout").get() as { timeout: number }).timeout;
  sqlite.exec("PRAGMA busy_timeout = 1000");
  try {
    const r = sqlite.query("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy: number } | null;
    return r?.busy === 0;
  } finally {
    sqlite.exec(`PRAGMA busy_timeout = ${Number(previous) || 10_000}`);
  }
}
