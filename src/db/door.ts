// The SQLite side of the store (src/core/store.ts): one "door" per database file. Every database
// access of the service goes through a door, asynchronously:
// - write(fn): one writer per file at a time, behind an async lock; BEGIN IMMEDIATE takes SQLite's
//   write lock up front, so a read-then-write never fails half way with SQLITE_BUSY; `fn` may
//   await (the lock is held until COMMIT or ROLLBACK). The write resolves once its commit is on
//   disk: the WAL is fsynced off the event loop, one fsync for every commit made meanwhile.
// - read(fn): runs on a second connection that never writes. With WAL it sees the last committed
//   state, so no request reads the uncommitted rows of a write transaction that is awaiting
//   something on the writer connection.
// - writeGrouped(fn): writes queued within one turn of the event loop share one transaction, each
//   in its own savepoint; every promise settles after the COMMIT has reached the disk.
import type { Database, Statement } from "bun:sqlite";
import { closeSync, fdatasync, fstatSync, openSync } from "node:fs";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { unavailable } from "../lib/problem";
import type { Logger } from "../lib/log";
import type { Checkpointer, CheckpointDone } from "./checkpointer";
import { openSqlite } from "./sqlite";
import { hasSearchNotes, indexNoted, markSearchDeferred } from "./search-pending";

/** How long a write waits for a database's write lock (SQLite's own busy timeout is as long). */
const LOCK_WAIT_MS = 10_000;

/** A read joins a read epoch (see `SqliteDoor.read`) at most this long after its BEGIN. */
const EPOCH_MS = 5;

export type SqliteHandle = BunSQLiteDatabase & { $client: Database };

/** Bounds one grouped transaction (and so the wait of the write queued last in it). */
const MAX_GROUP = 64;

/**
 * With a checkpointer (src/db/checkpointer.ts), a door's commits are checkpointed by its thread
 * at most CHECKPOINT_MS after the first commit since the last checkpoint, and at once when the WAL
 * file grows CHECKPOINT_BYTES past its size at the last one (SQLite's own autocheckpoint: 1,000
 * pages, ≈ 4 MB).
 */
const CHECKPOINT_MS = 1000;
const CHECKPOINT_BYTES = 4 << 20;
/**
 * The WAL is started over (the second pass, below) once it holds this many frames, as SQLite's
 * autocheckpoint would: each start writes a new WAL header, which SQLite fsyncs inside the next
 * COMMIT, on the event loop.
 */
const RESTART_FRAMES = 1000;

/** fdatasync on libuv's thread pool: the event loop goes on while the disk flushes. */
function fdatasyncOffLoop(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
}

interface GroupedJob {
  fn: (tx: SqliteHandle) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * A FIFO async mutex: acquire() resolves when the caller holds it. A wait is bounded: a write
 * started inside another write's callback on the same database waits for a lock its own caller
 * holds, and would otherwise hang both requests for ever (and every later write of the file).
 */
export class AsyncLock {
  private held = false;
  private waiters: { grant: () => void }[] = [];

  constructor(private waitMs: number) {}

  /** Takes the lock; returns null when it was free (no await needed), else a promise. */
  tryAcquire(): Promise<void> | null {
    if (!this.held) {
      this.held = true;
      return null;
    }
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(unavailable(`The database stayed busy for ${this.waitMs / 1000} s; try again`, 1));
      }, this.waitMs);
      this.waiters.push(waiter);
    });
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next.grant();
    else this.held = false;
  }

  get busy(): boolean {
    return this.held;
  }
}

