// RADIUS accounting records (isp_radius_accounting) and the sessions they make up
// (isp_radius_sessions): each record stored in a grouped write (radius-service.ts account) under
// the session it belongs to (radius_session_id), that session updated in the same transaction.
import { eq } from "drizzle-orm";
import type { TenantDoor, TenantWriteScope } from "../../core/store";
import { clientOf } from "../../db/rows";
import type { TenantDb } from "../../db/sqlite";
import { ispNas, type ispRadiusSessions } from "../../db/tenant/schema";
import { newId } from "../../lib/ids";
import { nowIso, toIso } from "../../lib/time";
import type { AccountingRow } from "./accounting-parse";
import { nasView } from "./nas-service";
import { counterGrowth, splitOverDays, UsageTally } from "./usage-service";

/** Accounting-On/Off: the NAS restarted, so every session still open on it has ended. */
export function closeNasSessions(tenant: TenantDoor, nasId: string, restart: { at: string; cause: string }, interimInterval: number | null): Promise<number> {
  return tenant.write(async (tx, scope) => {
    const receivedAt = nowIso();
    const closed = (
      await clientOf(tx)
        .query("UPDATE isp_radius_sessions SET open = 0, stopped_at = ?2, updated_at = ?2, terminate_cause = coalesce(terminate_cause, ?3), received_at = ?4 WHERE open = 1 AND nas_id = ?1")
        .run(nasId, restart.at, restart.cause, receivedAt)
    ).changes;
    // The NAS spoke, and has no open session left.
    await noteNasRestart(tx, scope, nasId, receivedAt, interimInterval);
    return closed;
  });
}

/**
 * While its NAS is quiet, a session's stale_at holds this instant instead (the health job sets it
 * when it announces the NAS quiet): no customer is shown as dropped because the NAS, not the
 * customer, went silent. The NAS's next record gives them a stale window again.
 */
export const HELD_STALE_AT = "9999-12-31T23:59:59.999+00:00";

/** Without Acct-Interim-Interval a NAS with open sessions is quiet after 30 minutes without a record. */
export const DEFAULT_QUIET_MS = 30 * 60_000;
/** With one, after two intervals without a record. */
export const QUIET_INTERVALS = 2;

function nasStatements(tx: TenantDb) {
  const client = clientOf(tx);
  return {
    quietSince: client.query<{ quiet_since: string | null }, [string]>("SELECT quiet_since FROM isp_nas WHERE id = ?1"),
    state: client.query<{ quiet_since: string | null; open_sessions: number }, [string]>("SELECT quiet_since, open_sessions FROM isp_nas WHERE id = ?1"),
    heardOnce: client.query<unknown, [string, string, string, number]>("UPDATE isp_nas SET last_accounting_at = ?2, quiet_after = ?3, open_sessions = ?4, quiet_since = NULL WHERE id = ?1"),
    reset: client.query<unknown, [string, string, string]>("UPDATE isp_nas SET last_accounting_at = ?2, quiet_after = ?3, open_sessions = 0, quiet_since = NULL WHERE id = ?1"),
    release: client.query<unknown, [string, string, string]>("UPDATE isp_radius_sessions SET stale_at = ?2 WHERE nas_id = ?1 AND open = 1 AND stale_at = ?3"),
  };
}

/**
 * Inside a restart's write (closeNasSessions): the NAS's health columns (nas-service.ts nasHealth)
 * follow the record, so a list of NAS never reads sessions: none of its sessions is open. A NAS
 * the health job had announced quiet is back (nasBack).
 */
async function noteNasRestart(tx: TenantDb, scope: TenantWriteScope | null, nasId: string, receivedAt: string, interimInterval: number | null): Promise<void> {
  const s = nasStatements(tx);
  // Sent together (one round trip on PostgreSQL): statements run in the order sent, so the read
  // sees quiet_since before the update clears it.
  const [quiet] = await Promise.all([s.quietSince.get(nasId), s.reset.run(nasId, receivedAt, quietAfterOf(receivedAt, interimInterval))]);
  if ((quiet?.quiet_since ?? null) !== null) await nasBack(tx, scope, nasId, receivedAt, interimInterval);
}

const quietAfterOf = (receivedAt: string, interimInterval: number | null) =>
  toIso(Date.parse(receivedAt) + (interimInterval ? QUIET_INTERVALS * interimInterval * 1000 : DEFAULT_QUIET_MS));

