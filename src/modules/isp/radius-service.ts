// What the FreeRADIUS rlm_rest rows do (routes in radius.ts). Authorize runs on every
// Access-Request: its decision kept per state stamp (below), else one read of the corporation's
// database, the NAS and its layout taken from the snapshot cache of that read connection
// (radius-cache.ts), the contract through the contract service on the same handle. Accounting
// looks up the NAS and the contract the same way, then stores the record with the records arriving
// together: one write folds the batch (storeInBatch), in a grouped write (one transaction, one
// fsync).
import { timingSafeEqual } from "node:crypto";
import type { Static } from "elysia";
import type { TenantDb } from "../../db/sqlite";
import { notFound } from "../../lib/problem";
import { nowIso } from "../../lib/time";
import { readStateStamp, stateStampHolds } from "../../db/change-stamp";
import { contractIdByUsername, findContractByUsername } from "../contract/service";
import { parseAccounting, type AccountingBody } from "./accounting-parse";
import { closeNasSessions, storeAccounting, type AccountingItem } from "./accounting-service";
import type { AttemptLog } from "./jobs";
import type { AttemptOutcome, AuthorizeQuery } from "./model";
import type { RadiusNas } from "./nas-service";
import { checkedNas, nasAt, radiusNas, refused, type RadiusCaller } from "./radius-auth";
import { cachedLayout, radiusSnapshot, type Snapshot } from "./radius-cache";
import { networkInForce } from "./network-service";
import { renderLayout } from "./render-service";
import { publishNasRestart, publishSessionChanges, sessionChangeKind, type SessionChange, type SessionChangeKind } from "./session-changes";
import type { Changes } from "../../core/changes";
import type { TenantDoor } from "../../core/store";

type RlmMap = Record<string, { op: string; value: string | string[]; do_xlat: boolean }>;

const digest = (s: string) => Bun.SHA256.hash(s) as Uint8Array;
/** Equal-length digests, so the comparison takes the same time whatever the password. */
const samePassword = (a: string, b: string) => timingSafeEqual(digest(a), digest(b));

/**
 * What authorize decides for a NAS address and a user name before it looks at the password: the
 * NAS (its secret and status are checked on every request), then either a refusal or the reply
 * and the stored password. Kept per state stamp (src/db/change-stamp.ts readStateStamp: any write
 * of the corporation but a log-only one — attempts, accounting, metric values — moves it, on any
 * node through the change feed), so
 * that on PostgreSQL an unchanged corporation answers with no transaction at all, as the contract
 * GET does. Not kept for a SUSPENDED contract (a trust unblock ends with time, not a write) nor
 * a throttled one (its cycle ends).
 */
type Decision = { nas: RadiusNas | null } & ({ refusal: Error & { radiusReason?: string }; nasId: string | null } | { reply: RlmMap; password: string; nasId: string });

/**
 * Values kept per corporation for its current state stamp only: once a write moves the stamp,
 * what was kept under the older one is never read again, so it goes at the first value kept under
 * the new one (kept by key over every stamp, dead entries stayed until the bound, at most 20,000
 * of ≈ 1 kB). All corporations share a bound in estimated bytes; past it, the corporations kept
 * longest ago are dropped first, then the one being kept starts over.
 */
class StampedCache<V> {
  private corps = new Map<string, { stamp: number; values: Map<string, V>; bytes: number }>();
  private bytes = 0;

  constructor(
    private maxBytes: number,
    /** Estimated heap bytes of one entry. */
    private sizeOf: (key: string, value: V) => number,
  ) {}

  get(corpId: string, stamp: number, key: string): V | undefined {
    const kept = this.corps.get(corpId);
    if (kept?.stamp === stamp) return kept.values.get(key);
    this.retire(corpId, stamp);
    return undefined;
  }

  /**
   * Drops what was kept for the corporation under a stamp older than `stamp`: never read again,
   * it was held (live, so doubled in the heap's next growth) until the next `set` of that
   * corporation, i.e. authorize's decisions through every accounting record that followed.
   */
  retire(corpId: string, stamp: number): void {
    const kept = this.corps.get(corpId);
    if (kept && kept.stamp < stamp) this.drop(corpId);
  }

