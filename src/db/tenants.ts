// Corporation databases: one SQLite file per corporation in its Server's directory. Handles are
// opened on demand and closed when idle (no request for `idleMs`), when more than `maxOpen` are
// open (least recently used first), after a background sweep that opened them (`release`), and on
// shutdown; never while an operation is in flight. Memory follows the corporations in use, not
// the number of corporations.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import type { TenantRegistry } from "./registry";
import type { Logger } from "../lib/log";
import { notFound } from "../lib/problem";
import { applyMigrations, migrationStatus, migrationsOf, type Migration, type MigrationStatus } from "./migrations";
import { corporations, servers } from "./platform/schema";
import type { Checkpointer } from "./checkpointer";
import { SqliteDoor } from "./door";
import { openTenantDb, TENANT_STATEMENTS, type SqliteDb } from "./sqlite";

export class TenantDbs implements TenantRegistry {
  readonly engine = "sqlite" as const;
  readonly filesPerCorp = true;
  readonly sharedByNodes = false;
  private open = new Map<string, SqliteDoor>();
  /** The platform database's door once the app serves (reads of paths, the schema version's write). */
  private platformDoor: SqliteDoor | null = null;
  /** The idle clock: advanced every half idle period; a door a request took is stamped with it. */
  private tick = 0;
  private idleTimer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private platform: SqliteDb,
    private logger: Logger,
    private maxOpen = 256,
    /** The tenant migrations in force; tests replace them to simulate another release. */
    public migrations: Migration[] = migrationsOf("tenant"),
  ) {}

  /** Checkpoints the doors' WAL files off the event loop once the app serves. */
  private checkpointer: Checkpointer | null = null;

  /**
   * From now on, platform reads and writes go through its door (the app serves requests), and the
   * doors opened from now on checkpoint through `checkpointer`.
   */
  usePlatformDoor(door: SqliteDoor, checkpointer: Checkpointer | null = null): void {
    this.platformDoor = door;
    this.checkpointer = checkpointer;
  }

  /** Where a corporation's database lives (its server's directory). */
  isMissing(corpId: string): boolean {
    return !this.isOpen(corpId) && !existsSync(this.pathOf(corpId));
  }

  fileOf(corpId: string): string {
    return this.pathOf(corpId);
  }

  pathOf(corpId: string): string {
    // The read connection once the app serves: never another request's uncommitted rows.
    const find = (db: SqliteDb) =>
      db.select({ path: servers.path }).from(corporations).innerJoin(servers, eq(servers.id, corporations.server_id)).where(eq(corporations.id, corpId)).get();
    // Through the door's epoch rule: a corporation committed before this lookup is found.
    const row = this.platformDoor ? this.platformDoor.readSync((db) => find(db)) : find(this.platform);
    // A request that outlived its corporation's deletion is told so (404), never a 500.
    if (!row) throw notFound("The corporation no longer exists");
    return join(row.path, `${corpId}.db`);
  }

  /** The writer connection of a corporation's database (start-up work and migrations). */
  get(corpId: string): SqliteDb {
    return this.door(corpId, false).writer;
  }

  /**
   * The door of a corporation's database (opened, not migrated, when not cached). `request`: a
   * request's use, which keeps the door open for the idle period; a background sweep's use does
   * not (see `release`).
   */
  door(corpId: string, request = true): SqliteDoor {
    const cached = this.open.get(corpId);
    if (cached) {
      if (request) {
        cached.usedAt = this.tick;
        // Re-insert to mark it most recently used.
        this.open.delete(corpId);
        this.open.set(corpId, cached);
      }
      return cached;
    }
    const path = this.pathOf(corpId);
    mkdirSync(join(path, ".."), { recursive: true });
    // The writer opens on the first write; a missing file is created now, as a door always did
    // (the read connection opens existing files only).
    const door = new SqliteDoor(existsSync(path) ? () => openTenantDb(path) : openTenantDb(path), path, { statements: TENANT_STATEMENTS, checkpointer: this.checkpointer });
    if (request) door.usedAt = this.tick;
    this.open.set(corpId, door);
    if (this.open.size > this.maxOpen) this.evict();
    return door;
  }

  /** Closes the least recently used doors with nothing in flight (an awaited write keeps its own). */
  private evict(): void {
    for (const [id, door] of this.open) {
      if (this.open.size <= this.maxOpen) return;
      if (door.idle) this.close(id);
    }
  }

  /**
   * Closes, every half `idleMs`, the doors no request has taken for at least `idleMs` and with
   * nothing in flight (a closed door reopens on its next use). Stopped by `closeAll`.
   */
  startIdleClose(idleMs: number): void {
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.idleTimer = setInterval(() => this.closeIdle(), Math.max(1, idleMs / 2));
    (this.idleTimer as { unref?: () => void }).unref?.();
  }

  /** One tick of the idle clock: closes the doors last taken two ticks ago or earlier. */
  closeIdle(): void {
    this.tick++;
    for (const [id, door] of this.open) if (door.usedAt <= this.tick - 2 && door.idle) this.close(id);
  }

  /**
   * After a background sweep's visit: closes the door when the visit opened it and no request has
   * taken it since (a sweep over every corporation leaves none open behind it).
   */
  release(corpId: string): void {
    const door = this.open.get(corpId);
    if (door && door.usedAt === -1 && door.idle) this.close(corpId);
  }

  /**
   * Closes a corporation's door once nothing is in flight on it (its deletion): no new operation
   * finds it from now on, and the ones already running finish first.
   */
  async closeWhenIdle(corpId: string): Promise<void> {
    const door = this.open.get(corpId);
    if (!door) return;
    this.open.delete(corpId);
    while (!door.idle) await Bun.sleep(5);
    try {
      door.close();
    } catch (err) {
      this.logger.warn("closing a corporation database failed", { corp_id: corpId, error: String(err) });
    }
  }

  /**
   * Applies pending migrations to one corporation database (creating the file when missing) and
   * records the version reached in the platform database, so that start-up can skip it next time.
   */
  migrate(corpId: string) {
    const result = applyMigrations(this.get(corpId), this.migrations);
    this.platform.$client.query("UPDATE corporations SET schema_version = ?1 WHERE id = ?2").run(this.migrations.length, corpId);
    this.release(corpId);
    return result;
  }

  /**
   * `migrate` while the app serves: the corporation's migrations under its door's write lock (no
   * write of a request is open on that connection meanwhile), the version through the platform's.
   */
  async migrateLive(corpId: string) {
    const door = this.door(corpId, false);
    let result;
    try {
      result = await door.exclusive((writer) => applyMigrations(writer, this.migrations));
    } finally {
      // A new corporation's database is not kept open until a request needs it.
      this.release(corpId);
    }
    const version = this.migrations.length;
    if (this.platformDoor) {
      await this.platformDoor.write((tx) => tx.$client.query("UPDATE corporations SET schema_version = ?1 WHERE id = ?2").run(version, corpId));
    } else this.platform.$client.query("UPDATE corporations SET schema_version = ?1 WHERE id = ?2").run(version, corpId);
    return result;
  }

  /**
   * Read on the read connections, which see the last committed state: the platform's door once the
   * app serves; a corporation's door for this read only (a check of every corporation keeps none open).
   */
  async schemaStatus(corpId: string | null): Promise<MigrationStatus> {
    if (corpId === null) {
      const platform = migrationsOf("platform");
      if (!this.platformDoor) return migrationStatus(this.platform.$client, platform);
      return await this.platformDoor.read((db) => migrationStatus(db.$client, platform));
    }
    if (this.isMissing(corpId)) return { version: 0, latest: this.migrations.length, pending: this.migrations.map((m) => m.tag) };
    try {
      return await this.door(corpId, false).read((db) => migrationStatus(db.$client, this.migrations));
    } finally {
      this.release(corpId);
    }
  }

  /** The corporations whose databases are open now. */
  openIds(): string[] {
    return [...this.open.keys()];
  }

  isOpen(corpId: string): boolean {
    return this.open.has(corpId);
  }

  openCount(): number {
    return this.open.size;
  }

  close(corpId: string): void {
    const door = this.open.get(corpId);
    if (!door) return;
    this.open.delete(corpId);
    try {
      door.close();
    } catch (err) {
      this.logger.warn("closing a corporation database failed", { corp_id: corpId, error: String(err) });
    }
  }

  closeAll(): void {
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.idleTimer = null;
    for (const id of [...this.open.keys()]) this.close(id);
  }
}
