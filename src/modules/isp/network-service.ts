// What the network does with a contract beyond its status (routes.md, "Network operations
// additions"): the corporation's network policy (isp_network_policy), the usage cycle it defines,
// and each contract's network row (isp_contract_network: throttled by fair use, a trust unblock's
// grace). From those and the contract's status and settings come its network state (Contract.network)
// and the values in force (`contract.effective.*` in layouts, RADIUS authorize, CoA). State changes
// are made by fair-use.ts (throttle, restore, the end of a grace) and network-changes.ts (the policy, trust unblock).
// This file reads and computes only; it takes the contract's fields from its callers, so the contract
// module can ask it for Contract.network without a cycle through contract/service.
import type { ContractNetwork, ContractNetworkHook, ContractNetworkTerms as NetworkViewTerms } from "../../core/context";
import { statementsAreRoundTrips, type TenantWriteScope } from "../../core/store";
import type { TogetherRead } from "../../db/handle";
import { clientOf, readTogether } from "../../db/rows";
import type { TenantDb } from "../../db/sqlite";
import { invalid } from "../../lib/problem";
import { dateAsMidnight, localDate, nowIso, toIso } from "../../lib/time";
import type { SuspendedMode } from "./model";
import { contractIdsByOnlineAddress } from "./session-service";
import { usedBytesBetween, usedBytesBetweenRead, usedBytesOf, usedOfRow } from "./usage-range";

export type NetworkState = "normal" | "throttled" | "suspended" | "trusted";

export interface NetworkPolicy {
  usage_cycle_day: number;
  suspended_mode: SuspendedMode;
  suspended_max_upload: string | null;
  suspended_max_download: string | null;
  suspended_pool_ipv4: string | null;
  trust_unblock_days: number;
  trust_unblock_every_days: number;
}

export const DEFAULT_POLICY: NetworkPolicy = {
  usage_cycle_day: 1,
  suspended_mode: "reject",
  suspended_max_upload: null,
  suspended_max_download: null,
  suspended_pool_ipv4: null,
  trust_unblock_days: 0,
  trust_unblock_every_days: 30,
};

const POLICY_ID = "policy";
const POLICY_COLUMNS = "usage_cycle_day, suspended_mode, suspended_max_upload, suspended_max_download, suspended_pool_ipv4, trust_unblock_days, trust_unblock_every_days";

/** The policy as stored, with its updated_at (null: never set, the defaults). */
async function policyRow(db: TenantDb): Promise<(NetworkPolicy & { updated_at: string }) | null> {
  return policyOfRow(await clientOf(db).query(POLICY_READ.sql).get(...POLICY_READ.params));
}

const POLICY_READ: TogetherRead = { sql: `SELECT ${POLICY_COLUMNS}, updated_at FROM isp_network_policy WHERE id = ?1`, params: [POLICY_ID] };

function policyOfRow(stored: unknown): (NetworkPolicy & { updated_at: string }) | null {
  const row = stored as (NetworkPolicy & { updated_at: string }) | null;
  if (!row) return null;
  return { ...row, usage_cycle_day: Number(row.usage_cycle_day), trust_unblock_days: Number(row.trust_unblock_days), trust_unblock_every_days: Number(row.trust_unblock_every_days) };
}

export async function readPolicy(db: TenantDb): Promise<NetworkPolicy> {
  return policyOf(await policyRow(db));
}

function policyOf(row: (NetworkPolicy & { updated_at: string }) | null): NetworkPolicy {
  if (!row) return { ...DEFAULT_POLICY };
  const { updated_at: _, ...policy } = row;
  return policy;
}

/**
 * The usage cycle day the last single view found: a guess for the next view's usage read, which
 * is read again when the policy it reads with it says otherwise (never trusted as the policy).
 */
let cycleDayGuess = DEFAULT_POLICY.usage_cycle_day;

/** GET /api/isp/policy. */
export async function policyView(db: TenantDb): Promise<NetworkPolicy & { updated_at: string | null }> {
  return (await policyRow(db)) ?? { ...DEFAULT_POLICY, updated_at: null };
}

export type PolicyInput = { [K in keyof NetworkPolicy]?: NetworkPolicy[K] | null };

