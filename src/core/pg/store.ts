// Cluster mode (issue 19): the store and the corporations' registry of the app context over one
// PostgreSQL database (src/core/storage.ts is the contract; SQLite's are core/store.ts's Store
// and db/tenants.ts's TenantDbs). There are no files: a corporation's rows live in the shared
// tenant tables behind its row-level security policy, so creating a corporation needs no DDL,
// and deleting one deletes its rows from every tenant table in one transaction.
// Start-up (`preparePostgres`) migrates the one database under the migrator's advisory lock and
// seeds the platform's built-in rows, before the app is built (createApp stays synchronous).
import { SQL } from "bun";
import { eq, is, sql } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import type { AppStore } from "../storage";
import type { TenantRegistry } from "../../db/registry";
import type { PlatformDoor, TenantDoor } from "../store";
import type { EventBus } from "../events";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { BUILTIN_SERVER_NAME, BUILTIN_SERVICES } from "../../db/bootstrap";
import { migrationsOf, type Migration, type MigrationStatus } from "../../db/migrations";
import type { Handle } from "../../db/handle";
import { corporations, servers, services } from "../../db/platform/schema";
import type { Logger } from "../../lib/log";
import { PgDoors, type PgTenantDoor } from "./door";
import { ChangeFeed, EVENTS_TOPIC } from "./feed";
import { TENANT_LOG_WRITES_TOPIC, TENANT_WRITES_TOPIC } from "../../db/pg/generations";
import { migratePg, type PgMigrationResult } from "../../db/pg/migrate";
import { describeIsolationProblems, roleIsolationProblems, type IsolationProblem } from "../../db/pg/isolation";
import { ConfigError } from "../../lib/config-error";
import * as tenantSchema from "../../db/pg/tenant";

/**
 * The tenant tables, each after every table whose rows reference it: deleting in this order never
 * trips a foreign key (they are not deferrable).
 */
export const TENANT_DELETE_ORDER: string[] = (() => {
  const tables = (Object.values(tenantSchema) as unknown[]).filter((v): v is PgTable => is(v, PgTable)).map((t) => getTableConfig(t));
  const refs = new Map(tables.map((t) => [t.name, new Set(t.foreignKeys.map((fk) => getTableConfig(fk.reference().foreignTable).name).filter((n) => n !== t.name))]));
  const order: string[] = [];
  const left = new Set(refs.keys());
  while (left.size) {
    // A table nothing left references goes first.
    const next = [...left].filter((name) => ![...left].some((other) => refs.get(other)!.has(name)));
    if (!next.length) throw new Error(`tenant foreign keys form a cycle: ${[...left].join(", ")}`);
    for (const name of next.sort()) {
      order.push(name);
      left.delete(name);
    }
  }
  return order;
})();

/** What start-up hands the app: the pool, the platform's built-in server, what was migrated. */
export interface PgStart {
  readonly sql: SQL;
  readonly builtinServerId: string;
  readonly migrated: PgMigrationResult;
  /** This node's change feed, listening (`startPgNode`); none for a command that serves nothing. */
  readonly feed?: ChangeFeed;
}

/**
 * Migrates the database (under the migrator's advisory lock: nodes starting together apply it
 * once) and seeds the built-in server (its directory under `dataDir`, as on SQLite: QR images and
 * backups still live in files) and the built-in services. The pool is the app's from then on.
 */
/** The shared database's size in bytes (GET /metrics on PostgreSQL, where there are no files to measure). */
export async function sharedDatabaseSize(db: Handle): Promise<number> {
  const row = await db.$client.query<{ n: number }, []>("SELECT pg_database_size(current_database()) AS n").get();
  return row?.n ?? 0;
}

