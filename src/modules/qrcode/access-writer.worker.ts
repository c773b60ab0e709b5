// The thread that writes scan records. The public redirect only appends to memory; batches come
// here (recorder.ts), so the commit and its fsync never stall the event loop. A corporation's
// database is opened per batch, with the same pragmas as every other connection, and never created
// (a deleted corporation's file stays deleted). An extra entrypoint of the compiled binary (build.ts).
// The one writer of the module that does not go through ctx.store (a documented exception): the
// store's doors live on the main thread, and this thread opens its own connection through the
// same connection code (db/sqlite.ts).
import { existsSync } from "node:fs";
import { openSqlite } from "../../db/sqlite";
import type { AccessRow, DoneMessage, WriteBatch, WriteMessage } from "./access-writer";

declare var self: Worker;

const decoder = new TextDecoder();

function writeBatch(batch: WriteBatch): void {
  const db = openSqlite(batch.path, { create: false });
  try {
    const exists = db.query<{ x: number }, [string]>("SELECT 1 AS x FROM qr_codes WHERE id = ?");
    const insert = db.query("INSERT INTO qr_accesses (id, qrcode_id, at, ip, user_agent, referer, bot, visitor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    // A batch sent again after an unclear failure must not count twice; ids are not indexed (one
    // b-tree less per scan), so a row is found through the (qrcode_id, at) index instead.
    const stored = batch.recheck ? db.query<{ x: number }, [string, string, string]>("SELECT 1 AS x FROM qr_accesses WHERE qrcode_id = ? AND at = ? AND id = ?") : null;
    const bump = db.query("UPDATE qr_codes SET scans = scans + ? WHERE id = ?");
    // As the doors do: BEGIN IMMEDIATE takes the write lock up front.
    db.run("BEGIN IMMEDIATE");
    try {
      const known = new Map<string, boolean>();
      const added = new Map<string, number>();
      for (const chunk of batch.chunks) {
        for (const row of JSON.parse("[" + decoder.decode(chunk) + "]") as AccessRow[]) {
          let ok = known.get(row[1]);
          // A code deleted while its scans waited loses them, as it lost its other accesses.
          if (ok === undefined) known.set(row[1], (ok = exists.get(row[1]) !== null));
          if (!ok) continue;
          if (stored !== null && stored.get(row[1], row[2], row[0]) !== null) continue;
          insert.run(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7]);
          added.set(row[1], (added.get(row[1]) ?? 0) + 1);
        }
      }
      for (const [codeId, n] of added) bump.run(n, codeId);
      db.run("COMMIT");
    } catch (err) {
      if (db.inTransaction) db.run("ROLLBACK");
      throw err;
    }
  } finally {
    db.close();
  }
}

self.onmessage = (event: MessageEvent<WriteMessage>) => {
  const { seq, batches } = event.data;
  const failed: DoneMessage["failed"] = [];
  for (const batch of batches) {
    try {
      writeBatch(batch);
    } catch (err) {
      failed.push({ corpId: batch.corpId, error: String(err), missing: !existsSync(batch.path) });
    }
  }
  postMessage({ seq, failed } satisfies DoneMessage);
};