export class SqliteDoor {
  /** Operations in flight; a door is closed only when none is (tenant handle eviction). */
  active = 0;
  /**
   * The idle clock's tick (src/db/tenants.ts) when a request last took this door; -1 while only
   * background sweeps have used it (they close what they opened).
   */
  usedAt = -1;
  private lock: AsyncLock;
  private readerHandle: SqliteHandle | null = null;
  private readBegin: Statement | null = null;
  private readCommit: Statement | null = null;
  /** Whether the read connection's transaction (the epoch, see `read`) is open. */
  private epochOpen = false;
  /** `commits` and the time when the epoch began: a read joins it only if neither moved on. */
  private epochCommits = 0;
  private epochStart = 0;
  /** Read callbacks that returned a promise and have not settled, whatever their epoch. */
  private readsInFlight = 0;
  /** Read callbacks whose synchronous part runs now (a read inside one joins its epoch). */
  private readDepth = 0;
  /** Whether a setImmediate will end the epoch after this turn. */
  private epochBound = false;
  /** Commits made by this door's writer: a read epoch begun before one is stale. */
  private commits = 0;
  private grouped: GroupedJob[] = [];
  private groupScheduled = false;
  private closed = false;
  /**
   * Whether the door makes commits durable itself (the writer is in WAL mode): its transactions
   * commit with synchronous=NORMAL (no fsync inside COMMIT, on the event loop) and a durable write
   * resolves after an fsync of the WAL made off the event loop. Null until the first write.
   */
  private walSync: boolean | null = null;
  /** A descriptor of the WAL file, for its fsync (no lock of SQLite's is on that file). */
  private walFd: number | null = null;
  /** Commits waiting for the next fsync, and whether one is running. */
  private syncWaiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  private syncing = false;
  /** Settles when the fsync running now ends (never rejects); null when none runs. */
  private syncRound: Promise<void> | null = null;
  /** How the WAL reaches the disk; a test replaces it to play a failing disk. */
  syncFile: (fd: number) => Promise<void> = fdatasyncOffLoop;
  /**
   * Set by a failed fsync of the WAL, cleared by a complete checkpoint (see `confirm`): Linux
   * reports a writeback error once, so a later fsync succeeding proves nothing about the frames
   * before it, and recovery after a power cut stops at the first frame that never reached the
   * disk. Meanwhile no durable write is acknowledged.
   */
  private unconfirmed = false;
  private logger: Logger | null;
  /** Background checkpoints: a timer armed by a commit, one in flight at a time. */
  private checkpointer: Checkpointer | null;
  private checkpointTimer: ReturnType<typeof setTimeout> | null = null;
  private checkpointing = false;
  private walHighWater = 0;

  private writerHandle: SqliteHandle | null;

  constructor(
    /**
     * The connection that writes (and that migrations and start-up work use), or how to open it on
     * the first write: a corporation only read costs one connection.
     */
    writer: SqliteHandle | (() => SqliteHandle),
    private path: string,
    {
      lockWaitMs = LOCK_WAIT_MS,
      /** Statements cached on the read connection (src/db/sqlite.ts). */
      statements = 2000,
      /** Runs the WAL checkpoints off the event loop; without it, SQLite's autocheckpoint runs in COMMIT. */
      checkpointer = null,
    }: { lockWaitMs?: number; statements?: number; checkpointer?: Checkpointer | null } = {},
  ) {
    this.checkpointer = checkpointer;
    this.logger = checkpointer?.logger ?? null;
    this.lock = new AsyncLock(lockWaitMs);
    this.statements = statements;
    this.writerHandle = typeof writer === "function" ? null : writer;
    this.openWriter = typeof writer === "function" ? writer : null;
  }

  private statements: number;
  private openWriter: (() => SqliteHandle) | null;
  /** Whether the file has the search index's notes (db/search-pending.ts); asked again after migrations. */
  private searchNotes: boolean | null = null;

  /** The connection that writes, opened on first use. */
  get writer(): SqliteHandle {
    if (!this.writerHandle) {
      if (this.closed) throw new Error("the database was closed");
      this.writerHandle = this.openWriter!();
    }
    return this.writerHandle;
  }

  /** The read connection, opened on the first read. */
  get reader(): SqliteHandle {
    if (!this.readerHandle) {
      if (this.closed) throw new Error("the database was closed");
      const client = openSqlite(this.path, { create: false, readonly: true, statements: this.statements });
      this.readerHandle = drizzle({ client }) as SqliteHandle;
      this.readBegin = client.prepare("BEGIN");
      this.readCommit = client.prepare("COMMIT");
    }
    return this.readerHandle;
  }

