// Cluster mode (issue 19): the PostgreSQL side of the store, the Door contract of src/core/store.ts
// for one corporation over the shared, row-secured tables of src/db/pg/tenant.ts (and for the
// platform tables, which have no policy). Not wired to the app yet; docs/architecture.md, "Cluster mode".
// Callbacks get the same `Handle` (src/db/handle.ts) as on SQLite: the modules' SQLite-dialect
// queries, translated and run on the transaction's connection (./handle.ts, ./translate.ts).
// - read(fn): a REPEATABLE READ READ ONLY transaction (one snapshot, as on SQLite) whose first
//   statement sets `corpadmin.corp_id` for this transaction only (set_config(..., true), i.e.
//   SET LOCAL: right behind pgbouncer in transaction mode too). The policies then show this
//   corporation's rows and nothing else.
// - write(fn): a transaction that also takes pg_advisory_xact_lock on the corporation: one writer per
//   corporation across every app node, as one SQLite writer per file is today. Released by COMMIT
//   or ROLLBACK, also when the node dies (its connection ends).
// - writeGrouped(fn): the writes of one corporation queued in the same turn share one transaction,
//   each in a savepoint (a failing one rolls back alone); every promise settles after the COMMIT.
// - events: `w.emit` inserts the outbox row in the transaction, and the transaction ends with
//   pg_notify(EVENTS_CHANNEL, origin + corpId): PostgreSQL delivers a NOTIFY at COMMIT and drops it on
//   ROLLBACK, so other nodes learn of committed events only. The local EventBus is told after COMMIT.
// Connections come from one Bun.sql pool (Bun.sql over postgres.js: measured with less client CPU
// per transaction, no dependency, and LISTEN built in; it has no multi-host option, so a cluster
// is reached through HAProxy, as issue 19's deployment plans).
import type { SQL } from "bun";
import type { Door, WriteScope } from "../store";
import type { EventBus, EventGroup, EventPayload } from "../events";
import { ChangeLog, currentActor, HISTORY_MAX_ROWS, HISTORY_WIDTH, historyInsertSql, type Actor, type ChangeInput } from "../history";
import { newId } from "../../lib/ids";
import { notFound, unavailable } from "../../lib/problem";
import { nowIso } from "../../lib/time";
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import type { Handle } from "../../db/handle";
import { newStamp, registerReadStamp } from "../../db/change-stamp";
import { Generations, TENANT_LOG_WRITES_TOPIC, TENANT_WRITES_TOPIC } from "../../db/pg/generations";
import { CORP_SETTING, pgHandle, unavailableOf } from "../../db/pg/handle";
import * as platformSchema from "../../db/pg/platform";
import * as tenantSchema from "../../db/pg/tenant";

const tableNames = (schema: Record<string, unknown>) => (Object.values(schema) as unknown[]).filter((v): v is PgTable => is(v, PgTable)).map((t) => getTableConfig(t).name);
const tenantTableNames = tableNames(tenantSchema);
const platformTableNames = tableNames(platformSchema);

/**
 * The channel a committed write with events notifies; the payload is "origin\ncorpId", the origin
 * being the writing node's id (ctx.nodeId; empty when none was given), so that the node's own
 * feed skips what its door has already told its bus (./feed.ts).
 */
export const EVENTS_CHANNEL = "corpadmin_events";
/**
 * The channel of cache invalidations (./feed.ts); the payload is "origin\ntopic\nkey". Every
 * write of a corporation notifies TENANT_WRITES_TOPIC on it (./generations.ts).
 */
export const CHANGES_CHANNEL = "corpadmin_changes";

/** A NOTIFY payload of EVENTS_CHANNEL. */
export const eventsPayload = (origin: string, corpId: string) => `${origin}\n${corpId}`;
/** A NOTIFY payload of CHANGES_CHANNEL. */
export const changesPayload = (origin: string, topic: string, key: string) => `${origin}\n${topic}\n${key}`;

/** Bounds one grouped transaction (and so the wait of the write queued last in it), as on SQLite. */
const MAX_GROUP = 64;

/** How long a write waits for its corporation's writer lock, as the SQLite door (src/db/door.ts). */
const LOCK_WAIT_MS = 10_000;

