// Corporations are read on every authenticated request (status gate, timezone, server). The
// cache holds them until a write that changes one publishes CORPS_TOPIC with its id
// (`ctx.changes`, on every node). The rows come from the corporation module (which owns the
// table) through the lookups it hands the kernel.
import type { corporations } from "../db/platform/schema";
import type { PlatformDb } from "../db/sqlite";
import type { Changes } from "./changes";
import type { PlatformDoor } from "./store";

/** `ctx.changes` topic of a corporation's row (key: its id). */
export const CORPS_TOPIC = "corps";

export type CorpRow = typeof corporations.$inferSelect;

export interface CorpLookups {
  byId(db: PlatformDb, id: string): Promise<CorpRow | null>;
  byAuthName(db: PlatformDb, authName: string): Promise<CorpRow | null>;
}

export class CorpCache {
  private byId = new Map<string, CorpRow>();
  private idByName = new Map<string, string>();
  /**
   * Moves on every invalidation: a row read before a change committed and returned after it was
   * invalidated (another node's change arrives at any time) is not kept.
   */
  private epoch = 0;

  constructor(
    private platform: PlatformDoor,
    private lookups: CorpLookups,
    changes: Changes,
  ) {
    changes.subscribe(CORPS_TOPIC, { changed: (id) => this.invalidate(id), resync: () => this.invalidate() });
  }

  /** The cached row, without reading (hot paths that must not await: the QR redirect). */
  peek(id: string): CorpRow | undefined {
    return this.byId.get(id);
  }

  async get(id: string): Promise<CorpRow | null> {
    const hit = this.byId.get(id);
    if (hit) return hit;
    const epoch = this.epoch;
    const row = await this.platform.read((db) => this.lookups.byId(db, id));
    if (row && epoch === this.epoch) this.byId.set(id, row);
    return row;
  }

  /** Finds by auth_name or id (login and change of corporation accept either). */
  async find(authNameOrId: string): Promise<CorpRow | null> {
    // RADIUS names its corporation on every request. A remembered name only points at an id: the
    // row comes from the id cache, which invalidate() keeps current, and must still carry the name.
    const knownId = this.idByName.get(authNameOrId);
    if (knownId !== undefined) {
      const row = await this.get(knownId);
      if (row && row.auth_name === authNameOrId) return row;
      this.idByName.delete(authNameOrId);
    }
    const epoch = this.epoch;
    const byName = await this.platform.read((db) => this.lookups.byAuthName(db, authNameOrId));
    if (byName) {
      if (epoch === this.epoch) {
        if (this.idByName.size >= 10_000) this.idByName.clear();
        this.idByName.set(authNameOrId, byName.id);
        if (!this.byId.has(byName.id)) this.byId.set(byName.id, byName);
      }
      return byName;
    }
    return this.get(authNameOrId);
  }

  /** Drops a corporation (none: all). Writes publish CORPS_TOPIC instead, so every node drops it. */
  invalidate(id?: string): void {
    this.epoch++;
    if (id) this.byId.delete(id);
    else {
      this.byId.clear();
      this.idByName.clear();
    }
  }
}