  set(corpId: string, stamp: number, key: string, value: V): void {
    let kept = this.corps.get(corpId);
    // Read before a newer stamp was kept: already out of date.
    if (kept && kept.stamp > stamp) return;
    if (!kept || kept.stamp !== stamp) {
      if (kept) this.drop(corpId);
      kept = { stamp, values: new Map(), bytes: 0 };
      this.corps.set(corpId, kept);
    }
    const size = this.sizeOf(key, value);
    for (const id of this.corps.keys()) {
      if (this.bytes + size <= this.maxBytes || id === corpId) break;
      this.drop(id);
    }
    if (this.bytes + size > this.maxBytes) {
      this.bytes -= kept.bytes;
      kept.values.clear();
      kept.bytes = 0;
    }
    if (kept.values.has(key)) return;
    kept.values.set(key, value);
    kept.bytes += size;
    this.bytes += size;
  }

  /** Estimated bytes held for the corporation (tests). */
  heldFor(corpId: string): number {
    return this.corps.get(corpId)?.bytes ?? 0;
  }

  private drop(corpId: string): void {
    const kept = this.corps.get(corpId);
    if (!kept) return;
    this.corps.delete(corpId);
    this.bytes -= kept.bytes;
  }
}

/** Two bytes a character, and what an object and its properties cost around them (a rough, generous figure). */
const textBytes = (s: string) => 2 * s.length;
const OBJECT_BYTES = 64;

function decisionBytes(key: string, d: Decision): number {
  let n = 4 * OBJECT_BYTES + textBytes(key);
  // A refusal is an Error with its stack text.
  if ("refusal" in d) return n + 1_024;
  n += textBytes(d.password);
  for (const [name, a] of Object.entries(d.reply)) n += OBJECT_BYTES + textBytes(name) + textBytes(a.op) + (Array.isArray(a.value) ? a.value.reduce((t, v) => t + OBJECT_BYTES + textBytes(v), 0) : textBytes(a.value));
  return n;
}

/** The bench's 5,000 users take ≈ 4 MB. */
const decisions = new StampedCache<Decision>(8 * 1024 * 1024, decisionBytes);
const decisionKey = (query: Static<typeof AuthorizeQuery>) => `${query.nas_ip}\n${query.username}`;

type RecordLookup = { nas: RadiusNas; contractId: string | null; interim: number | null };
/** Accounting's lookups (the NAS, the user name's contract, the layout's interval), per state stamp. */
const recordLookups = new StampedCache<RecordLookup>(4 * 1024 * 1024, (key) => 3 * OBJECT_BYTES + textBytes(key) + 80);

/** Estimated bytes of authorize's decisions and accounting's lookups kept for a corporation (tests). */
export function keptRadiusBytes(corpId: string): { decisions: number; lookups: number } {
  return { decisions: decisions.heldFor(corpId), lookups: recordLookups.heldFor(corpId) };
}

/**
 * The reply attributes for an Access-Request, or a 401 (reject) / 404 (unknown user) carrying the
 * attempt log's reason; every answer with a reason is logged as an attempt.
 */
export async function authorize(caller: RadiusCaller, query: Static<typeof AuthorizeQuery>, attempts: AttemptLog): Promise<RlmMap> {
  // Where the door knows its stamp without reading (PostgreSQL), a kept decision needs no read.
  const stamp = caller.tenant.stateStampNow?.();
  const corpId = caller.corp.id;
  const kept = stamp === undefined ? undefined : decisions.get(corpId, stamp, decisionKey(query));
  // One read: its statements share one snapshot (SQLite: one WAL read lock, src/db/door.ts).
  const decision = kept ?? (await caller.tenant.read((db) => decide(db, corpId, query)));
  return answer(decision, caller, query, attempts);
}

