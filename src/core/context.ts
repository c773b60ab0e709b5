// Everything a module needs, built once per app from its configuration. There is no
// module-level state: each createApp (each test) gets its own databases and caches.
import { mkdirSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Config } from "../config";
import { bootstrapPlatform, migrateAllCorps } from "../db/bootstrap";
import { SqliteDoor } from "../db/door";
import { openPlatformDb, type PlatformDb, type TenantDb } from "../db/sqlite";
import { TenantDbs } from "../db/tenants";
import { Checkpointer } from "../db/checkpointer";
import { EventBus } from "./events";
import { clientIpResolver, type ClientIpResolver } from "../lib/client-ip";
import { EgressPolicy } from "../lib/egress";
import { createLogger, type Logger } from "../lib/log";
import { Mailer } from "../lib/mailer";
import { PUBLIC_AUTH_WINDOW_MS, RateLimiter, type Limiter } from "../lib/rate-limit";
import { SecretBox } from "../lib/secret-box";
import { PasswordHasher } from "../lib/passwords";
import { CorpCache, type CorpLookups } from "./corp-cache";
import type { ApiKeyVerifier, Principal } from "./principal";
import { PermissionCache, type PermissionQueries } from "./permissions";
import { Sessions, type UserFlags } from "./sessions";
import type { Migration } from "../db/migrations";
import type { Handle, TogetherRead } from "../db/handle";
import type { SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { SearchWord } from "../db/list";
import { AuditLog } from "./audit";
import { MetricsRegistry } from "./metrics";
import { Jobs, type Job } from "./jobs";
import { Store, type TenantWriteScope } from "./store";
import type { AppStore } from "./storage";
import type { TenantRegistry } from "../db/registry";
// PostgreSQL code is imported for its types only: prepareStorage loads it when --database-url is
// set, so embedded mode never evaluates it (its tables, drizzle's pg-core, Bun.SQL: ≈ 8 MB idle RSS).
import type { PgStart } from "./pg/store";
import type { ChangeFeed } from "./pg/feed";
import { Changes } from "./changes";
import { checkSharedKeys, tokenKey } from "./keys";

/** Whether one user of a record (a city, a person, a product) references it. */
export type UseCheck = (db: TenantDb, id: string) => Promise<boolean>;
/** The contract fields Contract.network is made of (the contract view passes them). */
export interface ContractNetworkTerms {
  id: string;
  contract_status: string;
  suspension_date: string | null;
  allowance_gb: number | null;
}

/** Contract.network: the network state of a contract, since and until when, and its usage cycle. */
export interface ContractNetwork {
  state: "normal" | "throttled" | "suspended" | "trusted";
  since: string | null;
  until: string | null;
  cycle: { start: string; end: string; used_bytes: number; allowance_bytes: number | null };
}

/**
 * ctx.openSessionProbe (the ISP module's): its statement (`read`, sent with the write's other reads
 * through readTogether) and what its row says (`open`).
 */
export interface OpenSessionProbe {
  read(contractId: string): TogetherRead;
  open(row: unknown): boolean;
}

/** ctx.contractNetwork (the ISP module's). */
export interface ContractNetworkHook {
  /**
   * Contract.network of each contract, read in the caller's handle; `freshUntil`: the instant an
   * answer stops being true without any write (the contract body cache's bound).
   */
  networks(db: Handle, contracts: ContractNetworkTerms[], timeZone: string, nowMs: number): Promise<{ network: ContractNetwork; freshUntil: number }[]>;
  /**
   * A contract ?q's word matched against the addresses (framed IP, MAC) of online sessions: a
   * subquery of contract ids, or undefined for a word that cannot be part of an address.
   */
  onlineAddressIds(match: (c: SQLiteColumn) => SQL, word: SearchWord, now: string): SQL | undefined;
}

export type UsedBy = { city: UseCheck[]; person: UseCheck[]; product: UseCheck[] };
/** Whether any of a record's users references it. */
export async function inUse(users: UseCheck[], db: TenantDb, id: string): Promise<boolean> {
  for (const used of users) if (await used(db, id)) return true;
  return false;
}
/** Touches the holders of a classification about to be renamed or deleted; returns their history step. */
export type ClassificationHolders = (tx: TenantDb, w: TenantWriteScope, classificationId: string, timeZone: string) => Promise<() => Promise<void>>;

export interface AppContext {
  config: Config;
  logger: Logger;
  /** This app node (host:pid:random, two apps in one process differ): in cluster logs, e.g. who holds a lease. */
  nodeId: string;
  /** The one door into the databases (src/core/store.ts; on PostgreSQL src/core/pg/store.ts). */
  store: AppStore;
  /** Corporations' storage: paths, migrations, open handles (lifecycle, not data access). */
  tenants: TenantRegistry;
  corps: CorpCache;
  permissions: PermissionCache;
  /** Cache invalidations of committed writes, on this node and (PostgreSQL) every other (core/changes.ts). */
  changes: Changes;
  /** PostgreSQL: this node's change feed (core/pg/feed.ts), for read caches of their own; null on SQLite. */
  feed: ChangeFeed | null;
  sessions: Sessions;
  passwords: PasswordHasher;
  events: EventBus;
  mailer: Mailer;
  /**
   * 60 requests a minute per client IP on the public rows (routes.md, "Lock and rate limits";
   * README, "Request limits"): in memory; on PostgreSQL the auth module replaces it with one
   * counting in the shared database (modules/auth/shared-rate-limit.ts).
   */
  publicAuthLimiter: Limiter;
  egress: EgressPolicy;
  builtinServerId: string;
  clientIp: ClientIpResolver;
  /** Checks run on every token request after the session is found (safe IP ranges, ...). */
  authChecks: ((p: Principal) => void | Promise<void>)[];
  /**
   * Told after a committed change to a contract (status, connection settings, ...), with its
   * connection state before the change; the ISP module disconnects or re-authorizes its RADIUS
   * sessions. Listeners must return at once (they schedule their work).
   */
  contractWatchers: ((change: ContractChange) => void)[];
  /**
   * Run in the transaction that changes a user's credentials (a new password, two-factor off), so
   * what was trusted on the old ones goes with it: the auth module forgets remembered devices.
   */
  credentialWatchers: ((tx: PlatformDb, userId: string) => Promise<void>)[];
  /**
   * "Is this record used?", asked by the module owning a record before it deletes it (409 then)
   * and answered by the modules that reference it, which register their check here at start-up:
   * the owner imports none of its users (city ← person, contract, ISP POP; person ← contract;
   * product ← contract).
   */
  usedBy: UsedBy;
  /**
   * The records showing a classification (products, contract flags), registered by their modules:
   * called in the rename's or delete's transaction before it, each touches its holders and
   * announces their UPDATE events, and returns what records their history once the change is done.
   */
  classificationHolders: ClassificationHolders[];
  /**
   * Whether a contract has open RADIUS sessions, asked inside a contract write (set by the ISP
   * module): a write that finds none under its writer lock tells the watchers so (`openSessions`),
   * and they read nothing after its COMMIT. Null: nobody asks.
   */
  openSessionProbe: OpenSessionProbe | null;
  /**
   * The network's part of a contract's view and search, set by the ISP module (which reads
   * contracts everywhere: the contract module imports nothing of it). Null: no network figures.
   */
  contractNetwork: ContractNetworkHook | null;
  /** Verifies external-app API keys; set by the registry module. */
  apiKeys: ApiKeyVerifier | null;
  /**
   * The corporations each server holds, asked by the server module (it shows the counts and
   * refuses to move or delete a server in use); set by the corporation module, which owns them.
   */
  serverCorps: ServerCorpCounts | null;
  /** Current time; tests inject a clock to drive schedules, retries and expiries. */
  now: () => number;
  /** Background jobs (src/core/jobs.ts): registered by modules, started by the app, stopped on close. */
  jobs: Jobs;
  /** Flushes and closes what needs it at close (after ctx.jobs has stopped), in reverse order of registration. */
  onClose(fn: () => void | Promise<void>): void;
  close(): Promise<void>;
  /** Prometheus metrics registry (GET /metrics); see src/modules/ops/metrics.ts for the API. */
  serviceMetrics: MetricsRegistry;
  /** Security audit log; see src/modules/ops/audit.ts for the API. */
  audit: AuditLog;
  /** Webhook dispatcher and realtime socket timing (tests shorten them). */
  dispatchTuning: DispatchTuning;
  /** Encrypts secrets kept for later use in clear (NAS secrets) under the data key (DATA_DIR/data.key or --data-key-file). */
  secrets: SecretBox;
}

export interface ContractChange {
  corpId: string;
  contractId: string;
  /** What RADIUS renders from, before the change (the contract module's `ContractConnection`); null: new. */
  before: unknown;
  actorUserId: string | null;
  ip: string | null;
  /**
   * false: the write asked `openSessionProbe` under its writer lock and the contract had no open
   * session. Sessions are opened by writes of the same corporation, so none opened before the
   * COMMIT, and one opened after it was authorized with the new state: nothing to reconcile.
   * Absent: not asked.
   */
  openSessions?: boolean;
  /**
   * What the network gave the contract before, when the change is of its network state rather than
   * of the contract (fair use, trust unblock: the ISP module's `InForce`); absent: computed from
   * `before` and the network state as it is.
   */
  beforeNetwork?: unknown;
  /** Why, for the audit of the Disconnect/CoA it causes (default: the contract's change). */
  cause?: string;
}

export interface DispatchTuning {
  /** A delivery succeeds only with a 2xx within this time (routes.md: 15 s). */
  deliveryTimeoutMs: number;
  /**
   * Cluster mode: a delivery claimed by a node is due again this long after its send's timeout
   * (its outcome is being recorded, or the node died mid-send and another sends it again).
   */
  claimMarginMs: number;
  /** How often due retries are looked for in memory. */
  tickMs: number;
  /**
   * How often the outbox and queue of the corporations that may hold work (databases open, a pass
   * that failed) are swept from the database.
   */
  sweepMs: number;
  /** How often every corporation is swept (besides start-up): opening each costs ≈ 1.5 ms. */
  fullSweepMs: number;
  /** How often open sockets check that their session still lives. */
  socketCheckMs: number;
  /** Cluster mode: how often the node running the metric scheduler reads every collected metric again (changes made through other nodes). */
  metricResyncMs: number;
  /** Time between the attempts of an RFC 5176 request (routes.md: 2 s). */
  coaRetryMs: number;
  /** How often the nas-health job looks for NAS that turned quiet (isp/nas-health.ts). */
  nasHealthMs: number;
  /** How long after an accounting record or a contract change its fair-use check runs (isp/fair-use.ts): records arriving meanwhile are checked together. */
  fairUseCheckMs: number;
  /** How often the fair-use job checks every contract with an allowance, ends graces and restores at a cycle's start. */
  fairUseSweepMs: number;
}

export interface ContextOptions {
  logger?: Logger;
  clientIp?: ClientIpResolver;
  now?: () => number;
  /** Leaves the key files' modes as found (corpadmin doctor reports them; the service narrows them to 0600). */
  keepKeyModes?: boolean;
  /** Delay of the first background pass after start-up (default 250 ms; test suites use 0). */
  startDelayMs?: number;
  /** Overrides config.authRateLimit (test suites raise it). */
  publicAuthLimit?: number;
  /** Migration lists in force (tests simulate another release); default: the embedded ones. */
  platformMigrations?: Migration[];
  tenantMigrations?: Migration[];
  dispatchTuning?: Partial<DispatchTuning>;
  /** A corporation's database no request took for this long is closed (default 60 s). */
  tenantIdleMs?: number;
  /** The started PostgreSQL database when config.databaseUrl is set (`prepareStorage`). */
  postgres?: PgStart;
  /** The cluster-mode code that `prepareStorage` loaded with it. */
  cluster?: ClusterCode;
}

/** What createContext (synchronous) needs of the PostgreSQL modules, loaded by prepareStorage. */
export interface ClusterCode {
  pgStorage: typeof import("./pg/store").pgStorage;
  Leases: typeof import("./pg/lease").Leases;
}

/**
 * What must happen before createContext on PostgreSQL (it is asynchronous; createContext is not):
 * the database migrated under its advisory lock, the built-in rows seeded, this node's keys
 * checked against the other nodes' (KeyMismatch when they differ), and its change feed listening.
 * Nothing on SQLite, whose start-up work is synchronous and done by createContext.
 */
export async function prepareStorage(config: Config, logger?: Logger): Promise<Pick<ContextOptions, "postgres" | "cluster">> {
  if (!config.databaseUrl) return {};
  const [{ startPgNode, pgStorage }, { PgDoors }, { Leases }] = await Promise.all([import("./pg/store"), import("./pg/door"), import("./pg/lease")]);
  mkdirSync(config.dataDir, { recursive: true });
  const postgres = await startPgNode(config.databaseUrl, config.dataDir, logger);
  try {
    // Every node of the database must hold the same keys (core/keys.ts).
    await checkSharedKeys(new PgDoors(postgres.sql).platform, config);
  } catch (err) {
    await postgres.feed?.close().catch(() => {});
    await postgres.sql.close();
    throw err;
  }
  return { postgres, cluster: { pgStorage, Leases } };
}

/**
 * What the kernel reads from tables that modules own, handed in by the app (src/app.ts) so that
 * the kernel imports no module: corporations (corp), a user's flags (user), grants (workgroup).
 */
export interface ServerCorpCounts {
  on(db: PlatformDb, serverId: string): Promise<number>;
  byServer(db: PlatformDb): Promise<Map<string, number>>;
}

export interface KernelQueries {
  corps: CorpLookups;
  userFlags: (db: PlatformDb, userId: string) => Promise<UserFlags | null>;
  permissions: PermissionQueries;
}

export function createContext(config: Config, queries: KernelQueries, options: ContextOptions = {}): AppContext {
  mkdirSync(config.dataDir, { recursive: true });
  const logger = options.logger ?? createLogger(config.logLevel);
  const events = new EventBus();
  const nodeId = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const storage = config.databaseUrl ? postgresStorage(config, options, events, logger, nodeId) : sqliteStorage(config, options, logger, events);
  const { store, tenants, builtinServerId, feed } = storage;
  const changes = new Changes(feed, logger);
  const jobs = new Jobs(logger, options.startDelayMs ?? 250, storage.singleNode);
  jobs.record({ platform: store.platform, node: config.databaseUrl ? nodeId : null, now: options.now ?? Date.now });
  const closers: (() => void | Promise<void>)[] = [];
  let closed = false;
  const ctx: AppContext = {
    config,
    logger,
    nodeId,
    store,
    jobs,
    tenants,
    corps: new CorpCache(store.platform, queries.corps, changes),
    permissions: new PermissionCache(store.platform, queries.permissions, changes),
    changes,
    feed,
    // Live sessions are kept per node on PostgreSQL, where reading one costs a transaction.
    sessions: new Sessions(store.platform, tokenKey(config, !options.keepKeyModes).key, config.tokenTtl, queries.userFlags, logger, changes, tenants.engine === "postgres"),
    passwords: new PasswordHasher(config.maxConcurrentHashes),
    events,
    mailer: new Mailer(config.smtpUrl, config.smtpFrom, logger),
    publicAuthLimiter: new RateLimiter(options.publicAuthLimit ?? config.authRateLimit, PUBLIC_AUTH_WINDOW_MS, options.now ?? Date.now),
    egress: new EgressPolicy(config.egressAllow, config.egressDeny),
    builtinServerId,
    clientIp: options.clientIp ?? clientIpResolver(config.trustedProxies),
    authChecks: [],
    contractWatchers: [],
    credentialWatchers: [],
    usedBy: { city: [], person: [], product: [] },
    classificationHolders: [],
    openSessionProbe: null,
    contractNetwork: null,
    apiKeys: null,
    serverCorps: null,
    now: options.now ?? Date.now,
    dispatchTuning: { deliveryTimeoutMs: 15_000, claimMarginMs: 30_000, tickMs: 1_000, sweepMs: 60_000, fullSweepMs: 3_600_000, socketCheckMs: 5_000, coaRetryMs: 2_000, metricResyncMs: 60_000, nasHealthMs: 60_000, fairUseCheckMs: 2_000, fairUseSweepMs: 60_000, ...options.dispatchTuning },
    onClose: (fn) => void closers.push(fn),
    async close() {
      if (closed) return;
      closed = true;
      await jobs.stopAll();
      for (const fn of closers.reverse()) {
        try {
          await fn();
        } catch (err) {
          logger.error("shutdown step failed", { error: String(err) });
        }
      }
      ctx.mailer.close();
      await storage.close();
    },
    serviceMetrics: new MetricsRegistry(),
    audit: new AuditLog(store.platform, logger, config.auditRetentionDays, options.now ?? Date.now),
    secrets: SecretBox.load(config.dataDir, config.dataKeyFile, !options.keepKeyModes),
  };
  return ctx;
}

interface Storage {
  store: AppStore;
  tenants: TenantRegistry;
  builtinServerId: string;
  feed: ChangeFeed | null;
  /** Cluster mode: runs a single-node job under its lease (ctx.jobs); null on SQLite (one node). */
  singleNode: ((job: Job) => Job) | null;
  /** After the jobs stopped: closes the databases (and the leases). */
  close(): Promise<void>;
}

function sqliteStorage(config: Config, options: ContextOptions, logger: Logger, events: EventBus): Storage {
  const platformPath = join(config.dataDir, "platform.db");
  const platform = openPlatformDb(platformPath);
  const { builtinServerId } = bootstrapPlatform(platform, config.dataDir, options.platformMigrations);
  const tenants = new TenantDbs(platform, logger, undefined, options.tenantMigrations);
  migrateAllCorps(platform, tenants, logger);
  // WAL checkpoints of every door on one thread of their own (src/db/checkpointer.ts).
  const checkpointer = new Checkpointer(logger);
  const platformDoor = new SqliteDoor(platform, platformPath, { checkpointer });
  tenants.usePlatformDoor(platformDoor, checkpointer);
  // What start-up migrated is closed too once idle: memory follows the corporations in use.
  tenants.startIdleClose(options.tenantIdleMs ?? 60_000);
  return {
    store: new Store(platformDoor, tenants, events),
    tenants,
    builtinServerId,
    feed: null,
    singleNode: null,
    async close() {
      tenants.closeAll();
      platformDoor.close();
      await checkpointer.close();
    },
  };
}

/**
 * PostgreSQL (cluster mode): the pool started and migrated by `prepareStorage`, and the node's
 * leases (one connection each, opened when a single-node job starts) for work only one node may do.
 */
function postgresStorage(config: Config, options: ContextOptions, events: EventBus, logger: Logger, node: string): Storage {
  const start = options.postgres;
  const cluster = options.cluster;
  if (!start || !cluster) throw new Error("--database-url is set: the app is built after `await prepareStorage(config)`, with its result in the options");
  const { pgStorage, Leases } = cluster;
  const { store, tenants, feed } = pgStorage(start, events, node);
  // The lease's defaults scaled by one setting: heartbeat a fifth of the grace, stop budget 3/10.
  const graceMs = config.leaseGraceMs;
  const leases = new Leases(config.databaseUrl!, { graceMs, heartbeatMs: graceMs / 5, stopBudgetMs: (graceMs * 3) / 10, logger, node });
  return {
    store,
    tenants,
    builtinServerId: start.builtinServerId,
    feed,
    singleNode: (job) => leases.job(job),
    async close() {
      // The jobs stopped, so their leases are released already; this closes any left.
      await leases.close();
      await feed?.close();
      await start.sql.close();
    },
  };
}
