// Background work of the app, in one place: modules register their jobs while they are built, and
// nothing runs until the app starts them all (createApp, after every module is mounted); close
// stops them in reverse order before the databases close. The first pass runs shortly after
// start-up (250 ms by default) so that the API answers before every corporation is opened.
import type { Logger } from "../lib/log";

export interface Job {
  /** Unique per app; tests reach a job by it (`ctx.jobs.get("metric-scheduler")`). */
  readonly name: string;
  /** Starts the job: its first pass and its timers. */
  start(): void | Promise<void>;
  /** Stops its timers and waits for work in flight. */
  stop(): void | Promise<void>;
}

export class Jobs {
  private jobs = new Map<string, Job>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private started = false;
  private stopped = false;

  constructor(
    private logger: Logger,
    private startDelayMs: number,
  ) {}

  add<J extends Job>(job: J): J {
    if (this.jobs.has(job.name)) throw new Error(`job ${job.name} is registered twice`);
    this.jobs.set(job.name, job);
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
      for (const job of this.jobs.values()) {
        if (this.stopped) return;
        try {
          const pending = job.start();
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
    for (const job of [...this.jobs.values()].reverse()) {
      try {
        await job.stop();
      } catch (err) {
        this.logger.error("background job failed to stop", { job: job.name, error: String(err) });
      }
    }
  }
}