  /**
   * Reads share one read transaction on the read connection, an "epoch" (BEGIN … COMMIT): its
   * statements see one snapshot, and SQLite takes and drops the WAL read lock once instead of once
   * per statement (a primary-key read measured 3.8 µs alone, 2.8 µs inside one; two reads 7.1 →
   * 3.3 µs). `fn` runs in the open epoch, or begins one; an `fn` that returns a promise keeps it
   * open across its awaits, and the epoch ends (COMMIT) once no read callback is in flight, in the
   * microtask after the last one settles. A read that starts joins the open epoch only when the
   * door has made no commit since its BEGIN and it is younger than EPOCH_MS; otherwise the epoch
   * ends and a new one begins at once: a read always sees every commit of the door made before it
   * started (a client that wrote, then reads, sees its write). Callbacks still in flight go on in
   * the new snapshot: reads that finish with no commit in between saw one snapshot, the others
   * are read-committed (each epoch is a consistent state, later ones newer). An epoch never spans
   * a real wait: once the microtasks of the turn have run (setImmediate), an epoch still holding
   * callbacks in flight (awaiting a timer, the network, the disk) ends, and their next statements
   * run in autocommit or in the next epoch, so no await pins the WAL (checkpoints).
   * Commits the door does not make (the QR scan writer's thread, another process) are seen by the
   * next epoch: at most one turn of the event loop, and EPOCH_MS, later.
   */
  read<T>(fn: (db: SqliteHandle) => T | Promise<T>): Promise<T> {
    this.active++;
    let out: T | Promise<T>;
    try {
      out = this.inEpoch(fn);
    } catch (err) {
      this.active--;
      this.afterSyncPart();
      return Promise.reject(err);
    }
    // A synchronous read (the usual case on SQLite) settles at once: no async frame per call.
    if (!(out instanceof Promise)) {
      this.active--;
      this.afterSyncPart();
      return Promise.resolve(out);
    }
    this.readsInFlight++;
    this.afterSyncPart();
    return out.then(
      (value) => {
        this.readSettled();
        return value;
      },
      (err: unknown) => {
        this.readSettled();
        throw err;
      },
    );
  }

  /**
   * The synchronous form of `read`, for code that cannot await (a corporation's path, looked up
   * on the platform door): same epoch rule, so it sees every commit of the door made before it.
   */
  readSync<T>(fn: (db: SqliteHandle) => T): T {
    try {
      return this.inEpoch(fn);
    } finally {
      this.afterSyncPart();
    }
  }

  /** Runs `fn` in the open epoch when it may join it, else in a new one. */
  private inEpoch<T>(fn: (db: SqliteHandle) => T): T {
    const reader = this.reader;
    // A read inside the synchronous part of another (readDepth) always joins its snapshot.
    if (this.epochOpen && this.readDepth === 0 && (this.commits !== this.epochCommits || performance.now() - this.epochStart > EPOCH_MS)) this.endEpoch();
    if (!this.epochOpen) {
      try {
        this.readBegin!.run();
      } catch (err) {
        // Still in the transaction an earlier epoch could not end: end it now, once.
        if (!reader.$client.inTransaction) throw err;
        reader.$client.run("ROLLBACK");
        this.readBegin!.run();
      }
      this.epochOpen = true;
      this.epochCommits = this.commits;
      this.epochStart = 0; // stamped only if it outlives this synchronous part (afterSyncPart)
    }
    this.readDepth++;
    try {
      return fn(reader);
    } finally {
      this.readDepth--;
    }
  }

  /** Once a read's synchronous part is over: the epoch ends now, or is bounded, or goes on. */
  private afterSyncPart(): void {
    if (this.readDepth !== 0 || !this.epochOpen) return;
    if (this.readsInFlight === 0) {
      this.endEpoch();
      return;
    }
    if (this.epochStart === 0) this.epochStart = performance.now();
    if (!this.epochBound) {
      this.epochBound = true;
      setImmediate(this.endAfterTurn);
    }
  }

  private readSettled(): void {
    this.active--;
    if (--this.readsInFlight === 0 && this.readDepth === 0) this.endEpoch();
  }

  /** An epoch still holding callbacks in flight ends once the turn's microtasks have run (see `read`). */
  private readonly endAfterTurn = () => {
    this.epochBound = false;
    if (this.readDepth === 0) this.endEpoch();
  };

