// RADIUS accounting from rlm_rest (`body = 'json'`): Start, Interim-Update and Stop records kept in
// the corporation's database. Records are written in groups (one commit for every record that
// arrived meanwhile) and each request is answered only after its group committed: an answered
// record is durable, and an unanswered one is retransmitted by the NAS. The session the record
// belongs to (isp_radius_sessions) is updated in the same transaction.
import type { Database, Statement } from "bun:sqlite";
import type { AppContext } from "../../core/context";
import { writeTx, type TenantDb } from "../../db/sqlite";
import { ispRadiusAccounting, ispRadiusSessions } from "../../db/tenant/schema";
import { newId } from "../../lib/ids";
import { invalid } from "../../lib/problem";
import { canonicalInstant, nowIso, toIso } from "../../lib/time";

export type AccountingRow = typeof ispRadiusAccounting.$inferInsert;

/** rlm_rest sends `{"Attr": {"type": t, "value": [v, ...]}}`; other clients may send `{"Attr": v}`. */
export type AccountingBody = Record<string, unknown>;

const STATUS_NAMES: Record<string, string> = {
  "1": "Start",
  "2": "Stop",
  "3": "Interim-Update",
  start: "Start",
  stop: "Stop",
  "interim-update": "Interim-Update",
  alive: "Interim-Update",
};

/** The attribute's values, whatever the body's shape; attribute names match case-insensitively. */
function valuesOf(body: AccountingBody, name: string): unknown[] {
  let raw: unknown = body[name];
  if (raw === undefined) {
    const lower = name.toLowerCase();
    const key = Object.keys(body).find((k) => k.toLowerCase() === lower);
    raw = key === undefined ? undefined : body[key];
  }
  if (raw === undefined || raw === null) return [];
  if (typeof raw === "object" && !Array.isArray(raw) && "value" in (raw as object)) raw = (raw as { value: unknown }).value;
  return (Array.isArray(raw) ? raw : [raw]).filter((v) => v !== null && v !== undefined);
}

function text(body: AccountingBody, name: string, max = 253): string | null {
  const v = valuesOf(body, name)[0];
  if (v === undefined) return null;
  if (typeof v !== "string" && typeof v !== "number") throw invalid(name, "must be a string or a number");
  const s = String(v);
  if (s.length > max) throw invalid(name, `must be at most ${max} characters`);
  return s;
}

function count(body: AccountingBody, name: string): number | null {
  const v = valuesOf(body, name)[0];
  if (v === undefined) return null;
  const n = typeof v === "number" ? v : typeof v === "string" && /^\d{1,20}$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw invalid(name, "must be a non-negative integer");
  return n;
}

/** A 64-bit total from the 32-bit counter and its gigaword overflow count (RFC 2869). */
function octets(body: AccountingBody, name: string, gigawords: string): number | null {
  const low = count(body, name);
  const high = count(body, gigawords);
  if (low === null && high === null) return null;
  return (high ?? 0) * 2 ** 32 + (low ?? 0);
}

/** Last second of 9999-12-31 UTC: Unix seconds past it have no ISO 8601 date. */
const MAX_UNIX_SECONDS = 253_402_300_799;

/**
 * Event-Timestamp arrives as a date text from rlm_rest or as Unix seconds; one that is neither, or
 * outside 1970..9999, is null (the record keeps its arrival time): NAS data is taken leniently.
 */
function eventAt(body: AccountingBody): string | null {
  const v = valuesOf(body, "Event-Timestamp")[0];
  if (v === undefined) return null;
  if (typeof v === "number" || (typeof v === "string" && /^\d{1,12}$/.test(v))) {
    const seconds = Number(v);
    return seconds >= 0 && seconds <= MAX_UNIX_SECONDS ? toIso(seconds * 1000) : null;
  }
  if (typeof v === "string") {
    const iso = canonicalInstant(v);
    if (iso) return iso;
    const parsed = Date.parse(v);
    if (!Number.isNaN(parsed)) return toIso(parsed);
  }
  return null;
}

export type ParsedAccounting =
  /**
   * A status corpadmin does not keep (Accounting-On/Off, ...): acknowledged and dropped. For
   * Accounting-On/Off (the NAS restarted), `nasRestart` says when and why its sessions ended.
   */
  | { status: null; nasIp: string | null; nasRestart: { at: string; cause: string } | null }
  | {
      status: string;
      nasIp: string;
      username: string;
      /** Acct-Interim-Interval in seconds when the NAS sent it (it decides when a session goes stale). */
      interimInterval: number | null;
      build(nasId: string, contractId: string | null): AccountingRow;
    };

