// Background work of the ISP module, one instance of each per app (built by index.ts):
// - AttemptLog: the buffered, budgeted log of RADIUS authorize attempts.
// - watchContracts: RFC 5176 Disconnect/CoA after committed contract changes (contractWatchers).
// Each finishes its pending work when the app closes (ctx.onClose).
import type { AppContext } from "../../core/context";
import type { TenantDoor } from "../../core/store";
import { newId } from "../../lib/ids";
import { toIso } from "../../lib/time";
import { storeAttempts, type AttemptRow } from "./attempt-service";
import type { FairUseMarks } from "./fair-use";
import { openSessionProbe } from "./session-service";
import type { AttemptOutcome } from "./model";
import { awaitReconcilesOnClose, reconcileLater } from "./reconcile-later";

export interface Attempt {
  username: string;
  nas_id: string | null;
  nas_ip: string;
  outcome: AttemptOutcome;
  /** A short code: ok, bad-password, contract-inactive, user-unknown, nas-unknown, ... */
  reason: string;
}

const FLUSH_MS = 100;
const FLUSH_AT = 200;
/**
 * Attempts kept per corporation and second: refusals (what the screen is for) up to REFUSALS,
 * accepts up to ACCEPTS; past that a second's attempts are counted, not stored. Measured: storing
 * every attempt at the bench's 24,000 authorizations a second halved authorize's throughput (each
 * commit on the event loop, and each one a change that renews the NAS/layout snapshot).
 */
const REFUSALS_PER_SECOND = 200;
const ACCEPTS_PER_SECOND = 20;

interface SecondBudget {
  second: number;
  accepts: number;
  refusals: number;
}

/**
 * RADIUS authorize attempts (the "why can't this customer connect" screen). Authorize only appends
 * to memory; the buffer is committed in one transaction per corporation every 100 ms, or at once
 * when it reaches 200 attempts, and when the service stops. Under a flood only a budget per
 * corporation and second is stored (REFUSALS_PER_SECOND, ACCEPTS_PER_SECOND), so a corporation
 * commits attempts about once or twice a second whatever the load. Those commits skip the fsync
 * (`durable: false`: WAL keeps the file consistent, the next ordinary commit makes them durable)
 * and are log-only (`logOnly`: on PostgreSQL they keep authorize's decisions and snapshot).
 * Bound on loss: a crash loses the attempts not yet committed (≤ 100 ms, ≤ 200 per corporation);
 * an attempt is a diagnostic, nobody is billed by it. No password is ever part of an attempt. The
 * list route commits the buffer before it reads, so what it shows is complete up to the request.
 */
export class AttemptLog {
  private buffers = new Map<TenantDoor, AttemptRow[]>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private budgets = new Map<TenantDoor, SecondBudget>();
  private committing = new Map<TenantDoor, Promise<void>>();

  constructor(private ctx: AppContext) {
    ctx.onClose(() => {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      return this.flushAll();
    });
  }

  record(tenant: TenantDoor, a: Attempt): void {
    const now = this.ctx.now();
    const second = Math.floor(now / 1000);
    let budget = this.budgets.get(tenant);
    if (!budget || budget.second !== second) this.budgets.set(tenant, (budget = { second, accepts: 0, refusals: 0 }));
    if (a.outcome === "accept" ? budget.accepts++ >= ACCEPTS_PER_SECOND : budget.refusals++ >= REFUSALS_PER_SECOND) {
      return;
    }
    let buf = this.buffers.get(tenant);
    if (!buf) this.buffers.set(tenant, (buf = []));
    buf.push({ id: newId(), at: toIso(now), ...a, username: a.username.slice(0, 253), nas_ip: a.nas_ip.slice(0, 64) });
    if (buf.length >= FLUSH_AT) void this.flush(tenant);
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flushAll();
      }, FLUSH_MS);
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  /**
   * Commits the corporation's buffered attempts; resolves when they, and any batch of it already
   * committing, are committed. Never rejects (a failure is logged).
   */
  async flush(tenant: TenantDoor): Promise<void> {
    const rows = this.buffers.get(tenant);
    if (!rows?.length) {
      await this.committing.get(tenant);
      return;
    }
    this.buffers.delete(tenant);
    // Writes to one database commit in the order they were asked for: waiting for the latest is
    // waiting for all.
    const job = tenant.write((tx) => storeAttempts(tx, rows), { durable: false, logOnly: true }).catch((err) => {
      // A closed or failing database: the attempts are diagnostics, logged and let go.
      this.ctx.logger.warn("writing RADIUS attempts failed", { error: String(err), attempts: rows.length });
    });
    this.committing.set(tenant, job);
    await job;
    if (this.committing.get(tenant) === job) this.committing.delete(tenant);
  }

  async flushAll(): Promise<void> {
    const second = Math.floor(this.ctx.now() / 1000);
    for (const [tenant, budget] of this.budgets) if (budget.second < second) this.budgets.delete(tenant);
    await Promise.all([...this.buffers.keys()].map((tenant) => this.flush(tenant)));
  }
}

/**
 * Registers the contract watchers: the sessions' reconcile (reconcile-later.ts), and fair use's mark (a
 * changed allowance may throttle or restore the contract: fair-use.ts).
 */
export function watchContracts(ctx: AppContext, fairUse: FairUseMarks): void {
  ctx.openSessionProbe = openSessionProbe;
  awaitReconcilesOnClose(ctx);
  ctx.contractWatchers.push((change) => reconcileLater(ctx, change));
  ctx.contractWatchers.push((change) => fairUse.mark(change.corpId, change.contractId));
}
