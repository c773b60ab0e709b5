// The corporations' storage besides reading and writing, for either engine (issue 19): SQLite files
// (db/tenants.ts's TenantDbs) or one PostgreSQL database (core/pg/store.ts's PgTenants). The doors
// themselves are core/storage.ts's AppStore.
import type { Migration, MigrationStatus } from "./migrations";

export type Engine = "sqlite" | "postgres";

/** The corporations' storage besides reading and writing (ctx.tenants). */
export interface TenantRegistry {
  /** The engine's name: for the store itself, GET /api/health and the logs. Modules ask the capabilities below. */
  readonly engine: Engine;
  /**
   * Each corporation's data is a database file of its own (embedded mode): file sizes, file
   * backups, a writer thread per file. Otherwise one database holds every corporation (cluster mode).
   */
  readonly filesPerCorp: boolean;
  /**
   * Several app nodes may share this storage (cluster mode): what must hold across them (the
   * per-IP limit of the public rows) is counted in the database, not in this process's memory;
   * background work claims rows before acting on them, and learns of other nodes' changes by the
   * change feed or by looking, not by its own process's wake-ups.
   */
  readonly sharedByNodes: boolean;
  /**
   * The migrations a corporation's data is at when current. SQLite: the tenant set, applied per
   * file; PostgreSQL: the one set of the shared database (platform and tenant tables together).
   */
  migrations: Migration[];
  /** SQLite: the corporation's database file. PostgreSQL has none: throws. */
  pathOf(corpId: string): string;
  /**
   * Whether the corporation's storage is missing: SQLite, its file is gone and not open (opening
   * its door would create an empty one); PostgreSQL, never. Sweeps skip such a corporation.
   */
  isMissing(corpId: string): boolean;
  /** The corporation's database file, or null on an engine without one (PostgreSQL). */
  fileOf(corpId: string): string | null;
  /** Corporations whose storage is open in this process (SQLite: files; PostgreSQL: the ones this process used). */
  openIds(): string[];
  /** Whether the corporation's storage is open (PostgreSQL: always, there is nothing to open). */
  isOpen(corpId: string): boolean;
  openCount(): number;
  /**
   * The migration state of the platform's schema (`null`) or of a corporation's, as last committed;
   * reading it creates nothing (a corporation's missing file is at version 0). SQLite: each file's
   * own; PostgreSQL: the one set of the shared database, whichever is asked.
   */
  schemaStatus(corpId: string | null): Promise<MigrationStatus>;
  /** Brings a (new) corporation's storage to the current schema and records the version reached. */
  migrateLive(corpId: string): Promise<{ from: number; to: number; applied: string[] }>;
  close(corpId: string): void;
  /** Waits for the operations in flight on the corporation's storage, then closes it (its deletion). */
  closeWhenIdle(corpId: string): Promise<void>;
  /** After a background visit: closes what the visit opened. */
  release(corpId: string): void;
  closeAll(): void;
}
