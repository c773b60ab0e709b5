// Permission computation (routes.md, "Permission computation"): per working corporation, the
// services granted to the user's workgroups add their identifiers to `admin`, granted features add
// their actions to `allow`; only services enabled for the corporation count. Cached per
// (user, corporation) and dropped whole on any grant, membership or service change.
import type { PlatformDb } from "../db/sqlite";

export interface Permission {
  admin: string[];
  allow: string[];
}

export interface PermissionSets {
  admin: Set<string>;
  allow: Set<string>;
  lists: Permission;
  /** The allowed actions per service identifier, identifiers in order (GET /api/user/{id}/permissions). */
  granted: ReadonlyMap<string, string[]>;
}

export const SUPER_PERMISSION: Permission = { admin: ["*"], allow: ["*"] };

export class PermissionCache {
  private cache = new Map<string, PermissionSets>();
  private adminStmt;
  private allowStmt;
  private enabledStmt;

  constructor(db: PlatformDb) {
    const sqlite = db.$client;
    this.adminStmt = sqlite.query<{ identifier: string }, [string, string, string]>(`
      SELECT DISTINCT s.identifier FROM workgroup_members wm
      JOIN workgroups w ON w.id = wm.workgroup_id AND w.corp_id = ?1
      JOIN workgroup_services ws ON ws.workgroup_id = w.id
      JOIN services s ON s.id = ws.service_id
      JOIN corp_services cs ON cs.corp_id = ?2 AND cs.service_id = s.id
      WHERE wm.user_id = ?3 ORDER BY s.identifier`);
    // The one query of granted actions: the cache's `allow` and the per-service view both come from it.
    this.allowStmt = sqlite.query<{ identifier: string; action: string }, [string, string, string]>(`
      SELECT DISTINCT s.identifier, a.action FROM workgroup_members wm
      JOIN workgroups w ON w.id = wm.workgroup_id AND w.corp_id = ?1
      JOIN workgroup_features wf ON wf.workgroup_id = w.id
      JOIN features f ON f.id = wf.feature_id
      JOIN services s ON s.id = f.service_id
      JOIN actions a ON a.feature_id = f.id
      JOIN corp_services cs ON cs.corp_id = ?2 AND cs.service_id = s.id
      WHERE wm.user_id = ?3 ORDER BY a.action, s.identifier`);
    this.enabledStmt = sqlite.query<{ identifier: string }, [string]>(
      "SELECT s.identifier FROM corp_services cs JOIN services s ON s.id = cs.service_id WHERE cs.corp_id = ?1 ORDER BY s.identifier",
    );
  }

  get(userId: string, corpId: string, superAdmin: boolean): PermissionSets {
    if (superAdmin) return SUPER_SETS;
    const key = `${userId}:${corpId}`;
    let hit = this.cache.get(key);
    if (!hit) {
      const admin = this.adminStmt.all(corpId, corpId, userId).map((r) => r.identifier);
      const allow: string[] = [];
      const byService = new Map<string, string[]>();
      // Ordered by action: `allow` is the distinct actions in SQL order, each service's list too.
      for (const r of this.allowStmt.all(corpId, corpId, userId)) {
        if (allow[allow.length - 1] !== r.action) allow.push(r.action);
        const list = byService.get(r.identifier);
        if (list) list.push(r.action);
        else byService.set(r.identifier, [r.action]);
      }
      // Identifiers are ASCII (SERVICE_IDENTIFIER_PATTERN): JavaScript's order is SQLite's.
      const granted = new Map([...byService].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      hit = { admin: new Set(admin), allow: new Set(allow), lists: { admin, allow }, granted };
      this.cache.set(key, hit);
    }
    return hit;
  }

  /** The identifiers of the services enabled for a corporation, in order (not cached). */
  enabledServices(corpId: string): string[] {
    return this.enabledStmt.all(corpId).map((r) => r.identifier);
  }

  /** Call after any change to workgroups, memberships, grants, services, features or actions. */
  invalidate(): void {
    this.cache.clear();
  }
}

const SUPER_SETS: PermissionSets = { admin: new Set(["*"]), allow: new Set(["*"]), lists: SUPER_PERMISSION, granted: new Map() };

/** The permission check of routes.md for a row guarded by `platform.<area>`. */
export function permits(p: PermissionSets, service: string, action: string): boolean {
  return p.admin.has("*") || p.admin.has(service) || p.allow.has("*") || p.allow.has(action);
}
