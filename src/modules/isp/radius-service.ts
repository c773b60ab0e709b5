// What the FreeRADIUS rlm_rest rows do (routes in radius.ts). Authorize runs on every
// Access-Request: one read of the corporation's database, the NAS and its layout taken from the
// snapshot cache of that read connection (radius-cache.ts), the contract through the contract
// service on the same handle. Accounting reads the NAS and the contract the same way, then stores
// the record in a grouped write (one transaction, one fsync, for the records arriving together).
import { timingSafeEqual } from "node:crypto";
import type { Static } from "elysia";
import type { TenantDb } from "../../db/sqlite";
import { notFound } from "../../lib/problem";
import { nowIso } from "../../lib/time";
import { contractIdByUsername, findContractByUsername } from "../contract/service";
import { parseAccounting, type AccountingBody } from "./accounting-parse";
import { closeNasSessions, storeAccounting } from "./accounting-service";
import type { AttemptLog } from "./jobs";
import type { AttemptOutcome, AuthorizeQuery } from "./model";
import { radiusNas, refused, type RadiusCaller } from "./radius-auth";
import { cachedLayout, radiusSnapshot, type Snapshot } from "./radius-cache";
import { networkInForce } from "./network-service";
import { renderLayout } from "./render-service";
import { publishNasRestart, publishSessionChange, sessionChangeKind } from "./session-changes";
import type { Changes } from "../../core/changes";

type RlmMap = Record<string, { op: string; value: string | string[]; do_xlat: boolean }>;

const digest = (s: string) => Bun.SHA256.hash(s) as Uint8Array;
/** Equal-length digests, so the comparison takes the same time whatever the password. */
const samePassword = (a: string, b: string) => timingSafeEqual(digest(a), digest(b));

/**
 * The reply attributes for an Access-Request, or a 401 (reject) / 404 (unknown user) carrying the
 * attempt log's reason; every answer with a reason is logged as an attempt.
 */
export function authorize(caller: RadiusCaller, query: Static<typeof AuthorizeQuery>, attempts: AttemptLog): Promise<RlmMap> {
  // One read transaction for the change stamp, the NAS, the layout and the contract: one WAL lock.
  // One read: its statements share one snapshot and one WAL read lock (src/db/door.ts).
  return caller.tenant.read((db) => authorizeIn(db, caller, query, attempts));
}

async function authorizeIn(db: TenantDb, caller: RadiusCaller, query: Static<typeof AuthorizeQuery>, attempts: AttemptLog): Promise<RlmMap> {
  let nasId: string | null = null;
  try {
    const snap = radiusSnapshot(db);
    const nas = await radiusNas(caller, db, snap, query.nas_ip);
    nasId = nas.id;
    if (!nas.layout_id) throw refused("nas-no-layout", "The NAS has no layout");
    const layout = await cachedLayout(snap, db, nas.layout_id);
    if (layout.status !== true) throw refused("layout-inactive", "The NAS's layout is inactive");
    const found = await findContractByUsername(db, query.username);
    if (!found) throw Object.assign(notFound("User"), { radiusReason: "user-unknown" });
    const { contract } = found;
    // ACTIVE, or SUSPENDED under a trust unblock or a reduce/redirect policy (network-service.ts).
    const network = await networkInForce(db, { id: contract.id, contract_status: contract.contract_status, config: found.config }, nowIso());
    if (!network.admitted) throw refused("contract-inactive", "The contract is not active");
    // An empty password is no password: FreeRADIUS sends `password=` for CHAP and MS-CHAP.
    const password = query.password ? query.password : null;
    if (password !== null && !samePassword(password, found.config.password)) throw refused("bad-password", "Wrong password");
    const attributes = await renderLayout(db, nas.layout_id, { contract, config: found.config, password: found.config.password, nas, network }, layout.templates);
    const reply: RlmMap = {};
    for (const a of attributes) {
      const key = `reply:${a.name}`;
      const prior = reply[key];
      // The same attribute twice: rlm_rest adds one per value with "+=".
      if (prior) reply[key] = { op: "+=", value: [...[prior.value].flat(), a.value], do_xlat: false };
      else reply[key] = { op: a.operator, value: a.value, do_xlat: false };
    }
    if (password === null) reply["control:Cleartext-Password"] = { op: ":=", value: found.config.password, do_xlat: false };
    // Without a password FreeRADIUS checks CHAP/MS-CHAP itself: corpadmin only knows it handed the password over.
    logAttempt(attempts, caller, query, nasId, "accept", password === null ? "password-handed-to-freeradius" : "ok");
    return reply;
  } catch (err) {
    const reason = (err as { radiusReason?: string }).radiusReason;
    if (reason) logAttempt(attempts, caller, query, nasId, reason === "user-unknown" ? "notfound" : "reject", reason);
    throw err;
  }
}

