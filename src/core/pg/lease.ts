// Cluster mode (issue 19 item 3): work only one node may do (the metric scheduler, housekeeping,
// scheduled backups). A named lease is a session-level advisory lock, pg_try_advisory_lock, held
// on a connection of its own; the node runs the work only while it can prove it holds the lock.
// Why the lock and not a lease row: no table, no clock shared between nodes, and PostgreSQL frees
// the lock the moment the holder's session ends (a dead node, a killed backend, a restart).
// That same moment is the danger: the server frees the lock before the old holder learns it lost
// it. Fencing, so that two nodes never run the work at once:
// - the holder proves every `heartbeatMs` that its session still holds the lock (pg_locks); a
//   proof that fails or does not answer in time is a loss, and the work is stopped at once;
// - a proof sent at local time s shows the lock held until at least s (the server ran it later),
//   so the holder stops its work by s + graceMs: it starts stopping at s + graceMs - stopBudgetMs;
// - a node that takes the lock waits `graceMs` after the server's answer before it starts.
//   The lock was free when it took it, so the old holder's last proof was sent before that, and
//   the old holder has stopped before the new one starts. Only durations on each node's own
//   monotonic clock are compared, never two clocks; stop() must end within stopBudgetMs.
// The timing relies on this node's timers firing (a stalled event loop can overrun it), so the
// work's database writes can also be fenced strictly, by no clock: `lease.fence(tx)` in the write
// takes a shared transaction lock on the lease's fence key and checks that this node's lease
// session (pid and start time) still holds the lease lock, else throws (the write rolls back). A new
// holder takes the fence key exclusively once before its grace, so it waits for every fenced
// transaction of the old holder still in flight, and any that comes later finds the lease gone.
// A takeover happens at most heartbeatMs + graceMs after the holder's session ends (plus a
// connection timeout when the server is unreachable). The app puts its single-node jobs under one
// `Leases` (core/context.ts, ctx.jobs.add(job, { singleNode: true })); docs/architecture.md.
import { SQL } from "bun";
import type { Job } from "../jobs";
import { silentLogger, type Logger } from "../../lib/log";
import type { PgTx } from "./door";

export interface LeaseOptions {
  /** How long a new holder waits before starting, and how long a proof lets the holder run on. */
  graceMs?: number;
  /** How often the holder proves it holds, and a non-holder tries to take the lease. */
  heartbeatMs?: number;
  /** How long the work's stop() may take: the holder starts stopping this long before its last proof runs out. */
  stopBudgetMs?: number;
  logger?: Logger;
  /** This node's identity in the log lines (who ran the work when). */
  node?: string;
}

export interface LeasedWork {
  /** Called when this node holds the lease (after the grace); may be called again after a loss and a new take. */
  start(lease: LeaseHandle): void | Promise<void>;
  /** Called when the lease is lost or released, after start(); must end within stopBudgetMs. */
  stop(): void | Promise<void>;
}

export interface LeaseHandle {
  readonly name: string;
  /** True while the work runs on this node. */
  readonly running: boolean;
  /**
   * In a write transaction of the work: throws LeaseLost (rolling the write back) unless this
   * node's lease session still holds the lease; a new holder does not start before the write ends.
   */
  fence(tx: PgTx): Promise<void>;
  /** Stops the work if it runs, releases the lease (another node takes it after its grace) and stops trying. */
  close(): Promise<void>;
}

const DEFAULTS = { graceMs: 10_000, heartbeatMs: 2_000, stopBudgetMs: 3_000 };

/** The advisory lock's key: a lease name's 64-bit hash (the doors' keys hash other texts). */
const keyText = (name: string) => `corpadmin:lease:${name}`;
/** The key fenced writes share and a new holder takes exclusively once. */
const fenceText = (name: string) => `corpadmin:lease-fence:${name}`;

export class LeaseLost extends Error {
  constructor(name: string) {
    super(`this node no longer holds the lease ${name}`);
  }
}

/** The same logger, every line carrying `fields` too. */
function withFields(logger: Logger, fields: Record<string, unknown>): Logger {
  return {
    enabled: logger.enabled && ((level) => logger.enabled!(level)),
    debug: (m, f) => logger.debug(m, { ...fields, ...f }),
    info: (m, f) => logger.info(m, { ...fields, ...f }),
    warn: (m, f) => logger.warn(m, { ...fields, ...f }),
    error: (m, f) => logger.error(m, { ...fields, ...f }),
  };
}