  private endEpoch(): void {
    if (!this.epochOpen) return;
    this.epochOpen = false;
    const client = this.readerHandle?.$client;
    if (!client || this.closed) return;
    try {
      this.readCommit!.run();
    } catch {
      // A read has nothing to keep: a transaction that refuses COMMIT is simply abandoned. Never
      // thrown from here (this may run in a setImmediate); the next BEGIN retries the ROLLBACK.
      // (A statement left unfinished does not make COMMIT fail; it keeps its snapshot after it:
      // see "read epochs" in docs/architecture.md.)
      try {
        if (client.inTransaction) client.run("ROLLBACK");
      } catch {}
    }
  }

  /**
   * Resolves once the commit is durable. The lock is released at COMMIT, so the next writes run
   * while this one's fsync is made (off the event loop), and one fsync serves every commit made
   * before it started. `durable: false` does not wait for it (nor, without WAL, make it): for
   * diagnostics whose loss on a power cut is acceptable (RADIUS authorize attempts), never for
   * acknowledged data; the next durable commit's fsync covers it.
   */
  async write<T>(fn: (tx: SqliteHandle) => T | Promise<T>, { durable = true }: { durable?: boolean } = {}): Promise<T> {
    this.active++;
    try {
      const wait = this.lock.tryAcquire();
      if (wait) await wait;
      let result: T;
      try {
        if (durable && this.unconfirmed) await this.confirm();
        result = await this.transaction(fn, durable);
      } finally {
        this.lock.release();
      }
      this.committed();
      if (durable && this.walSync) await this.synced();
      return result;
    } finally {
      this.active--;
    }
  }

  /**
   * Resolves after an fsync of the WAL that started after this call: every commit made before it
   * is on disk. Commits that arrive while an fsync runs wait for the next one, which serves them
   * all. A failed fsync rejects its waiters with a 503 whose `committedBy` is this door: their
   * writes are committed but not known to be on disk, so they are not acknowledged (the store
   * still runs their after-commit steps). It leaves the door unconfirmed (see `confirm`): the
   * waiters of later fsyncs are refused the same way until a checkpoint has made the WAL durable.
   */
  private synced(): Promise<void> {
    this.active++;
    return new Promise<void>((resolve, reject) => {
      this.syncWaiters.push({ resolve, reject });
      if (!this.syncing) void this.runSyncs();
    }).finally(() => this.active--);
  }

  private async runSyncs(): Promise<void> {
    this.syncing = true;
    try {
      while (this.syncWaiters.length) {
        const waiters = this.syncWaiters;
        this.syncWaiters = [];
        try {
          // The WAL exists: a commit was just made on the open writer, and it is deleted only
          // when the last connection closes (close() waits for the fsyncs in flight).
          this.walFd ??= openSync(`${this.path}-wal`, "r");
          const round = this.syncFile(this.walFd);
          this.syncRound = round.then(
            () => undefined,
            () => undefined,
          );
          try {
            await round;
          } finally {
            this.syncRound = null;
          }
          if (this.unconfirmed) throw new Error("an earlier fsync of the WAL failed");
          for (const w of waiters) w.resolve();
          // A WAL growing past its usual size is checkpointed now rather than at the timer.
          if (this.checkpointer && !this.checkpointing && !this.closed && fstatSync(this.walFd).size > this.walHighWater + CHECKPOINT_BYTES) this.checkpoint(true);
        } catch (err) {
          const problem = unavailable(`The write could not be confirmed on disk (${(err as Error)?.message ?? err}); it is not acknowledged, check and try again`, 1);
          // Not enumerable: never serialized with the problem.
          Object.defineProperty(problem, "committedBy", { value: this });
          if (!this.unconfirmed) this.logger?.error("an fsync of the WAL failed: durable writes are refused until a checkpoint has copied the WAL into the database", { path: this.path, error: String(err) });
          this.unconfirmed = true;
          for (const w of waiters) w.reject(problem);
        }
      }
    } finally {
      this.syncing = false;
      if (this.closed) this.closeWalFd();
    }
  }

