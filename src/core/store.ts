// The one door into the database. Every module reads and writes through the store, asynchronously:
//
//   await ctx.store.platform.read((db) => ...)            the platform database
//   await ctx.store.tenant(corpId).write(async (tx, w) => { ...; w.emit(...) })
//
// The engine behind it (today SQLite, src/db/door.ts) guarantees: one writer per database at a
// time, the write lock taken up front, no read ever sees another request's uncommitted rows, and a
// write that resolved is durable. The write-plus-event path is here and only here: `w.emit` writes
// the outbox row in the write's own transaction (its payload built just before COMMIT, from the
// state the write produced), and the event bus is told after the COMMIT so that the webhook
// dispatcher and open sockets wake at once. A failed write rolls back whole and emits nothing.
import type { SqliteDoor, SqliteHandle } from "../db/door";
import { sqliteClientOf, type AnyDb, type PlatformDb, type TenantDb } from "../db/sqlite";
import type { TenantDbs } from "../db/tenants";
import { recordEvent, type EventBus, type EventGroup } from "./events";
import { ChangeLog, type ChangeInput, type ChangeRecorder } from "./history";

/**
 * What a write callback is handed besides its transaction handle; `record` (core/history.ts
 * ChangeRecorder) records a record's Change in this write's transaction.
 */
export interface WriteScope extends ChangeRecorder {
  /** Runs after the COMMIT (caches to forget, wake-ups), even when its fsync failed; never when the write rolled back. */
  afterCommit(fn: () => void): void;
}

export interface TenantWriteScope extends WriteScope {
  readonly corpId: string;
  /**
   * Records an event of this write: the outbox row is inserted in the same transaction. `data` is
   * the record as its GET returns it, or a function that builds it from the transaction just
   * before COMMIT (after every change of the write).
   */
  emit(type: EventGroup, recordId: string, data: unknown | ((tx: TenantDb) => unknown | Promise<unknown>)): void;
  /**
   * The write runs side by side with other writes of its group (Door.writeGrouped `independent`,
   * PostgreSQL only): before changing a record its `keys` did not name, it throws `RunsAlone`.
   */
  readonly besideOthers?: boolean;
}

/**
 * Thrown by a grouped write running beside others (`besideOthers`) that must change a record it
 * did not name in its keys: its group is rolled back and runs again one write at a time, where it
 * does not throw this.
 */
export class RunsAlone extends Error {
  constructor() {
    super("this write must run alone in its group");
  }
}

export interface Door<H, S extends WriteScope> {
  /** Reads the last committed state; `fn` may await. */
  read<T>(fn: (db: H) => T | Promise<T>): Promise<T>;
  /**
   * One transaction, holding the database's write lock from its start; `fn` may await.
   * `durable: false`: the commit may be lost on a power cut (never for acknowledged data).
   * `exclusive: false`: on PostgreSQL the writer lock is not taken, for a write of one statement
   * that is atomic alone (an upsert of a counter) and must not queue behind every other writer of
   * the database across nodes; SQLite has one writer whatever is asked.
   * `logOnly: true`: the write changes only rows that lists and reports read and no cache keyed
   * by `stateStampNow` holds (RADIUS attempts, accounting records with their sessions, usage and
   * NAS health columns, metric values); on PostgreSQL it moves the stamp but not the state stamp.
   * SQLite's change stamp moves with every write.
   */
  write<T>(fn: (tx: H, scope: S) => T | Promise<T>, options?: { durable?: boolean; exclusive?: boolean; logOnly?: boolean }): Promise<T>;
  /**
   * `write` sharing one transaction with the writes queued in the same turn (group commit).
   * `independent: true`: the write neither reads what another write of the group may change nor
   * changes what another reads (an insert of a value after reading its metric): on PostgreSQL
   * such writes of a group run side by side, their statements pipelined on the transaction's
   * connection with no savepoint each (should one fail, the group runs again one write at a time,
   * each in its savepoint). SQLite runs them one after another as any grouped write.
   * `keys` (with `independent`): the records the write may change, named; it is then independent
   * only of the group's writes that name none of them (an earlier one that does runs first), and
   * it may throw `RunsAlone` where it finds it must change something it did not name.
   * `logOnly` as for `write` (a group is log-only when every write of it is).
   */
  writeGrouped<T>(fn: (tx: H, scope: S) => T | Promise<T>, options?: { independent?: boolean; keys?: readonly string[]; logOnly?: boolean }): Promise<T>;
  /** Housekeeping of the database itself (SQLite: WAL checkpoint, PRAGMA optimize). */
  maintain(what: { checkpoint: boolean; optimize: boolean }): Promise<{ checkpointed: boolean; optimized: boolean }>;
  /** A consistent copy of the last committed state into a new file, without the write lock (backups). */
  copyTo(target: string): Promise<void>;
  /**
   * The change stamp a read begun now would see (src/db/change-stamp.ts readStamp), where it is
   * known without reading: PostgreSQL's generation (src/db/pg/generations.ts), so a cached answer
   * needs no transaction. SQLite's stamp is read on the read connection: not given.
   */
  stampNow?(): number;
  /**
   * As `stampNow`, the stamp that log-only writes do not move (src/db/change-stamp.ts
   * readStateStamp): for caches of what no log holds. PostgreSQL only.
   */
  stateStampNow?(): number;
}

