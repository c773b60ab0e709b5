// The thread that checkpoints WAL files, so that copying the WAL into the database and its two
// fsyncs never stall the event loop (src/db/checkpointer.ts sends the paths). An extra entrypoint
// of the compiled binary (build.ts).
import { openSqlite } from "./sqlite";
import type { CheckpointDone, CheckpointRequest } from "./checkpointer";

declare var self: Worker;

self.onmessage = (event: MessageEvent<CheckpointRequest>) => {
  const { id, path, mode } = event.data;
  let done: CheckpointDone;
  try {
    // Opened for each checkpoint: they are rare (a few MB of WAL, or a quiet second). Never
    // created: a corporation deleted meanwhile stays deleted. When the door closed meanwhile this
    // is the last connection, and its close checkpoints the rest and deletes the WAL, here too.
    const db = openSqlite(path, { create: false, statements: 4 });
    try {
      // PASSIVE copies what no reader still needs, waits for nobody and never blocks the writer.
      // TRUNCATE (maintenance, under the door's write lock) waits for readers in other processes
      // (a backup) one second at most; a busy answer is retried next time.
      if (mode === "TRUNCATE") db.exec("PRAGMA busy_timeout = 1000");
      const row = db.query(mode === "TRUNCATE" ? "PRAGMA wal_checkpoint(TRUNCATE)" : "PRAGMA wal_checkpoint(PASSIVE)").get() as { busy: number; log: number; checkpointed: number };
      done = { id, ok: true, busy: row.busy, log: row.log, checkpointed: row.checkpointed };
    } finally {
      db.close(true);
    }
  } catch (err) {
    done = { id, ok: false, error: String(err) };
  }
  postMessage(done);
};
