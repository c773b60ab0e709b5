// The metric collector: one timer-driven job per metric that has an endpoint. A job ticks every
// `periodicity` from start_date (ticks on start_date + k·periodicity) and, when the tick falls
// inside the metric's window in the corporation's timezone, GETs the endpoint through the egress
// policy and stores the value. Plain timers rather than croner: a periodicity such as 7m or 90s
// is not a cron pattern, and timers computed from ctx.now() keep the rules in pure functions.
import type { AppContext } from "../../core/context";
import type { Job as BackgroundJob, JobLease } from "../../core/jobs";
import { readBounded } from "../../lib/bounded-body";
import { allCorpIds } from "../corp/service";
import { collectedIndex, collectedMetrics, METRICS_TOPIC, storeCollected, storedMetric, unindexIfNoneCollected, type MetricRow } from "./service";
import { isInsideWindow, nextTickAfter } from "./window";

/** setTimeout's longest delay is 2^31-1 ms (≈ 24.8 days); a longer wait re-arms on the way. */
const MAX_DELAY_MS = 2 ** 31 - 1;
const FETCH_TIMEOUT_MS = 10_000;
/** A body larger than this is not a metric value; stop reading it. */
const MAX_BODY_BYTES = 64 * 1024;
/** Values of one metric waiting for the database at once, beyond which its ticks are skipped. */
const MAX_PENDING_STORES = 4;

interface Job {
  corpId: string;
  metric: MetricRow;
  timer: ReturnType<typeof setTimeout> | null;
  /** The last tick handled, so that a timer firing a little early never runs one tick twice. */
  lastTick: number;
  /** The run of the scheduler (start to stop) that built it: a request of an earlier run stores nothing. */
  term: number;
}

const key = (corpId: string, metricId: string) => `${corpId}/${metricId}`;

/** The collector of an app: a job of ctx.jobs (tests find it by its name). */
export class MetricScheduler implements BackgroundJob {
  /** The name a jobs registry knows it by. */
  readonly name = "metric-scheduler";
  private jobs = new Map<string, Job>();
  /**
   * Metrics with an endpoint request in flight: requests of one metric never overlap, even across
   * a rebuild of its job. The store of the value is outside it: a database that does not answer
   * (a failover, a connection that hangs) must not hold back the next ticks for as long. The value
   * is the tick of the run that sends it (a run ends only its own).
   */
  private running = new Map<string, number>();
  /** Values per metric waiting for the database (at most MAX_PENDING_STORES). */
  private storing = new Map<string, number>();
  /** The last reason each failing metric stored nothing. */
  private failures = new Map<string, string>();
  /**
   * Between start() and stop() only: metric changes build no job before (start reads every metric,
   * after they were committed) nor after. In cluster mode the scheduler runs on one node at a time
   * and may start and stop more than once (ctx.jobs, singleNode); `term` counts the starts.
   */
  private active = false;
  private term = 0;
  /**
   * Cluster mode: the lease of this run. A value is stored only while this node holds it (fenced
   * in the write): a node that lost the lease and has not noticed yet never stores a tick the new
   * holder stores too.
   */
  private lease: JobLease | null = null;
  /** Counts sync() calls; `changedAt` holds the count of each metric's last one (resync's epoch). */
  private changes = 0;
  private changedAt = new Map<string, number>();
  private resyncTimer: ReturnType<typeof setInterval> | null = null;
  private resyncing: Promise<void> | null = null;
  /** Metrics being read again after a change on another node; true: changed again meanwhile, read once more. */
  private refreshing = new Map<string, boolean>();

  constructor(private ctx: AppContext) {
    // Cluster mode: a metric changed through another node is heard through the change feed (the
    // write publishes METRICS_TOPIC) and read again here at once; the resync timer (start) stays
    // as the net for a notification lost. On SQLite the writing process is the only one: sync()
    // after each COMMIT (index.ts) is all there is, and nothing is read again.
    if (ctx.tenants.sharedByNodes) {
      ctx.changes.subscribe(METRICS_TOPIC, { changed: (k) => this.refresh(k), resync: () => void this.resync() });
    }
  }