export type PlatformDoor = Door<PlatformDb, WriteScope>;
export type TenantDoor = Door<TenantDb, TenantWriteScope>;

class Scope implements TenantWriteScope {
  private after: (() => void)[] = [];
  private events: { type: EventGroup; recordId: string; data: unknown }[] = [];
  // Made when the write is asked for: the actor is the asker's, whoever's turn runs the write.
  private changes = new ChangeLog();

  constructor(
    readonly corpId: string,
    private bus: EventBus | null,
  ) {}

  record(change: ChangeInput): void {
    this.changes.record(change);
  }

  afterCommit(fn: () => void): void {
    this.after.push(fn);
  }

  emit(type: EventGroup, recordId: string, data: unknown): void {
    if (!this.bus) throw new Error("events belong to a corporation database");
    this.events.push({ type, recordId, data });
  }

  /** Inside the transaction, after the callback: the outbox rows. */
  async flush(tx: TenantDb): Promise<void> {
    await this.changes.flush(tx, this.bus === null);
    for (const e of this.events) await recordEvent(tx, e.type, e.recordId, typeof e.data === "function" ? await (e.data as (tx: TenantDb) => unknown)(tx) : e.data);
  }

  /** After the COMMIT. */
  committed(): void {
    if (this.events.length) this.bus!.committed(this.corpId);
    for (const fn of this.after) {
      try {
        fn();
      } catch {
        // An after-commit step must not turn a committed write into a failed request.
      }
    }
  }
}

class ScopedDoor<H, S extends WriteScope> implements Door<H, S> {
  constructor(
    private current: SqliteDoor,
    private corpId: string,
    private bus: EventBus | null,
    /** Reopens a corporation's door that was closed while this was held (idle); null: the platform's. */
    private reopen: ((corpId: string) => SqliteDoor) | null = null,
  ) {}

  /** The open door: a corporation's closed for idleness is opened again (its deletion throws). */
  private get door(): SqliteDoor {
    const d = this.current;
    return d.isClosed && this.reopen ? (this.current = this.reopen(this.corpId)) : d;
  }

  read<T>(fn: (db: H) => T | Promise<T>): Promise<T> {
    let door: SqliteDoor;
    try {
      door = this.door;
    } catch (err) {
      return Promise.reject(err);
    }
    return door.read(fn as (db: SqliteHandle) => T | Promise<T>);
  }

  write<T>(fn: (tx: H, scope: S) => T | Promise<T>, options?: { durable?: boolean; exclusive?: boolean; logOnly?: boolean }): Promise<T> {
    return this.scoped(fn, (door, body) => door.write(body, options));
  }

  async maintain(what: { checkpoint: boolean; optimize: boolean }) {
    return this.door.maintain(what);
  }

  copyTo(target: string): Promise<void> {
    return this.door.copyTo(target);
  }