/**
 * A NAS the health job had announced quiet spoke again (after its row's quiet_since was cleared):
 * its held sessions get a stale window from the record that brought it back, and
 * ISP_AFTER_NAS_BACK is written with that record.
 */
async function nasBack(tx: TenantDb, scope: TenantWriteScope | null, nasId: string, receivedAt: string, interimInterval: number | null): Promise<void> {
  const staleMs = interimInterval ? STALE_INTERVALS * interimInterval * 1000 : DEFAULT_STALE_MS;
  await nasStatements(tx).release.run(nasId, toIso(Date.parse(receivedAt) + staleMs), HELD_STALE_AT);
  const row = await tx.select().from(ispNas).where(eq(ispNas.id, nasId)).get();
  if (row && scope) scope.emit("ISP_AFTER_NAS_BACK", nasId, nasView(row, receivedAt));
}

/**
 * The NAS health columns of a batch of records (storeAccounting): each NAS's row read once, its
 * read sent before the batch's other statements; its open-session count followed record by record
 * (as the per-record update did, never below 0); its row written once, after the batch, with its
 * last record's instant. The batch runs under the writer lock, so no other write moves the count
 * meanwhile. One update per NAS and batch, not per record: on PostgreSQL each update of a row
 * already updated in the transaction also re-checks its layout's foreign key.
 */
class NasTally {
  private nas = new Map<
    string,
    {
      read: Promise<{ quiet_since: string | null; open_sessions: number } | null>;
      open: number | null;
      last: { receivedAt: string; interimInterval: number | null } | null;
      back: { receivedAt: string; interimInterval: number | null } | null;
    }
  >();

  constructor(private tx: TenantDb) {}

  /** A NAS of the batch: its row is read now. */
  expect(nasId: string): void {
    if (this.nas.has(nasId)) return;
    // A promise on either engine (SQLite's statement answers at once).
    const read = Promise.resolve(nasStatements(this.tx).state.get(nasId));
    // Awaited by heard(); a batch failing before that must not leave it unhandled.
    read.catch(() => {});
    this.nas.set(nasId, { read, open: null, last: null, back: null });
  }

  /** A record of the NAS folded in, changing its open sessions by `delta`. */
  async heard(nasId: string, receivedAt: string, interimInterval: number | null, delta: number): Promise<void> {
    const n = this.nas.get(nasId)!;
    const row = await n.read;
    // A NAS deleted meanwhile: nothing to note, as the update found no row.
    if (!row) return;
    if (n.open === null) {
      n.open = Number(row.open_sessions);
      if (row.quiet_since !== null) n.back = { receivedAt, interimInterval };
    }
    n.open = Math.max(0, n.open + delta);
    n.last = { receivedAt, interimInterval };
  }

  /** Writes each NAS's row (inside the batch's write). */
  async flush(scope: TenantWriteScope | null): Promise<void> {
    const s = nasStatements(this.tx);
    await Promise.all(
      [...this.nas].map(async ([nasId, n]) => {
        if (n.open === null || !n.last) return;
        await s.heardOnce.run(nasId, n.last.receivedAt, quietAfterOf(n.last.receivedAt, n.last.interimInterval), n.open);
        if (n.back) await nasBack(this.tx, scope, nasId, n.back.receivedAt, n.back.interimInterval);
      }),
    );
  }
}

/**
 * The open sessions per NAS counted again (the health job's start: a database from before the
 * counter, or sessions pruned while open). Run inside a write.
 */
export async function recountNasSessions(tx: TenantDb): Promise<void> {
  const counts = await clientOf(tx).query<{ nas_id: string; n: number }, []>("SELECT nas_id, count(*) AS n FROM isp_radius_sessions WHERE open = 1 GROUP BY nas_id").all();
  const byNas = new Map(counts.map((c) => [c.nas_id, Number(c.n)]));
  const nas = await clientOf(tx).query<{ id: string; open_sessions: number }, []>("SELECT id, open_sessions FROM isp_nas").all();
  for (const n of nas) {
    const actual = byNas.get(n.id) ?? 0;
    if (Number(n.open_sessions) !== actual) await clientOf(tx).query("UPDATE isp_nas SET open_sessions = ?2 WHERE id = ?1").run(n.id, actual);
  }
}

/** Without Acct-Interim-Interval a session is stale after 15 minutes without a record. */
export const DEFAULT_STALE_MS = 15 * 60_000;
/** With one, after three intervals without a record. */
export const STALE_INTERVALS = 3;

