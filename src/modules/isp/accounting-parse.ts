// RADIUS accounting from rlm_rest (`body = 'json'`): reading a Start, Interim-Update or Stop
// record into the row accounting-service.ts stores (the group commit is in jobs.ts).
import type { ispRadiusAccounting } from "../../db/tenant/schema";
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