/** The handle a callback gets: the modules' handle over the connection of its transaction. */
export type PgTx = Handle;

export interface PgTenantWriteScope extends WriteScope {
  readonly corpId: string;
  /**
   * Records an event of this write: the outbox row is inserted in the same transaction. `data` is
   * the record as its GET returns it, or a function that builds it from the transaction just
   * before COMMIT (after every change of the write).
   */
  emit(type: EventGroup, recordId: string, data: unknown | ((tx: PgTx) => unknown | Promise<unknown>)): void;
  /** Runs side by side with other writes of its group (core/store.ts TenantWriteScope). */
  readonly besideOthers?: boolean;
}

export type PgTenantDoor = Door<PgTx, PgTenantWriteScope>;
export type PgPlatformDoor = Door<PgTx, WriteScope>;

/** Outbox rows at most one statement carries (beyond: one statement each). */
const MAX_EVENT_ROWS = 8;
const eventsInsertTexts = new Map<string, string>();

/**
 * `[WITH h AS (INSERT INTO history ... VALUES ...)] INSERT INTO events (...) VALUES ...` for
 * `historyRows` history rows (the text of core/history.ts) and `eventRows` outbox rows (the text
 * of core/events.ts recordEvent; raw: Drizzle's insert builder costs tens of µs), cached per count.
 */
function eventsInsertSql(historyRows: number, eventRows: number): string {
  const key = `${historyRows} ${eventRows}`;
  let text = eventsInsertTexts.get(key);
  if (!text) {
    const at = historyRows * HISTORY_WIDTH;
    const values = Array.from({ length: eventRows }, (_, r) => `(${Array.from({ length: 5 }, (_, c) => `?${at + r * 5 + c + 1}`).join(", ")})`).join(", ");
    text = `${historyRows ? `WITH h AS (${historyInsertSql(historyRows)}) ` : ""}INSERT INTO events (id, type, record_id, payload, created_at) VALUES ${values}`;
    eventsInsertTexts.set(key, text);
  }
  return text;
}

/** History rows beyond one statement's: HISTORY_MAX_ROWS a statement. */
async function flushHistory(tx: PgTx, rows: (string | null)[][]): Promise<void> {
  for (let i = 0; i < rows.length; i += HISTORY_MAX_ROWS) {
    const chunk = rows.slice(i, i + HISTORY_MAX_ROWS);
    await tx.$client.query(historyInsertSql(chunk.length)).run(...chunk.flat());
  }
}

/** Corporation ids a read's prologue may carry as a literal (UUIDs, and the tests' short names). */
const LITERAL_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The text a read starts with, sent without parameters (the simple protocol: several statements
 * in one message, one answer): BEGIN and, for a corporation, its setting; `setting`: the id to set
 * with a parameter instead, right behind it, when it is not one LITERAL_ID accepts (none today).
 */
function readPrologue(corpId: string): { text: string; setting?: string } {
  const begin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
  if (!corpId) return { text: begin };
  if (!LITERAL_ID.test(corpId)) return { text: begin, setting: corpId };
  return { text: `${begin}; SELECT set_config('${CORP_SETTING}', '${corpId}', true)` };
}

/** The platform writer lock's key text (corporation ids are UUIDs: no corporation hashes from it). */
const PLATFORM_LOCK = "corpadmin:platform";

class PgScope implements PgTenantWriteScope {
  private after: (() => void)[] = [];
  private events: { type: EventGroup; recordId: string; data: unknown }[] = [];
  private changes: ChangeLog;
  /** Set for a grouped write running side by side with others (no savepoint of its own). */
  besideOthers = false;

  /** `actor`: the one who asked for the write (a grouped write runs in another's turn). */
  constructor(
    readonly corpId: string,
    actor: Actor,
  ) {
    this.changes = new ChangeLog(actor);
  }

  record(change: ChangeInput): void {
    this.changes.record(change);
  }

  afterCommit(fn: () => void): void {
    this.after.push(fn);
  }

  emit(type: EventGroup, recordId: string, data: unknown): void {
    if (!this.corpId) throw new Error("events belong to a corporation database");
    this.events.push({ type, recordId, data });
  }

