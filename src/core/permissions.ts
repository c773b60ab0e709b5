// Permission computation (routes.md, "Permission computation"): per working corporation, the
// services granted to the user's workgroups add their identifiers to `admin`, granted features add
// their actions to `allow`; only services enabled for the corporation count. Cached per
// (user, corporation) and dropped whole on any grant, membership or service change.
import type { PlatformDb } from "../db/sqlite";
import type { PlatformDoor } from "./store";

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

/** The grant queries, from the workgroup module (which owns grants; they join catalog and corp tables). */
export interface PermissionQueries {
  /** Identifiers of the services granted to the user's workgroups in the corporation and enabled for it, in order. */
  grantedServices(db: PlatformDb, userId: string, corpId: string): string[];
  /** (service identifier, action) of the granted features' actions, enabled services only, ordered by action then identifier. */
  grantedActions(db: PlatformDb, userId: string, corpId: string): { identifier: string; action: string }[];
  /** Identifiers of the services enabled for the corporation, in order. */
  enabledServices(db: PlatformDb, corpId: string): string[];
}

export class PermissionCache {
  private cache = new Map<string, PermissionSets>();

  constructor(
    private platform: PlatformDoor,
    private queries: PermissionQueries,
  ) {}

  async get(userId: string, corpId: string, superAdmin: boolean): Promise<PermissionSets> {
    if (superAdmin) return SUPER_SETS;
    const key = `${userId}:${corpId}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const sets = await this.platform.read((db) => permissionSets(this.queries.grantedServices(db, userId, corpId), this.queries.grantedActions(db, userId, corpId)));
    this.cache.set(key, sets);
    return sets;
  }

  /** The identifiers of the services enabled for a corporation, in order (not cached). */
  enabledServices(corpId: string): Promise<string[]> {
    return this.platform.read((db) => this.queries.enabledServices(db, corpId));
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

/** The sets of a user in a corporation from its granted services and (identifier, action) rows. */
function permissionSets(admin: string[], actions: { identifier: string; action: string }[]): PermissionSets {
  const allow: string[] = [];
  const byService = new Map<string, string[]>();
  // Ordered by action: `allow` is the distinct actions in SQL order, each service's list too.
  for (const r of actions) {
    if (allow[allow.length - 1] !== r.action) allow.push(r.action);
    const list = byService.get(r.identifier);
    if (list) list.push(r.action);
    else byService.set(r.identifier, [r.action]);
  }
  // Identifiers are ASCII (SERVICE_IDENTIFIER_PATTERN): JavaScript's order is SQLite's.
  const granted = new Map([...byService].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { admin: new Set(admin), allow: new Set(allow), lists: { admin, allow }, granted };
}
