// Background work of the app, in one place: modules register their jobs while they are built, and
// nothing runs until the app starts them all (createApp, after every module is mounted); close
// stops them in reverse order before the databases close. The first pass runs shortly after
// start-up (250 ms by default) so that the API answers before every corporation is opened.
// A job registered `singleNode` is work only one node may do in cluster mode (the metric
// scheduler, housekeeping, ...): the storage hands a wrapper that runs it under a lease (PostgreSQL,
// src/core/pg/lease.ts), so that it may start and stop several times while the app runs; on SQLite
// there is no wrapper and it runs as any job.
// Every job is listed with its schedule and its last pass (GET /api/system/jobs) and can be run
// at once (POST /api/system/jobs/{name}/run): registering a job is one call,
// `ctx.jobs.add(job, { schedule, everyMs?, singleNode? })`, and a job whose passes should be
// recorded runs them through `ctx.jobs.track(name, pass)`; `runOnce()` is the pass run-now asks for.
// The last start, finish, outcome and error are kept in the platform's settings (`job:<name>`,
// written without waiting for the disk), shared by every node in cluster mode, with the node.
import type { Logger } from "../lib/log";
import { conflict, notFound } from "../lib/problem";
import { toIso } from "../lib/time";
import { getSetting, putSetting, settingKeys } from "./settings";
import type { PlatformDoor } from "./store";
import { runAs } from "./history";

/**
 * Cluster mode: the lease a single-node job runs under. A write whose doubling would be wrong (a
 * metric value) calls `fence(tx)` in its transaction: it throws, rolling the write back, unless
 * this node still holds the lease, checked by the database and no clock (src/core/pg/lease.ts).
 */
export interface JobLease {
  fence(tx: unknown): Promise<void>;
}

export interface Job {
  /** Unique per app; tests reach a job by it (`ctx.jobs.get("metric-scheduler")`). */
  readonly name: string;
  /** Starts the job: its first pass and its timers; `lease`: a single-node job's in cluster mode. */
  start(lease?: JobLease): void | Promise<void>;
  /** Stops its timers and waits for work in flight. */
  stop(): void | Promise<void>;
  /** One pass now, as its schedule runs one (POST /api/system/jobs/{name}/run); rejects when it failed. */
  runOnce(): Promise<unknown>;
}

export interface JobOptions {
  /** Runs on one node at a time in cluster mode; its start() and stop() may then alternate more than once. */
  singleNode?: boolean;
  /** How it runs, for people: an interval, a cron expression, "on events and every 1 min", ... */
  schedule: string;
  /** Time between passes, when it runs every so often: next_at is the last start plus this. */
  everyMs?: number;
  /** The next scheduled pass (a cron schedule), when everyMs does not say it. */
  nextAt?: () => number | null;
}

/** GET /api/system/jobs (routes.md, Job). */
export interface JobView {
  name: string;
  schedule: string;
  node: string | null;
  running: boolean;
  last_started_at: string | null;
  last_finished_at: string | null;
  last_outcome: "ok" | "failed" | null;
  last_error: string | null;
  next_at: string | null;
}

/** What is kept of a job's last pass (settings `job:<name>`). */
interface LastRun {
  node: string | null;
  started_at: string | null;
  finished_at: string | null;
  outcome: "ok" | "failed" | null;
  error: string | null;
}

interface JobState {
  options: JobOptions;
  /** Started on this node (a single-node job: this node holds its lease). */
  active: boolean;
  running: boolean;
  last: LastRun;
  /** What was last written to settings, and when (this node's clock). */
  kept?: { at: number; outcome: LastRun["outcome"]; error: string | null };
}

const SETTING = "job:";
/**
 * The start-up collection (startAll): once no pass has run for QUIET_MS after the jobs started,
 * one full garbage collection, looked for every QUIET_MS / 4.
 */
const QUIET_MS = 1_000;
const PERSIST_EVERY_MS = 60_000;
const NO_RUN: LastRun = { node: null, started_at: null, finished_at: null, outcome: null, error: null };

/** Where the jobs' last passes are kept: the platform database, this node's name, the clock. */
export interface JobRecorder {
  platform: PlatformDoor;
  /** Cluster mode: this node's id (ctx.nodeId); null on SQLite (one node). */
  node: string | null;
  now: () => number;
}