  get emitted(): boolean {
    return this.events.length > 0;
  }

  /**
   * Inside the transaction, after the callback: the history rows and the outbox rows. Every
   * payload is built first (in order, from the write's state), then the history's insert and the
   * events' go out together, in order (one connection runs them as sent: `seq` follows the order
   * of the events), and are waited for once.
   */
  async flush(tx: PgTx): Promise<void> {
    if (!this.events.length) return await this.changes.flush(tx, !this.corpId);
    const rows: [string, EventGroup, string, string, string][] = [];
    for (const e of this.events) {
      const data = typeof e.data === "function" ? await (e.data as (tx: PgTx) => unknown)(tx) : e.data;
      const timestamp = nowIso();
      const payload: EventPayload = { type: e.type, timestamp, data };
      rows.push([newId(), e.type, e.recordId, JSON.stringify(payload), timestamp]);
    }
    // One statement: the history rows in a CTE, the outbox rows in the VALUES of the INSERT (one
    // statement instead of one per event and one for the history: each costs the server more than
    // its rows do). A multi-row VALUES takes the identity `seq` row by row, in the events' order.
    const history = this.changes.take(false);
    if (history.length > HISTORY_MAX_ROWS || rows.length > MAX_EVENT_ROWS) {
      await Promise.all([flushHistory(tx, history), ...rows.map((r) => tx.$client.query(eventsInsertSql(0, 1)).run(...r))]);
      return;
    }
    await tx.$client.query(eventsInsertSql(history.length, rows.length)).run(...history.flat(), ...rows.flat());
  }

  /** After the COMMIT. */
  committed(bus: EventBus | null): void {
    if (this.events.length) bus?.committed(this.corpId);
    for (const fn of this.after) {
      try {
        fn();
      } catch {
        // An after-commit step must not turn a committed write into a failed request.
      }
    }
  }
}

/**
 * How many times a transaction cut before it could have changed anything is run: a pool may hold
 * several connections the server ended (a failover ends them all), each handed out once more
 * before the client has read its close.
 */
const ATTEMPTS = 3;

/**
 * Runs a transaction; its error is rethrown as the 503 of ./handle.ts's unavailableOf when the
 * database went away or is changing hands (met by BEGIN, COMMIT or the door's own statements; the
 * handle's statements already throw it): every caller, route or job, sees one kind of error for a
 * failover. A transaction whose connection had ended runs again when `again()` says nothing of it
 * could have committed or reached the caller's callback.
 */
async function transaction<T>(run: () => Promise<T>, again: () => boolean): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      const problem = unavailableOf(err);
      if (problem?.connectionEnded && attempt < ATTEMPTS && again()) continue;
      throw problem ?? err;
    }
  }
}

/** Thrown inside a grouped transaction to roll it back and run its writes again one at a time. */
class GroupRetry extends Error {}

/**
 * Which writes of a group run side by side: the independent ones, except a write naming a key an
 * earlier write of the group names (it runs after the side-by-side ones, in the group's order, so
 * it sees what they changed, as it would one at a time).
 */
function besideEachOther(jobs: GroupedJob[]): boolean[] {
  const named = new Set<string>();
  return jobs.map((job) => {
    if (!job.keys) return job.independent;
    const free = job.independent && !job.keys.some((k) => named.has(k));
    for (const k of job.keys) named.add(k);
    return free;
  });
}

/** A Bun.sql transaction's (or savepoint's) connection. */
type Conn = SQL;

interface GroupedJob {
  fn: (tx: PgTx, scope: PgTenantWriteScope) => unknown;
  /** Runs side by side with the group's other independent writes (Door.writeGrouped). */
  independent: boolean;
  /** With `independent`: the records it may change; independent only of writes naming none of them. */
  keys: readonly string[] | null;
  /** Changes nothing a state-stamp cache holds (Door.write's `logOnly`). */
  logOnly: boolean;
  actor: Actor;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** The platform's door and every corporation's, over one connection pool. */
export class PgDoors {
  readonly client: SQL;
  /** Writes waiting to be grouped, per corporation (an entry lives only while its group is queued). */
  private grouped = new Map<string, GroupedJob[]>();
  /** Corporations whose grouped transaction is running on this node. */
  private groupsInFlight = new Set<string>();

