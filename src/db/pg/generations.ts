// Cluster mode: the change stamps of PostgreSQL (the counterpart of src/db/change-stamp.ts, which
// reads SQLite's own counters). A generation per corporation, drawn from the stamps' one sequence,
// that moves when a write of that corporation ends on this node (right after its COMMIT, before
// its caller answers; a write that failed moves it too: a failed COMMIT may still have committed)
// and when the change feed (./feed.ts) reports another node's commit of it. After a feed
// reconnect every generation moves (notifications may have been missed meanwhile).
// Two per corporation: the generation (every write) and the state generation, which a write that
// only appends to a log (`logOnly`: RADIUS attempts, committed once or twice a second under load)
// does not move. Lists and their totals key by the first; caches of what such a log never holds
// (RADIUS authorize's decisions) by the second, so the attempt log does not empty them.
// Consistency of what is cached under a generation: exact on the node that wrote; on other nodes
// stale for at most one NOTIFY delivery after the writer's COMMIT.
import { newStamp } from "../change-stamp";

/** The topic every corporation write notifies (payload key: the corporation id), events or not. */
export const TENANT_WRITES_TOPIC = "tenant-writes";
/** The topic a corporation's log-only write notifies instead (moves the generation, not the state generation). */
export const TENANT_LOG_WRITES_TOPIC = "tenant-log-writes";

/** A subscriber of the change feed (./feed.ts FeedSubscriber, by shape: the feed imports this folder's door). */
export class Generations {
  private current = new Map<string, number>();
  private state = new Map<string, number>();
  /** One scope object per corporation: what per-database caches key by (change-stamp.ts stampScope). */
  private scopes = new Map<string, object>();

  /** The corporation's generation now. */
  of(corpId: string): number {
    let g = this.current.get(corpId);
    if (g === undefined) this.current.set(corpId, (g = newStamp()));
    return g;
  }

  /** The corporation's state generation now (moved by every write but log-only ones). */
  stateOf(corpId: string): number {
    let g = this.state.get(corpId);
    if (g === undefined) this.state.set(corpId, (g = newStamp()));
    return g;
  }

  scope(corpId: string): object {
    let s = this.scopes.get(corpId);
    if (!s) this.scopes.set(corpId, (s = { corpId }));
    return s;
  }

  /** A write of the corporation ended (here, or on another node: the feed). */
  changed(corpId: string): void {
    // Forgotten rather than bumped: the next `of` draws a new stamp, and a corporation nobody
    // reads again keeps no entry.
    this.current.delete(corpId);
    this.state.delete(corpId);
  }

  /** A log-only write of the corporation ended: its state generation stays. */
  logged(corpId: string): void {
    this.current.delete(corpId);
  }

  /** Notifications may have been missed: every generation moves. */
  resync(): void {
    this.current.clear();
    this.state.clear();
  }

  /** The feed's subscriber of TENANT_LOG_WRITES_TOPIC. */
  readonly logWrites = {
    changed: (corpId: string) => this.logged(corpId),
    resync: () => this.resync(),
  };
}