/** The decision, read in `db` (or found kept under the read's stamp); kept when it may be. */
async function decide(db: TenantDb, corpId: string, query: Static<typeof AuthorizeQuery>): Promise<Decision> {
  const stamp = readStateStamp(db);
  const key = decisionKey(query);
  const kept = stamp === null ? undefined : decisions.get(corpId, stamp, key);
  if (kept) return kept;
  if (stamp !== null) recordLookups.retire(corpId, stamp);
  const snap = radiusSnapshot(db);
  const nas = await nasAt(db, snap, query.nas_ip);
  let decision: Decision;
  let keep = true;
  try {
    // No NAS, or an inactive one: answer() refuses it with the caller's secret checked first
    // (checkedNas), whatever is kept here.
    if (!nas || !nas.status) throw refused(nas ? "nas-inactive" : "nas-unknown", nas ? "The NAS is inactive" : `No NAS is registered with address ${query.nas_ip}`);
    const checked = nas;
    if (!checked.layout_id) throw refused("nas-no-layout", "The NAS has no layout");
    const layout = await cachedLayout(snap, db, checked.layout_id);
    if (layout.status !== true) throw refused("layout-inactive", "The NAS's layout is inactive");
    const found = await findContractByUsername(db, query.username);
    if (!found) throw Object.assign(notFound("User"), { radiusReason: "user-unknown" });
    const { contract } = found;
    // ACTIVE, or SUSPENDED under a trust unblock or a reduce/redirect policy (network-service.ts).
    const network = await networkInForce(db, { id: contract.id, contract_status: contract.contract_status, config: found.config }, nowIso());
    // Kept only while time alone cannot change it: not SUSPENDED (a trust unblock ends), not
    // throttled (the cycle ends); those are read on every request.
    keep = contract.contract_status !== "SUSPENDED" && network.state === "normal";
    if (!network.admitted) throw refused("contract-inactive", "The contract is not active");
    const attributes = await renderLayout(db, checked.layout_id, { contract, config: found.config, password: found.config.password, nas: checked, network }, layout.templates);
    const reply: RlmMap = {};
    for (const a of attributes) {
      const key = `reply:${a.name}`;
      const prior = reply[key];
      // The same attribute twice: rlm_rest adds one per value with "+=".
      if (prior) reply[key] = { op: "+=", value: [...[prior.value].flat(), a.value], do_xlat: false };
      else reply[key] = { op: a.operator, value: a.value, do_xlat: false };
    }
    decision = { nas, nasId: checked.id, reply, password: found.config.password };
  } catch (err) {
    const refusal = err as Error & { radiusReason?: string };
    if (!refusal.radiusReason) throw err;
    decision = { nas, nasId: nas?.id ?? null, refusal };
  }
  // PostgreSQL: a decision read while a write ended may predate it; answered, not kept.
  if (stamp !== null && keep && stateStampHolds(db, stamp)) decisions.set(corpId, stamp, key, decision);
  return decision;
}

