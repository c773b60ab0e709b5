// The one change stamp of a SQLite connection, which the read caches (contract GET bodies, RADIUS
// authorize's NAS and layouts) key on: it moves as soon as anything may have been written to the
// database — by this connection (total_changes(), which also counts statements later rolled back)
// or by any other connection (data_version, which moves on another connection's commit).
//
// On PostgreSQL (cluster mode) a read's handle carries its corporation's generation instead
// (src/db/pg/generations.ts): `readStamp(db)` answers for either engine.
import type { Database, Statement } from "bun:sqlite";
import type { AnyDb } from "./sqlite";
import { isReadConnection, sqliteClientOf } from "./sqlite";

interface ConnectionState {
  changesStmt: Statement<{ c: number }, []>;
  // PRAGMA itself: through the pragma_data_version table function it costs three times as much,
  // and two tiny statements measured no slower than one that reads both.
  dataVersionStmt: Statement<{ data_version: number }, []>;
  changes: number;
  version: number;
  stamp: number;
}

const states = new WeakMap<Database, ConnectionState>();
let stamps = 0;

/** A stamp no connection or generation has had: SQLite's stamps and PostgreSQL's generations share one sequence. */
export function newStamp(): number {
  return ++stamps;
}

/**
 * A number for the database's state as this connection sees it now: the same number again means
 * nothing was written in between. Stamps are unique across connections and states, so a cache
 * shared by every corporation can prefix its keys with them. Two tiny reads, no other SQL.
 * Null on any connection but a door's read connection: inside a write transaction the stamp moves
 * with its writes but not back on a rollback, so what a write reads must not be cached.
 * Inside a read transaction (src/db/door.ts) data_version is that of the read's snapshot. A read
 * callback that awaits may go on in a newer snapshot (a later read epoch): take the stamp before
 * the reads it keys, so a cached value is never older than its stamp (at worst newer).
 */
export function changeStamp(client: Database): number | null {
  if (!isReadConnection(client)) return null;
  let state = states.get(client);
  if (!state) {
    state = {
      changesStmt: client.prepare<{ c: number }, []>("SELECT total_changes() AS c"),
      dataVersionStmt: client.prepare<{ data_version: number }, []>("PRAGMA data_version"),
      changes: -1,
      version: -1,
      stamp: 0,
    };
    states.set(client, state);
  }
  const changes = state.changesStmt.get()!.c;
  const version = state.dataVersionStmt.get()!.data_version;
  if (changes !== state.changes || version !== state.version) {
    state.changes = changes;
    state.version = version;
    state.stamp = ++stamps;
  }
  return state.stamp;
}

/**
 * What another engine's door says of one read's handle (src/core/pg/door.ts registers it): the
 * stamp taken before the read began, the object per-database caches key by (one per
 * corporation), and the stamp now.
 */
export interface ForeignStamp {
  readonly stamp: number;
  /** The state stamp before the read began: one that log-only writes do not move. */
  readonly stateStamp: number;
  readonly scope: object;
  current(): number;
  currentState(): number;
}
const foreign = new WeakMap<AnyDb, ForeignStamp>();

/** Called by a door of another engine for each read's handle. */
export function registerReadStamp(db: AnyDb, stamp: ForeignStamp): void {
  foreign.set(db, stamp);
}

/**
 * The stamp of a read's handle whichever engine serves it: SQLite's change stamp of the read
 * connection, or on PostgreSQL the corporation's generation taken before the read began. Null
 * for a write's handle (what a write reads may still roll back): nothing may be cached then.
 */
export function readStamp(db: AnyDb): number | null {
  const client = sqliteClientOf(db);
  if (client) return changeStamp(client);
  return foreign.get(db)?.stamp ?? null;
}

/**
 * As readStamp, a stamp that log-only writes (Door.write's `logOnly`, the RADIUS attempt log) do
 * not move on PostgreSQL, for caches of what no log holds; on SQLite the change stamp itself.
 */
export function readStateStamp(db: AnyDb): number | null {
  const client = sqliteClientOf(db);
  if (client) return changeStamp(client);
  return foreign.get(db)?.stateStamp ?? null;
}

/** As stampHolds, for a stamp of readStateStamp. */
export function stateStampHolds(db: AnyDb, stamp: number): boolean {
  const f = foreign.get(db);
  return f === undefined || f.currentState() === stamp;
}

/**
 * Whether what a read computed under `stamp` may be kept. SQLite: always (the stamp is that of
 * the read's snapshot, a value is never older than its stamp). PostgreSQL: only if no commit of
 * the corporation was heard since the read began (a read that overlapped one may hold rows from
 * before it, under a stamp taken before it: it is answered, not kept).
 */
export function stampHolds(db: AnyDb, stamp: number): boolean {
  const f = foreign.get(db);
  return f === undefined || f.current() === stamp;
}

/**
 * The object a cache of one database keys by: SQLite's read connection; on PostgreSQL one object
 * per corporation (a read's handle lives for one transaction). Null where nothing may be kept.
 */
export function stampScope(db: AnyDb): object | null {
  const client = sqliteClientOf(db);
  if (client) return isReadConnection(client) ? client : null;
  return foreign.get(db)?.scope ?? null;
}