/** Rejects after `ms`; the late promise's own failure is swallowed. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  p.catch(() => {});
  return Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

/** The leases of one node: one connection per lease it runs. */
export class Leases {
  private readonly opts: Required<Omit<LeaseOptions, "logger" | "node">>;
  private readonly logger: Logger;
  private readonly leases = new Set<Lease>();

  constructor(
    private readonly url: string,
    options: LeaseOptions = {},
  ) {
    const { logger = silentLogger, node, ...rest } = options;
    this.opts = { ...DEFAULTS, ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) };
    this.logger = node === undefined ? logger : withFields(logger, { node });
    const { graceMs, heartbeatMs, stopBudgetMs } = this.opts;
    // A proof must be renewed before it runs out, with time left to stop.
    if (!(heartbeatMs > 0 && stopBudgetMs >= 0 && heartbeatMs + stopBudgetMs < graceMs)) {
      throw new Error("lease timings need heartbeatMs + stopBudgetMs < graceMs");
    }
  }

  /** Runs `work` on whichever node holds the lease `name`, on exactly one node at a time. */
  run(name: string, work: LeasedWork): LeaseHandle {
    const lease = new Lease(name, work, this.url, this.opts, this.logger, () => this.leases.delete(lease));
    this.leases.add(lease);
    return lease;
  }

  /** A job for ctx.jobs that runs `job` only on the node holding the lease named after it; its start() is handed the lease (for fence). */
  job(job: Omit<Job, "runOnce"> & Partial<Pick<Job, "runOnce">>): Job {
    let handle: LeaseHandle | null = null;
    return {
      name: job.name,
      runOnce: () => job.runOnce?.() ?? Promise.resolve(),
      start: () => {
        handle ??= this.run(job.name, job);
      },
      stop: async () => {
        await handle?.close();
        handle = null;
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.leases].map((l) => l.close()));
  }
}

class Lease implements LeaseHandle {
  private client: SQL | null = null;
  private closed = false;
  private started: Promise<void> | null = null;
  private stopping: Promise<void> | null = null;
  /** False only while this node holds the lock and its last proof has not run out. */
  private lost = true;
  private deadline: ReturnType<typeof setTimeout> | null = null;
  /** The lease session that took the lock: its backend's pid and start time (a pid alone can be reused). */
  private session: { pid: number; since: string } | null = null;
  private wake: (() => void) | null = null;
  private readonly loop: Promise<void>;

  constructor(
    readonly name: string,
    private readonly work: LeasedWork,
    private readonly url: string,
    private readonly opts: Required<Omit<LeaseOptions, "logger" | "node">>,
    private readonly logger: Logger,
    private readonly forget: () => void,
  ) {
    this.loop = this.main();
  }