  /**
   * Before a durable write of an unconfirmed door, under the write lock: a checkpoint that copies
   * the whole WAL into the database and fsyncs it (SQLite marks frames copied only after that
   * fsync) makes every commit so far durable whatever became of the WAL's pages, and the door is
   * confirmed again; otherwise the write is refused, uncommitted. Reopening the door also
   * recovers (the last connection's close checkpoints the WAL).
   */
  private async confirm(): Promise<void> {
    let done: CheckpointDone;
    if (this.checkpointer) done = await this.checkpointer.checkpointNow(this.path);
    else {
      try {
        // The writer is at synchronous=FULL here: the checkpoint fsyncs the WAL and the database.
        done = { id: 0, ok: true, ...(this.writer.$client.query("PRAGMA wal_checkpoint(PASSIVE)").get() as { busy: number; log: number; checkpointed: number }) };
      } catch (err) {
        done = { id: 0, ok: false, error: String(err) };
      }
    }
    if (!done.ok || done.busy !== 0 || done.checkpointed !== done.log) {
      throw unavailable("An earlier write could not be confirmed on disk, and the database could not be checkpointed yet; writes are refused meanwhile, try again", 1);
    }
    this.unconfirmed = false;
    this.logger?.info("the WAL is checkpointed after a failed fsync: durable writes are accepted again", { path: this.path });
  }

  /** After each commit of the door: a checkpoint within CHECKPOINT_MS. */
  private committed(): void {
    if (!this.checkpointer || !this.walSync || this.checkpointTimer || this.checkpointing) return;
    this.checkpointTimer = setTimeout(() => this.checkpoint(false), CHECKPOINT_MS);
    (this.checkpointTimer as { unref?: () => void }).unref?.();
  }

  /**
   * A checkpoint on the checkpointer's thread, in up to two PASSIVE passes: the first copies the
   * WAL's frames into the database while writes go on; when the WAL holds RESTART_FRAMES or more,
   * or grew (`grew`), the second, under the write lock (writes wait, the event loop does not;
   * the lock is taken once the thread is free for this pass), copies the frames committed
   * meanwhile, so that the WAL is wholly in the database and the next transaction starts it over
   * (under steady writes a checkpoint that runs beside them is never complete, and the WAL would
   * grow without end). The door stays open
   * meanwhile (`active`): a corporation's file is moved or deleted only with its WAL checkpointed
   * by the last connection's close. A failed checkpoint gives the job back to SQLite
   * (autocheckpoint on the writer).
   */
  private checkpoint(grew: boolean): void {
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    this.checkpointTimer = null;
    const checkpointer = this.checkpointer;
    if (!checkpointer || this.checkpointing || this.closed) return;
    this.checkpointing = true;
    this.active++;
    if (this.walFd !== null) this.walHighWater = fstatSync(this.walFd).size;
    // The commits made after the last pass began are not in the database: they arm the next one.
    let covered = this.commits;
    const passes = async () => {
      const first = await checkpointer.checkpoint(this.path);
      // Even a first pass that copied every frame it saw missed the commits made during it.
      if (!first.ok || this.closed || (!grew && first.log < RESTART_FRAMES)) return first;
      // The write lock is taken once the checkpointer's thread is free for this pass, not while
      // it works for other databases (writes would wait for those too).
      let locked = false;
      const ready = async () => {
        const wait = this.lock.tryAcquire();
        if (wait) await wait;
        locked = true;
        if (this.closed) throw new Error("the database was closed");
        covered = this.commits;
      };
      try {
        return await checkpointer.whenReady(this.path, "PASSIVE", ready);
      } catch {
        return first; // closed, or a write held the lock for 10 s: the next checkpoint tries again
      } finally {
        if (locked) this.lock.release();
      }
    };
    void passes()
      .catch((err: unknown) => ({ ok: false as const, error: String(err) }))
      .then((done) => {
        this.checkpointing = false;
        this.active--;
        if (!done.ok && !this.closed) {
          this.checkpointer = null;
          this.writerHandle?.$client.exec("PRAGMA wal_autocheckpoint = 1000");
        } else if (!this.closed && this.commits !== covered) this.committed();
      });
  }