export async function preparePostgres(url: string, dataDir: string, migrations: Migration[] = migrationsOf("pg")): Promise<PgStart> {
  const client = new SQL(url);
  try {
    const migrated = await migratePg(client, migrations);
    const doors = new PgDoors(client);
    const corpsDir = `${dataDir.replace(/\/+$/, "")}/corps`;
    const builtinServerId = await doors.platform.write(async (tx) => {
      const now = nowIso();
      await tx.insert(servers).values({ id: newId(), name: BUILTIN_SERVER_NAME, path: corpsDir, description: "Built-in data directory", builtin: true }).onConflictDoNothing();
      // The data directory may have moved since the last start; the built-in server follows it.
      await tx.update(servers).set({ path: corpsDir, updated_at: now }).where(sql`${servers.builtin} = 1 AND ${servers.path} <> ${corpsDir}`);
      for (const [identifier, name] of BUILTIN_SERVICES) await tx.insert(services).values({ id: newId(), identifier, name, builtin: true }).onConflictDoNothing();
      return (await tx.select({ id: servers.id }).from(servers).where(eq(servers.builtin, true)).get())!.id;
    });
    return { sql: client, builtinServerId, migrated };
  } catch (err) {
    await client.close();
    throw err;
  }
}

/**
 * A serving node's start: the database prepared, then this node's change feed (core/pg/feed.ts)
 * listening before the app is built, so that nothing is cached before changes can be heard.
 */
export async function startPgNode(url: string, dataDir: string, logger?: Logger, onIsolationLost: (problems: IsolationProblem[]) => void = exitOnIsolationLost(logger)): Promise<PgStart> {
  // Fail closed (isolation.ts): a superuser or BYPASSRLS role is refused before it migrates
  // anything (tables it created would be its own), the tables are checked once migrated.
  await refuseUnisolated(url, { tables: false });
  const start = await preparePostgres(url, dataDir);
  const feed = new ChangeFeed(url, null, { logger });
  try {
    await refuseUnisolated(start.sql);
    await feed.start();
  } catch (err) {
    await feed.close().catch(() => {});
    await start.sql.close();
    throw err;
  }
  // A reconnect may reach another server (a failover) or follow an ALTER ROLE: checked again.
  feed.onReconnect = () => {
    roleIsolationProblems(start.sql).then(
      (problems) => problems.length && onIsolationLost(problems),
      (err) => logger?.warn("role isolation check after reconnect failed", { error: String(err) }),
    );
  };
  return { ...start, feed };
}

/** Throws a ConfigError naming the role, every problem and its fix, when the role is not held to row-level security. */
async function refuseUnisolated(target: string | SQL, options?: { tables?: boolean }): Promise<void> {
  const sql = typeof target === "string" ? new SQL({ url: target, max: 1 }) : target;
  try {
    const problems = await roleIsolationProblems(sql, options);
    if (problems.length) throw new ConfigError(describeIsolationProblems(problems));
  } finally {
    if (typeof target === "string") await sql.close();
  }
}

/** A serving node whose role stopped being held to row-level security stops (exit 1), saying why. */
function exitOnIsolationLost(logger?: Logger): (problems: IsolationProblem[]) => void {
  return (problems) => {
    logger?.error("role isolation lost: stopping", { problems: problems.map((p) => `${p.message}. Fix: ${p.fix}`) });
    process.stderr.write(`corpadmin: ${describeIsolationProblems(problems)}\n`);
    process.exit(1);
  };
}

/** ctx.store on PostgreSQL: one door object per corporation (callers key buffers by it). */
export class PgStore implements AppStore {
  readonly platform: PlatformDoor;
  private doors = new Map<string, PgTenantDoor>();

  constructor(readonly pg: PgDoors) {
    this.platform = pg.platform;
  }

  tenant(corpId: string): TenantDoor {
    let door = this.doors.get(corpId);
    if (!door) {
      door = this.pg.tenant(corpId);
      this.doors.set(corpId, door);
    }
    return door;
  }

  /** Nothing is opened for a corporation: the background door is the request door. */
  background(corpId: string): TenantDoor {
    return this.tenant(corpId);
  }

  async visit<T>(corpId: string, fn: (tenant: TenantDoor) => Promise<T> | T): Promise<T> {
    return await fn(this.tenant(corpId));
  }

  /** A deleted corporation's door is not kept. */
  forget(corpId: string): void {
    this.doors.delete(corpId);
  }

  /** The corporations this process has used (a door made): the counterpart of SQLite's open files. */
  usedIds(): string[] {
    return [...this.doors.keys()];
  }
}

/** ctx.tenants on PostgreSQL. */
export class PgTenants implements TenantRegistry {
  readonly engine = "postgres" as const;
  readonly filesPerCorp = false;
  readonly sharedByNodes = true;