  private lockTimeout: string;
  private corporationMustExist: boolean;
  /** This node's id in the NOTIFY payloads (its feed skips them: the door tells the node itself). */
  private readonly origin: string;
  /** The corporations' change stamps on this node (./generations.ts); the feed also moves them. */
  readonly generations = new Generations();

  constructor(
    client: SQL,
    /** Told after each COMMIT that emitted events (this node's dispatcher and sockets); null: none. */
    private bus: EventBus | null = null,
    {
      lockWaitMs = LOCK_WAIT_MS,
      corporationMustExist = false,
      origin = "",
    }: {
      lockWaitMs?: number;
      /** The node's id, carried by its NOTIFYs (empty: none; every feed then acts on them). */
      origin?: string;
      /**
       * A corporation's write first checks, under its writer lock, that the corporation is still
       * in the platform's table (the app's doors): a write that waited behind the deletion of its
       * corporation's rows answers 404 instead of leaving rows no corporation owns.
       */
      corporationMustExist?: boolean;
    } = {},
  ) {
    this.client = client;
    this.lockTimeout = `${Math.max(1, Math.round(lockWaitMs))}ms`;
    this.corporationMustExist = corporationMustExist;
    this.origin = origin;
  }

  /** `checked: false`: a write does not check that the corporation exists (its deletion's own). */
  tenant(corpId: string, { checked = this.corporationMustExist }: { checked?: boolean } = {}): PgTenantDoor {
    if (!corpId) throw new Error("a corporation's door needs its id");
    return new PgDoor(this, corpId, checked);
  }

  /** The platform tables' door: one platform writer at a time across nodes, as on SQLite; no events. */
  readonly platform: PgPlatformDoor = new PgDoor(this, "");

  /**
   * A read: one REPEATABLE READ READ ONLY transaction, so its statements share one snapshot, as a
   * read's do on SQLite. Its statements go out without waiting for each other: BEGIN and the
   * corporation's setting in one message (the simple protocol: the id a literal, see readPrologue),
   * then the callback's statements behind them on the connection, which runs them in the order
   * sent; the callback's first answer is its first wait. An error of the prologue aborts the
   * transaction, so the callback's statements fail too, and the prologue's error is the one
   * thrown. COMMIT (or ROLLBACK) is sent, not waited for, before the connection goes back to the
   * pool: the next transaction on it is sent behind it and runs after it, and a read has nothing
   * to learn from its COMMIT (it wrote nothing; a connection lost meanwhile is dropped by the pool).
   */
  read<T>(corpId: string, fn: (db: PgTx) => T | Promise<T>): Promise<T> {
    // The generation before BEGIN: the snapshot, taken at the first statement, holds every write
    // this node saw end before it, so what is cached under it is never older than its stamp.
    const stamp = corpId ? this.generations.of(corpId) : 0;
    const stateStamp = corpId ? this.generations.stateOf(corpId) : 0;
    // A read changes nothing: one cut by an ended connection runs again (its callback, too).
    return transaction(() => this.readOnce(corpId, fn, stamp, stateStamp), () => true);
  }

  private async readOnce<T>(corpId: string, fn: (db: PgTx) => T | Promise<T>, stamp: number, stateStamp: number): Promise<T> {
    const conn = await this.client.reserve();
    try {
      const prologue = readPrologue(corpId);
      // execute(): on the connection now, in this order (awaiting a query sends it a microtask later).
      const started = conn.unsafe(prologue.text).execute();
      const set = prologue.setting === undefined ? null : conn.unsafe(`SELECT set_config('${CORP_SETTING}', $1, true)`, [prologue.setting]).execute();
      // Answered before the callback's first statement; their errors are read below.
      started.catch(() => {});
      set?.catch(() => {});
      const db = pgHandle(conn, corpId !== "");
      if (corpId)
        registerReadStamp(db, {
          stamp,
          stateStamp,
          scope: this.generations.scope(corpId),
          current: () => this.generations.of(corpId),
          currentState: () => this.generations.stateOf(corpId),
        });
      let out: T;
      try {
        out = await fn(db);
        await started;
        await set;
      } catch (err) {
        conn.unsafe("ROLLBACK").execute().catch(() => {});
        // The prologue's error first: the callback's is then only "the transaction is aborted".
        throw await Promise.all([started, set]).then(
          () => err,
          (e: unknown) => e,
        );
      }
      conn.unsafe("COMMIT").execute().catch(() => {});
      return out;
    } finally {
      // Back to the pool behind the COMMIT or ROLLBACK just sent (a closed one is the pool's to drop).
      await Promise.resolve(conn.release()).catch(() => {});
    }
  }

