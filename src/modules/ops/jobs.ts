// Background work of the ops module: the audit log's retention and the scheduled backup.
import { Cron } from "croner";
import type { AppContext } from "../../core/context";
import type { Job } from "../../core/jobs";
import type { Logger } from "../../lib/log";
import type { MetricsRegistry } from "../../core/metrics";
import { runScheduledBackup, type BackupLock, type BackupTaker } from "./backup";
import { backupTaker } from "./backup-service";

/** Registers the module's background work with ctx.jobs: started with the app, stopped on close. */
export function registerOpsJobs(ctx: AppContext, lock: BackupLock): void {
  // Each on one node at a time in cluster mode (ctx.jobs): they work on the shared database.
  ctx.jobs.add(
    stoppable("audit-retention", () => ctx.audit.startRetention((pass) => ctx.jobs.track("audit-retention", pass)), () => ctx.audit.retentionPass()),
    { singleNode: true, schedule: `daily (entries older than ${ctx.config.auditRetentionDays} days)`, everyMs: 86_400_000 },
  );
  const cron = ctx.config.backupCron;
  if (cron) {
    const opts = { cron, backupDir: ctx.config.backupDir, keep: ctx.config.backupKeep, logger: ctx.logger, metrics: ctx.serviceMetrics, lock, take: backupTaker(ctx) };
    const backupNow = () => takeScheduledBackup(opts);
    const schedule = new Cron(cron, { paused: true });
    ctx.jobs.add(
      stoppable("scheduled-backup", () => startBackupSchedule(opts, () => ctx.jobs.track("scheduled-backup", backupNow)), backupNow),
      { singleNode: true, schedule: `cron ${cron} (keep ${ctx.config.backupKeep}, in ${ctx.config.backupDir})`, nextAt: () => schedule.nextRun()?.getTime() ?? null },
    );
  }
}

/** A job whose start returns its stop function. */
function stoppable(name: string, start: () => () => void | Promise<void>, runOnce: () => Promise<unknown>): Job {
  let stop: (() => void | Promise<void>) | null = null;
  return {
    name,
    start: () => void (stop = start()),
    stop: () => stop?.(),
    runOnce,
  };
}

interface BackupScheduleOptions {
  cron: string;
  backupDir: string;
  keep: number;
  logger: Logger;
  metrics: MetricsRegistry;
  lock: BackupLock;
  take: BackupTaker;
}

/** One scheduled backup (its cron tick, or run now); fails when another backup is running. */
async function takeScheduledBackup(opts: BackupScheduleOptions): Promise<void> {
  const outcomes = opts.metrics.counter("corpadmin_backups_total");
  const locked = opts.lock.tryRun(() => runScheduledBackup(opts.backupDir, opts.keep, opts.logger, opts.take));
  if (!locked) {
    opts.logger.warn("scheduled backup skipped: another backup is running");
    throw new Error("skipped: another backup is running");
  }
  try {
    await locked;
    outcomes.inc({ outcome: "success" });
  } catch (err) {
    outcomes.inc({ outcome: "failure" });
    opts.logger.error("backup failed", { error: err instanceof Error ? err.message : String(err) });
    throw err;
  }
}

/** Runs the scheduled backup while the service runs (each tick through `tick`); returns the stop function. */
function startBackupSchedule(opts: BackupScheduleOptions, tick: () => Promise<void>): () => Promise<void> {
  let running: Promise<unknown> | null = null;
  // protect: a run that takes longer than the interval is not overlapped by the next one.
  const job = new Cron(opts.cron, { protect: true }, async () => {
    const run = tick().catch(() => {});
    running = run;
    await run;
    running = null;
  });
  opts.logger.info("backup schedule", { cron: opts.cron, dir: opts.backupDir, keep: opts.keep, next: job.nextRun()?.toISOString() ?? null });
  return async () => {
    job.stop();
    await running;
  };
}