export class Jobs {
  /** The jobs as registered (get() hands these). */
  private jobs = new Map<string, Job>();
  private states = new Map<string, JobState>();
  private recorder: JobRecorder | null = null;
  /** What start and stop drive: the job itself, or its single-node wrapper. */
  private runs = new Map<string, Job>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private started = false;
  private stopped = false;
  /** Passes under way (track), and when the last one ended: the start-up collection waits for quiet. */
  private passes = 0;
  private lastPassEnd = 0;
  private quietTimer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private logger: Logger,
    private startDelayMs: number,
    /** Cluster mode: puts a single-node job under its lease; null: every node is the only one. */
    private singleNode: ((job: Job) => Job) | null = null,
  ) {}

  /** Set once the platform database is open (createContext): passes are kept from then on. */
  record(recorder: JobRecorder): void {
    this.recorder = recorder;
  }

  add<J extends Job>(job: J, options: JobOptions): J {
    if (this.jobs.has(job.name)) throw new Error(`job ${job.name} is registered twice`);
    const state: JobState = { options, active: false, running: false, last: { ...NO_RUN } };
    this.jobs.set(job.name, job);
    this.states.set(job.name, state);
    // What start and stop drive knows whether the job runs here (a lease may move it to another node).
    const local: Job = {
      name: job.name,
      start: (lease) => {
        state.active = true;
        if (this.singleNode && options.singleNode) void this.holdsNow(job.name, state);
        return job.start(lease);
      },
      stop: async () => {
        try {
          await job.stop();
        } finally {
          state.active = false;
        }
      },
      runOnce: () => job.runOnce(),
    };
    this.runs.set(job.name, options.singleNode && this.singleNode ? this.singleNode(local) : local);
    return job;
  }

  /**
   * Runs one pass of the job and keeps its start, finish, outcome and error. A pass asked while
   * one runs is not recorded twice (the job joins or skips it, as it does).
   */
  async track<T>(name: string, pass: () => Promise<T>, always = false): Promise<T> {
    const state = this.states.get(name);
    if (!state || state.running) return pass();
    state.running = true;
    this.passes++;
    const node = this.recorder?.node ?? null;
    state.last = { ...state.last, node, started_at: this.nowIso() };
    try {
      const out = await pass();
      state.last = { ...state.last, finished_at: this.nowIso(), outcome: "ok", error: null };
      return out;
    } catch (err) {
      state.last = { ...state.last, finished_at: this.nowIso(), outcome: "failed", error: (err instanceof Error ? err.message : String(err)).slice(0, 1_000) };
      throw err;
    } finally {
      state.running = false;
      this.passes--;
      this.lastPassEnd = performance.now();
      // Passes that run every few seconds (socket checks, webhook sweeps under test tunings) are
      // written at most once a minute unless their outcome changes: the node's own list reads memory.
      const kept = state.kept;
      if (always || !kept || this.now() - kept.at >= PERSIST_EVERY_MS || kept.outcome !== state.last.outcome || kept.error !== state.last.error) {
        state.kept = { at: this.now(), outcome: state.last.outcome, error: state.last.error };
        this.keep(this.persist(name, state.last));
      }
    }
  }

  /**
   * POST /api/system/jobs/{name}/run: starts a pass and answers at once. 404 unknown; 409 while a
   * pass runs, or (cluster mode) when the job runs on another node: the node holding its lease is
   * the only one that may run it, and the answer names it.
   */
  async runNow(name: string): Promise<JobView> {
    const job = this.jobs.get(name);
    const state = this.states.get(name);
    if (!job || !state) throw notFound("Job");
    if (state.running) throw conflict(`Job ${name} is running`);
    if (state.options.singleNode && this.singleNode && !state.active) {
      const last = await this.readLast(name);
      throw conflict(`Job ${name} runs on the node holding its lease${last.node ? `, ${last.node}` : ""}; ask that node`);
    }
    const pass = this.track(name, () => job.runOnce(), true);
    pass.catch((err) => this.logger.error("job run failed", { job: name, error: String(err) }));
    return this.view(name, state, state.last);
  }

  /** GET /api/system/jobs: every job, in registration order. */
  async list(): Promise<JobView[]> {
    const kept = await this.readAll();
    // This node's own record once it ran the job; else the shared one (another node's, or before a restart).
    return [...this.states].map(([name, state]) => this.view(name, state, (state.active && state.last.started_at) || !kept.has(name) ? state.last : kept.get(name)!));
  }

  private view(name: string, state: JobState, last: LastRun): JobView {
    const { schedule, everyMs, nextAt } = state.options;
    // A job running elsewhere (cluster): running as that node last wrote it.
    const running = state.active ? state.running : !!last.started_at && (!last.finished_at || last.finished_at < last.started_at);
    let next: number | null = null;
    if (nextAt) next = nextAt();
    else if (everyMs && last.started_at) next = Date.parse(last.started_at) + everyMs;
    return {
      name,
      schedule,
      node: this.singleNode ? (state.options.singleNode ? last.node : (this.recorder?.node ?? null)) : null,
      running,
      last_started_at: last.started_at,
      last_finished_at: last.finished_at,
      last_outcome: last.outcome,
      last_error: last.error,
      next_at: next === null ? null : toIso(next),
    };
  }

  private now(): number {
    return this.recorder ? this.recorder.now() : Date.now();
  }

  private nowIso(): string {
    return toIso(this.now());
  }

  /** Records of passes still being written: stopAll waits for them, so none lands after the databases close. */
  private writing = new Set<Promise<void>>();

  private keep(write: Promise<void>): void {
    this.writing.add(write);
    void write.finally(() => this.writing.delete(write));
  }

  private async persist(name: string, last: LastRun): Promise<void> {
    if (!this.recorder) return;
    try {
      // A diagnostic: not worth an fsync per pass (the next ordinary commit makes it durable).
      await this.recorder.platform.write((db) => putSetting(db, SETTING + name, JSON.stringify(last)), { durable: false });
    } catch (err) {
      this.logger.warn("job run not recorded", { job: name, error: String(err) });
    }
  }

  /** Cluster mode: this node took the job's lease; the shared row names it, its last pass kept. */
  private async holdsNow(name: string, state: JobState): Promise<void> {
    try {
      const kept = await this.readLast(name);
      // A pass this node ran already is newer than what the row holds.
      if (!state.last.started_at) state.last = { ...kept };
      state.last = { ...state.last, node: this.recorder?.node ?? null };
      await this.persist(name, state.last);
    } catch (err) {
      this.logger.warn("job holder not recorded", { job: name, error: String(err) });
    }
  }

  private async readLast(name: string): Promise<LastRun> {
    if (!this.recorder) return NO_RUN;
    const raw = await this.recorder.platform.read((db) => getSetting(db, SETTING + name));
    return raw ? { ...NO_RUN, ...(JSON.parse(raw) as LastRun) } : NO_RUN;
  }

  private async readAll(): Promise<Map<string, LastRun>> {
    const out = new Map<string, LastRun>();
    if (!this.recorder) return out;
    const recorder = this.recorder;
    await recorder.platform.read(async (db) => {
      for (const key of await settingKeys(db, SETTING)) {
        const raw = await getSetting(db, key);
        if (raw) out.set(key.slice(SETTING.length), { ...NO_RUN, ...(JSON.parse(raw) as LastRun) });
      }
    });
    return out;
  }

  get<J extends Job>(name: string): J | undefined {
    return this.jobs.get(name) as J | undefined;
  }

  names(): string[] {
    return [...this.jobs.keys()];
  }

  startAll(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.timer = setTimeout(() => {
      this.timer = null;
      for (const job of this.runs.values()) {
        if (this.stopped) return;
        try {
          // What the job writes, and what its timers write, is the job's (core/history.ts).
          const pending = runAs(`system:${job.name}`, () => job.start());
          if (pending) pending.catch((err) => this.logger.error("background job failed to start", { job: job.name, error: String(err) }));
        } catch (err) {
          this.logger.error("background job failed to start", { job: job.name, error: String(err) });
        }
      }
      this.collectWhenQuiet();
    }, this.startDelayMs);
  }

  /**
   * The first passes (housekeeping, NAS health: every corporation at start-up) leave the heap at
   * twice its live size or more, garbage that JavaScriptCore collects only when it next wants to:
   * 1,000 corporations idled at ≈ 100 MB instead of ≈ 85 until then (bench/tenants.ts). So once no
   * pass has run for QUIET_MS, one full collection (tens of ms, once, after the API has answered
   * its first requests); never again after, so no later request pays for it.
   */
  private collectWhenQuiet(): void {
    this.lastPassEnd = performance.now();
    this.quietTimer = setInterval(() => {
      if (this.passes > 0 || performance.now() - this.lastPassEnd < QUIET_MS) return;
      clearInterval(this.quietTimer!);
      this.quietTimer = null;
      Bun.gc(true);
    }, QUIET_MS / 4);
    (this.quietTimer as { unref?: () => void }).unref?.();
  }

  async stopAll(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.quietTimer) clearInterval(this.quietTimer);
    for (const job of [...this.runs.values()].reverse()) {
      try {
        await job.stop();
      } catch (err) {
        this.logger.error("background job failed to stop", { job: job.name, error: String(err) });
      }
    }
    // A pass that ended while stopping queued its record (never rejects: persist logs).
    await Promise.all([...this.writing]);
  }
}
