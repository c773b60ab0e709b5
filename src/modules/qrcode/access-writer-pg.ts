// The QR access writer on PostgreSQL (cluster mode): the same batches as the writer thread's
// (access-writer.worker.ts, which writes SQLite files), written through the corporation's door
// instead, one transaction per corporation and batch (the recorder's: at most 50 ms of scans), its
// accesses in multi-row INSERTs. The chunks are read before the first await, so the recorder may
// reuse them once the answer says so, as after the thread's.
import type { AppContext } from "../../core/context";
import type { TenantDb } from "../../db/sqlite";
import { Problem } from "../../lib/problem";
import { visitorKey, type AccessRow, type DoneMessage, type WriteMessage } from "./access-writer";

/** Rows per INSERT: 8 parameters a row, far under PostgreSQL's 65,535 bind parameters. */
const ROWS_PER_INSERT = 500;
const INSERT_HEAD = "INSERT INTO qr_accesses (id, qrcode_id, at, ip, user_agent, referer, bot, visitor) VALUES ";
/** The INSERT texts of 1..ROWS_PER_INSERT rows, made once each (the handle caches translations by text). */
const insertTexts: string[] = [];
function insertText(n: number): string {
  return (insertTexts[n] ??= INSERT_HEAD + Array.from({ length: n }, () => "(?, ?, ?, ?, ?, ?, ?, ?)").join(", "));
}

/**
 * One batch of one corporation in round trips that do not grow with it: the codes that still
 * exist (one query), on a retry the accesses already written (one query), the accesses in
 * multi-row INSERTs, then one scans update per code.
 */
async function writeRows(tx: TenantDb, rows: AccessRow[], recheck: boolean): Promise<void> {
  if (!rows.length) return;
  const q = tx.$client;
  const codeIds = [...new Set(rows.map((r) => r[1]))];
  // A code deleted while its scans waited loses them, as it lost its other accesses.
  const live = new Set((await q.query<{ id: string }, [string]>("SELECT id FROM qr_codes WHERE id IN (SELECT value FROM json_each(?))").all(JSON.stringify(codeIds))).map((r) => r.id));
  // A batch sent again after an unclear failure must not count twice.
  const written = recheck
    ? new Set((await q.query<{ id: string }, [string]>("SELECT id FROM qr_accesses WHERE id IN (SELECT value FROM json_each(?))").all(JSON.stringify(rows.map((r) => r[0])))).map((r) => r.id))
    : null;
  const todo = rows.filter((r) => live.has(r[1]) && !written?.has(r[0]));
  const added = new Map<string, number>();
  for (let at = 0; at < todo.length; at += ROWS_PER_INSERT) {
    const chunk = todo.slice(at, at + ROWS_PER_INSERT);
    const params: unknown[] = [];
    for (const row of chunk) {
      params.push(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[6] ? null : visitorKey(row[3], row[4]));
      added.set(row[1], (added.get(row[1]) ?? 0) + 1);
    }
    await q.query(insertText(chunk.length)).run(...params);
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
