// The thread that writes scan records. The public redirect only appends to memory; batches go to
// this worker, which holds the commit (and its fsync) off the event loop. It opens a corporation
// database per batch and never creates one (a deleted corporation's file stays deleted). The
// source is a self-contained string so that it also runs from inside the compiled binary.
export type AccessRow = [id: string, qrcodeId: string, at: string, ip: string, userAgent: string | null, referer: string | null, bot: 0 | 1, visitor: number | null];

export interface WriteBatch {
  corpId: string;
  path: string;
  /** Set when some rows may already be stored (sent again after a failure): those are skipped. */
  recheck: boolean;
  /** UTF-8 JSON text of AccessRows, comma separated (without the brackets), per buffer. */
  chunks: Uint8Array[];
}

/** main → worker */
export interface WriteMessage {
  seq: number;
  batches: WriteBatch[];
}

/** worker → main: the batches that could not be written (the rest are committed). */
export interface DoneMessage {
  seq: number;
  failed: { corpId: string; error: string; missing: boolean }[];
}

export const WRITER_SOURCE = `
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";

const decoder = new TextDecoder();

function writeBatch(batch) {
  const db = new Database(batch.path, { readwrite: true, create: false, strict: true });
  try {
    db.exec("PRAGMA synchronous = FULL");
    db.exec("PRAGMA foreign_keys = ON");
    db.exec("PRAGMA busy_timeout = 10000");
    const exists = db.query("SELECT 1 AS x FROM qr_codes WHERE id = ?");
    const insert = db.query("INSERT INTO qr_accesses (id, qrcode_id, at, ip, user_agent, referer, bot, visitor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    // A batch sent again after an unclear failure must not count twice; ids are not indexed (one
    // b-tree less per scan), so a row is found through the (qrcode_id, at) index instead.
    const stored = batch.recheck ? db.query("SELECT 1 AS x FROM qr_accesses WHERE qrcode_id = ? AND at = ? AND id = ?") : null;
    const bump = db.query("UPDATE qr_codes SET scans = scans + ? WHERE id = ?");
    db.transaction(() => {
      const known = new Map();
      const added = new Map();
      for (const chunk of batch.chunks) for (const row of JSON.parse("[" + decoder.decode(chunk) + "]")) {
        let ok = known.get(row[1]);
        // A code deleted while its scans waited loses them, as it lost its other accesses.
        if (ok === undefined) known.set(row[1], (ok = exists.get(row[1]) !== null));
        if (!ok) continue;
        if (stored !== null && stored.get(row[1], row[2], row[0]) !== null) continue;
        insert.run(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7]);
        added.set(row[1], (added.get(row[1]) ?? 0) + 1);
      }
      for (const [codeId, n] of added) bump.run(n, codeId);
    }).immediate();
  } finally {
    db.close();
  }
}

self.onmessage = (event) => {
  const { seq, batches } = event.data;
  const failed = [];
  for (const batch of batches) {
    try {
      writeBatch(batch);
    } catch (err) {
      failed.push({ corpId: batch.corpId, error: String(err), missing: !existsSync(batch.path) });
    }
  }
  postMessage({ seq, failed });
};
`;
