// RFC 5176 Disconnect and CoA towards the NAS: the operator's "kick this session", and what the
// service does itself when a contract changes (contractWatchers, registered in jobs.ts): a
// contract that leaves ACTIVE has its sessions disconnected; a change of what its NAS's layout
// renders for it (speeds, pools, addresses; not the password) sends the re-rendered attributes in
// a CoA-Request. What to send is read in one read of the corporation's database; the requests go
// out after it, each waiting up to 6 s for its NAS.
import { randomBytes } from "node:crypto";
import type { AppContext, ContractChange } from "../../core/context";
import type { TenantDoor } from "../../core/store";
import type { TenantDb } from "../../db/sqlite";
import { conflict, invalid, notFound } from "../../lib/problem";
import type { SecretBox } from "../../lib/secret-box";
import { toIso } from "../../lib/time";
import { contractConnection, findContract, type ContractConnection } from "../contract/service";
import { sendDynamicAuth, type DynamicAuthKind, type DynamicAuthResult } from "./coa-client";
import { nasById, nasSecret, type NasRow } from "./nas-service";
import { networkInForce, networkRow, type InForce } from "./network-service";
import { renderLayout, type RenderedAttribute } from "./render-service";
import { dictionaryName, RadiusCodecError, valueName, type Attribute } from "./rfc5176";
import { openSessionsOf, requireSession, type SessionRow } from "./session-service";

interface Prepared {
  session: SessionRow;
  nas: NasRow;
  secret: string;
}

/** The session's NAS and its secret in clear; 409 when the NAS is gone, 400 when no secret is kept. */
async function prepare(secrets: SecretBox, db: TenantDb, session: SessionRow): Promise<Prepared> {
  const nas = await nasById(db, session.nas_id);
  if (!nas) throw conflict("The session's NAS no longer exists");
  const secret = nasSecret(secrets, nas);
  if (secret === null) throw invalid("nas_id", `NAS ${nas.name} has no secret stored; set it again (PUT /api/isp/nas/${nas.id} with secret)`);
  return { session, nas, secret };
}

/** What identifies the session to its NAS (RFC 5176 §3). */
function identification(p: Prepared, withFramedIp: boolean): Attribute[] {
  const v6 = p.nas.ip.includes(":");
  const out: Attribute[] = [
    { name: v6 ? "NAS-IPv6-Address" : "NAS-IP-Address", value: p.nas.ip },
    { name: "User-Name", value: p.session.username },
    { name: "Acct-Session-Id", value: p.session.acct_session_id },
  ];
  if (withFramedIp && p.session.framed_ip && !p.session.framed_ip.includes(":")) out.push({ name: "Framed-IP-Address", value: p.session.framed_ip });
  return out;
}

export interface Actor {
  corpId: string;
  userId: string | null;
  ip: string | null;
  /** Why the service sent it on its own (contract left ACTIVE, ...); null: an operator asked. */
  cause: string | null;
}

/**
 * At most this many RFC 5176 requests in flight per app (each holds a UDP socket up to 6 s): a
 * billing run that suspends thousands of contracts at once queues its disconnects instead of
 * running out of file descriptors.
 */
const MAX_IN_FLIGHT = 64;