  /**
   * Runs `fn` on the writer while holding the write lock, outside any transaction of the door's
   * (Drizzle's migrator opens its own): corporation migrations while the app serves.
   */
  async exclusive<T>(fn: (writer: SqliteHandle) => T): Promise<T> {
    this.active++;
    try {
      const wait = this.lock.tryAcquire();
      if (wait) await wait;
      try {
        if (this.closed) throw new Error("the database was closed");
        // Migrations are writes too: not on top of commits not yet known to be on disk.
        if (this.unconfirmed) await this.confirm();
        return fn(this.writer);
      } finally {
        this.searchNotes = null;
        this.commits++; // migrations commit on the writer: read epochs begun before are stale
        this.lock.release();
      }
    } finally {
      this.active--;
    }
  }

  /**
   * `write` for bursts of small writes (the external-app upsert, metric values): the writes queued
   * in one turn — or while the door's fsync runs — share ONE transaction, each in a savepoint in
   * arrival order (so each sees the ones before it, and a failing one rolls back alone). Promises
   * settle after the COMMIT's fsync: an acknowledged write is durable. If BEGIN, COMMIT or the
   * fsync fails, every write of the group rejects.
   */
  writeGrouped<T>(fn: (tx: SqliteHandle) => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.grouped.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.groupScheduled) {
        this.groupScheduled = true;
        this.active++;
        setImmediate(() => void this.flushGroups());
      }
    });
  }

  private async flushGroups(): Promise<void> {
    try {
      while (this.grouped.length) {
        // While an fsync runs, the writes arriving join the queue: one transaction and one fsync
        // for all of them when it ends (committing now would only wait for the next fsync, and
        // smaller groups cost more CPU per write: measured on metric values).
        if (this.syncRound) await this.syncRound;
        const jobs = this.grouped.splice(0, MAX_GROUP);
        const wait = this.lock.tryAcquire();
        if (wait) {
          try {
            await wait;
          } catch (error) {
            for (const job of jobs) job.reject(error);
            continue;
          }
        }
        let outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[];
        try {
          if (this.unconfirmed) await this.confirm();
          outcomes = await this.transaction(async (tx) => {
            const out: typeof outcomes = [];
            const client = tx.$client;
            // The persons' and contracts' search index entries are written once, at the end
            // (db/search-pending.ts): not as a segment per table at every write's savepoint.
            const notes = (this.searchNotes ??= hasSearchNotes(client));
            if (notes) markSearchDeferred(client);
            // Compiled once per writer (run(sql) compiles each time: ≈ 1.5 µs a write).
            const savepoint = client.query("SAVEPOINT grouped");
            const release = client.query("RELEASE grouped");
            for (const job of jobs) {
              savepoint.run();
              try {
                const value = await job.fn(tx);
                release.run();
                out.push({ ok: true, value });
              } catch (error) {
                client.run("ROLLBACK TO grouped");
                release.run();
                out.push({ ok: false, error });
              }
            }
            if (notes) indexNoted(client);
            return out;
          }, true);
        } catch (error) {
          for (const job of jobs) job.reject(error);
          continue;
        } finally {
          this.lock.release();
        }
        this.committed();
        const settle = (syncError: unknown) =>
          jobs.forEach((job, i) => {
            const o = outcomes[i];
            if (!o.ok) job.reject(o.error);
            else if (syncError) job.reject(syncError);
            else job.resolve(o.value);
          });
        // Settled by this commit's fsync; the next group waits for it at the top of the loop.
        if (this.walSync) this.synced().then(() => settle(null), settle);
        else settle(null);
      }
    } finally {
      this.groupScheduled = false;
      this.active--;
    }
  }

  /**
   * BEGIN IMMEDIATE … COMMIT on the writer; the caller holds the lock. The COMMIT fsyncs only
   * without WAL and when `durable`; otherwise synchronous=NORMAL for this transaction (WAL keeps
   * the file consistent whatever happens; the door's fsync, `synced`, makes it durable). Outside
   * the door's transactions the writer stays at FULL: migrations and start-up work write on it
   * directly.
   */
  private async transaction<T>(fn: (tx: SqliteHandle) => T | Promise<T>, durable: boolean): Promise<T> {
    if (this.closed) throw new Error("the database was closed");
    const client = this.writer.$client;
    if (this.walSync === null) {
      this.walSync = (client.query("PRAGMA journal_mode").get() as { journal_mode: string } | null)?.journal_mode === "wal";
      if (this.walSync && this.checkpointer) client.exec("PRAGMA wal_autocheckpoint = 0");
    }
    const normal = this.walSync || !durable;
    if (normal) client.exec("PRAGMA synchronous = NORMAL");
    try {
      client.run("BEGIN IMMEDIATE");
      try {
        const result = await fn(this.writer);
        client.run("COMMIT");
        this.commits++;
        return result;
      } catch (err) {
        if (client.inTransaction) client.run("ROLLBACK");
        throw err;
      }
    } finally {
      if (normal) client.exec("PRAGMA synchronous = FULL");
    }
  }

  /**
   * Housekeeping of the file itself. `checkpoint`: copy the WAL into the database and truncate it
   * (gives back the space a large prune wrote into it); it has to wait for readers in other
   * processes (a backup), one second at most instead of the usual ten, and a busy result is simply
   * retried next time. `optimize`: PRAGMA optimize. Runs under the write lock.
   */
  async maintain({ checkpoint, optimize }: { checkpoint: boolean; optimize: boolean }): Promise<{ checkpointed: boolean; optimized: boolean }> {
    this.active++;
    const checkpointer = this.checkpointer;
    let locked = false;
    const lock = async () => {
      const wait = this.lock.tryAcquire();
      if (wait) await wait;
      locked = true;
    };
    try {
      try {
        let checkpointed = false;
        if (checkpoint && checkpointer) {
          // On the checkpointer's thread; no write of the door runs meanwhile (the lock, taken
          // once the thread is free for this checkpoint).
          const done = await checkpointer.whenReady(this.path, "TRUNCATE", lock);
          checkpointed = done.ok && done.busy === 0;
        }
        if (!locked) await lock();
        const client = this.writer.$client;
        if (checkpoint && !checkpointer) {
          client.exec("PRAGMA busy_timeout = 1000");
          try {
            checkpointed = (client.query("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy: number } | null)?.busy === 0;
          } finally {
            client.exec("PRAGMA busy_timeout = 10000");
          }
        }
        if (optimize) {
          client.exec("PRAGMA optimize");
          this.commits++;
        }
        return { checkpointed, optimized: optimize };
      } finally {
        if (locked) this.lock.release();
      }
    } finally {
      this.active--;
    }
  }

  /**
   * VACUUM INTO `target` on the read connection: the last committed state, while writes go on.
   * Not inside `read`'s epoch, whose transaction VACUUM refuses; query_only (which refuses VACUUM INTO, as
   * it writes the target through this connection) is lifted for this one synchronous statement,
   * so no other read runs on the connection meanwhile.
   */
  async copyTo(target: string): Promise<void> {
    if (this.closed) throw new Error("the database was closed");
    const client = this.reader.$client;
    // VACUUM refuses to run in a transaction: reads in flight go on in the next epoch.
    this.endEpoch();
    client.exec("PRAGMA query_only = OFF");
    try {
      client.query("VACUUM INTO ?1").run(target);
    } finally {
      client.exec("PRAGMA query_only = ON");
    }
  }

  /** True while a write holds the lock, writes wait to be grouped, or commits wait for their fsync. */
  get writing(): boolean {
    return this.lock.busy || this.groupScheduled || this.syncing;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** True when nothing is in flight and no write waits: the door may be closed. */
  get idle(): boolean {
    return this.active === 0 && !this.writing;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.epochOpen = false; // closing the read connection rolls its transaction back
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    this.checkpointTimer = null;
    // throwOnError: every statement still cached is finalized and the connection released now;
    // without it the connection lives on (with its schema and caches) until each statement is
    // garbage collected, and closed corporations pile up in memory between collections.
    try {
      this.readerHandle?.$client.close(true);
    } finally {
      this.writerHandle?.$client.close(true);
      this.closeWalFd();
    }
  }

  /**
   * Now, or by the fsyncs still in flight when they are done (they go on with the same descriptor:
   * a WAL deleted meanwhile was checkpointed, with fsyncs, by the last connection's close).
   */
  private closeWalFd(): void {
    if (this.syncing || this.walFd === null) return;
    closeSync(this.walFd);
    this.walFd = null;
  }
}