  /**
   * Makes `corpId` the transaction's corporation; for a write, also takes its writer lock, and
   * with `checked` then makes sure the corporation still exists. The check is its own statement,
   * sent behind the lock's without waiting: under READ COMMITTED its snapshot is taken after the
   * lock is held, so it sees a deletion that committed while this write waited.
   */
  async enter(conn: Conn, corpId: string, write: boolean, durable = true, checked = false, exclusive = true, logOnly = false): Promise<void> {
    try {
      if (checked && corpId && write) {
        const [, found] = await Promise.all([this.setUp(conn, corpId, write, durable, exclusive, logOnly), conn.unsafe("SELECT 1 FROM corporations WHERE id = $1", [corpId])]);
        if (!(found as unknown[]).length) throw notFound("The corporation no longer exists");
      } else await this.setUp(conn, corpId, write, durable, exclusive, logOnly);
    } catch (err) {
      // lock_not_available: the corporation's writer lock stayed taken for lock_timeout (a write
      // started inside another write of the same corporation would otherwise wait for ever).
      if ((err as { errno?: string }).errno === "55P03")
        throw unavailable(`The database stayed busy for ${Number.parseInt(this.lockTimeout) / 1000} s; try again`, 1);
      throw err;
    }
  }

  private async setUp(conn: Conn, corpId: string, write: boolean, durable: boolean, exclusive: boolean, logOnly = false): Promise<void> {
    // One statement, evaluated left to right: the corporation (none for the platform, whose tables
    // have no policy and whose transaction then cannot see any corporation's rows); for a write,
    // lock_timeout, then the writer lock. A platform read needs none.
    const parts: string[] = [];
    const params: string[] = [];
    const bind = (v: string) => `$${params.push(v)}`;
    if (corpId) parts.push(`set_config('${CORP_SETTING}', ${bind(corpId)}, true)`);
    // Every write of a corporation tells the other nodes at its COMMIT (none on ROLLBACK), so that
    // their caches of its data move on (./generations.ts). Queued now, sent by the COMMIT: no
    // round trip of its own.
    // A log-only write notifies its own topic: it moves the generation, not the state generation.
    if (write && corpId) parts.push(`pg_notify('${CHANGES_CHANNEL}', ${bind(changesPayload(this.origin, logOnly ? TENANT_LOG_WRITES_TOPIC : TENANT_WRITES_TOPIC, corpId))})`);
    if (write) {
      // Not durable: the commit does not wait for its WAL flush (nor a synchronous standby); a crash
      // may lose it, never corrupt anything.
      if (!durable) parts.push("set_config('synchronous_commit', 'off', true)");
      // Not exclusive (Door.write): no writer lock, for a statement atomic alone.
      if (exclusive) parts.push(`set_config('lock_timeout', ${bind(this.lockTimeout)}, true)`, `pg_advisory_xact_lock(hashtextextended(${bind(corpId || PLATFORM_LOCK)}, 0))`);
    }
    if (parts.length) await conn.unsafe(`SELECT ${parts.join(", ")}`, params);
  }

  async notify(conn: Conn, corpId: string): Promise<void> {
    await conn.unsafe("SELECT pg_notify($1, $2)", [EVENTS_CHANNEL, eventsPayload(this.origin, corpId)]);
  }

  committed(scope: PgScope): void {
    scope.committed(this.bus);
  }