  /**
   * Builds the jobs of every corporation's metrics (process start), reading only the corporations
   * the index names (service.ts, "the index of corporations with collected metrics"): start-up
   * costs follow the corporations that collect, not their number. Without a complete index (a
   * data directory from before it, a restored backup) every corporation is read once and indexed.
   */
  async start(lease?: JobLease): Promise<void> {
    this.active = true;
    this.lease = lease ?? null;
    const term = ++this.term;
    const stopped = () => !this.active || this.term !== term;
    // Cluster mode: metrics changed through other nodes are not synced here after their commit
    // (this node does not hear it): the stored metrics are read again every metricResyncMs.
    if (this.ctx.tenants.sharedByNodes && !this.resyncTimer) {
      this.resyncTimer = setInterval(() => void this.ctx.jobs.track(this.name, () => this.resync()).catch(() => {}), this.ctx.dispatchTuning.metricResyncMs);
      this.resyncTimer.unref?.();
    }
    let corps: string[];
    let index: { corps: string[]; complete: boolean };
    try {
      [corps, index] = await this.ctx.store.platform.read(async (db) => [await allCorpIds(db), await collectedIndex.read(db)] as const);
    } catch (err) {
      this.ctx.logger.error("metric jobs not started", { error: String(err) });
      return;
    }
    const existing = new Set(corps);
    const add: string[] = [];
    const drop = index.corps.filter((id) => !existing.has(id)); // deleted corporations
    let complete = true;
    for (const id of index.complete ? index.corps.filter((c) => existing.has(c)) : corps) {
      if (stopped()) return;
      try {
        const rows = await this.ctx.store.visit(id, collectedMetrics);
        for (const row of rows) this.sync(id, row);
        if (rows.length && !index.complete) add.push(id);
        // Indexed but collecting nothing (a crash before its last endpoint's removal was indexed).
        if (!rows.length && index.complete) await this.ctx.store.visit(id, (tenant) => unindexIfNoneCollected(tenant, this.ctx.store.platform));
      } catch (err) {
        // A corporation whose database cannot be read (failed migration) keeps the others going;
        // the index stays incomplete, so the next start-up reads every corporation again.
        complete = false;
        this.ctx.logger.warn("metric jobs of a corporation not started", { corp_id: id, error: String(err) });
      }
    }
    if (stopped() || (index.complete && !drop.length) || (!add.length && !drop.length && !complete)) return;
    try {
      await this.ctx.store.platform.write((db) => collectedIndex.update(db, add, drop, !index.complete && complete));
    } catch (err) {
      this.ctx.logger.warn("the index of corporations with collected metrics not updated", { error: String(err) });
    }
  }

  /**
   * Brings the jobs in line with the metrics stored now (changed through other nodes): a job
   * whose metric is gone, or whose `updated_at` moved, is rebuilt or removed; the others keep their
   * timers. A metric synced here while its corporation was being read keeps what sync() gave it.
   * One pass at a time; what cannot be read keeps its jobs.
   */
  /** POST /api/system/jobs/metric-scheduler/run: a resync (the stored metrics read again). */
  runOnce(): Promise<void> {
    return this.resync();
  }

  resync(): Promise<void> {
    this.resyncing ??= this.resyncPass().finally(() => (this.resyncing = null));
    return this.resyncing;
  }

  private async resyncPass(): Promise<void> {
    if (!this.active) return;
    const term = this.term;
    let corps: string[];
    try {
      corps = (await this.ctx.store.platform.read((db) => collectedIndex.read(db))).corps;
    } catch (err) {
      this.ctx.logger.warn("metric jobs not resynced", { error: String(err) });
      return;
    }
    for (const job of this.jobs.values()) if (!corps.includes(job.corpId)) corps.push(job.corpId);
    for (const corpId of corps) {
      if (!this.active || this.term !== term) return;
      const before = this.changes;
      let rows: MetricRow[];
      try {
        rows = await this.ctx.store.visit(corpId, collectedMetrics);
      } catch {
        continue;
      }
      if (!this.active || this.term !== term) return;
      const fresh = (k: string) => (this.changedAt.get(k) ?? -1) <= before;
      const stored = new Set<string>();
      for (const row of rows) {
        const k = key(corpId, row.id);
        stored.add(k);
        if (fresh(k) && this.jobs.get(k)?.metric.updated_at !== row.updated_at) this.sync(corpId, row);
      }
      for (const [k, job] of this.jobs) if (job.corpId === corpId && !stored.has(k) && fresh(k)) this.remove(corpId, job.metric.id);
    }
  }

