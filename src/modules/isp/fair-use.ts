// Fair use and the end of a grace (routes.md, "Network operations additions"): a contract whose usage
// in its cycle passes its allowance is throttled (ISP_AFTER_THROTTLE, a CoA-Request with the throttle
// speeds); at the next cycle's start, or once its allowance is raised above its usage or removed, it
// is restored (ISP_AFTER_RESTORE, a CoA-Request); a trust unblock's grace that ended returns the
// contract to its suspension (a Change, then a CoA or a Disconnect per the policy).
// Two ways in, one check (checkFairUse):
// - FairUseMarks: the contracts an accounting record or a contract change touched are marked, and
//   checked together fairUseCheckMs later on the node that marked them (the accounting path pays a
//   Set insert, nothing more);
// - the `fair-use` job (one node in cluster mode): every fairUseSweepMs, every contract with an
//   allowance or a network row of every corporation: what a crash lost of the marks, cycle starts,
//   graces that ended.
// Every change is written in one write per corporation pass, re-checked under the write lock with
// conditional statements (two nodes may check one contract at once), as `system:fair-use`.
import type { AppContext, ContractChange } from "../../core/context";
import { runAs } from "../../core/history";
import { CorpIndex } from "../../core/settings";
import type { Job } from "../../core/jobs";
import type { TenantDoor } from "../../core/store";
import { clientOf } from "../../db/rows";
import type { TenantDb } from "../../db/sqlite";
import { toIso } from "../../lib/time";
import { allCorpRefs } from "../corp/service";
import { contractConnection, fairUseTerms, getContractView, type ContractConnection } from "../contract/service";
import { allowanceBytes, contractNetworkHook, cycleOf, cycleUsedBytes, inForceOf, networkRows, readPolicy, type InForce, type NetworkPolicy } from "./network-service";
import { reconcileLater } from "./reconcile-later";
import { usageSums } from "./usage-range";

export const FAIR_USE_ACTOR = "system:fair-use";

type Action = "throttle" | "restore" | "trust-end";

interface Planned {
  contractId: string;
  /** The cycle start to throttle for; null: restore. Absent: no throttle change. */
  throttle?: string | null;
  trustEnd?: boolean;
}

/**
 * What to change: read only, so a pass that finds nothing takes no write lock. `inUse`: the
 * contracts looked at hold an allowance or a network row (the job keeps visiting the corporation).
 */
async function plan(db: TenantDb, ids: string[] | null, nowMs: number, timeZone: string): Promise<{ planned: Planned[]; inUse: boolean }> {
  const policy = await readPolicy(db);
  const cycle = cycleOf(nowMs, timeZone, policy.usage_cycle_day);
  const now = toIso(nowMs);
  const rows = await networkRows(db, ids);
  const terms = new Map((await fairUseTerms(db, ids)).map((t) => [t.id, t]));
  // A contract throttled whose allowance is gone is not in the sweep's terms: read its own.
  const missing = [...rows.keys()].filter((id) => !terms.has(id));
  for (const t of await fairUseTerms(db, missing)) terms.set(t.id, t);
  let sums: Map<string, number> | null = null;
  if (ids === null) {
    const used = await usageSums(db, cycle.start, cycle.end);
    sums = new Map(used.map((u) => [u.contract_id, u.input_bytes + u.output_bytes]));
  }
  const out: Planned[] = [];
  const inUse = rows.size > 0 || [...terms.values()].some((t) => t.allowance_gb !== null);
  for (const id of new Set([...terms.keys(), ...rows.keys()])) {
    const t = terms.get(id);
    const row = rows.get(id) ?? null;
    const p: Planned = { contractId: id };
    const allowance = allowanceBytes(t?.allowance_gb);
    let want: string | null = null;
    if (t && allowance !== null) {
      const used = sums ? (sums.get(id) ?? 0) : await cycleUsedBytes(db, id, cycle);
      if (used > allowance) want = cycle.start;
    }
    if (want !== (row?.throttled_cycle ?? null)) p.throttle = want;
    if (row?.trusted_until != null && row.trusted_until <= now) p.trustEnd = true;
    if (p.throttle !== undefined || p.trustEnd) out.push(p);
  }
  return { planned: out, inUse };
}

