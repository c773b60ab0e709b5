// Everything a module needs, built once per app from its configuration. There is no
// module-level state: each createApp (each test) gets its own databases and caches.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Config } from "../config";
import { bootstrapPlatform, migrateAllCorps } from "../db/bootstrap";
import { SqliteDoor } from "../db/door";
import { openPlatformDb, type PlatformDb } from "../db/sqlite";
import { TenantDbs } from "../db/tenants";
import { Checkpointer } from "../db/checkpointer";
import { EventBus } from "./events";
import { clientIpResolver, type ClientIpResolver } from "../lib/client-ip";
import { EgressPolicy } from "../lib/egress";
import { createLogger, type Logger } from "../lib/log";
import { Mailer } from "../lib/mailer";
import { RateLimiter } from "../lib/rate-limit";
import { SecretBox } from "../lib/secret-box";
import { PasswordHasher } from "../lib/passwords";
import { CorpCache, type CorpLookups } from "./corp-cache";
import type { ApiKeyVerifier, Principal } from "./principal";
import { PermissionCache, type PermissionQueries } from "./permissions";
import { Sessions, type UserFlags } from "./sessions";
import type { Migration } from "../db/migrations";
import { AuditLog } from "./audit";
import { MetricsRegistry } from "./metrics";
import { Jobs } from "./jobs";
import { Store } from "./store";
import type { AppStore, TenantRegistry } from "./storage";
import { pgStorage, startPgNode, type PgStart } from "../db/pg/store";

export interface AppContext {
  config: Config;
  logger: Logger;
  /** The one door into the databases (src/core/store.ts; on PostgreSQL src/db/pg/store.ts). */
  store: AppStore;
  /** Corporations' storage: paths, migrations, open handles (lifecycle, not data access). */
  tenants: TenantRegistry;
  corps: CorpCache;
  permissions: PermissionCache;
  sessions: Sessions;
  passwords: PasswordHasher;
  events: EventBus;
  mailer: Mailer;
  /** 60 requests a minute per client IP on the public rows (routes.md, "Lock and rate limits"; README, "Request limits"). */
  publicAuthLimiter: RateLimiter;
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
  /** Verifies external-app API keys; set by the registry module. */
  apiKeys: ApiKeyVerifier | null;
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
  /** Encrypts secrets kept for later use in clear (NAS secrets) under DATA_DIR/data.key. */
  secrets: SecretBox;
}

export interface ContractChange {
  corpId: string;
  contractId: string;
  /** What RADIUS renders from, before the change (the contract module's `ContractConnection`); null: new. */
  before: unknown;
  actorUserId: string | null;
  ip: string | null;
}

export interface DispatchTuning {
  /** A delivery succeeds only with a 2xx within this time (routes.md: 15 s). */
  deliveryTimeoutMs: number;
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
  /** Time between the attempts of an RFC 5176 request (routes.md: 2 s). */
  coaRetryMs: number;
}

export interface ContextOptions {
  logger?: Logger;
  clientIp?: ClientIpResolver;
  now?: () => number;
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
}

/**
 * What must happen before createContext on PostgreSQL (it is asynchronous; createContext is not):
 * the database migrated under its advisory lock, the built-in rows seeded, and this node's change
 * feed listening. Nothing on SQLite, whose start-up work is synchronous and done by createContext.
 */
export async function prepareStorage(config: Config, logger?: Logger): Promise<Pick<ContextOptions, "postgres">> {
  if (!config.databaseUrl) return {};
  return { postgres: await startPgNode(config.databaseUrl, config.dataDir, logger) };
}

/** The HS256 key: from configuration, else generated once into DATA_DIR/secret.key (mode 0600). */
function tokenKey(config: Config): Uint8Array {
  if (config.tokenSecret) return new TextEncoder().encode(config.tokenSecret);
  const path = join(config.dataDir, "secret.key");
  if (!existsSync(path)) {
    writeFileSync(path, randomBytes(48).toString("base64url") + "\n", { mode: 0o600, flag: "wx" });
  }
  chmodSync(path, 0o600);
  return new TextEncoder().encode(readFileSync(path, "utf8").trim());
}

/**
 * What the kernel reads from tables that modules own, handed in by the app (src/app.ts) so that
 * the kernel imports no module: corporations (corp), a user's flags (user), grants (workgroup).
 */
export interface KernelQueries {
  corps: CorpLookups;
  userFlags: (db: PlatformDb, userId: string) => Promise<UserFlags | null>;
  permissions: PermissionQueries;
}

export function createContext(config: Config, queries: KernelQueries, options: ContextOptions = {}): AppContext {
  mkdirSync(config.dataDir, { recursive: true });
  const logger = options.logger ?? createLogger(config.logLevel);
  const events = new EventBus();
  const storage = config.databaseUrl ? postgresStorage(options, events) : sqliteStorage(config, options, logger, events);
  const { store, tenants, builtinServerId } = storage;
  const jobs = new Jobs(logger, options.startDelayMs ?? 250);
  const closers: (() => void | Promise<void>)[] = [];
  let closed = false;
  const ctx: AppContext = {
    config,
    logger,
    store,
    jobs,
    tenants,
    corps: new CorpCache(store.platform, queries.corps),
    permissions: new PermissionCache(store.platform, queries.permissions),
    sessions: new Sessions(store.platform, tokenKey(config), config.tokenTtl, queries.userFlags, logger),
    passwords: new PasswordHasher(config.maxConcurrentHashes),
    events,
    mailer: new Mailer(config.smtpUrl, config.smtpFrom, logger),
    publicAuthLimiter: new RateLimiter(options.publicAuthLimit ?? config.authRateLimit, 60_000, options.now ?? Date.now),
    egress: new EgressPolicy(config.egressAllow, config.egressDeny),
    builtinServerId,
    clientIp: options.clientIp ?? clientIpResolver(config.trustedProxies),
    authChecks: [],
    contractWatchers: [],
    apiKeys: null,
    now: options.now ?? Date.now,
    dispatchTuning: { deliveryTimeoutMs: 15_000, tickMs: 1_000, sweepMs: 60_000, fullSweepMs: 3_600_000, socketCheckMs: 5_000, coaRetryMs: 2_000, ...options.dispatchTuning },
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
    secrets: SecretBox.forDataDir(config.dataDir),
  };
  return ctx;
}

interface Storage {
  store: AppStore;
  tenants: TenantRegistry;
  builtinServerId: string;
  /** After the jobs stopped: closes the databases. */
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
    async close() {
      tenants.closeAll();
      platformDoor.close();
      await checkpointer.close();
    },
  };
}

/** PostgreSQL (cluster mode): the pool started and migrated by `prepareStorage`. */
function postgresStorage(options: ContextOptions, events: EventBus): Storage {
  const start = options.postgres;
  if (!start) throw new Error("--database-url is set: the app is built after `await prepareStorage(config)`, with its result in the options");
  const { store, tenants, feed } = pgStorage(start, events);
  return {
    store,
    tenants,
    builtinServerId: start.builtinServerId,
    async close() {
      await feed?.close();
      await start.sql.close();
    },
  };
}