  /**
   * A metric `<corpId>/<metricId>` changed (maybe on another node): reads it and brings its job in
   * line, unless a local sync() came while it was read (that one carries a commit at least as
   * new, and any later commit is told again). Reads of one metric run one at a time, a change
   * heard meanwhile reading it once more, so an older read never lands after a newer one.
   */
  private refresh(k: string): void {
    if (!this.active) return;
    if (this.refreshing.has(k)) {
      this.refreshing.set(k, true);
      return;
    }
    this.refreshing.set(k, false);
    void this.refreshPass(k).finally(() => this.refreshing.delete(k));
  }

  private async refreshPass(k: string): Promise<void> {
    const slash = k.indexOf("/");
    const corpId = k.slice(0, slash);
    const metricId = k.slice(slash + 1);
    do {
      this.refreshing.set(k, false);
      if (!this.active) return;
      const term = this.term;
      const before = this.changes;
      let row: MetricRow | null;
      try {
        row = await this.ctx.store.visit(corpId, (tenant) => storedMetric(tenant, metricId));
      } catch (err) {
        // A corporation gone, or the database unreachable: the periodic resync reads it again.
        this.ctx.logger.warn("a changed metric not read again", { corp_id: corpId, metric_id: metricId, error: String(err) });
        return;
      }
      if (!this.active || this.term !== term || (this.changedAt.get(k) ?? -1) > before) continue;
      const job = this.jobs.get(k);
      if (!row?.endpoint) {
        if (job) this.remove(corpId, metricId);
      } else if (!job || !sameMetric(job.metric, row)) this.sync(corpId, row);
    } while (this.refreshing.get(k));
  }

  /** (Re)builds the job of one metric after it was created or changed; `null` removes it. */
  sync(corpId: string, metric: MetricRow | null, metricId = metric?.id): void {
    if (!metricId) return;
    const k = key(corpId, metricId);
    this.changedAt.set(k, ++this.changes);
    const job = this.jobs.get(k);
    if (job?.timer) clearTimeout(job.timer);
    if (!this.active || !metric || !metric.endpoint) {
      this.jobs.delete(k);
      this.failures.delete(k);
      return;
    }
    const rebuilt: Job = { corpId, metric, timer: null, lastTick: -Infinity, term: this.term };
    this.jobs.set(k, rebuilt);
    this.arm(rebuilt);
  }

  remove(corpId: string, metricId: string): void {
    this.sync(corpId, null, metricId);
  }

  /** The tick a metric's job waits for, or null when it has no job (tests and diagnostics). */
  nextTick(corpId: string, metricId: string): number | null {
    const job = this.jobs.get(key(corpId, metricId));
    return job ? (nextTickAfter(job.metric, Math.max(this.ctx.now(), job.lastTick)) ?? null) : null;
  }

  get size(): number {
    return this.jobs.size;
  }

  stop(): void {
    this.active = false;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.resyncTimer = null;
    this.changedAt.clear();
    for (const job of this.jobs.values()) if (job.timer) clearTimeout(job.timer);
    this.jobs.clear();
  }

  private arm(job: Job): void {
    const now = this.ctx.now();
    const tick = nextTickAfter(job.metric, Math.max(now, job.lastTick));
    if (tick === null) {
      // Past end_date: the job is finished.
      this.jobs.delete(key(job.corpId, job.metric.id));
      this.ctx.logger.debug("metric job finished", { corp_id: job.corpId, metric_id: job.metric.id });
      return;
    }
    const timer = setTimeout(() => this.fire(job, timer, tick), Math.max(0, Math.min(tick - now, MAX_DELAY_MS)));
    timer.unref?.();
    job.timer = timer;
  }

  private fire(job: Job, timer: ReturnType<typeof setTimeout>, tick: number): void {
    // A job replaced or removed since this timer was set has nothing more to do.
    if (!this.active || job.timer !== timer || this.jobs.get(key(job.corpId, job.metric.id)) !== job) return;
    job.timer = null;
    // A clamped long wait wakes early: go back to sleep.
    if (this.ctx.now() < tick - 1_000) return this.arm(job);
    job.lastTick = tick;
    // Arm first: the run may remove the job (its corporation is gone), and that must stick.
    this.arm(job);
    this.run(job, tick).catch((err) => this.ctx.logger.error("metric run failed", { corp_id: job.corpId, metric_id: job.metric.id, error: String(err) }));
  }

