// Corporations are read on every authenticated request (status gate, timezone, server). The
// cache holds them until the corporation module invalidates an entry after a change.
import { eq, sql } from "drizzle-orm";
import { corporations } from "../db/platform/schema";
import type { PlatformDb } from "../db/sqlite";

export type CorpRow = typeof corporations.$inferSelect;

export class CorpCache {
  private byId = new Map<string, CorpRow>();
  private idByName = new Map<string, string>();
  private byIdStmt;
  private byNameStmt;

  constructor(db: PlatformDb) {
    this.byIdStmt = db.select().from(corporations).where(eq(corporations.id, sql.placeholder("id"))).prepare();
    this.byNameStmt = db.select().from(corporations).where(eq(corporations.auth_name, sql.placeholder("name"))).prepare();
  }

  get(id: string): CorpRow | null {
    const hit = this.byId.get(id);
    if (hit) return hit;
    const row = this.byIdStmt.get({ id }) ?? null;
    if (row) this.byId.set(id, row);
    return row;
  }

  /** Finds by auth_name or id (login and change of corporation accept either). */
  find(authNameOrId: string): CorpRow | null {
    // RADIUS names its corporation on every request. A remembered name only points at an id: the
    // row comes from the id cache, which invalidate() keeps current, and must still carry the name.
    const knownId = this.idByName.get(authNameOrId);
    if (knownId !== undefined) {
      const row = this.get(knownId);
      if (row && row.auth_name === authNameOrId) return row;
      this.idByName.delete(authNameOrId);
    }
    const byName = this.byNameStmt.get({ name: authNameOrId });
    if (byName) {
      if (this.idByName.size >= 10_000) this.idByName.clear();
      this.idByName.set(authNameOrId, byName.id);
      if (!this.byId.has(byName.id)) this.byId.set(byName.id, byName);
      return byName;
    }
    return this.get(authNameOrId);
  }

  invalidate(id?: string): void {
    if (id) this.byId.delete(id);
    else {
      this.byId.clear();
      this.idByName.clear();
    }
  }
}