/** Reads the record; 400 naming the attribute when a required one is missing or malformed. */
export function parseAccounting(body: AccountingBody): ParsedAccounting {
  const statusText = text(body, "Acct-Status-Type");
  if (statusText === null) throw invalid("Acct-Status-Type", "is required");
  const status = STATUS_NAMES[statusText.toLowerCase()] ?? null;
  const nasIp = text(body, "NAS-IP-Address") ?? text(body, "NAS-IPv6-Address");
  if (status === null) {
    const restart = ["7", "8", "accounting-on", "accounting-off"].includes(statusText.toLowerCase());
    return { status, nasIp, nasRestart: restart ? { at: eventAt(body) ?? nowIso(), cause: text(body, "Acct-Terminate-Cause") ?? "NAS-Reboot" } : null };
  }
  const username = text(body, "User-Name");
  const sessionId = text(body, "Acct-Session-Id");
  const missing = [username === null && "User-Name", sessionId === null && "Acct-Session-Id", nasIp === null && "NAS-IP-Address"].filter(Boolean) as string[];
  if (missing.length) throw invalid(missing[0], "is required", missing.slice(1).map((path) => ({ path, message: "is required" })));
  const receivedAt = nowIso();
  const row = {
    nas_ip: nasIp!,
    username: username!,
    session_id: sessionId!,
    unique_session_id: text(body, "Acct-Unique-Session-Id"),
    status_type: status,
    session_time: count(body, "Acct-Session-Time") ?? 0,
    input_octets: octets(body, "Acct-Input-Octets", "Acct-Input-Gigawords"),
    output_octets: octets(body, "Acct-Output-Octets", "Acct-Output-Gigawords"),
    input_packets: count(body, "Acct-Input-Packets"),
    output_packets: count(body, "Acct-Output-Packets"),
    framed_ip: text(body, "Framed-IP-Address"),
    framed_ipv6_prefix: text(body, "Delegated-IPv6-Prefix") ?? text(body, "Framed-IPv6-Prefix"),
    calling_station_id: text(body, "Calling-Station-Id"),
    terminate_cause: text(body, "Acct-Terminate-Cause"),
    event_at: eventAt(body) ?? receivedAt,
    received_at: receivedAt,
    attributes: JSON.stringify(Object.fromEntries(Object.keys(body).map((k) => [k, valuesOf(body, k)]))),
  };
  const interim = count(body, "Acct-Interim-Interval");
  return { status, nasIp: nasIp!, username: username!, interimInterval: interim || null, build: (nasId, contractId) => ({ id: newId(), ...row, nas_id: nasId, contract_id: contractId }) };
}

/** Accounting-On/Off: the NAS restarted, so every session still open on it has ended. */
export function closeNasSessions(db: TenantDb, nasId: string, restart: { at: string; cause: string }): number {
  return writeTx(db, () =>
    db.$client
      .query("UPDATE isp_radius_sessions SET open = 0, stopped_at = ?2, updated_at = ?2, terminate_cause = coalesce(terminate_cause, ?3), received_at = ?4 WHERE open = 1 AND nas_id = ?1")
      .run(nasId, restart.at, restart.cause, nowIso()).changes,
  );
}

interface Pending {
  row: AccountingRow;
  interimInterval: number | null;
  done: (err?: unknown) => void;
}

/** Without Acct-Interim-Interval a session is stale after 15 minutes without a record. */
export const DEFAULT_STALE_MS = 15 * 60_000;
/** With one, after three intervals without a record. */
export const STALE_INTERVALS = 3;

type SessionRow = typeof ispRadiusSessions.$inferSelect;
interface SessionStatements {
  /** Every session with that key: one, unless the NAS reused the id (after a reboot). */
  byKey: Statement<Pick<SessionRow, "id" | "session_time" | "started_at" | "stopped_at"> & { open: number }, [string, string]>;
  insert: Statement<unknown, [Record<string, string | number | null>]>;
  update: Statement<unknown, [Record<string, string | number | null>]>;
}
const sessionStatements = new WeakMap<Database, SessionStatements>();