  private async run(job: Job, tick: number): Promise<void> {
    const { corpId, metric } = job;
    const log = { corp_id: corpId, metric_id: metric.id, metric: metric.name };
    const corp = await this.ctx.corps.get(corpId);
    if (!corp) {
      this.remove(corpId, metric.id);
      return;
    }
    if (corp.status !== "ENABLED") {
      this.ctx.logger.debug("metric not collected: the corporation is not enabled", { ...log, status: corp.status });
      return;
    }
    if (!isInsideWindow(metric, tick, corp.timezone)) {
      this.ctx.logger.debug("metric not collected: outside its window", { ...log, at: new Date(tick).toISOString() });
      return;
    }
    const k = key(corpId, metric.id);
    if (this.running.has(k)) {
      this.ctx.logger.warn("metric not collected: the previous request is still running", log);
      return;
    }
    if ((this.storing.get(k) ?? 0) >= MAX_PENDING_STORES) {
      this.ctx.logger.warn("metric not collected: earlier values are still waiting for the database", log);
      return;
    }
    this.running.set(k, tick);
    let failure: Failure | null;
    try {
      failure = await this.collect(job, tick, k);
    } catch (err) {
      failure = { why: "metric collection failed", error: String(err) };
    } finally {
      this.requestOver(k, tick);
    }
    // A broken endpoint polled every second would flood the log: warn when the reason changes,
    // repeat it at debug, and say when collection works again.
    const previous = this.failures.get(k);
    if (failure) {
      const { why, ...fields } = failure;
      this.ctx.logger[previous === why ? "debug" : "warn"](why, { ...log, ...fields });
      this.failures.set(k, why);
    } else if (previous !== undefined) {
      this.failures.delete(k);
      this.ctx.logger.info("metric collection works again", log);
    }
  }

  private requestOver(k: string, tick: number): void {
    if (this.running.get(k) === tick) this.running.delete(k);
  }

  /** Fetches and stores one value; says why when nothing was stored. */
  private async collect(job: Job, tick: number, k: string): Promise<Failure | null> {
    const { corpId, metric } = job;
    // The endpoint may carry credentials in its path, query or user info: log its host only.
    const host = new URL(metric.endpoint!).host;
    let res: Response;
    try {
      res = await this.ctx.egress.fetch(metric.endpoint!, { method: "GET", timeoutMs: FETCH_TIMEOUT_MS, headers: { accept: "application/json" } });
    } catch (err) {
      return { why: "metric endpoint request failed", host, error: err instanceof Error ? err.message : String(err) };
    }
    if (res.status < 200 || res.status > 299) {
      await res.body?.cancel().catch(() => {});
      return { why: "metric endpoint answered an error status; nothing stored", host, status: res.status };
    }
    const bytes = await readBounded(res.body, MAX_BODY_BYTES);
    if (bytes === null) return { why: "metric endpoint body is too large to be a value; nothing stored", host, limit: MAX_BODY_BYTES };
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      return { why: "metric endpoint body is not JSON; nothing stored", host };
    }
    if (!this.active || job.term !== this.term) return null;
    // The request is over: the next tick may send the next one while this value waits to be stored.
    this.requestOver(k, tick);
    this.storing.set(k, (this.storing.get(k) ?? 0) + 1);
    let outcome: Awaited<ReturnType<typeof storeCollected>>;
    try {
      // The metric may have changed or gone while the request ran: checked against what is stored now.
      const lease = this.lease;
      outcome = await storeCollected(this.ctx.store.background(corpId), metric.id, body, tick, lease && ((tx) => lease.fence(tx)));
    } finally {
      const left = this.storing.get(k)! - 1;
      if (left) this.storing.set(k, left);
      else this.storing.delete(k);
    }
    if (outcome === "gone") {
      this.ctx.logger.debug("metric deleted during its collection; nothing stored", { corp_id: corpId, metric_id: metric.id });
      // Its deletion removed the job already, unless start-up read the metric just before it went.
      this.remove(corpId, metric.id);
      return null;
    }
    if (outcome !== "stored") return { why: `metric endpoint body is not a ${outcome} value nor {"value": ...}; nothing stored`, host };
    this.ctx.logger.debug("metric value collected", { corp_id: corpId, metric_id: metric.id, at: new Date(tick).toISOString() });
    return null;
  }
}

/** What a job is built from (updated_at alone may not move between two writes of one millisecond; a row read on PostgreSQL also has corp_id). */
const JOB_FIELDS = ["name", "endpoint", "data_type", "periodicity", "start_date", "end_date", "daily_start_time", "daily_end_time", "updated_at"] as const;
function sameMetric(a: MetricRow, b: MetricRow): boolean {
  return JOB_FIELDS.every((f) => a[f] === b[f]);
}

interface Failure {
  why: string;
  [field: string]: unknown;
}