interface Done {
  contractId: string;
  action: Action;
  before: ContractConnection;
  beforeNetwork: InForce;
}

const stateOf = (f: InForce) => f.state;

/** Inside the write: applies what is still true under the lock; one Change and one event per change. */
async function apply(tx: TenantDb, w: Parameters<Parameters<TenantDoor["write"]>[0]>[1], planned: Planned[], nowMs: number, timeZone: string): Promise<Done[]> {
  const policy: NetworkPolicy = await readPolicy(tx);
  const now = toIso(nowMs);
  const done: Done[] = [];
  for (const p of planned) {
    const conn = await contractConnection(tx, p.contractId);
    if (!conn) continue;
    const terms = { contract_status: conn.contract.contract_status, config: conn.config };
    let row = (await networkRows(tx, [p.contractId])).get(p.contractId) ?? null;
    if (p.trustEnd && row?.trusted_until != null && row.trusted_until <= now) {
      const was = inForceOf(terms, { ...row, trusted_until: "9999-12-31T23:59:59.999+00:00" }, policy, now);
      await clientOf(tx).query("UPDATE isp_contract_network SET trusted_until = NULL, updated_at = ?2 WHERE contract_id = ?1 AND trusted_until IS NOT NULL AND trusted_until <= ?2").run(p.contractId, now);
      row = { ...row, trusted_until: null };
      // A contract that became ACTIVE meanwhile just loses the grace it no longer needs.
      if (was.state === "trusted") {
        const is = inForceOf(terms, row, policy, now);
        w.record({ type: "contract", id: p.contractId, action: "trust-end", before: { network: { state: stateOf(was) } }, after: { network: { state: stateOf(is) } } });
        done.push({ contractId: p.contractId, action: "trust-end", before: conn, beforeNetwork: was });
      }
    }
    if (p.throttle === undefined || (row?.throttled_cycle ?? null) === p.throttle) continue;
    const was = inForceOf(terms, row, policy, now);
    if (p.throttle !== null) {
      const changed = (await clientOf(tx)
        .query(
          `INSERT INTO isp_contract_network (contract_id, throttled_cycle, throttled_at, updated_at) VALUES (?1, ?2, ?3, ?3)
             ON CONFLICT (contract_id) DO UPDATE SET throttled_cycle = excluded.throttled_cycle, throttled_at = excluded.throttled_at, updated_at = excluded.updated_at
             WHERE isp_contract_network.throttled_cycle IS NULL OR isp_contract_network.throttled_cycle <> excluded.throttled_cycle
           RETURNING contract_id`,
        )
        .get(p.contractId, p.throttle, now)) as { contract_id: string } | null;
      if (!changed) continue;
      // Throttled for an older cycle and over again in this one (a restore missed): no new event.
      if (row?.throttled_cycle != null) continue;
      row = { ...(row ?? { contract_id: p.contractId, trusted_at: null, trusted_until: null }), throttled_cycle: p.throttle, throttled_at: now };
    } else {
      const changed = (await clientOf(tx)
        .query("UPDATE isp_contract_network SET throttled_cycle = NULL, throttled_at = NULL, updated_at = ?2 WHERE contract_id = ?1 AND throttled_cycle IS NOT NULL RETURNING contract_id")
        .get(p.contractId, now)) as { contract_id: string } | null;
      if (!changed) continue;
      row = { ...row!, throttled_cycle: null, throttled_at: null };
    }
    const action: Action = p.throttle !== null ? "throttle" : "restore";
    const is = inForceOf(terms, row, policy, now);
    // `throttled` too: a SUSPENDED contract's state stays "suspended" when fair use throttles it.
    w.record({ type: "contract", id: p.contractId, action, before: { network: { state: stateOf(was), throttled: action === "restore" } }, after: { network: { state: stateOf(is), throttled: action === "throttle" } } });
    w.emit(action === "throttle" ? "ISP_AFTER_THROTTLE" : "ISP_AFTER_RESTORE", p.contractId, (t: TenantDb) => getContractView(contractNetworkHook, t, p.contractId, timeZone));
    done.push({ contractId: p.contractId, action, before: conn, beforeNetwork: was });
  }
  return done;
}