/** The answer to one request from a decision: the caller's NAS secret, then the password. */
function answer(decision: Decision, caller: RadiusCaller, query: Static<typeof AuthorizeQuery>, attempts: AttemptLog): RlmMap {
  let nasId: string | null = null;
  try {
    nasId = checkedNas(caller, decision.nas, query.nas_ip).id;
    if ("refusal" in decision) throw decision.refusal;
    // An empty password is no password: FreeRADIUS sends `password=` for CHAP and MS-CHAP.
    const password = query.password ? query.password : null;
    if (password !== null && !samePassword(password, decision.password)) throw refused("bad-password", "Wrong password");
    const reply: RlmMap = { ...decision.reply };
    if (password === null) reply["control:Cleartext-Password"] = { op: ":=", value: decision.password, do_xlat: false };
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
 * unanswered record is retransmitted by the NAS). Records arriving together are folded in one
 * write (storeInBatch); should it fail, each is stored alone: a failing one fails alone. Returns the
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
  // What a record needs read (its NAS, its contract, the layout's interval), kept per state stamp
  // as authorize's decisions are: while nothing but records and logs are written, none is read.
  const stamp = caller.tenant.stateStampNow?.();
  const corpId = caller.corp.id;
  const key = `${record.nasIp}\n${record.username}`;
  let known = stamp === undefined ? undefined : recordLookups.get(corpId, stamp, key);
  if (!known) {
    known = await caller.tenant.read(async (db) => {
      // SQLite: found under the stamp the read sees.
      const readAt = readStateStamp(db);
      const kept = readAt === null ? undefined : recordLookups.get(corpId, readAt, key);
      if (kept) return kept;
      // The state moved since authorize kept its decisions (on SQLite every record's commit
      // moves it): they are never read again.
      if (readAt !== null) decisions.retire(corpId, readAt);
      const snap = radiusSnapshot(db);
      const nas = await radiusNas(caller, db, snap, record.nasIp);
      const found = { nas, contractId: await contractIdByUsername(db, record.username), interim: await layoutInterimInterval(snap, db, nas.layout_id) };
      if (readAt !== null && stateStampHolds(db, readAt)) recordLookups.set(corpId, readAt, key, found);
      return found;
    });
  }
  // The caller's NAS secret and the NAS's status, checked on every record.
  const nas = checkedNas(caller, known.nas, record.nasIp);
  const row = record.build(nas.id, known.contractId);
  const interim = record.interimInterval ?? known.interim;
  const kind = sessionChangeKind(row.status_type);
  await storeInBatch(caller, changes, { row, interimInterval: interim, kind });
  return row.contract_id ?? null;
}

interface Batched extends AccountingItem {
  kind: SessionChangeKind | null;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * The batch of records still open per corporation's door (its write queued, not started): a
 * record arriving meanwhile joins it. Its write's start closes it; the next record opens the next batch,
 * whose write the door runs after the one in flight (writeGrouped).
 */
const openBatches = new WeakMap<TenantDoor, { items: Batched[] }>();
/** Bounds a batch (and so the wait of the record that joined it last), as the doors bound a group. */
const MAX_BATCH = 64;

/**
 * Stores a record with the records arriving together: one write folds them all
 * (accounting-service.ts storeAccounting: one round trip per step of the batch on PostgreSQL, not
 * per step of each record). Should the batch fail, each of its records is stored alone (each in
 * a write of its own), so one bad record fails alone. Resolves once the record is committed.
 */
function storeInBatch(caller: RadiusCaller, changes: Changes | null, item: Omit<Batched, "resolve" | "reject">): Promise<void> {
  const corpId = caller.corp.id;
  const door = caller.tenant;
  return new Promise<void>((resolve, reject) => {
    const open = openBatches.get(door);
    if (open && open.items.length < MAX_BATCH) {
      open.items.push({ ...item, resolve, reject });
      return;
    }
    const batch = { items: [{ ...item, resolve, reject }] };
    openBatches.set(door, batch);
    const store = (items: Batched[]) =>
      // Log-only: a record changes its session, usage and the NAS's health columns, none of which
      // the NAS/layout snapshot or authorize's decisions hold (they stay while records flow).
      door.writeGrouped(
        async (tx, scope) => {
          if (openBatches.get(door) === batch) openBatches.delete(door);
          await storeAccounting(tx, items, caller.corp.timezone, scope);
          // The realtime sockets (the online board) hear of each after the COMMIT; the batch's
          // changes travel together.
          if (changes) {
            const told: SessionChange[] = [];
            for (const { row, kind } of items)
              if (kind) told.push({ corpId, kind, nasId: row.nas_id, acctSessionId: row.session_id, username: row.username, contractId: row.contract_id ?? null });
            await publishSessionChanges(changes, tx, scope, told);
          }
        },
        { logOnly: true },
      );
    const settled = () => {
      // A write refused before it started (the corporation busy or gone) left the batch open.
      if (openBatches.get(door) === batch) openBatches.delete(door);
    };
    store(batch.items).then(
      () => {
        settled();
        for (const b of batch.items) b.resolve();
      },
      (err: unknown) => {
        settled();
        if (batch.items.length === 1) return batch.items[0].reject(err);
        for (const b of batch.items) store([b]).then(b.resolve, b.reject);
      },
    );
  });
}