/**
 * PUT /api/isp/policy, inside its write: every writable field replaced (left out: its default);
 * reduce needs both speeds, redirect a pool. Returns the policy before and after (the caller
 * reconciles the contracts whose values in force changed).
 */
export async function writePolicy(tx: TenantDb, w: TenantWriteScope, body: PolicyInput): Promise<{ before: NetworkPolicy; after: NetworkPolicy & { updated_at: string } }> {
  const p: NetworkPolicy = {
    usage_cycle_day: body.usage_cycle_day ?? DEFAULT_POLICY.usage_cycle_day,
    suspended_mode: body.suspended_mode ?? DEFAULT_POLICY.suspended_mode,
    suspended_max_upload: body.suspended_max_upload ?? null,
    suspended_max_download: body.suspended_max_download ?? null,
    suspended_pool_ipv4: body.suspended_pool_ipv4 ?? null,
    trust_unblock_days: body.trust_unblock_days ?? DEFAULT_POLICY.trust_unblock_days,
    trust_unblock_every_days: body.trust_unblock_every_days ?? DEFAULT_POLICY.trust_unblock_every_days,
  };
  if (p.suspended_mode === "reduce") {
    if (!p.suspended_max_upload) throw invalid("suspended_max_upload", "is required when suspended_mode is reduce");
    if (!p.suspended_max_download) throw invalid("suspended_max_download", "is required when suspended_mode is reduce");
  }
  if (p.suspended_mode === "redirect" && !p.suspended_pool_ipv4) throw invalid("suspended_pool_ipv4", "is required when suspended_mode is redirect");
  const stored = await policyRow(tx);
  const before = await readPolicy(tx);
  const updatedAt = nowIso();
  if (stored && (Object.keys(p) as (keyof NetworkPolicy)[]).every((k) => stored[k] === p[k])) return { before, after: stored };
  await clientOf(tx)
    .query(
      `INSERT INTO isp_network_policy (id, ${POLICY_COLUMNS}, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
         ON CONFLICT (id) DO UPDATE SET usage_cycle_day = excluded.usage_cycle_day, suspended_mode = excluded.suspended_mode,
           suspended_max_upload = excluded.suspended_max_upload, suspended_max_download = excluded.suspended_max_download,
           suspended_pool_ipv4 = excluded.suspended_pool_ipv4, trust_unblock_days = excluded.trust_unblock_days,
           trust_unblock_every_days = excluded.trust_unblock_every_days, updated_at = excluded.updated_at`,
    )
    .run(POLICY_ID, p.usage_cycle_day, p.suspended_mode, p.suspended_max_upload, p.suspended_max_download, p.suspended_pool_ipv4, p.trust_unblock_days, p.trust_unblock_every_days, updatedAt);
  w.record({ type: "policy", id: POLICY_ID, action: stored ? "update" : "create", before: stored ? before : null, after: p });
  return { before, after: { ...p, updated_at: updatedAt } };
}

const DAY_MS = 86_400_000;
const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/**
 * The usage cycle holding the instant `at`: [start, end) local dates, from the policy's day of the
 * month to the same day of the next month, in the corporation's timezone.
 */
export function cycleOf(at: number, timeZone: string, cycleDay: number): { start: string; end: string } {
  const [y, m, d] = localDate(at, timeZone).split("-").map(Number);
  const month = d >= cycleDay ? m - 1 : m - 2;
  const date = (mm: number) => new Date(Date.UTC(y, mm, cycleDay)).toISOString().slice(0, 10);
  return { start: date(month), end: date(month + 1) };
}

/** Bytes (download plus upload) the contract used in the cycle. */
export function cycleUsedBytes(db: TenantDb, contractId: string, cycle: { start: string; end: string }): Promise<number> {
  return usedBytesBetween(db, contractId, cycle.start, addDays(cycle.end, -1));
}

export const allowanceBytes = (allowanceGb: number | null | undefined) => (allowanceGb === null || allowanceGb === undefined ? null : Math.round(allowanceGb * 1e9));

export interface NetworkRow {
  contract_id: string;
  throttled_cycle: string | null;
  throttled_at: string | null;
  trusted_at: string | null;
  trusted_until: string | null;
}