type SessionRow = typeof ispRadiusSessions.$inferSelect;
type Values = Record<string, string | number | null>;

/** The statements of storeAccounting, cached by their text on the writer's connection. */
function sessionStatements(tx: TenantDb) {
  const client = clientOf(tx);
  return {
    // Every session with that key: one, unless the NAS reused the id (after a reboot). Not ORDER
    // BY ... LIMIT 1: that costs several times the read of the one row there usually is.
    byKey: client.query<KeyedSession, [string, string]>(`SELECT ${SESSION_COLUMNS} FROM isp_radius_sessions WHERE nas_id = ?1 AND acct_session_id = ?2`),
    update: client.query<unknown, [Values]>(
      `UPDATE isp_radius_sessions SET
           contract_id = coalesce($contract_id, contract_id), framed_ip = coalesce($framed_ip, framed_ip),
           calling_station_id = coalesce($calling_station_id, calling_station_id), updated_at = $updated_at,
           stopped_at = $stopped_at, open = $open, stale_at = $stale_at,
           input_bytes = coalesce($input_bytes, input_bytes), output_bytes = coalesce($output_bytes, output_bytes),
           input_packets = coalesce($input_packets, input_packets), output_packets = coalesce($output_packets, output_packets),
           session_time = $session_time, terminate_cause = coalesce($terminate_cause, terminate_cause), received_at = $received_at
         WHERE id = $id`,
    ),
  };
}

type Cells = (string | number | null)[];

const RECORD_COLUMNS =
  "id, nas_id, nas_ip, username, contract_id, session_id, radius_session_id, unique_session_id, status_type, session_time, input_octets, output_octets, input_packets, output_packets, framed_ip, framed_ipv6_prefix, calling_station_id, terminate_cause, event_at, received_at, attributes";
const NEW_SESSION_COLUMNS =
  "id, nas_id, acct_session_id, username, contract_id, framed_ip, calling_station_id, started_at, updated_at, stopped_at, open, stale_at, input_bytes, output_bytes, input_packets, output_packets, session_time, terminate_cause, received_at, created_at";

/** The record's cells under its session, in RECORD_COLUMNS' order. */
function recordCells(r: AccountingRow, sessionId: string): Cells {
  return [
    r.id!, r.nas_id, r.nas_ip, r.username, r.contract_id ?? null, r.session_id, sessionId, r.unique_session_id ?? null, r.status_type, r.session_time ?? 0,
    r.input_octets ?? null, r.output_octets ?? null, r.input_packets ?? null, r.output_packets ?? null, r.framed_ip ?? null, r.framed_ipv6_prefix ?? null,
    r.calling_station_id ?? null, r.terminate_cause ?? null, r.event_at, r.received_at, r.attributes,
  ];
}

/**
 * What a multi-row insert writes: a new session, a record of a known session (a retransmission
 * inserts nothing: its unique key is session, status, Acct-Session-Time), or the first record of
 * a session created in the same batch, which nothing can repeat (no ON CONFLICT: on PostgreSQL
 * its arbiter is an index probe and a speculative insertion's extra WAL record per row).
 */
type InsertKind = "isp_radius_sessions" | "isp_radius_accounting" | "new_session_records";

/**
 * Raw multi-row inserts (Drizzle's insert builder costs tens of µs a row): statements of 64, 16,
 * 4 and 1 rows, a few texts each prepared once per connection. The sum of `changes` is returned.
 */
function insertRows(tx: TenantDb, kind: InsertKind, rows: Cells[]): Promise<{ changes: number }>[] {
  const out: Promise<{ changes: number }>[] = [];
  let at = 0;
  for (const size of KEY_CHUNKS)
    for (; rows.length - at >= size; at += size) out.push(clientOf(tx).query<unknown, Cells>(insertText(kind, rows[0].length, size)).run(...rows.slice(at, at + size).flat()));
  return out;
}

const insertTexts = new Map<string, string>();
function insertText(kind: InsertKind, width: number, size: number): string {
  const key = `${kind} ${size}`;
  let text = insertTexts.get(key);
  if (!text) {
    const row = `(${Array.from({ length: width }, () => "?").join(", ")})`;
    const into = kind === "isp_radius_sessions" ? `isp_radius_sessions (${NEW_SESSION_COLUMNS})` : `isp_radius_accounting (${RECORD_COLUMNS})`;
    text = `INSERT INTO ${into} VALUES ${Array.from({ length: size }, () => row).join(", ")}${kind === "isp_radius_accounting" ? " ON CONFLICT DO NOTHING" : ""}`;
    insertTexts.set(key, text);
  }
  return text;
}

