// A RADIUS session's start, update or stop, told to the open realtime sockets (the online board
// follows sessions without asking). Not an outbox event and not a webhook group: every interim
// record of every session would go through the outbox and to receivers; what a socket needs is
// "this session changed", once, after the accounting write commits. Carried by `ctx.changes`
// (core/changes.ts), so a socket on another node hears it too (PostgreSQL's change feed).
import type { Changes } from "../../core/changes";
import type { TenantDoor, WriteScope } from "../../core/store";
import type { Handle } from "../../db/handle";

export const SESSIONS_TOPIC = "isp-sessions";

/** `nas_restart`: the NAS said it restarted (Accounting-On/Off) and its open sessions were closed. */
export type SessionChangeKind = "start" | "update" | "stop" | "nas_restart";

export interface SessionChange {
  corpId: string;
  kind: SessionChangeKind;
  nasId: string;
  acctSessionId: string;
  username: string;
  contractId: string | null;
}

const KIND_OF: Record<string, SessionChangeKind> = { Start: "start", "Interim-Update": "update", Stop: "stop" };

/** The accounting status type as a change (Start, Interim-Update, Stop); null for any other. */
export function sessionChangeKind(statusType: string): SessionChangeKind | null {
  return KIND_OF[statusType] ?? null;
}

const keyOf = (change: SessionChange) => JSON.stringify([change.corpId, change.kind, change.nasId, change.acctSessionId, change.username, change.contractId]);

/** Inside the accounting write: the sockets hear of the change once it commits. */
export function publishSessionChange(changes: Changes, tx: Handle, w: WriteScope, change: SessionChange): Promise<void> {
  return changes.publish(tx, w, SESSIONS_TOPIC, keyOf(change));
}

/** The changes of a batch of records, sent together (on PostgreSQL: ≈ 50 a NOTIFY, one statement). */
export function publishSessionChanges(changes: Changes, tx: Handle, w: WriteScope, list: SessionChange[]): Promise<void> {
  return changes.publishMany(tx, w, SESSIONS_TOPIC, list.map(keyOf));
}

/** A change's key read back; null for one this version does not know. */
export function parseSessionChange(key: string): SessionChange | null {
  try {
    const [corpId, kind, nasId, acctSessionId, username, contractId] = JSON.parse(key) as unknown[];
    if (typeof corpId !== "string" || (kind !== "start" && kind !== "update" && kind !== "stop" && kind !== "nas_restart") || typeof nasId !== "string" || typeof acctSessionId !== "string" || typeof username !== "string") return null;
    return { corpId, kind, nasId, acctSessionId, username, contractId: typeof contractId === "string" ? contractId : null };
  } catch {
    return null;
  }
}

/**
 * After a NAS restart closed its open sessions (its own write, accounting-service.ts): the sockets
 * hear of it through a write of its own, not durable (a rare event; a lost one costs a board a
 * stale row until its next read).
 */
export function publishNasRestart(changes: Changes, tenant: TenantDoor, corpId: string, nasId: string): Promise<void> {
  return tenant.write((tx, w) => publishSessionChange(changes, tx, w, { corpId, kind: "nas_restart", nasId, acctSessionId: "", username: "", contractId: null }), { durable: false });
}
