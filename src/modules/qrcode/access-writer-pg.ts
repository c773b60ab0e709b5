// The QR access writer on PostgreSQL (cluster mode): the same batches as the writer thread's
// (access-writer.worker.ts, which writes SQLite files), written through the corporation's door
// instead, one transaction per corporation. The chunks are read before the first await, so the
// recorder may reuse them once the answer says so, as after the thread's.
import type { AppContext } from "../../core/context";
import type { TenantDb } from "../../db/sqlite";
import { Problem } from "../../lib/problem";
import { visitorKey, type AccessRow, type DoneMessage, type WriteMessage } from "./access-writer";

async function writeRows(tx: TenantDb, rows: AccessRow[], recheck: boolean): Promise<void> {
  const q = tx.$client;
  const known = new Map<string, boolean>();
  const added = new Map<string, number>();
  for (const row of rows) {
    let ok = known.get(row[1]);
    // A code deleted while its scans waited loses them, as it lost its other accesses.
    if (ok === undefined) known.set(row[1], (ok = (await q.query("SELECT 1 AS x FROM qr_codes WHERE id = ?").get(row[1])) !== null));
    if (!ok) continue;
    // A batch sent again after an unclear failure must not count twice.
    if (recheck && (await q.query("SELECT 1 AS x FROM qr_accesses WHERE qrcode_id = ? AND at = ? AND id = ?").get(row[1], row[2], row[0])) !== null) continue;
    await q
      .query("INSERT INTO qr_accesses (id, qrcode_id, at, ip, user_agent, referer, bot, visitor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
      .run(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[6] ? null : visitorKey(row[3], row[4]));
    added.set(row[1], (added.get(row[1]) ?? 0) + 1);
  }
  for (const [codeId, n] of added) await q.query("UPDATE qr_codes SET scans = scans + ? WHERE id = ?").run(n, codeId);
}

/** Writes a message's batches; answers as the thread does (a deleted corporation's batch is `missing`). */
export async function writeAccessesPg(ctx: AppContext, message: WriteMessage): Promise<DoneMessage> {
  const failed: DoneMessage["failed"] = [];
  const batches = message.batches.map((b) => ({
    corpId: b.corpId,
    recheck: b.recheck,
    rows: b.chunks.flatMap((c) => JSON.parse("[" + Buffer.from(c.buffer, c.byteOffset, c.byteLength).toString("utf8") + "]") as AccessRow[]),
  }));
  for (const b of batches) {
    try {
      await ctx.store.background(b.corpId).write((tx) => writeRows(tx, b.rows, b.recheck));
    } catch (err) {
      // The door's write answers 404 once the corporation is gone: its scans go with it.
      failed.push({ corpId: b.corpId, error: String(err), missing: err instanceof Problem && err.status === 404 });
    }
  }
  return { seq: message.seq, failed };
}