/**
 * The new sessions of a batch whose keys have one record each (most batches: a record per session),
 * with their records: inserted after the fold, all in a few statements, the sessions before the
 * records that refer to them. A key with several records inserts its session at once (its next
 * record reads it).
 */
class NewSessions {
  readonly sessions: Cells[] = [];
  readonly records: Cells[] = [];

  async flush(tx: TenantDb): Promise<void> {
    await Promise.all([...insertRows(tx, "isp_radius_sessions", this.sessions), ...insertRows(tx, "new_session_records", this.records)]);
  }
}

/**
 * A record of a closed session may come from up to this long before the session's start as
 * corpadmin dated it: clocks in whole seconds, a session dated back from a record whose Start was lost.
 */
const START_SLACK_MS = 60_000;

type KeyedSession = Pick<SessionRow, "id" | "session_time" | "started_at" | "stopped_at" | "updated_at" | "contract_id" | "input_bytes" | "output_bytes"> & { open: number };

/**
 * The session, among those with the record's (NAS, Acct-Session-Id), a record belongs to; null
 * when it starts a new one. A NAS reuses session ids after a restart (RFC 2866 leaves them unique
 * only until then), so the key of a session is (NAS, Acct-Session-Id, start): the record's own
 * start is its time less Acct-Session-Time. It belongs to the newest session, unless it started
 * within the lifetime of an older one (a late record of that one). A closed session takes a record
 * only if the record started within it; one starting after the Stop (or before the session, a NAS
 * whose clock restarted too) opens a new session: the id was reused.
 */
function sessionOf(sessions: KeyedSession[], recordStart: string): KeyedSession | null {
  if (!sessions.length) return null;
  // Creation order (ids are UUID v7), not started_at: a restarted NAS's clock may have gone back.
  sessions.sort((a, b) => (a.id < b.id ? -1 : 1));
  const within = (s: KeyedSession) => s.stopped_at !== null && recordStart <= s.stopped_at && Date.parse(recordStart) >= Date.parse(s.started_at) - START_SLACK_MS;
  let k = sessions.length - 1;
  while (k > 0 && within(sessions[k - 1])) k--;
  const session = sessions[k];
  return session.open === 1 || within(session) ? session : null;
}

/** A record to store, with the Acct-Interim-Interval its NAS was told (or null). */
export interface AccountingItem {
  row: AccountingRow;
  interimInterval: number | null;
}

/**
 * Inside a write: stores each record under its session and folds it in. A Start opens a session;
 * Interim-Update refreshes counters and the stale deadline; Stop closes it. A record for a session
 * never started (its Start lost) opens one dated back by Acct-Session-Time. A retransmission (same
 * session, status and Acct-Session-Time) is ignored by the unique key: it was folded in when it
 * first arrived. A record older than what the session holds (a late one) is stored and changes
 * nothing; so does any record of a closed session.
 *
 * A record folded in adds its session's counter growth since the session's previous record to the
 * contract's daily usage (usage-service.ts), spread from that record's time to its own over the
 * days, in `timeZone`, it spans; a record that changes nothing adds nothing, so a duplicate or a
 * late record never counts twice.
 *
 * A batch (the records that arrived together, radius-service.ts account) is folded session by
 * session: the records of one (NAS, Acct-Session-Id) in their order, the sessions side by side
 * (their statements go out together: a round trip per step of the batch on PostgreSQL, not per
 * step of each record). Its usage is summed per contract and day and its NAS's health columns
 * follow its last record, each written once at the end (UsageTally, NasTally).
 */
export async function storeAccounting(tx: TenantDb, items: readonly AccountingItem[], timeZone: string, scope: TenantWriteScope | null = null): Promise<void> {
  const usage = new UsageTally();
  const nas = new NasTally(tx);
  const bySession = new Map<string, AccountingItem[]>();
  for (const item of items) {
    const key = `${item.row.nas_id}\n${item.row.session_id}`;
    const list = bySession.get(key);
    if (list) list.push(item);
    else bySession.set(key, [item]);
    nas.expect(item.row.nas_id);
  }
  // The sessions of every key, read together; a key's later records read them again (its own
  // earlier records changed them).
  const known = sessionsOfKeys(tx, [...bySession.values()].map((records) => records[0].row));
  const created = new NewSessions();
  await Promise.all(
    [...bySession.entries()].map(async ([key, records]) => {
      for (const [i, { row, interimInterval }] of records.entries()) {
        const sessions = i === 0 ? ((await known).get(key) ?? []) : await sessionStatements(tx).byKey.all(row.nas_id, row.session_id);
        const delta = await foldRecord(tx, row, sessions, interimInterval, timeZone, usage, records.length === 1 ? created : null);
        await nas.heard(row.nas_id, row.received_at, interimInterval, delta);
      }
    }),
  );
  await Promise.all([created.flush(tx), usage.flush(tx), nas.flush(scope)]);
}