function statementsOf(sqlite: Database): SessionStatements {
  let s = sessionStatements.get(sqlite);
  if (!s) {
    s = {
      // Not ORDER BY ... LIMIT 1: that costs several times the read of the one row there usually is.
      byKey: sqlite.prepare("SELECT id, session_time, open, started_at, stopped_at FROM isp_radius_sessions WHERE nas_id = ?1 AND acct_session_id = ?2"),
      insert: sqlite.prepare(
        `INSERT INTO isp_radius_sessions (id, nas_id, acct_session_id, username, contract_id, framed_ip, calling_station_id, started_at, updated_at,
           stopped_at, open, stale_at, input_bytes, output_bytes, input_packets, output_packets, session_time, terminate_cause, received_at, created_at)
         VALUES ($id, $nas_id, $acct_session_id, $username, $contract_id, $framed_ip, $calling_station_id, $started_at, $updated_at,
           $stopped_at, $open, $stale_at, $input_bytes, $output_bytes, $input_packets, $output_packets, $session_time, $terminate_cause, $received_at, $received_at)`,
      ),
      update: sqlite.prepare(
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
    sessionStatements.set(sqlite, s);
  }
  return s;
}

/**
 * Folds one new accounting record into its session: a Start opens one (a Start for a session
 * already closed is the NAS reusing the id: a new session); Interim-Update refreshes counters and
 * the stale deadline; Stop closes it. A record for a session never started (its Start lost) opens
 * one dated back by Acct-Session-Time. A record older than what the session holds (a late
 * retransmission) changes nothing; so does one for a closed session, unless that record's own
 * start (its time less Acct-Session-Time) is after the Stop: the NAS restarted and reused the id
 * (its new Start, at session time 0 like the old one's, is taken for a retransmission).
 */
export function applyToSession(sqlite: Database, row: AccountingRow, interimInterval: number | null): void {
  const s = statementsOf(sqlite);
  const stop = row.status_type === "Stop";
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
    $session_time: row.session_time ?? 0,
    $terminate_cause: row.terminate_cause ?? null,
    $received_at: row.received_at,
  };
  let latest: ReturnType<typeof s.byKey.get> = null;
  for (const r of s.byKey.all(row.nas_id, row.session_id)) if (!latest || r.started_at > latest.started_at) latest = r;
  const startedAt = row.status_type === "Start" ? row.event_at : toIso(Date.parse(row.event_at) - (row.session_time ?? 0) * 1000);
  const reused = latest !== null && latest.open !== 1 && (row.status_type === "Start" || startedAt > latest.stopped_at!);
  if (latest && !reused) {
    if (latest.open !== 1) return;
    if (!stop && (row.session_time ?? 0) < latest.session_time) return;
    s.update.run({ ...values, $id: latest.id, $session_time: Math.max(row.session_time ?? 0, latest.session_time) });
    return;
  }
  s.insert.run({
    ...values,
    $id: newId(),
    $nas_id: row.nas_id,
    $acct_session_id: row.session_id,
    $username: row.username,
    $started_at: startedAt,
    $input_bytes: values.$input_bytes ?? 0,
    $output_bytes: values.$output_bytes ?? 0,
    $input_packets: values.$input_packets ?? 0,
    $output_packets: values.$output_packets ?? 0,
  });
}

/**
 * Group commit: records that arrive while a commit is being prepared share it. With one record in
 * flight this is one transaction per record, as before; under load it is one fsync per group.
 */
export class AccountingWriter {
  private queues = new Map<TenantDb, Pending[]>();
  private scheduled = false;

  constructor(private ctx: AppContext) {
    ctx.onClose(() => this.flush());
  }

  /** Resolves once the record is committed (a retransmitted record is ignored by the unique key). */
  write(db: TenantDb, row: AccountingRow, interimInterval: number | null = null): Promise<void> {
    return new Promise((resolve, reject) => {
      let q = this.queues.get(db);
      if (!q) this.queues.set(db, (q = []));
      q.push({ row, interimInterval, done: (err) => (err ? reject(err) : resolve()) });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  flush(): void {
    this.scheduled = false;
    const queues = this.queues;
    this.queues = new Map();
    for (const [db, pending] of queues) {
      try {
        writeTx(db, (tx) => {
          const changes = db.$client.query<{ n: number }, []>("SELECT changes() AS n");
          for (const p of pending) {
            tx.insert(ispRadiusAccounting).values(p.row).onConflictDoNothing().run();
            // A retransmission (same key) was folded into its session when it first arrived.
            if (changes.get()!.n) applyToSession(db.$client, p.row, p.interimInterval);
          }
        });
        for (const p of pending) p.done();
      } catch (err) {
        this.ctx.logger.error("writing RADIUS accounting failed", { error: String(err), records: pending.length });
        for (const p of pending) p.done(err);
      }
    }
  }
}