  writeGrouped<T>(fn: (tx: H, scope: S) => T | Promise<T>): Promise<T> {
    return this.scoped(fn, (door, body) => door.writeGrouped(body));
  }

  /** One write of `fn` with its scope: events flushed before COMMIT, after-commit steps after it. */
  private async scoped<T>(fn: (tx: H, scope: S) => T | Promise<T>, run: (door: SqliteDoor, body: (tx: SqliteHandle) => Promise<T>) => Promise<T>): Promise<T> {
    const scope = new Scope(this.corpId, this.bus);
    const door = this.door;
    const result = await run(door, async (tx) => {
      const out = await fn(tx as unknown as H, scope as unknown as S);
      await scope.flush(tx as unknown as TenantDb);
      return out;
    }).catch((err: unknown) => afterUnconfirmed(door, scope, err));
    scope.committed();
    return result;
  }
}

/**
 * A write rejected after its COMMIT (the engine could not confirm it on disk: a 503 whose
 * `committedBy` is the door that made the commit) still changed the database: its after-commit
 * steps run (caches forget, the bus wakes), then the rejection goes on. An error of another door
 * that the callback let through rolled this write back: nothing runs.
 */
function afterUnconfirmed(door: SqliteDoor, scope: Scope, err: unknown): never {
  if ((err as { committedBy?: unknown } | null)?.committedBy === door) scope.committed();
  throw err;
}

/** The store of one app: the platform database and one database per corporation. */
export class Store {
  readonly platform: PlatformDoor;
  private requestDoor = (corpId: string) => this.tenants.door(corpId);
  private sweepDoor = (corpId: string) => this.tenants.door(corpId, false);
  // One TenantDoor per open database and kind of use: callers key buffers by it (isp/jobs.ts).
  private requestDoors = new WeakMap<SqliteDoor, TenantDoor>();
  private sweepDoors = new WeakMap<SqliteDoor, TenantDoor>();

  constructor(
    platformDoor: SqliteDoor,
    private tenants: TenantDbs,
    private bus: EventBus,
  ) {
    this.platform = new ScopedDoor<PlatformDb, WriteScope>(platformDoor, "", null);
  }

  /**
   * The door of a corporation's database for a request (opened on demand, kept open while
   * requests use it). A door closed while held (idle) reopens on its next use.
   */
  tenant(corpId: string): TenantDoor {
    return this.scoped(this.requestDoor(corpId), corpId, this.requestDoors, this.requestDoor);
  }

  /**
   * The door for one piece of background work (a collected metric value, webhook outcomes): it
   * does not keep the database open; one no request takes is closed at the idle clock's next tick.
   */
  background(corpId: string): TenantDoor {
    return this.scoped(this.sweepDoor(corpId), corpId, this.sweepDoors, this.sweepDoor);
  }

  private scoped(door: SqliteDoor, corpId: string, known: WeakMap<SqliteDoor, TenantDoor>, reopen: (corpId: string) => SqliteDoor): TenantDoor {
    let scoped = known.get(door);
    if (!scoped) {
      scoped = new ScopedDoor<TenantDb, TenantWriteScope>(door, corpId, this.bus, reopen);
      known.set(door, scoped);
    }
    return scoped;
  }

  /**
   * A background sweep's visit to one corporation (webhooks, metrics, housekeeping, backups): the
   * door is closed after `fn` when the visit opened it and no request took it meanwhile, so a
   * sweep over every corporation leaves memory as it found it.
   */
  async visit<T>(corpId: string, fn: (tenant: TenantDoor) => Promise<T> | T): Promise<T> {
    const door = this.background(corpId);
    try {
      return await fn(door);
    } finally {
      this.tenants.release(corpId);
    }
  }
}

/**
 * Whether each statement on this handle is a round trip to a database server (PostgreSQL), so a
 * caller batches reads it would otherwise make one by one; on SQLite a statement is a function
 * call and a batch costs more than it saves. Asked of the door, not of the engine, by modules.
 */
export function statementsAreRoundTrips(handle: AnyDb): boolean {
  return sqliteClientOf(handle) === null;
}
