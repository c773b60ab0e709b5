// Permission computation (routes.md, "Permission computation"): per working corporation, the
// services granted to the user's workgroups add their identifiers to `admin`, granted features add
// their actions to `allow`; only services enabled for the corporation count. Cached per
// (user, corporation) and dropped whole on any grant, membership or service change (a write
// publishes PERMISSIONS_TOPIC through `ctx.changes`, which every node hears).
import type { PlatformDb } from "../db/sqlite";
import type { Changes } from "./changes";
import type { PlatformDoor } from "./store";

/** `ctx.changes` topic of grants, memberships, services, features and actions (key: "*", all at once). */
export const PERMISSIONS_TOPIC = "permissions";

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

/** A user's grants in a corporation, as the workgroup module's one permission query returns them. */
export interface PermissionRows {
  admin: string[];
  allow: string[];
  granted: Map<string, string[]>;
}

/** The grant queries, from the workgroup module (which owns grants; they join catalog and corp tables). */
export interface PermissionQueries {
  load(db: PlatformDb, userId: string, corpId: string): Promise<PermissionRows>;
  /** Identifiers of the services enabled for the corporation, in order. */
  enabledServices(db: PlatformDb, corpId: string): Promise<string[]>;
}

export class PermissionCache {
  private cache = new Map<string, PermissionSets>();
  /** Moves on every invalidation: sets read before it are not kept. */
  private epoch = 0;

  constructor(
    private platform: PlatformDoor,
    private queries: PermissionQueries,
    changes: Changes,
  ) {
    const drop = () => this.invalidate();
    changes.subscribe(PERMISSIONS_TOPIC, { changed: drop, resync: drop });
  }

  /** The cached sets, without reading (the guard's hot path). */
  peek(userId: string, corpId: string, superAdmin: boolean): PermissionSets | undefined {
    return superAdmin ? SUPER_SETS : this.cache.get(`${userId}:${corpId}`);
  }

  async get(userId: string, corpId: string, superAdmin: boolean): Promise<PermissionSets> {
    if (superAdmin) return SUPER_SETS;
    const key = `${userId}:${corpId}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const epoch = this.epoch;
    const r = await this.platform.read((db) => this.queries.load(db, userId, corpId));
    const sets: PermissionSets = { admin: new Set(r.admin), allow: new Set(r.allow), lists: { admin: r.admin, allow: r.allow }, granted: r.granted };
    if (epoch === this.epoch) this.cache.set(key, sets);
    return sets;
  }

  /** The identifiers of the services enabled for a corporation, in order (not cached). */
  enabledServices(corpId: string): Promise<string[]> {
    return this.platform.read((db) => this.queries.enabledServices(db, corpId));
  }

  /**
   * The rows and the enabled services read in the caller's transaction, uncached (a user's
   * permissions shown beside their row): the user module asks here, not the workgroup module
   * that answers, which sits above it.
   */
  readIn(db: PlatformDb): { load: (userId: string, corpId: string) => Promise<PermissionRows>; enabledServices: (corpId: string) => Promise<string[]> } {
    return { load: (userId, corpId) => this.queries.load(db, userId, corpId), enabledServices: (corpId) => this.queries.enabledServices(db, corpId) };
  }

  /**
   * Drops every set. Writes changing workgroups, memberships, grants, services, features or
   * actions publish PERMISSIONS_TOPIC (key "*") instead, so every node drops them.
   */
  invalidate(): void {
    this.epoch++;
    this.cache.clear();
  }
}

const SUPER_SETS: PermissionSets = { admin: new Set(["*"]), allow: new Set(["*"]), lists: SUPER_PERMISSION, granted: new Map() };

/** The permission check of routes.md for a row guarded by `platform.<area>`. */
export function permits(p: PermissionSets, service: string, action: string): boolean {
  return p.admin.has("*") || p.admin.has(service) || p.allow.has("*") || p.allow.has(action);
}

