// Permission computation (routes.md, "Permission computation"): per working corporation, the
// services granted to the user's workgroups add their identifiers to `admin`, granted features add
// their actions to `allow`; only services enabled for the corporation count. Cached per
// (user, corporation) and dropped whole on any grant, membership or service change.
import type { PlatformDb } from "../../db/sqlite";

export interface Permission {
  admin: string[];
  allow: string[];
}

export interface PermissionSets {
  admin: Set<string>;
  allow: Set<string>;
  lists: Permission;
}

export const SUPER_PERMISSION: Permission = { admin: ["*"], allow: ["*"] };

export class PermissionCache {
  private cache = new Map<string, PermissionSets>();
  private adminStmt;
  private allowStmt;

  constructor(db: PlatformDb) {
    const sqlite = db.$client;
    this.adminStmt = sqlite.query<{ identifier: string }, [string, string, string]>(`
      SELECT DISTINCT s.identifier FROM workgroup_members wm
      JOIN workgroups w ON w.id = wm.workgroup_id AND w.corp_id = ?1
      JOIN workgroup_services ws ON ws.workgroup_id = w.id
      JOIN services s ON s.id = ws.service_id
      JOIN corp_services cs ON cs.corp_id = ?2 AND cs.service_id = s.id
      WHERE wm.user_id = ?3 ORDER BY s.identifier`);
    this.allowStmt = sqlite.query<{ action: string }, [string, string, string]>(`
      SELECT DISTINCT a.action FROM workgroup_members wm
      JOIN workgroups w ON w.id = wm.workgroup_id AND w.corp_id = ?1
      JOIN workgroup_features wf ON wf.workgroup_id = w.id
      JOIN features f ON f.id = wf.feature_id
      JOIN actions a ON a.feature_id = f.id
      JOIN corp_services cs ON cs.corp_id = ?2 AND cs.service_id = f.service_id
      WHERE wm.user_id = ?3 ORDER BY a.action`);
  }

  get(userId: string, corpId: string, superAdmin: boolean): PermissionSets {
    if (superAdmin) return SUPER_SETS;
    const key = `${userId}:${corpId}`;
    let hit = this.cache.get(key);
    if (!hit) {
      const admin = this.adminStmt.all(corpId, corpId, userId).map((r) => r.identifier);
      const allow = this.allowStmt.all(corpId, corpId, userId).map((r) => r.action);
      hit = { admin: new Set(admin), allow: new Set(allow), lists: { admin, allow } };
      this.cache.set(key, hit);
    }
    return hit;
  }

  /** Call after any change to workgroups, memberships, grants, services, features or actions. */
  invalidate(): void {
    this.cache.clear();
  }
}

const SUPER_SETS: PermissionSets = { admin: new Set(["*"]), allow: new Set(["*"]), lists: SUPER_PERMISSION };

/** The permission check of routes.md for a row guarded by `platform.<area>`. */
export function permits(p: PermissionSets, service: string, action: string): boolean {
  return p.admin.has("*") || p.admin.has(service) || p.allow.has("*") || p.allow.has(action);
}