const NETWORK_COLUMNS = "contract_id, throttled_cycle, throttled_at, trusted_at, trusted_until";

export async function networkRow(db: TenantDb, contractId: string): Promise<NetworkRow | null> {
  const read = networkRowRead(contractId);
  return (await clientOf(db).query(read.sql).get(...read.params)) as NetworkRow | null;
}

const networkRowRead = (contractId: string): TogetherRead => ({ sql: `SELECT ${NETWORK_COLUMNS} FROM isp_contract_network WHERE contract_id = ?1`, params: [contractId] });

/** The network rows of `ids`, or (null) of every contract throttled or in a grace; by contract id. */
export async function networkRows(db: TenantDb, ids: string[] | null): Promise<Map<string, NetworkRow>> {
  const rows = (
    ids === null
      ? await clientOf(db).query(`SELECT ${NETWORK_COLUMNS} FROM isp_contract_network WHERE throttled_cycle IS NOT NULL OR trusted_until IS NOT NULL`).all()
      : await clientOf(db).query(`SELECT ${NETWORK_COLUMNS} FROM isp_contract_network WHERE contract_id IN (SELECT value FROM json_each(?1))`).all(JSON.stringify(ids))
  ) as unknown as NetworkRow[];
  return new Map(rows.map((r) => [r.contract_id, r]));
}

/** The contract fields the values in force depend on. */
export interface NetworkTerms {
  contract_status: string;
  config: {
    max_upload: string | null;
    max_download: string | null;
    pool_name_ipv4: string | null;
    allowance_gb?: number | null;
    throttle_max_upload?: string | null;
    throttle_max_download?: string | null;
  };
}

/** What the network gives a contract now: its state, whether it may be online, and the values in force. */
export interface InForce {
  state: NetworkState;
  /** May hold a session: ACTIVE, or SUSPENDED while trusted or under a reduce/redirect policy. */
  admitted: boolean;
  max_upload: string | null;
  max_download: string | null;
  pool_name_ipv4: string | null;
}

const trustedNow = (row: NetworkRow | null, now: string) => row?.trusted_until != null && row.trusted_until > now;

/** The state and values in force, from the contract, its network row and the policy (no read). */
export function inForceOf(terms: NetworkTerms, row: NetworkRow | null, policy: NetworkPolicy | null, now: string): InForce {
  const c = terms.config;
  const own = { max_upload: c.max_upload, max_download: c.max_download, pool_name_ipv4: c.pool_name_ipv4 };
  const throttled = row?.throttled_cycle != null;
  // While throttled, a speed the contract has no throttle value for stays its own.
  const served = throttled ? { ...own, max_upload: c.throttle_max_upload ?? c.max_upload, max_download: c.throttle_max_download ?? c.max_download } : own;
  if (terms.contract_status === "ACTIVE") return { state: throttled ? "throttled" : "normal", admitted: true, ...served };
  if (terms.contract_status !== "SUSPENDED") return { state: "normal", admitted: false, ...own };
  if (trustedNow(row, now)) return { state: "trusted", admitted: true, ...served };
  const p = policy ?? DEFAULT_POLICY;
  if (p.suspended_mode === "reduce") return { state: "suspended", admitted: true, ...own, max_upload: p.suspended_max_upload, max_download: p.suspended_max_download };
  if (p.suspended_mode === "redirect") return { state: "suspended", admitted: true, ...own, pool_name_ipv4: p.suspended_pool_ipv4 };
  return { state: "suspended", admitted: false, ...own };
}

/**
 * The values in force for a contract, read in the caller's handle. RADIUS authorize runs this on
 * every Access-Request: an ACTIVE contract without an allowance can be neither throttled nor
 * trusted, so it costs no read (a throttle outliving a removed allowance is lifted by the fair-use
 * checker within seconds); the policy is read only for a SUSPENDED contract.
 */
export async function networkInForce(db: TenantDb, terms: NetworkTerms & { id: string }, now: string, row?: NetworkRow | null): Promise<InForce> {
  if (row === undefined) {
    const quiet = terms.contract_status === "ACTIVE" && terms.config.allowance_gb == null;
    row = quiet ? null : await networkRow(db, terms.id);
  }
  const policy = terms.contract_status === "SUSPENDED" ? await readPolicy(db) : null;
  return inForceOf(terms, row, policy, now);
}