const SESSION_COLUMNS = "id, session_time, open, started_at, stopped_at, updated_at, contract_id, input_bytes, output_bytes";

/** Statements of 64, 16, 4 and 1 keys: a few texts (each prepared once per connection) whatever the count. */
const KEY_CHUNKS = [64, 16, 4, 1];

/**
 * The sessions of each (NAS, Acct-Session-Id) of `rows`, by "nas\nsession id": one statement per
 * NAS and up to 64 ids, sent together (a promise: a batch's NAS reads go out with it).
 */
async function sessionsOfKeys(tx: TenantDb, rows: AccountingRow[]): Promise<Map<string, KeyedSession[]>> {
  const byNas = new Map<string, string[]>();
  for (const r of rows) {
    const ids = byNas.get(r.nas_id);
    if (ids) ids.push(r.session_id);
    else byNas.set(r.nas_id, [r.session_id]);
  }
  const reads: Promise<(KeyedSession & { acct_session_id: string; nas_id: string })[]>[] = [];
  for (const [nasId, ids] of byNas) {
    let at = 0;
    for (const size of KEY_CHUNKS)
      for (; ids.length - at >= size; at += size)
        reads.push(
          Promise.resolve(
            clientOf(tx)
              .query<KeyedSession & { acct_session_id: string; nas_id: string }, string[]>(
                `SELECT ${SESSION_COLUMNS}, nas_id, acct_session_id FROM isp_radius_sessions WHERE nas_id = ? AND acct_session_id IN (${Array.from({ length: size }, () => "?").join(", ")})`,
              )
              .all(nasId, ...ids.slice(at, at + size)),
          ),
        );
  }
  const out = new Map<string, KeyedSession[]>();
  for (const rows of await Promise.all(reads))
    for (const r of rows) {
      const key = `${r.nas_id}\n${r.acct_session_id}`;
      const list = out.get(key);
      if (list) list.push(r);
      else out.set(key, [r]);
    }
  return out;
}

/**
 * Stores the record, folds it into its session (one of `sessions`, those of its key) and its
 * usage; returns the change in the NAS's open sessions.
 */
