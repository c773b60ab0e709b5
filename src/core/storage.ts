// What the app context needs of the storage engine, so that it can run on either (issue 19):
// SQLite files (core/store.ts's Store over db/tenants.ts's TenantDbs) or one PostgreSQL database
// (db/pg/store.ts's PgStore over PgTenants). Modules read and write through `AppStore` only; the
// lifecycle calls below are for the few places that manage corporations' storage themselves
// (creation, deletion, migrations, the open-database gauge and sweeps).
import type { Migration } from "../db/migrations";
import type { PlatformDoor, TenantDoor } from "./store";

export type Engine = "sqlite" | "postgres";

/** The doors into the databases (ctx.store). */
export interface AppStore {
  readonly platform: PlatformDoor;
  /** A corporation's door for a request. */
  tenant(corpId: string): TenantDoor;
  /** A corporation's door for one piece of background work (keeps nothing open on its account). */
  background(corpId: string): TenantDoor;
  /** A background sweep's visit to one corporation: whatever it opened is released after `fn`. */
  visit<T>(corpId: string, fn: (tenant: TenantDoor) => Promise<T> | T): Promise<T>;
}

/** The corporations' storage besides reading and writing (ctx.tenants). */
export interface TenantRegistry {
  readonly engine: Engine;
  /**
   * The migrations a corporation's data is at when current. SQLite: the tenant set, applied per
   * file; PostgreSQL: the one set of the shared database (platform and tenant tables together).
   */
  migrations: Migration[];
  /** SQLite: the corporation's database file. PostgreSQL has none: throws. */
  pathOf(corpId: string): string;
  /** Corporations whose storage is open in this process (SQLite: files; PostgreSQL: the ones this process used). */
  openIds(): string[];
  /** Whether the corporation's storage is open (PostgreSQL: always, there is nothing to open). */
  isOpen(corpId: string): boolean;
  openCount(): number;
  /** Brings a (new) corporation's storage to the current schema and records the version reached. */
  migrateLive(corpId: string): Promise<{ from: number; to: number; applied: string[] }>;
  close(corpId: string): void;
  /** Waits for the operations in flight on the corporation's storage, then closes it (its deletion). */
  closeWhenIdle(corpId: string): Promise<void>;
  /** After a background visit: closes what the visit opened. */
  release(corpId: string): void;
  closeAll(): void;
}