export type { ContractNetwork, ContractNetworkTerms as NetworkViewTerms } from "../../core/context";

/**
 * ctx.contractNetwork, set by the ISP module: the contract view's network figures and its ?q's
 * online addresses, asked by the contract module, which imports nothing of the ISP's.
 */
export const contractNetworkHook: ContractNetworkHook = { networks: contractNetworks, onlineAddressIds: contractIdsByOnlineAddress };

/**
 * Contract.network for each contract, read in the caller's handle in three statements whatever
 * their number (a page of views): the state, since when and until when, and the current cycle's
 * usage against the allowance. `freshUntil`: the instant an answer stops being true without any
 * write (the cycle's end, a grace's end), for the contract body cache.
 */
export async function contractNetworks(db: TenantDb, contracts: NetworkViewTerms[], timeZone: string, nowMs: number): Promise<{ network: ContractNetwork; freshUntil: number }[]> {
  if (!contracts.length) return [];
  const ids = contracts.map((c) => c.id);
  let policy: NetworkPolicy;
  let rows: Map<string, NetworkRow | null>;
  let used: Map<string, number>;
  let cycle: { start: string; end: string };
  if (ids.length === 1 && statementsAreRoundTrips(db)) {
    // One view (GET /api/contract/{id}, an upsert's answer, an event) on PostgreSQL: the policy,
    // the network row and the usage in one statement (readTogether). The usage's cycle needs the
    // policy's day: it is read for the day the last view found, and again when this policy says
    // otherwise (a corporation's first view after its cycle day changed, or another corporation's).
    const guess = cycleOf(nowMs, timeZone, cycleDayGuess);
    const [stored, row, usage] = await readTogether(db, [POLICY_READ, networkRowRead(ids[0]), usedBytesBetweenRead(ids[0], guess.start, addDays(guess.end, -1))]);
    policy = policyOf(policyOfRow(stored));
    cycleDayGuess = policy.usage_cycle_day;
    cycle = cycleOf(nowMs, timeZone, policy.usage_cycle_day);
    rows = new Map([[ids[0], row as NetworkRow | null]]);
    used = new Map([[ids[0], cycle.start === guess.start ? usedOfRow(usage) : await cycleUsedBytes(db, ids[0], cycle)]]);
  } else {
    policy = await readPolicy(db);
    rows = ids.length === 1 ? new Map([[ids[0], await networkRow(db, ids[0])]]) : await networkRows(db, ids);
    cycle = cycleOf(nowMs, timeZone, policy.usage_cycle_day);
    used = ids.length === 1 ? new Map([[ids[0], await cycleUsedBytes(db, ids[0], cycle)]]) : await usedBytesOf(db, ids, cycle.start, addDays(cycle.end, -1));
  }
  const now = toIso(nowMs);
  const start = dateAsMidnight(cycle.start, timeZone)!;
  const end = dateAsMidnight(cycle.end, timeZone)!;
  return contracts.map((contract) => {
    const row = rows.get(contract.id) ?? null;
    let freshUntil = Date.parse(end);
    let state: NetworkState = "normal";
    let since: string | null = null;
    let until: string | null = null;
    if (contract.contract_status === "SUSPENDED") {
      if (trustedNow(row, now)) {
        state = "trusted";
        since = row!.trusted_at;
        until = row!.trusted_until;
        freshUntil = Math.min(freshUntil, Date.parse(until!));
      } else {
        state = "suspended";
        since = dateAsMidnight(contract.suspension_date, timeZone);
      }
    } else if (row?.throttled_cycle != null) {
      state = "throttled";
      since = row.throttled_at;
    }
    return {
      network: {
        state,
        // A suspension's since is its suspension_date, as contract dates are written (midnight with the corporation's offset).
        since: since === null || state === "suspended" ? since : toIso(Date.parse(since)),
        until: until === null ? null : toIso(Date.parse(until)),
        cycle: { start, end, used_bytes: used.get(contract.id) ?? 0, allowance_bytes: allowanceBytes(contract.allowance_gb) },
      },
      freshUntil,
    };
  });
}
