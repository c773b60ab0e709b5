// RADIUS accounting records (isp_radius_accounting) and the sessions they make up
// (isp_radius_sessions): each record stored in a grouped write (radius-service.ts account), the
// session it belongs to updated in the same transaction.
import type { TenantDoor } from "../../core/store";
import type { TenantDb } from "../../db/sqlite";
import { ispRadiusAccounting, type ispRadiusSessions } from "../../db/tenant/schema";
import { newId } from "../../lib/ids";
import { nowIso, toIso } from "../../lib/time";
import type { AccountingRow } from "./accounting-parse";

/** Accounting-On/Off: the NAS restarted, so every session still open on it has ended. */
export function closeNasSessions(tenant: TenantDoor, nasId: string, restart: { at: string; cause: string }): Promise<number> {
  return tenant.write(
    (tx) =>
      tx.$client
        .query("UPDATE isp_radius_sessions SET open = 0, stopped_at = ?2, updated_at = ?2, terminate_cause = coalesce(terminate_cause, ?3), received_at = ?4 WHERE open = 1 AND nas_id = ?1")
        .run(nasId, restart.at, restart.cause, nowIso()).changes,
  );
}

/** Without Acct-Interim-Interval a session is stale after 15 minutes without a record. */
export const DEFAULT_STALE_MS = 15 * 60_000;
/** With one, after three intervals without a record. */
export const STALE_INTERVALS = 3;

type SessionRow = typeof ispRadiusSessions.$inferSelect;
type Client = TenantDb["$client"];
type Values = Record<string, string | number | null>;

function prepareSessionStatements(sqlite: Client) {
  return {
    // Every session with that key: one, unless the NAS reused the id (after a reboot). Not ORDER
    // BY ... LIMIT 1: that costs several times the read of the one row there usually is.
    byKey: sqlite.prepare<Pick<SessionRow, "id" | "session_time" | "started_at" | "stopped_at"> & { open: number }, [string, string]>(
      "SELECT id, session_time, open, started_at, stopped_at FROM isp_radius_sessions WHERE nas_id = ?1 AND acct_session_id = ?2",
    ),
    insert: sqlite.prepare<unknown, [Values]>(
      `INSERT INTO isp_radius_sessions (id, nas_id, acct_session_id, username, contract_id, framed_ip, calling_station_id, started_at, updated_at,
           stopped_at, open, stale_at, input_bytes, output_bytes, input_packets, output_packets, session_time, terminate_cause, received_at, created_at)
         VALUES ($id, $nas_id, $acct_session_id, $username, $contract_id, $framed_ip, $calling_station_id, $started_at, $updated_at,
           $stopped_at, $open, $stale_at, $input_bytes, $output_bytes, $input_packets, $output_packets, $session_time, $terminate_cause, $received_at, $received_at)`,
    ),
    update: sqlite.prepare<unknown, [Values]>(
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
type SessionStatements = ReturnType<typeof prepareSessionStatements>;
const sessionStatements = new WeakMap<Client, SessionStatements>();

function statementsOf(sqlite: Client): SessionStatements {
  let s = sessionStatements.get(sqlite);
  if (!s) sessionStatements.set(sqlite, (s = prepareSessionStatements(sqlite)));
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
export function applyToSession(sqlite: Client, row: AccountingRow, interimInterval: number | null): void {
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
 * Inside a write: stores the record and folds it into its session. A retransmission (same NAS,
 * Acct-Session-Id, status and Acct-Session-Time) is ignored by the unique key: it was folded into
 * its session when it first arrived.
 */
export function storeAccounting(tx: TenantDb, row: AccountingRow, interimInterval: number | null): void {
  tx.insert(ispRadiusAccounting).values(row).onConflictDoNothing().run();
  if (tx.$client.query<{ n: number }, []>("SELECT changes() AS n").get()!.n) applyToSession(tx.$client, row, interimInterval);
}

/**
 * Retention: deletes at most `limit` accounting records received before `cutoff` (an instant),
 * returns how many. received_at is corpadmin's clock (event_at is the NAS's, which may be wrong);
 * the id (a UUID v7) is taken with it, so `id < idBelow` (the smallest id of a moment a little
 * after the cutoff) bounds the scan to a range of the primary key. Run inside a write.
 */
export function pruneIspRadiusAccounting(tx: TenantDb, cutoff: string, limit: number, idBelow: string): number {
  return tx.$client
    .query("DELETE FROM isp_radius_accounting WHERE rowid IN (SELECT rowid FROM isp_radius_accounting WHERE id < ?3 AND received_at < ?1 LIMIT ?2)")
    .run(cutoff, limit, idBelow).changes;
}

/**
 * Retention: deletes at most `limit` sessions stale (no record) since before `cutoff`, returns how
 * many. A session goes with its records: stale_at is its last record's received_at plus at most
 * three interim intervals (through the (open, stale_at) index). Run inside a write.
 */
export function pruneIspRadiusSessions(tx: TenantDb, cutoff: string, limit: number): number {
  return tx.$client
    .query("DELETE FROM isp_radius_sessions WHERE rowid IN (SELECT rowid FROM isp_radius_sessions WHERE open IN (0, 1) AND stale_at < ?1 LIMIT ?2)")
    .run(cutoff, limit).changes;
}
