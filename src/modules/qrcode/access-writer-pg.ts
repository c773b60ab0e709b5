// The QR access writer on PostgreSQL (cluster mode): the same batches as the writer thread's
// (access-writer.worker.ts, which writes SQLite files), written through the corporation's door
// instead, one transaction per corporation and batch (the recorder's: at most 50 ms of scans), its
// accesses stored by one statement (STORE_SCANS). The chunks are read before the first await, so the recorder may
// reuse them once the answer says so, as after the thread's.
import type { AppContext } from "../../core/context";
import { clientOf } from "../../db/rows";
import type { TenantDb } from "../../db/sqlite";
import { Problem } from "../../lib/problem";
import { visitorKey, type AccessRow, type DoneMessage, type WriteMessage } from "./access-writer";

/**
 * Rows per transaction (one statement each): a crowd's backlog is written in several, so the
 * corporation's writer lock is free between them for other writes (housekeeping, requests) within
 * a fraction of a second. A batch that fails after some of them committed is sent again whole, and
 * `recheck` then skips the rows already stored, as after any unclear failure.
 */
const TX_ROWS = 2_000;

/**
 * The batch's scans as one JSON list, stored and counted by one statement: the codes still there
 * (a code deleted while its scans waited loses them, as it lost its other accesses), their
 * accesses, and each code's `scans` moved by its count. Before, a transaction was an id lookup, an
 * INSERT per 500 rows (4,000 parameters each) and an UPDATE per code scanned: under the bench's
 * redirect row (thousands of codes) the writer stored fewer scans a second than the redirect
 * answered, and its backlog held the corporation's writer lock against its other writes for
 * seconds after the crowd (docs/architecture.md, "Cluster rows in a full bench sitting").
 */
// The list goes as text and is cast in the statement: a parameter PostgreSQL infers as json would
// be sent JSON-encoded by the client, a string holding the list.
const STORE_SCANS = `WITH stored AS (
  INSERT INTO qr_accesses (id, qrcode_id, at, ip, user_agent, referer, bot, visitor)
  SELECT x.id, x.qrcode_id, x.at, x.ip, x.user_agent, x.referer, x.bot, x.visitor
  FROM json_to_recordset(CAST(CAST(?1 AS text) AS json)) AS x(id text, qrcode_id text, at text, ip text, user_agent text, referer text, bot boolean, visitor bigint)
  JOIN qr_codes c ON c.id = x.qrcode_id
  RETURNING qrcode_id
)
UPDATE qr_codes SET scans = scans + a.n FROM (SELECT qrcode_id, count(*) AS n FROM stored GROUP BY qrcode_id) AS a WHERE qr_codes.id = a.qrcode_id`;

async function writeRows(tx: TenantDb, rows: AccessRow[], recheck: boolean): Promise<void> {
  if (!rows.length) return;
  const q = clientOf(tx);
  let todo = rows;
  // A batch sent again after an unclear failure must not count twice: per code, the accesses
  // stored within the batch's time range (the code's index), matched by id.
  if (recheck) {
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
    if (!todo.length) return;
  }
  const list = todo.map((r) => ({ id: r[0], qrcode_id: r[1], at: r[2], ip: r[3], user_agent: r[4], referer: r[5], bot: r[6] === 1, visitor: r[6] ? null : visitorKey(r[3], r[4]) }));
  await q.query(STORE_SCANS).run(JSON.stringify(list));
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