  get running(): boolean {
    return this.started !== null && this.stopping === null;
  }

  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.lose("closed");
      this.wake?.();
    }
    await this.loop;
    this.forget();
  }

  private async main(): Promise<void> {
    while (!this.closed) {
      // Another node holds it (the try answered no): this connection tries again, instead of a
      // new one every heartbeat on every node that does not hold the lease.
      let refused = false;
      try {
        const took = await this.take();
        refused = took === "refused";
        if (took === true) await this.hold();
      } catch (err) {
        this.logger.warn("lease: connection failed", { lease: this.name, error: String(err) });
      }
      this.lose("connection");
      await this.stopping;
      this.started = this.stopping = null;
      if (!refused || this.closed) await this.drop();
      if (!this.closed) await this.sleep(this.opts.heartbeatMs);
    }
    // Closed while sleeping after a refused try: the connection is still open.
    await this.drop();
  }

  /**
   * One try; on success the proof clock starts at the moment the try was sent. "refused": the
   * lock is another session's and this one holds nothing (its connection may try again).
   */
  private async take(): Promise<boolean | "refused"> {
    this.client ??= new SQL({ url: this.url, max: 1, idleTimeout: 0, connectionTimeout: Math.max(1, Math.ceil(this.opts.heartbeatMs / 1000)) });
    const sent = performance.now();
    const [row] = await within(
      this.client`SELECT pg_try_advisory_lock(hashtextextended(${keyText(this.name)}, 0)) AS got, pg_backend_pid() AS pid,
        (SELECT backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid()) AS since`,
      this.opts.heartbeatMs,
    );
    if (!row.got) return "refused";
    if (this.closed) return false;
    this.lost = false;
    this.proven(sent);
    // The old holder's fenced writes still in flight end before this node goes on (bounded by the proof).
    const fence = fenceText(this.name);
    await within(this.client`SELECT pg_advisory_lock(hashtextextended(${fence}, 0))`, this.opts.graceMs);
    await within(this.client`SELECT pg_advisory_unlock(hashtextextended(${fence}, 0))`, this.opts.heartbeatMs);
    this.session = { pid: row.pid, since: row.since };
    return !this.lost;
  }

  /** Holds until the lease is lost or closed: waits the grace, starts, proves every heartbeat. */
  private async hold(): Promise<void> {
    const startAt = performance.now() + this.opts.graceMs;
    while (!this.lost) {
      const now = performance.now();
      if (!this.started && now >= startAt) {
        this.logger.info("lease: taken, starting", { lease: this.name });
        this.started = Promise.resolve().then(() => this.work.start(this));
        this.started.catch((err) => this.logger.error("lease: start failed", { lease: this.name, error: String(err) }));
      }
      await this.sleep(this.started ? this.opts.heartbeatMs : Math.min(this.opts.heartbeatMs, startAt - now));
      if (this.lost) return;
      const sent = performance.now();
      const held = await this.prove().catch(() => false);
      if (!held) return this.lose("not proven");
      this.proven(sent);
    }
  }

  async fence(tx: PgTx): Promise<void> {
    const session = this.session;
    if (this.lost || !session) throw new LeaseLost(this.name);
    await tx.$client.query("SELECT pg_advisory_xact_lock_shared(hashtextextended(?1, 0))").run(fenceText(this.name));
    const row = await tx.$client
      .query<{ held: number }>(
        `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND ((l.classid::int8 << 32) | l.objid::int8) = hashtextextended(?1, 0)
        AND l.pid = ?2 AND a.backend_start::text = ?3) AS held`,
      )
      .get(keyText(this.name), session.pid, session.since);
    // A boolean comes back as 1/0 through the handle, as SQLite would give it.
    if (!row?.held) throw new LeaseLost(this.name);
  }

  /** True when this connection's session still holds the lock. */
  private async prove(): Promise<boolean> {
    const [row] = await within(
      this.client!`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
        AND objsubid = 1 AND ((classid::int8 << 32) | objid::int8) = hashtextextended(${keyText(this.name)}, 0)) AS held`,
      this.opts.heartbeatMs,
    );
    return row.held === true;
  }

  /** A proof sent at `sent` lets the work run until sent + grace: stopping starts a stop budget before. */
  private proven(sent: number): void {
    if (this.deadline) clearTimeout(this.deadline);
    const ms = sent + this.opts.graceMs - this.opts.stopBudgetMs - performance.now();
    this.deadline = setTimeout(() => this.lose("proof ran out"), Math.max(0, ms));
  }

  /** The lease can no longer be proven: the work stops now (not after a hung query). */
  private lose(reason: string): void {
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = null;
    if (this.lost) return;
    this.lost = true;
    this.wake?.();
    if (this.started && !this.stopping) {
      // Closing is said too (at info), so that a node's log tells every run's start and end.
      this.logger[reason === "closed" ? "info" : "warn"]("lease: lost, stopping", { lease: this.name, reason });
      this.stopping = this.started
        .catch(() => {})
        .then(() => this.work.stop())
        .catch((err) => this.logger.error("lease: stop failed", { lease: this.name, error: String(err) }));
    }
  }

  /** Ends the session (so the server frees the lock, if it still held it), after the work stopped. */
  private async drop(): Promise<void> {
    this.session = null;
    const client = this.client;
    this.client = null;
    if (!client) return;
    // Unlocked first while the session still answers: on a bare close the server frees the lock
    // only once it notices the socket closed, a moment after close() has resolved.
    await within(client`SELECT pg_advisory_unlock_all()`, this.opts.heartbeatMs).catch(() => {});
    await client.close({ timeout: 0 }).catch(() => {});
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    }).finally(() => (this.wake = null));
  }
}
