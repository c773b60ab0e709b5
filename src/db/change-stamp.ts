// The one change stamp of a SQLite connection, which the read caches (contract GET bodies, RADIUS
// authorize's NAS and layouts) key on: it moves as soon as anything may have been written to the
// database — by this connection (total_changes(), which also counts statements later rolled back)
// or by any other connection (data_version, which moves on another connection's commit).
import type { Database, Statement } from "bun:sqlite";
import { isReadConnection } from "./sqlite";

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
