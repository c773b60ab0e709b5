// Background work of the app, in one place: modules register their jobs while they are built, and
// nothing runs until the app starts them all (createApp, after every module is mounted); close
// stops them in reverse order before the databases close. The first pass runs shortly after
// start-up (250 ms by default) so that the API answers before every corporation is opened.
// A job registered `singleNode` is work only one node may do in cluster mode (the metric
// scheduler, housekeeping, ...): the storage hands a wrapper that runs it under a lease (PostgreSQL,
// src/db/pg/lease.ts), so that it may start and stop several times while the app runs; on SQLite
// there is no wrapper and it runs as any job.
import type { Logger } from "../lib/log";
import { runAs } from "./history";

/**
 * Cluster mode: the lease a single-node job runs under. A write whose doubling would be wrong (a
 * metric value) calls `fence(tx)` in its transaction: it throws, rolling the write back, unless
 * this node still holds the lease, checked by the database and no clock (src/db/pg/lease.ts).
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
}

export interface JobOptions {
  /** Runs on one node at a time in cluster mode; its start() and stop() may then alternate more than once. */
  singleNode?: boolean;
}

export class Jobs {
  /** The jobs as registered (get() hands these). */
  private jobs = new Map<string, Job>();
  /** What start and stop drive: the job itself, or its single-node wrapper. */
  private runs = new Map<string, Job>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private started = false;
  private stopped = false;

  constructor(
    private logger: Logger,
    private startDelayMs: number,
    /** Cluster mode: puts a single-node job under its lease; null: every node is the only one. */
    private singleNode: ((job: Job) => Job) | null = null,
  ) {}

  add<J extends Job>(job: J, options: JobOptions = {}): J {
    if (this.jobs.has(job.name)) throw new Error(`job ${job.name} is registered twice`);
    this.jobs.set(job.name, job);
    this.runs.set(job.name, options.singleNode && this.singleNode ? this.singleNode(job) : job);
    return job;
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
    }, this.startDelayMs);
  }

  async stopAll(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const job of [...this.runs.values()].reverse()) {
      try {
        await job.stop();
      } catch (err) {
        this.logger.error("background job failed to stop", { job: job.name, error: String(err) });
      }
    }
  }
}