  queue(corpId: string, job: GroupedJob): void {
    let jobs = this.grouped.get(corpId);
    if (jobs) {
      jobs.push(job);
      return;
    }
    jobs = [job];
    this.grouped.set(corpId, jobs);
    // While a group of this corporation is in its transaction, the writes queued meanwhile wait to
    // be the next group (started when it ends): a transaction started now would only wait for the
    // writer lock, one write at a time. This is what groups them under load.
    if (!this.groupsInFlight.has(corpId)) setImmediate(() => void this.flushGroups(corpId));
  }

  private async flushGroups(corpId: string): Promise<void> {
    const queued = this.grouped.get(corpId);
    if (!queued) return;
    // Writes queued from here on are the next group, started when this one ends.
    this.grouped.delete(corpId);
    this.groupsInFlight.add(corpId);
    try {
      await this.runGroups(corpId, queued);
    } finally {
      this.groupsInFlight.delete(corpId);
      if (this.grouped.has(corpId)) setImmediate(() => void this.flushGroups(corpId));
    }
  }

  private async runGroups(corpId: string, queued: GroupedJob[]): Promise<void> {
    let oneAtATime = false;
    for (let at = 0; at < queued.length; at += MAX_GROUP) {
      const jobs = queued.slice(at, at + MAX_GROUP);
      const scopes = jobs.map((job) => new PgScope(corpId, job.actor));
      let outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[];
      let called = false;
      // Independent writes side by side first (below); after one failed, the group one at a time.
      const beside = oneAtATime ? jobs.map(() => false) : besideEachOther(jobs);
      const sideBySide = beside.filter(Boolean).length > 1;
      // The group moves the state generation unless every write of it is log-only.
      const logOnly = jobs.every((job) => job.logOnly);
      const ended = () => (logOnly ? this.generations.logged(corpId) : this.generations.changed(corpId));
      oneAtATime = false;
      try {
        outcomes = await transaction(
          () =>
            this.client.begin(async (conn) => {
              await this.enter(conn, corpId, true, true, this.corporationMustExist, true, logOnly);
              called = true;
              const out: typeof outcomes = new Array(jobs.length);
              if (sideBySide) {
                // Their statements go out together on the connection, which runs them in the order
                // sent: a round trip per step of the writes, not per step of each write.
                const failed = await Promise.all(
                  jobs.map(async (job, i) => {
                    if (!beside[i]) return false;
                    scopes[i].besideOthers = true;
                    try {
                      const tx = pgHandle(conn, corpId !== "");
                      const value = await job.fn(tx, scopes[i]);
                      await scopes[i].flush(tx);
                      out[i] = { ok: true, value };
                      return false;
                    } catch {
                      return true;
                    }
                  }),
                );
                // Without savepoints a failure may have aborted the transaction: it rolls back, and
                // the group runs again with a savepoint per write (a failing one rolls back alone).
                if (failed.some(Boolean)) throw new GroupRetry();
              }
              for (const [i, job] of jobs.entries()) {
                if (out[i]) continue;
                // A savepoint each: a failing write (and its events) rolls back alone. SAVEPOINT and
                // RELEASE are sent without waiting for their answers (Bun.sql's savepoint() waits for
                // both): they go out on the connection in order with the write's statements, two
                // round trips less per write inside the writer lock. Should one fail, the
                // transaction is aborted and the next statement, or the COMMIT, fails the group.
                const name = `g${i}`;
                conn.unsafe(`SAVEPOINT ${name}`).execute();
                try {
                  const tx = pgHandle(conn, corpId !== "");
                  const value = await job.fn(tx, scopes[i]);
                  await scopes[i].flush(tx);
                  conn.unsafe(`RELEASE SAVEPOINT ${name}`).execute();
                  out[i] = { ok: true, value };
                } catch (error) {
                  await conn.unsafe(`ROLLBACK TO SAVEPOINT ${name}`);
                  out[i] = { ok: false, error };
                }
              }
              if (out.some((o, i) => o.ok && scopes[i].emitted)) await this.notify(conn, corpId);
              return out;
            }) as Promise<typeof outcomes>,
          () => !called,
        );
      } catch (error) {
        if (error instanceof GroupRetry) {
          // Rolled back whole: the same writes again (fresh scopes), one at a time.
          oneAtATime = true;
          at -= MAX_GROUP;
          continue;
        }
        ended();
        for (const job of jobs) job.reject(error);
        continue;
      }
      ended();
      jobs.forEach((job, i) => {
        const o = outcomes[i];
        if (o.ok) {
          this.committed(scopes[i]);
          job.resolve(o.value);
        } else job.reject(o.error);
      });
    }
  }
}

class PgDoor implements PgTenantDoor {
  constructor(
    private doors: PgDoors,
    readonly corpId: string,
    /** Writes check that the corporation exists (grouped writes follow the doors' setting). */
    private checked = false,
  ) {}

