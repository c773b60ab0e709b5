// The RADIUS sessions' reconcile after a committed contract change, off the request: used by the
// contract watcher (jobs.ts watchContracts), fair use (fair-use.ts) and the network changes
// (network-changes.ts). A file of its own so those import it without importing each other.
import type { AppContext, ContractChange } from "../../core/context";
import { reconcileContract } from "./dynamic-auth";

const pendingReconciles = new WeakMap<AppContext, Set<Promise<unknown>>>();

/**
 * After a committed change of a contract or of its network state, its RADIUS sessions are
 * disconnected or re-authorized (dynamic-auth.ts), off the request (the answer does not wait up to
 * 6 s for a NAS). Pending work is awaited when the app closes (awaitReconcilesOnClose).
 */
export function reconcileLater(ctx: AppContext, change: ContractChange): void {
  const pending = pendingReconciles.get(ctx);
  const job = reconcileContract(ctx, change).catch((err) => ctx.logger.error("RADIUS session reconcile failed", { error: String(err), contract: change.contractId }));
  if (!pending) return;
  pending.add(job);
  void job.finally(() => pending.delete(job));
}

/** The app's close waits for the reconciles still running (called once per app, by watchContracts). */
export function awaitReconcilesOnClose(ctx: AppContext): void {
  const pending = new Set<Promise<unknown>>();
  pendingReconciles.set(ctx, pending);
  ctx.onClose(() => Promise.allSettled([...pending]).then(() => undefined));
}