  constructor(
    private store: PgStore,
    /** The one migration set of the shared database. */
    public migrations: Migration[] = migrationsOf("pg"),
  ) {}

  isMissing(_corpId: string): boolean {
    return false;
  }

  fileOf(_corpId: string): null {
    return null;
  }

  pathOf(_corpId: string): string {
    throw new Error("a corporation on PostgreSQL has no database file");
  }

  /**
   * The corporations this process has used: where its requests write, which is what background
   * sweeps look for in SQLite's open files (the webhook dispatcher's narrow sweep).
   */
  openIds(): string[] {
    return this.store.usedIds();
  }

  isOpen(_corpId: string): boolean {
    return true;
  }

  openCount(): number {
    return this.store.usedIds().length;
  }

  /**
   * A corporation's tables are the shared ones, migrated at start (`preparePostgres`): nothing to
   * apply; the version is recorded as on SQLite.
   */
  async migrateLive(corpId: string): Promise<{ from: number; to: number; applied: string[] }> {
    const { version } = await this.schemaStatus();
    await this.store.platform.write((tx) => tx.update(corporations).set({ schema_version: version }).where(eq(corporations.id, corpId)));
    return { from: version, to: version, applied: [] };
  }

  /** The shared database's migration state (drizzle-kit's table): the platform's and every corporation's. */
  async schemaStatus(_corpId: string | null = null): Promise<MigrationStatus> {
    const last = await this.store.platform.read(async (db) => {
      const row = await db.$client.query<{ at: number | null }, []>("SELECT max(created_at) AS at FROM drizzle.__drizzle_migrations").get();
      return row?.at ?? null;
    });
    const pending = this.migrations.filter((m) => last === null || m.folderMillis > last).map((m) => m.tag);
    return { version: this.migrations.length - pending.length, latest: this.migrations.length, pending };
  }

  /**
   * Deletes every row of a deleted corporation from the tenant tables, in one transaction under the
   * corporation's writer lock (the writes in flight finish first; its rows are gone at once).
   */
  async drop(corpId: string): Promise<void> {
    await this.store.pg.tenant(corpId, { checked: false }).write(async (tx) => {
      for (const table of TENANT_DELETE_ORDER) await tx.$client.query(`DELETE FROM "${table}"`).run();
    });
    this.store.forget(corpId);
  }

  close(_corpId: string): void {}

  async closeWhenIdle(corpId: string): Promise<void> {
    await this.drop(corpId);
  }

  release(_corpId: string): void {}

  closeAll(): void {}
}

/**
 * The PostgreSQL store and registry over a started pool; `bus` is told of committed events, this
 * node's (by the doors) and, through the start's feed, every other node's. `feed` is the start's
 * (null without one): the transport of `ctx.changes`, and open to any other subscriber.
 */
export function pgStorage(start: PgStart, bus: EventBus, nodeId = ""): { doors: PgDoors; store: PgStore; tenants: PgTenants; feed: ChangeFeed | null } {
  const feed = start.feed ?? null;
  // The node's id in its NOTIFYs: its own feed skips them (its doors tell its bus and change
  // stamps after each COMMIT, ctx.changes its subscribers); other nodes act on them.
  if (feed) feed.origin = nodeId;
  const doors = new PgDoors(start.sql, bus, { corporationMustExist: true, origin: nodeId });
  const store = new PgStore(doors);
  // Other nodes' committed events wake this node's dispatcher and sockets. Events missed while the
  // feed reconnected are found by their own sweeps (the dispatcher's, the sockets' check).
  feed?.subscribe(EVENTS_TOPIC, { changed: (corpId) => bus.committed(corpId), resync: () => {} });
  // Other nodes' writes move this node's change stamps (read caches: db/pg/generations.ts); every
  // write notifies TENANT_WRITES_TOPIC (a log-only one TENANT_LOG_WRITES_TOPIC), a write with
  // events the events channel as well.
  feed?.subscribe(TENANT_WRITES_TOPIC, doors.generations);
  feed?.subscribe(TENANT_LOG_WRITES_TOPIC, doors.generations.logWrites);
  feed?.subscribe(EVENTS_TOPIC, doors.generations);
  return { doors, store, tenants: new PgTenants(store), feed };
}