const CAUSES: Record<Action, string> = { throttle: "fair use: over the allowance", restore: "fair use: restored", "trust-end": "trust unblock ended" };

/**
 * Checks `ids` (null: every contract with an allowance or a network row) of one corporation, writes
 * the changes, then sends their CoA/Disconnect (off the pass). Returns how many contracts changed,
 * and whether any of them is under fair use or a grace (`inUse`).
 */
export async function checkFairUse(ctx: AppContext, door: TenantDoor, corpId: string, ids: string[] | null): Promise<{ changed: number; inUse: boolean }> {
  const timeZone = (await ctx.corps.get(corpId))?.timezone ?? "UTC";
  const nowMs = ctx.now();
  const { planned, inUse } = await door.read((db) => plan(db, ids, nowMs, timeZone));
  if (!planned.length) return { changed: 0, inUse };
  const done = await runAs(FAIR_USE_ACTOR, () => door.write((tx, w) => apply(tx, w, planned, nowMs, timeZone)));
  for (const d of done) {
    const change: ContractChange = { corpId, contractId: d.contractId, before: d.before, beforeNetwork: d.beforeNetwork, actorUserId: null, ip: null, cause: CAUSES[d.action] };
    reconcileLater(ctx, change);
  }
  return { changed: done.length, inUse };
}

/**
 * The contracts to check soon, per corporation: marked by every accounting record and contract
 * change, checked together fairUseCheckMs after the first mark (on this node: a record is marked
 * where it was received). A crash loses the marks; the job's next sweep finds what they held.
 */
export class FairUseMarks {
  private marked = new Map<string, Set<string>>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(
    private ctx: AppContext,
    private job: FairUseJob,
  ) {
    ctx.onClose(async () => {
      this.closed = true;
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      await this.running;
    });
  }

  /** The corporation has contracts under fair use or a grace now (a trust unblock): see FairUseJob.watch. */
  watch(corpId: string): Promise<void> {
    return this.job.watch(corpId);
  }

  mark(corpId: string, contractId: string): void {
    if (this.closed) return;
    let set = this.marked.get(corpId);
    if (!set) this.marked.set(corpId, (set = new Set()));
    set.add(contractId);
    if (!this.timer && !this.running) this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.check().finally(() => {
        this.running = null;
        if (this.marked.size && !this.closed) this.schedule();
      });
    }, this.ctx.dispatchTuning.fairUseCheckMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Checks what is marked now; marks made meanwhile wait for the next turn. */
  async check(): Promise<void> {
    const batch = this.marked;
    this.marked = new Map();
    for (const [corpId, ids] of batch) {
      try {
        const { inUse } = await this.ctx.store.visit(corpId, (door) => checkFairUse(this.ctx, door, corpId, [...ids]));
        if (inUse) await this.job.watch(corpId);
      } catch (err) {
        this.ctx.logger.warn("fair use: a check failed", { corp: corpId, contracts: ids.size, error: String(err) });
      }
    }
  }
}

/**
 * The corporations that have contracts under fair use or a grace (platform settings
 * `fair-use:corp:<id>`): on SQLite the job's scheduled passes visit only those, so an idle
 * corporation's file is never opened for it. A corporation enters when a check finds an allowance
 * or a network row (a mark: an accounting record or a contract change) and when a trust unblock is
 * given (before its answer, so its grace's end is seen); it leaves when a pass finds neither.
 */
export const fairUseIndex = new CorpIndex("fair-use");

/**
 * The `fair-use` job: every contract with an allowance or a network row. On SQLite its scheduled
 * passes visit the indexed corporations (fairUseIndex); on PostgreSQL every corporation (one shared
 * pool, no file to open); a pass run now (POST /api/system/jobs/fair-use/run) every corporation.
 */