class Gate {
  private active = 0;
  private waiting: (() => void)[] = [];
  async run<T>(fn: () => Promise<T>): Promise<T> {
    // A finishing request hands its slot to the next waiter directly, so `active` never overshoots.
    if (this.active >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
const gates = new WeakMap<AppContext, Gate>();
const gateOf = (ctx: AppContext) => gates.get(ctx) ?? (gates.set(ctx, new Gate()), gates.get(ctx)!);

async function send(ctx: AppContext, p: Prepared, kind: DynamicAuthKind, attributes: Attribute[], actor: Actor) {
  const action = kind === "disconnect" ? "isp.disconnect" : "isp.coa";
  let result: DynamicAuthResult;
  try {
    result = await gateOf(ctx).run(() =>
      sendDynamicAuth(kind, { ip: p.nas.ip, port: p.nas.coa_port, secret: p.secret }, attributes, { intervalMs: ctx.dispatchTuning.coaRetryMs, now: ctx.now }),
    );
  } catch (err) {
    // An attribute the dictionary cannot encode, or a socket error: nothing (more) was sent.
    await ctx.audit.record({ action, outcome: "failure", actor_user_id: actor.userId, corp_id: actor.corpId, target: `session:${p.session.id}`, ip: actor.ip, reason: `not sent: ${(err as Error).message}` });
    // A stored value RADIUS cannot carry (longer than 253 octets, ...): the session's state, not the request, is at fault.
    if (err instanceof RadiusCodecError) throw conflict(`The request cannot be encoded: ${err.message}`);
    throw err;
  }
  const causeName = result.error_cause === null ? null : valueName("Error-Cause", result.error_cause);
  const reason =
    result.outcome === "ack"
      ? actor.cause
      : result.outcome === "nak"
        ? `nak${result.error_cause === null ? "" : ` Error-Cause ${result.error_cause}${causeName ? ` (${causeName})` : ""}`}`
        : `timeout after ${result.attempts} attempts`;
  await ctx.audit.record({
    action,
    outcome: result.outcome === "ack" ? "success" : "failure",
    actor_user_id: actor.userId,
    corp_id: actor.corpId,
    target: `session:${p.session.id} nas:${p.nas.id} user:${p.session.username}`,
    ip: actor.ip,
    reason: actor.cause && result.outcome !== "ack" ? `${actor.cause}; ${reason}` : reason,
  });
  return { session_id: p.session.id, ...result };
}

export async function disconnectSession(ctx: AppContext, tenant: TenantDoor, id: string, actor: Actor) {
  const p = await tenant.read(async (db) => {
    const session = await requireSession(db, id);
    if (!session.open) throw conflict("The session is not online (it has stopped)");
    return prepare(ctx.secrets, db, session);
  });
  return send(ctx, p, "disconnect", identification(p, true), actor);
}

/** Every open session of the contract, disconnected at once (in parallel: each may wait 6 s). */
export async function disconnectContract(ctx: AppContext, tenant: TenantDoor, contractId: string, actor: Actor) {
  // Checked for every session before anything is sent, so a 400 sends nothing.
  const prepared = await tenant.read(async (db) => {
    if (!(await findContract(db, contractId))) throw notFound("Contract");
    const out: Prepared[] = [];
    for (const s of await openSessionsOf(db, contractId)) out.push(await prepare(ctx.secrets, db, s));
    return out;
  });
  return { items: await Promise.all(prepared.map((p) => send(ctx, p, "disconnect", identification(p, true), actor))) };
}

function rendered(db: TenantDb, layoutId: string, state: ContractConnection, network: InForce, password: string, nas: NasRow): Promise<RenderedAttribute[]> {
  return renderLayout(db, layoutId, { contract: state.contract, config: state.config, password, nas, network });
}

const termsOf = (c: ContractConnection) => ({ id: c.contract.id, contract_status: c.contract.contract_status, config: c.config });

type Reconcile =
  | { prepared: Prepared; kind: DynamicAuthKind; attributes: Attribute[]; cause: string }
  | { failed: SessionRow; kind: DynamicAuthKind; error: string };

/**
 * After a committed change of a contract or of its network state: disconnect when it may no longer
 * be online (it left ACTIVE, and is not SUSPENDED under a trust unblock or a reduce/redirect
 * policy); otherwise a CoA-Request for each open session whose NAS layout renders differently now
 * (the values in force included: throttle, reduce and redirect values; the password alone changes
 * nothing: it is rendered as the new one on both sides).
 */
export async function reconcileContract(ctx: AppContext, change: ContractChange): Promise<void> {
  const before = change.before as ContractConnection | null;
  // The write found no open session under its writer lock: nothing to read.
  if (change.openSessions === false) return;
  const now = toIso(ctx.now());
  const todo = await ctx.store.tenant(change.corpId).read(async (db): Promise<Reconcile[]> => {
    const sessions = await openSessionsOf(db, change.contractId);
    if (!sessions.length) return [];
    const after = await contractConnection(db, change.contractId);
    if (!after || !before) return [];
    const row = await networkRow(db, change.contractId);
    const afterForce = await networkInForce(db, termsOf(after), now, row);
    const beforeForce = (change.beforeNetwork as InForce | undefined) ?? (await networkInForce(db, termsOf(before), now, row));
    const leaves = beforeForce.admitted && !afterForce.admitted;
    const kind: DynamicAuthKind = leaves ? "disconnect" : "coa";
    const out: Reconcile[] = [];
    for (const session of sessions) {
      let p: Prepared;
      try {
        p = await prepare(ctx.secrets, db, session);
      } catch (err) {
        out.push({ failed: session, kind, error: (err as Error).message });
        continue;
      }
      if (leaves) {
        out.push({ prepared: p, kind, attributes: identification(p, true), cause: change.cause ?? `contract ${after.contract.contract_status}` });
        continue;
      }
      if (!afterForce.admitted || !p.nas.layout_id) continue;
      const now = await rendered(db, p.nas.layout_id, after, afterForce, after.config.password, p.nas);
      const was = await rendered(db, p.nas.layout_id, before, beforeForce, after.config.password, p.nas);
      if (JSON.stringify(now) === JSON.stringify(was)) continue;
      // Attributes the dictionary does not know cannot be encoded; the rest still go.
      const attrs = now.filter((a) => dictionaryName(a.name) !== null).map((a) => ({ name: a.name, value: a.value }));
      const renumbers = attrs.some((a) => dictionaryName(a.name) === "Framed-IP-Address");
      out.push({ prepared: p, kind, attributes: [...identification(p, !renumbers), ...attrs], cause: change.cause ?? "connection settings changed" });
    }
    return out;
  });
  const jobs: Promise<unknown>[] = [];
  for (const t of todo) {
    if ("failed" in t) {
      const action = t.kind === "disconnect" ? "isp.disconnect" : "isp.coa";
      const entry = { action, outcome: "failure" as const, actor_user_id: change.actorUserId, corp_id: change.corpId, target: `session:${t.failed.id}`, ip: change.ip, reason: `not sent: ${t.error}` };
      jobs.push(Promise.resolve(ctx.audit.record(entry)));
    } else {
      jobs.push(send(ctx, t.prepared, t.kind, t.attributes, { corpId: change.corpId, userId: change.actorUserId, ip: change.ip, cause: t.cause }));
    }
  }
  await Promise.allSettled(jobs);
}

/**
 * POST /api/isp/nas/{id}/test: a Disconnect-Request for a session no NAS has (a random
 * Acct-Session-Id). Only a NAS holding the secret can sign an answer the client accepts, so any
 * answer proves address, port and secret; the expected one is a NAK with Error-Cause 503
 * (Session-Context-Not-Found). Silence usually means a wrong secret or address (a NAS drops what
 * it cannot authenticate). Audited as isp.nas_test.
 */
export async function testNas(ctx: AppContext, tenant: TenantDoor, nasId: string, actor: Actor) {
  const nas = await tenant.read(async (db) => {
    const row = await nasById(db, nasId);
    if (!row) throw notFound("NAS");
    return row;
  });
  const secret = nasSecret(ctx.secrets, nas);
  if (secret === null) throw invalid("secret", `NAS ${nas.name} has no secret stored; set it again (PUT /api/isp/nas/${nas.id} with secret)`);
  const attributes: Attribute[] = [
    { name: nas.ip.includes(":") ? "NAS-IPv6-Address" : "NAS-IP-Address", value: nas.ip },
    { name: "User-Name", value: "corpadmin-nas-test" },
    { name: "Acct-Session-Id", value: `corpadmin-test-${randomBytes(8).toString("hex")}` },
  ];
  const began = performance.now();
  const result = await gateOf(ctx).run(() => sendDynamicAuth("disconnect", { ip: nas.ip, port: nas.coa_port, secret }, attributes, { intervalMs: ctx.dispatchTuning.coaRetryMs, now: ctx.now }));
  const ms = Math.round(performance.now() - began);
  const causeName = result.error_cause === null ? null : valueName("Error-Cause", result.error_cause);
  await ctx.audit.record({
    action: "isp.nas_test",
    // Any signed answer proves the secret; silence proves nothing.
    outcome: result.outcome === "timeout" ? "failure" : "success",
    actor_user_id: actor.userId,
    corp_id: actor.corpId,
    target: `nas:${nas.id}`,
    ip: actor.ip,
    reason:
      result.outcome === "timeout"
        ? `timeout after ${result.attempts} attempts`
        : `${result.outcome}${result.error_cause === null ? "" : ` Error-Cause ${result.error_cause}${causeName ? ` (${causeName})` : ""}`} in ${ms} ms`,
  });
  return { outcome: result.outcome, error_cause: result.error_cause, ms };
}
