// Corporations are read on every authenticated request (status gate, timezone, server). The
// cache holds them until the corporation module invalidates an entry after a change.
import { eq, sql } from "drizzle-orm";
import { corporations } from "../../db/platform/schema";
import type { PlatformDb } from "../../db/sqlite";

export type CorpRow = typeof corporations.$inferSelect;

export class CorpCache {
  private byId = new Map<string, CorpRow>();
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
    return this.byNameStmt.get({ name: authNameOrId }) ?? this.get(authNameOrId);
  }

  invalidate(id?: string): void {
    if (id) this.byId.delete(id);
    else this.byId.clear();
  }
}
