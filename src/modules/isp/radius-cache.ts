// The NAS rows and layouts RADIUS authorize reads on every Access-Request, kept per corporation
// connection until anything at all changes in that database: the connection's own writes
// (total_changes(), which also counts statements later rolled back) or another connection's
// commits (data_version). A request takes the snapshot once (two tiny reads) and finds its NAS and
// layout in it; callers must not modify what they are given.
import type { Database, Statement } from "bun:sqlite";
import type { TenantDb } from "../../db/sqlite";
import { activeTemplates, layoutStatus, type AttributeTemplate } from "./render";
import type { RadiusNas } from "./radius-auth";

export interface Snapshot {
  version: string;
  nas: Map<string, RadiusNas | null>;
  layouts: Map<string, { status: boolean | null; templates: AttributeTemplate[] }>;
}

/** Beyond this many remembered entries (unknown NAS addresses included) a snapshot starts over. */
const MAX_ENTRIES = 1_000;

interface Entry {
  changesStmt: Statement<{ c: number }, []>;
  // PRAGMA itself: through the pragma_data_version table function it costs three times as much.
  dataVersionStmt: Statement<{ data_version: number }, []>;
  snap: Snapshot;
}

const snapshots = new WeakMap<Database, Entry>();

/** The snapshot valid for the database as it is now (a fresh one when anything changed). */
export function radiusSnapshot(db: TenantDb): Snapshot {
  let entry = snapshots.get(db.$client);
  if (!entry) {
    entry = {
      changesStmt: db.$client.prepare("SELECT total_changes() AS c"),
      dataVersionStmt: db.$client.prepare("PRAGMA data_version"),
      snap: { version: "", nas: new Map(), layouts: new Map() },
    };
    snapshots.set(db.$client, entry);
  }
  const version = `${entry.changesStmt.get()!.c}:${entry.dataVersionStmt.get()!.data_version}`;
  const snap = entry.snap;
  if (snap.version !== version || snap.nas.size + snap.layouts.size > MAX_ENTRIES) {
    entry.snap = { version, nas: new Map(), layouts: new Map() };
  }
  return entry.snap;
}

/** The NAS registered at a canonical address, as `load` reads it, remembered until a change. */
export function cachedNas(snap: Snapshot, db: TenantDb, ip: string, load: (db: TenantDb, ip: string) => RadiusNas | null): RadiusNas | null {
  let nas = snap.nas.get(ip);
  if (nas === undefined) snap.nas.set(ip, (nas = load(db, ip)));
  return nas;
}

/** A layout's status (null: no such layout) and its active attribute templates. */
export function cachedLayout(snap: Snapshot, db: TenantDb, layoutId: string): { status: boolean | null; templates: AttributeTemplate[] } {
  let layout = snap.layouts.get(layoutId);
  if (!layout) {
    const status = layoutStatus(db, layoutId);
    layout = { status, templates: status === null ? [] : activeTemplates(db, layoutId) };
    snap.layouts.set(layoutId, layout);
  }
  return layout;
}
