// The thread that writes scan records. The public redirect only appends to memory; batches come
// here (recorder.ts), so the commit and its fsync never stall the event loop. A corporation's
// database is opened with the same pragmas as every other connection, and never created (a
// deleted corporation's file stays deleted). An extra entrypoint of the compiled binary (build.ts).
// The one writer of the module that does not go through ctx.store (a documented exception): the
// store's doors live on the main thread, and this thread opens its own connection through the
// same connection code (db/sqlite.ts).
import { existsSync, statSync } from "node:fs";
import { openSqlite, type SqliteClient, type SqliteStatement } from "../../db/sqlite";
import { visitorKey, type AccessRow, type DoneMessage, type WriteBatch, type WriteMessage } from "./access-writer";

declare var self: Worker;

/**
 * A corporation's connection, kept between batches: opening one, setting its pragmas, preparing
 * the statements and closing it cost ≈ 0.5 ms per batch, and a new connection starts with an
 * empty page cache, so every batch read the index pages it writes again (measured: 1.5 ms of
 * fixed cost per batch opened each time, 0.6 ms kept open).
 */
interface Conn {
  db: SqliteClient;
  /** The file it opened: a file deleted (or replaced) since is noticed before the next batch. */
  dev: number;
  ino: number;
  usedAt: number;
  exists: SqliteStatement<{ x: number }, [string]>;
  insert: SqliteStatement<unknown, [string, string, string, string, string | null, string | null, number, number | null]>;
  stored: SqliteStatement<{ x: number }, [string, string, string]>;
  bump: SqliteStatement<unknown, [number, string]>;
}

const conns = new Map<string, Conn>();
/**
 * Connections kept at most (least recently used go first), and how long an idle one stays open:
 * each holds its page cache (up to SQLite's default 2 MB), so idle ones do not stay long.
 */
const MAX_CONNS = 16;
const IDLE_MS = 10_000;

function close(path: string): void {
  const c = conns.get(path);
  if (!c) return;
  conns.delete(path);
  c.db.close(true);
}

/** The open connection to `path`, if it is still the file there; otherwise a new one (throws when the file is gone). */
function connection(path: string): Conn {
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    // The file is gone (its corporation deleted): the batch fails as `missing`, and the deleted
    // file is not held open any longer.
    close(path);
    throw err;
  }
  let c = conns.get(path);
  if (c && (c.dev !== st.dev || c.ino !== st.ino)) {
    close(path);
    c = undefined;
  }
  if (!c) {
    if (conns.size >= MAX_CONNS) close(conns.keys().next().value!);
    const db = openSqlite(path, { create: false });
    c = {
      db,
      dev: st.dev,
      ino: st.ino,
      usedAt: 0,
      exists: db.query("SELECT 1 AS x FROM qr_codes WHERE id = ?"),
      insert: db.query("INSERT INTO qr_accesses (id, qrcode_id, at, ip, user_agent, referer, bot, visitor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
      // A batch sent again after an unclear failure must not count twice; ids are not indexed (one
      // b-tree less per scan), so a row is found through the (qrcode_id, at) index instead.
      stored: db.query("SELECT 1 AS x FROM qr_accesses WHERE qrcode_id = ? AND at = ? AND id = ?"),
      bump: db.query("UPDATE qr_codes SET scans = scans + ? WHERE id = ?"),
    };
  } else conns.delete(path); // re-inserted below: the map's order is the order of use
  c.usedAt = performance.now();
  conns.set(path, c);
  return c;
}

function writeBatch(batch: WriteBatch): void {
  const { db, exists, insert, stored, bump } = connection(batch.path);
  const recheck = batch.recheck;
  // As the doors do: BEGIN IMMEDIATE takes the write lock up front.
  db.run("BEGIN IMMEDIATE");
  try {
    const known = new Map<string, boolean>();
    const added = new Map<string, number>();
    for (const chunk of batch.chunks) {
      // The chunk is shared memory the recorder wrote (Buffer decodes shared views; TextDecoder need not).
      const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("utf8");
      for (const row of JSON.parse("[" + text + "]") as AccessRow[]) {
        let ok = known.get(row[1]);
        // A code deleted while its scans waited loses them, as it lost its other accesses.
        if (ok === undefined) known.set(row[1], (ok = exists.get(row[1]) !== null));
        if (!ok) continue;
        if (recheck && stored.get(row[1], row[2], row[0]) !== null) continue;
        insert.run(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[6] ? null : visitorKey(row[3], row[4]));
        added.set(row[1], (added.get(row[1]) ?? 0) + 1);
      }
    }
    for (const [codeId, n] of added) bump.run(n, codeId);
    db.run("COMMIT");
  } catch (err) {
    if (db.inTransaction) db.run("ROLLBACK");
    // A broken connection is not kept: the next attempt opens the file again.
    close(batch.path);
    throw err;
  }
}

/** Closes connections idle for IDLE_MS (a deleted corporation's file is not held open for long). */
function sweep(): void {
  const now = performance.now();
  for (const [path, c] of conns) if (now - c.usedAt >= IDLE_MS) close(path);
  if (conns.size > 0) setTimeout(sweep, IDLE_MS).unref();
  else sweeping = false;
}
let sweeping = false;

self.onmessage = (event: MessageEvent<WriteMessage>) => {
  const { seq, batches, close: closing } = event.data;
  const failed: DoneMessage["failed"] = [];
  for (const batch of batches) {
    try {
      writeBatch(batch);
    } catch (err) {
      failed.push({ corpId: batch.corpId, error: String(err), missing: !existsSync(batch.path) });
    }
  }
  if (closing) for (const path of [...conns.keys()]) close(path);
  else if (!sweeping && conns.size > 0) {
    sweeping = true;
    setTimeout(sweep, IDLE_MS).unref();
  }
  postMessage({ seq, failed } satisfies DoneMessage);
};