  read<T>(fn: (db: PgTx) => T | Promise<T>): Promise<T> {
    return this.doors.read(this.corpId, fn);
  }

  /**
   * The corporation's generation now: the stamp `read` would register. The platform's reads have
   * no stamp: a new one each time, which nothing was kept under.
   */
  stampNow(): number {
    return this.corpId ? this.doors.generations.of(this.corpId) : newStamp();
  }

  /** The corporation's state generation now (./generations.ts): what `read` registers as its state stamp. */
  stateStampNow(): number {
    return this.corpId ? this.doors.generations.stateOf(this.corpId) : newStamp();
  }

  async write<T>(
    fn: (tx: PgTx, scope: PgTenantWriteScope) => T | Promise<T>,
    { durable = true, exclusive = true, logOnly = false }: { durable?: boolean; exclusive?: boolean; logOnly?: boolean } = {},
  ): Promise<T> {
    const actor = currentActor();
    let scope = new PgScope(this.corpId, actor);
    // Run again only when the connection ended before the callback started: nothing was done yet.
    let called = false;
    let result: T;
    try {
      result = await transaction(
        () =>
          this.doors.client.begin(async (conn) => {
            scope = new PgScope(this.corpId, actor);
            await this.doors.enter(conn, this.corpId, true, durable, this.checked, exclusive, logOnly);
            called = true;
            const tx = pgHandle(conn, this.corpId !== "");
            const out = await fn(tx, scope);
            await scope.flush(tx);
            if (scope.emitted) await this.doors.notify(conn, this.corpId);
            return out;
          }) as Promise<T>,
        () => !called,
      );
    } finally {
      // Before the caller goes on (and before afterCommit): its next read here sees a new stamp.
      if (this.corpId) {
        if (logOnly) this.doors.generations.logged(this.corpId);
        else this.doors.generations.changed(this.corpId);
      }
    }
    this.doors.committed(scope);
    return result;
  }

  writeGrouped<T>(
    fn: (tx: PgTx, scope: PgTenantWriteScope) => T | Promise<T>,
    { independent = false, keys, logOnly = false }: { independent?: boolean; keys?: readonly string[]; logOnly?: boolean } = {},
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.doors.queue(this.corpId, { fn, independent, keys: keys ?? null, logOnly, actor: currentActor(), resolve: resolve as (v: unknown) => void, reject });
    });
  }

  /** The server's autovacuum, autoanalyze and checkpointer do this housekeeping on PostgreSQL. */
  async maintain(_what: { checkpoint: boolean; optimize: boolean }): Promise<{ checkpointed: boolean; optimized: boolean }> {
    return { checkpointed: false, optimized: false };
  }

  /**
   * A consistent copy of this corporation's rows (one read: one REPEATABLE READ snapshot) into
   * `target`, one JSON line per row: `{"table": ..., "row": {...}}`, tables in the schema's order.
   * The backup format of cluster mode is issue 19's item 4; this is what the contract asks of a door.
   */
  async copyTo(target: string): Promise<void> {
    const writer = Bun.file(target).writer();
    try {
      await this.read(async (tx) => {
        for (const table of this.corpId ? tenantTableNames : platformTableNames) {
          const rows = await tx.$client.query(`SELECT * FROM "${table}"`).all();
          for (const row of rows) writer.write(`${JSON.stringify({ table, row })}\n`);
          await writer.flush();
        }
      });
    } finally {
      await writer.end();
    }
  }
}