async function foldRecord(
  tx: TenantDb,
  row: AccountingRow,
  sessions: KeyedSession[],
  interimInterval: number | null,
  timeZone: string,
  tally: UsageTally,
  later: NewSessions | null,
): Promise<number> {
  const s = sessionStatements(tx);
  const stop = row.status_type === "Stop";
  const sessionTime = row.session_time ?? 0;
  const recordStart = row.status_type === "Start" ? row.event_at : toIso(Date.parse(row.event_at) - sessionTime * 1000);
  const session = sessionOf(sessions, recordStart);
  const staleMs = interimInterval ? STALE_INTERVALS * interimInterval * 1000 : DEFAULT_STALE_MS;
  const values = {
    $contract_id: row.contract_id ?? null,
    $framed_ip: row.framed_ip ?? null,
    $calling_station_id: row.calling_station_id ?? null,
    $updated_at: row.event_at,
    $stopped_at: stop ? row.event_at : null,
    $open: stop ? 0 : 1,
    $stale_at: toIso(Date.parse(row.received_at) + staleMs),
    $input_bytes: row.input_octets ?? null,
    $output_bytes: row.output_octets ?? null,
    $input_packets: row.input_packets ?? null,
    $output_packets: row.output_packets ?? null,
    $session_time: sessionTime,
    $terminate_cause: row.terminate_cause ?? null,
    $received_at: row.received_at,
  };
  if (session) {
    // A retransmission inserts nothing: folded in when it first came.
    const [stored] = insertRows(tx, "isp_radius_accounting", [recordCells(row, session.id)]);
    if (!(await stored).changes) return 0;
    if (session.open !== 1) return 0;
    if (!stop && sessionTime < session.session_time) return 0;
    const update = s.update.run({ ...values, $id: session.id, $session_time: Math.max(sessionTime, session.session_time) });
    const contractId = row.contract_id ?? session.contract_id;
    // A Stop older than what the session holds closes it but brings no growth (its counters are behind).
    if (contractId && sessionTime >= session.session_time) {
      const growth = {
        input: counterGrowth(Number(session.input_bytes), row.input_octets),
        output: counterGrowth(Number(session.output_bytes), row.output_octets),
        seconds: Math.max(0, sessionTime - session.session_time),
      };
      if (growth.input || growth.output || growth.seconds) tally.add(contractId, splitOverDays(Date.parse(session.updated_at), Date.parse(row.event_at), growth, timeZone));
    }
    await update;
    return stop ? -1 : 0;
  }
  const id = newId();
  const v = values;
  const created: Cells = [id, row.nas_id, row.session_id, row.username, v.$contract_id, v.$framed_ip, v.$calling_station_id, recordStart, v.$updated_at, v.$stopped_at, v.$open, v.$stale_at,
    v.$input_bytes ?? 0, v.$output_bytes ?? 0, v.$input_packets ?? 0, v.$output_packets ?? 0, v.$session_time, v.$terminate_cause, v.$received_at, v.$received_at];
  // The first record of a session: everything its counters hold, since the session's start.
  const growth = { input: row.input_octets ?? 0, output: row.output_octets ?? 0, seconds: sessionTime };
  if (row.contract_id && (growth.input || growth.output || growth.seconds)) tally.add(row.contract_id, splitOverDays(Date.parse(recordStart), Date.parse(row.event_at), growth, timeZone));
  if (later) {
    later.sessions.push(created);
    later.records.push(recordCells(row, id));
  } else {
    // The session and its record go out together (one round trip on PostgreSQL; the statements
    // run in the order sent, the session before the record that refers to it).
    await Promise.all([...insertRows(tx, "isp_radius_sessions", [created]), ...insertRows(tx, "new_session_records", [recordCells(row, id)])]);
  }
  return stop ? 0 : 1;
}

/**
 * Retention: deletes at most `limit` accounting records received before `cutoff` (an instant),
 * returns how many. received_at is corpadmin's clock (event_at is the NAS's, which may be wrong);
 * the id (a UUID v7) is taken with it, so `id < idBelow` (the smallest id of a moment a little
 * after the cutoff) bounds the scan to a range of the primary key. Run inside a write.
 */
export async function pruneIspRadiusAccounting(tx: TenantDb, cutoff: string, limit: number, idBelow: string): Promise<number> {
  const deleted = await clientOf(tx)
    .query("DELETE FROM isp_radius_accounting WHERE rowid IN (SELECT rowid FROM isp_radius_accounting WHERE id < ?3 AND received_at < ?1 LIMIT ?2)")
    .run(cutoff, limit, idBelow);
  return deleted.changes;
}

/**
 * Retention: deletes at most `limit` sessions stale (no record) since before `cutoff`, returns how
 * many. A session goes with its records: stale_at is its last record's received_at plus at most
 * three interim intervals (through the (open, stale_at) index). Run inside a write.
 */
export async function pruneIspRadiusSessions(tx: TenantDb, cutoff: string, limit: number): Promise<number> {
  // Open ones that go leave their NAS's count (a Stop never came; the batch is the same rows in
  // both statements: one transaction).
  const open = await clientOf(tx)
    .query<{ nas_id: string; n: number }, [string, number]>(
      "SELECT nas_id, count(*) AS n FROM isp_radius_sessions WHERE rowid IN (SELECT rowid FROM isp_radius_sessions WHERE open IN (0, 1) AND stale_at < ?1 LIMIT ?2) AND open = 1 GROUP BY nas_id",
    )
    .all(cutoff, limit);
  const deleted = await clientOf(tx)
    .query("DELETE FROM isp_radius_sessions WHERE rowid IN (SELECT rowid FROM isp_radius_sessions WHERE open IN (0, 1) AND stale_at < ?1 LIMIT ?2)")
    .run(cutoff, limit);
  for (const o of open) await clientOf(tx).query("UPDATE isp_nas SET open_sessions = CASE WHEN open_sessions < ?2 THEN 0 ELSE open_sessions - ?2 END WHERE id = ?1").run(o.nas_id, Number(o.n));
  return deleted.changes;
}