export class FairUseJob implements Job {
  readonly name = "fair-use";
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  /** fairUseIndex as read once and kept since (null: not read yet). */
  private indexed: Set<string> | null = null;

  constructor(private ctx: AppContext) {}

  private async index(): Promise<Set<string>> {
    this.indexed ??= new Set((await this.ctx.store.platform.read((db) => fairUseIndex.read(db))).corps);
    return this.indexed;
  }

  /** A corporation with contracts under fair use or a grace: indexed (once), visited from the next pass on. */
  async watch(corpId: string): Promise<void> {
    const index = await this.index();
    if (index.has(corpId)) return;
    await fairUseIndex.add(this.ctx.store.platform, corpId);
    index.add(corpId);
  }

  private async unwatch(corpId: string): Promise<void> {
    const index = await this.index();
    if (!index.delete(corpId)) return;
    await fairUseIndex.drop(this.ctx.store.platform, corpId);
  }

  start(): void {
    this.stopped = false;
    const tick = () => void this.ctx.jobs.track(this.name, () => this.run(false)).catch((err) => this.ctx.logger.error("fair-use pass failed", { error: String(err) }));
    tick();
    this.timer = setInterval(tick, this.ctx.dispatchTuning.fairUseSweepMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }

  /** One pass over every corporation (run now); a pass under way is joined. Rejects when a corporation could not be checked. */
  runOnce(): Promise<void> {
    return this.run(true);
  }

  private run(everyCorp: boolean): Promise<void> {
    this.running ??= this.pass(everyCorp).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(everyCorp: boolean): Promise<void> {
    const { ctx } = this;
    const full = everyCorp || ctx.tenants.sharedByNodes;
    const index = await this.index();
    const all = await ctx.store.platform.read(allCorpRefs);
    const corps = all.filter((c) => c.status === "ENABLED" || c.status === "BLOCKED");
    let failed = 0;
    // A deleted corporation leaves the index.
    const existing = new Set(all.map((c) => c.id));
    for (const id of [...index]) if (!existing.has(id)) await this.unwatch(id);
    for (const corp of corps) {
      if (this.stopped) return;
      if (!full && !index.has(corp.id)) continue;
      // Opening the door would create a missing file (reported by the doctor, not papered over here).
      if (ctx.tenants.isMissing(corp.id)) continue;
      try {
        const { changed, inUse } = await ctx.store.visit(corp.id, (door) => checkFairUse(ctx, door, corp.id, null));
        if (inUse) await this.watch(corp.id);
        else await this.unwatch(corp.id);
        if (changed) ctx.logger.info("fair use: contracts changed state", { corp: corp.auth_name, contracts: changed });
      } catch (err) {
        failed++;
        ctx.logger.warn("fair use: a corporation could not be checked", { corp: corp.auth_name, error: String(err) });
      }
    }
    if (failed) throw new Error(`${failed} corporation(s) could not be checked`);
  }
}

/**
 * The doctor's look at a corporation's network policy: when fair use or a reduce/redirect policy
 * is in use, the active NAS whose layout renders no `contract.effective.*` variable (throttle,
 * reduce and redirect values never reach those NAS).
 */
export async function networkLayoutTroubles(db: TenantDb): Promise<string[]> {
  const policy = await readPolicy(db);
  const allowances = (await fairUseTerms(db, null)).length;
  if (policy.suspended_mode === "reject" && allowances === 0) return [];
  const nas = (await clientOf(db)
    .query(
      `SELECT n.name AS nas, l.name AS layout,
              (SELECT count(*) FROM isp_layout_attributes la WHERE la.layout_id = l.id AND la.value LIKE '%contract.effective.%') AS effective
         FROM isp_nas n JOIN isp_layouts l ON l.id = n.layout_id WHERE n.status = 1`,
    )
    .all()) as { nas: string; layout: string; effective: number | string }[];
  return nas.filter((r) => Number(r.effective) === 0).map((r) => `NAS ${r.nas} (layout ${r.layout})`);
}
