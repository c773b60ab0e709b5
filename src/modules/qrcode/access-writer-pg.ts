// The QR access writer on PostgreSQL (cluster mode): the same batches as the writer thread's
// (access-writer.worker.ts, which writes SQLite files), written through the corporation's door
// instead, one transaction per corporation and batch (the recorder's: at most 50 ms of scans), its
// accesses in multi-row INSERTs. The chunks are read before the first await, so the recorder may
// reuse them once the answer says so, as after the thread's.
import type { AppContext } from "../../core/context";
import { clientOf } from "../../db/rows";
import type { TenantDb } from "../../db/sqlite";
import { Problem } from "../../lib/problem";
import { visitorKey, type AccessRow, type DoneMessage, type WriteMessage } from "./access-writer";

/** Rows per multi-row INSERT: 8 parameters each, well under PostgreSQL's 65,535 per statement. */
const INSERT_ROWS = 500;
/**
 * Rows per transaction: a crowd's backlog is written in several, so the corporation's writer lock
 * is free between them for other writes (housekeeping, requests) within a fraction of a second.
 * A batch that fails after some of them committed is sent again whole, and `recheck` then skips
 * the rows already stored, as after any unclear failure.
 */
const TX_ROWS = 2_000;
/** Ids per `IN (...)` lookup. */
const LOOKUP_IDS = 1_000;

const marks = (n: number, each: string) => Array.from({ length: n }, () => each).join(", ");

/**
 * A batch in a few statements, not two or three round trips a scan: under a crowd's scans the
 * row-by-row form held the corporation's writer lock so long that other writes (housekeeping)
 * waited past their 10 s.
 */
async function writeRows(tx: TenantDb, rows: AccessRow[], recheck: boolean): Promise<void> {
  if (!rows.length) return;
  const q = clientOf(tx);
  // A code deleted while its scans waited loses them, as it lost its other accesses.
  const codeIds = [...new Set(rows.map((r) => r[1]))];
  const known = new Set<string>();
  for (let i = 0; i < codeIds.length; i += LOOKUP_IDS) {
    const part = codeIds.slice(i, i + LOOKUP_IDS);
    for (const r of await q.query<{ id: string }, string[]>(`SELECT id FROM qr_codes WHERE id IN (${marks(part.length, "?")})`).all(...part)) known.add(r.id);
  }
  let todo = rows.filter((r) => known.has(r[1]));
  // A batch sent again after an unclear failure must not count twice: per code, the accesses
  // stored within the batch's time range (the code's index), matched by id.
  if (recheck && todo.length) {
    const range = new Map<string, [string, string]>();
    for (const r of todo) {
      const span = range.get(r[1]);
      if (!span) range.set(r[1], [r[2], r[2]]);
      else {
        if (r[2] < span[0]) span[0] = r[2];
        if (r[2] > span[1]) span[1] = r[2];
      }
    }
    const stored = new Set<string>();
    for (const [codeId, [from, to]] of range) {
      for (const r of await q.query<{ id: string }, string[]>("SELECT id FROM qr_accesses WHERE qrcode_id = ? AND at >= ? AND at <= ?").all(codeId, from, to)) stored.add(r.id);
    }
    todo = todo.filter((r) => !stored.has(r[0]));
  }
  for (let i = 0; i < todo.length; i += INSERT_ROWS) {
    const part = todo.slice(i, i + INSERT_ROWS);
    const params = part.flatMap((r) => [r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[6] ? null : visitorKey(r[3], r[4])]);
    await q.query(`INSERT INTO qr_accesses (id, qrcode_id, at, ip, user_agent, referer, bot, visitor) VALUES ${marks(part.length, "(?, ?, ?, ?, ?, ?, ?, ?)")}`).run(...params);
  }
  const added = new Map<string, number>();
  for (const r of todo) added.set(r[1], (added.get(r[1]) ?? 0) + 1);
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
      const door = ctx.store.background(b.corpId);
      for (let i = 0; i < b.rows.length; i += TX_ROWS) {
        const part = b.rows.slice(i, i + TX_ROWS);
        await door.write((tx) => writeRows(tx, part, b.recheck));
      }
    } catch (err) {
      // The door's write answers 404 once the corporation is gone: its scans go with it.
      failed.push({ corpId: b.corpId, error: String(err), missing: err instanceof Problem && err.status === 404 });
    }
  }
  return { seq: message.seq, failed };
}