function logAttempt(attempts: AttemptLog, caller: RadiusCaller, query: Static<typeof AuthorizeQuery>, nasId: string | null, outcome: AttemptOutcome, reason: string): void {
  attempts.record(caller.tenant, { username: query.username, nas_id: nasId, nas_ip: query.nas_ip, outcome, reason });
}

/**
 * The Acct-Interim-Interval the NAS's layout hands out, when it is a plain number: what the NAS
 * was told, since most NAS do not repeat it in their accounting records.
 */
async function layoutInterimInterval(snap: Snapshot, db: TenantDb, layoutId: string | null): Promise<number | null> {
  if (!layoutId) return null;
  const t = (await cachedLayout(snap, db, layoutId)).templates.find((a) => a.name.toLowerCase() === "acct-interim-interval");
  return t && /^\d{1,6}$/.test(t.value.trim()) && Number(t.value) > 0 ? Number(t.value) : null;
}

/**
 * Stores an accounting record; resolves once it is committed (the NAS is answered then, and an
 * unanswered record is retransmitted by the NAS). Records arriving together share one transaction
 * (`writeGrouped`), each in its own savepoint: a failing one rolls back alone. Returns the
 * record's contract (fair use checks it soon), or null.
 */
export async function account(caller: RadiusCaller, body: AccountingBody, changes: Changes | null = null): Promise<string | null> {
  const record = parseAccounting(body);
  if (record.status === null) {
    // Accounting-On/Off and the like: acknowledged so the NAS stops resending, not stored;
    // On/Off close the NAS's open sessions (it restarted: none of them survived).
    const nasIp = record.nasIp;
    if (nasIp) {
      const { nas, interim } = await caller.tenant.read(async (db) => {
        const snap = radiusSnapshot(db);
        const nas = await radiusNas(caller, db, snap, nasIp);
        return { nas, interim: await layoutInterimInterval(snap, db, nas.layout_id) };
      });
      if (record.nasRestart) {
        const closed = await closeNasSessions(caller.tenant, nas.id, record.nasRestart, interim);
        if (closed > 0 && changes) await publishNasRestart(changes, caller.tenant, caller.corp.id, nas.id);
      }
    }
    return null;
  }
  const { row, interim } = await caller.tenant.read(async (db) => {
    const snap = radiusSnapshot(db);
    const nas = await radiusNas(caller, db, snap, record.nasIp);
    return {
      row: record.build(nas.id, await contractIdByUsername(db, record.username)),
      interim: record.interimInterval ?? (await layoutInterimInterval(snap, db, nas.layout_id)),
    };
  });
  const kind = sessionChangeKind(row.status_type);
  await caller.tenant.writeGrouped(async (tx, scope) => {
    await storeAccounting(tx, row, interim, caller.corp.timezone, scope);
    // The realtime sockets (the online board) hear of it after the COMMIT.
    if (changes && kind) await publishSessionChange(changes, tx, scope, { corpId: caller.corp.id, kind, nasId: row.nas_id, acctSessionId: row.session_id, username: row.username, contractId: row.contract_id ?? null });
  });
  return row.contract_id ?? null;
}
