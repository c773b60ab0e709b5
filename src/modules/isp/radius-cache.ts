// The NAS rows and layouts RADIUS authorize reads on every Access-Request, kept per corporation
// read connection (on PostgreSQL per corporation) until anything at all changes in that database
// (its change stamp moves, see src/db/change-stamp.ts readStateStamp: on PostgreSQL the attempt
// log's log-only commits do not count). A request takes the snapshot
// once, inside its read, and finds its NAS and layout in it; callers must not modify what they are
// given. Only a read's handle may be passed (never a write's: what a write reads may be rolled back).
import { readStateStamp, stampScope, stateStampHolds } from "../../db/change-stamp";
import type { TenantDb } from "../../db/sqlite";
import type { RadiusNas } from "./nas-service";
import { activeTemplates, layoutStatus, type AttributeTemplate } from "./render-service";

export interface Snapshot {
  stamp: number;
  nas: Map<string, RadiusNas | null>;
  layouts: Map<string, { status: boolean | null; templates: AttributeTemplate[] }>;
}

/** Beyond this many remembered entries (unknown NAS addresses included) a snapshot starts over. */
const MAX_ENTRIES = 1_000;

/** Per read connection (SQLite: kept while the door is open) or corporation (PostgreSQL). */
const snapshots = new WeakMap<object, Snapshot>();

/** The snapshot valid for the database as it is now (a fresh one when anything changed). */
export function radiusSnapshot(db: TenantDb): Snapshot {
  // The state stamp: the attempt log's commits (log-only writes) do not renew the snapshot on PostgreSQL.
  const stamp = readStateStamp(db);
  const scope = stamp === null ? null : stampScope(db);
  // A write's handle: a snapshot for this call only.
  if (stamp === null || !scope) return { stamp: -1, nas: new Map(), layouts: new Map() };
  let snap = snapshots.get(scope);
  if (!snap || snap.stamp !== stamp || snap.nas.size + snap.layouts.size > MAX_ENTRIES) {
    snap = { stamp, nas: new Map(), layouts: new Map() };
    snapshots.set(scope, snap);
  }
  return snap;
}

/** The NAS registered at a canonical address, as `load` reads it, remembered until a change. */
export async function cachedNas(snap: Snapshot, db: TenantDb, ip: string, load: (db: TenantDb, ip: string) => Promise<RadiusNas | null>): Promise<RadiusNas | null> {
  let nas = snap.nas.get(ip);
  if (nas === undefined) {
    nas = await load(db, ip);
    // PostgreSQL: a row read while a write ended may predate it; answered, not kept.
    if (stateStampHolds(db, snap.stamp)) snap.nas.set(ip, nas);
  }
  return nas;
}

/** A layout's status (null: no such layout) and its active attribute templates. */
export async function cachedLayout(snap: Snapshot, db: TenantDb, layoutId: string): Promise<{ status: boolean | null; templates: AttributeTemplate[] }> {
  let layout = snap.layouts.get(layoutId);
  if (!layout) {
    const status = await layoutStatus(db, layoutId);
    layout = { status, templates: status === null ? [] : await activeTemplates(db, layoutId) };
    if (stateStampHolds(db, snap.stamp)) snap.layouts.set(layoutId, layout);
  }
  return layout;
}
