// Configuration: flags win over CORPADMIN_* environment variables, which win over defaults.
// Every setting is declared once in SETTINGS; `corpadmin help` prints the same table.
import { ConfigError } from "./lib/config-error";
import { join, resolve } from "node:path";
import { Cron } from "croner";
import type { LogLevel } from "./lib/log";
import { DATABASE_URL_SETTING, parseDatabaseUrl } from "./db/pg/url";

export interface OidcProviderConfig {
  clientId: string | null;
  issuer: string;
  jwksUrl: string;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** The shared PostgreSQL database (cluster mode, issue 19); null: SQLite files under dataDir. */
  databaseUrl: string | null;
  publicUrl: string;
  logLevel: LogLevel;
  /** One info line per HTTP request; off by default. */
  accessLog: boolean;
  tokenTtl: number;
  tokenSecret: string | null;
  /** The data key's file (NAS secrets are sealed with it); null: DATA_DIR/data.key, generated when missing. */
  dataKeyFile: string | null;
  trustedProxies: string[];
  smtpUrl: string | null;
  smtpFrom: string;
  egressAllow: string[];
  egressDeny: string[];
  oidc: { google: OidcProviderConfig; microsoft: OidcProviderConfig };
  /** Upper bound of argon2id hashes computed at once (each holds ~19 MiB). */
  maxConcurrentHashes: number;
  /** Requests a minute per client IP on the public rows together. */
  authRateLimit: number;
  /** croner expression of the scheduled backup; null: off. */
  backupCron: string | null;
  backupDir: string;
  /**
   * Cluster mode: the PostgreSQL URL pg_dump connects with, a role that row-level security does not
   * hold (BYPASSRLS or superuser), which the app's own role must not be; null: databaseUrl.
   */
  backupDatabaseUrl: string | null;
  /** Scheduled backups kept (the oldest beyond this are deleted). */
  backupKeep: number;
  /** Bearer token that GET /metrics requires; null: no token. */
  metricsToken: string | null;
  /** GET /metrics answers loopback clients only. */
  metricsLoopbackOnly: boolean;
  auditRetentionDays: number;
  /** Days dispatched outbox events and finished webhook deliveries are kept. */
  eventRetentionDays: number;
  /** Days RADIUS accounting records are kept; 0: forever. */
  accountingRetentionDays: number;
  /** Days RADIUS authorize attempts are kept; 0: forever. */
  radiusAttemptRetentionDays: number;
  /** Days metric values are kept, by their own `at`; 0: forever. */
  metricValueRetentionDays: number;
  /** Days QR code accesses (scans) are kept; 0: forever. */
  qrAccessRetentionDays: number;
  /** Days Changes (the history of records, tenant and platform) are kept. */
  historyRetentionDays: number;
  /**
   * Cluster mode: how long a node that takes a single-node job's lease waits before starting it,
   * and how long one proof lets the holder run on (src/core/pg/lease.ts); the heartbeat is a fifth.
   */
  leaseGraceMs: number;
}

interface Setting {
  flag: string;
  env: string;
  default: string;
  help: string;
}

export const SETTINGS: Setting[] = [
  { flag: "port", env: "CORPADMIN_PORT", default: "8080", help: "TCP port of the HTTP API" },
  { flag: "host", env: "CORPADMIN_HOST", default: "0.0.0.0", help: "address the HTTP API listens on" },
  { flag: "data-dir", env: "CORPADMIN_DATA_DIR", default: "./data", help: "platform database, built-in server directory, generated secrets" },
  DATABASE_URL_SETTING,
  { flag: "public-url", env: "CORPADMIN_PUBLIC_URL", default: "", help: "base of links handed out (QR codes, socket URL); default http://localhost:<port>" },
  { flag: "log-level", env: "CORPADMIN_LOG_LEVEL", default: "info", help: "debug, info, warn or error" },
  { flag: "access-log", env: "CORPADMIN_ACCESS_LOG", default: "false", help: "log one info line per HTTP request (off: journald would rate-limit a busy box's lines and drop warnings and audit lines with them)" },
  { flag: "token-ttl", env: "CORPADMIN_TOKEN_TTL", default: "3600", help: "seconds a token lives" },
  { flag: "token-secret", env: "CORPADMIN_TOKEN_SECRET", default: "", help: "HS256 signing key; generated into DATA_DIR/secret.key (mode 0600) when empty" },
  { flag: "data-key-file", env: "CORPADMIN_DATA_KEY_FILE", default: "", help: "file holding the data key that seals NAS secrets (32 bytes, base64; must exist); empty: DATA_DIR/data.key, generated when missing" },
  { flag: "trusted-proxies", env: "CORPADMIN_TRUSTED_PROXIES", default: "", help: "comma-separated CIDRs whose X-Forwarded-For is believed" },
  { flag: "smtp-url", env: "CORPADMIN_SMTP_URL", default: "", help: "smtp://user:pass@host:port for outgoing e-mail; empty: e-mail is logged, not sent" },
  { flag: "smtp-from", env: "CORPADMIN_SMTP_FROM", default: "corpadmin@localhost", help: "sender address of outgoing e-mail" },
  { flag: "egress-allow", env: "CORPADMIN_EGRESS_ALLOW", default: "", help: "comma-separated CIDRs outbound requests may reach even when denied by default" },
  { flag: "egress-deny", env: "CORPADMIN_EGRESS_DENY", default: "", help: "comma-separated CIDRs outbound requests may never reach" },
  { flag: "oidc-google-client-id", env: "CORPADMIN_OIDC_GOOGLE_CLIENT_ID", default: "", help: "Google OpenID Connect client id; empty: provider off" },
  { flag: "oidc-google-issuer", env: "CORPADMIN_OIDC_GOOGLE_ISSUER", default: "https://accounts.google.com", help: "Google issuer" },
  { flag: "oidc-google-jwks-url", env: "CORPADMIN_OIDC_GOOGLE_JWKS_URL", default: "https://www.googleapis.com/oauth2/v3/certs", help: "Google JWKS URL" },
  { flag: "oidc-microsoft-client-id", env: "CORPADMIN_OIDC_MICROSOFT_CLIENT_ID", default: "", help: "Microsoft OpenID Connect client id; empty: provider off" },
  { flag: "oidc-microsoft-issuer", env: "CORPADMIN_OIDC_MICROSOFT_ISSUER", default: "https://login.microsoftonline.com/{tenantid}/v2.0", help: "Microsoft issuer ({tenantid} matches the token's tid)" },
  { flag: "oidc-microsoft-jwks-url", env: "CORPADMIN_OIDC_MICROSOFT_JWKS_URL", default: "https://login.microsoftonline.com/common/discovery/v2.0/keys", help: "Microsoft JWKS URL" },
  { flag: "max-concurrent-hashes", env: "CORPADMIN_MAX_CONCURRENT_HASHES", default: "4", help: "password hashes computed at once (each holds ~19 MiB)" },
  { flag: "auth-rate-limit", env: "CORPADMIN_AUTH_RATE_LIMIT", default: "60", help: "requests a minute per client IP on the public rows together (start, login, OIDC exchange, corp check, password reset-key and reset)" },
  { flag: "backup-cron", env: "CORPADMIN_BACKUP_CRON", default: "", help: "croner expression of the scheduled backup (e.g. '0 3 * * *'); empty: off" },
  { flag: "backup-dir", env: "CORPADMIN_BACKUP_DIR", default: "", help: "where scheduled backups go; default DATA_DIR/backups" },
  { flag: "backup-keep", env: "CORPADMIN_BACKUP_KEEP", default: "7", help: "scheduled backups kept; older ones are deleted" },
  {
    flag: "backup-database-url",
    env: "CORPADMIN_BACKUP_DATABASE_URL",
    default: "",
    help: "cluster mode: postgres:// URL pg_dump reads the database with, as a role with BYPASSRLS (or superuser); empty: --database-url",
  },
  { flag: "metrics-token", env: "CORPADMIN_METRICS_TOKEN", default: "", help: "bearer token GET /metrics requires; /metrics is off unless this or --metrics-loopback-only is set" },
  { flag: "metrics-loopback-only", env: "CORPADMIN_METRICS_LOOPBACK", default: "false", help: "serve GET /metrics to loopback clients (with the token too when one is set)" },
  { flag: "audit-retention-days", env: "CORPADMIN_AUDIT_RETENTION_DAYS", default: "90", help: "days audit log entries are kept in the platform database" },
  { flag: "event-retention-days", env: "CORPADMIN_EVENT_RETENTION_DAYS", default: "30", help: "days dispatched outbox events and finished webhook deliveries (the delivery log) are kept" },
  { flag: "accounting-retention-days", env: "CORPADMIN_ACCOUNTING_RETENTION_DAYS", default: "400", help: "days RADIUS accounting records are kept; 0: forever" },
  { flag: "radius-attempt-retention-days", env: "CORPADMIN_RADIUS_ATTEMPT_RETENTION_DAYS", default: "30", help: "days RADIUS authorize attempts (GET /api/isp/radius/attempts) are kept; 0: forever" },
  { flag: "metric-value-retention-days", env: "CORPADMIN_METRIC_VALUE_RETENTION_DAYS", default: "400", help: "days metric values are kept (by their own time); 0: forever" },
  { flag: "qr-access-retention-days", env: "CORPADMIN_QR_ACCESS_RETENTION_DAYS", default: "400", help: "days QR code accesses (scans) are kept; 0: forever" },
  { flag: "history-retention-days", env: "CORPADMIN_HISTORY_RETENTION_DAYS", default: "400", help: "days the history of records (GET /api/history: who changed what) is kept" },
  {
    flag: "lease-grace-ms",
    env: "CORPADMIN_LEASE_GRACE_MS",
    default: "10000",
    help: "cluster mode: ms a node waits after taking a single-node job (metric scheduler, housekeeping, backups) before running it; a takeover after a node dies takes about 1.2 times this",
  },
];

// Thrown for a setting that cannot be used (main prints it and exits 2); in lib so the kernel's
// lower layers (secret keys, the PostgreSQL store) throw it without importing the configuration.
export { ConfigError };

/** Splits `--flag value` / `--flag=value` pairs; returns the flags and the remaining words. */
export function parseFlags(argv: string[]): { flags: Map<string, string>; words: string[] } {
  const flags = new Map<string, string>();
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith("--")) {
      words.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    if (eq > 0) flags.set(a.slice(2, eq), a.slice(eq + 1));
    else if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) flags.set(a.slice(2), argv[++i]);
    else flags.set(a.slice(2), "true");
  }
  return { flags, words };
}

function boolSetting(flag: string, v: string): boolean {
  const s = v.trim().toLowerCase();
  if (["true", "1", "yes", "on"].includes(s)) return true;
  if (["false", "0", "no", "off", ""].includes(s)) return false;
  throw new ConfigError(`--${flag} must be true or false`);
}

function cronSetting(v: string): string | null {
  const expr = v.trim();
  if (!expr) return null;
  try {
    new Cron(expr, { paused: true }).stop();
  } catch (err) {
    throw new ConfigError(`--backup-cron is not a valid cron expression: ${(err as Error).message}`);
  }
  return expr;
}

const list = (s: string) => s.split(",").map((x) => x.trim()).filter(Boolean);

export function loadConfig(flags: Map<string, string> = new Map(), env: Record<string, string | undefined> = process.env): Config {
  const raw = new Map<string, string>();
  for (const s of SETTINGS) raw.set(s.flag, flags.get(s.flag) ?? env[s.env] ?? s.default);
  const get = (k: string) => raw.get(k)!;
  const int = (k: string, min: number, max: number) => {
    const v = Number(get(k));
    if (!Number.isInteger(v) || v < min || v > max) throw new ConfigError(`--${k} must be an integer from ${min} to ${max}`);
    return v;
  };
  const port = int("port", 0, 65535);
  const database = parseDatabaseUrl(get("database-url"));
  if ("error" in database) throw new ConfigError(database.error);
  const backupDatabase = parseDatabaseUrl(get("backup-database-url"));
  if ("error" in backupDatabase) throw new ConfigError(backupDatabase.error.replace("--database-url", "--backup-database-url"));
  const logLevel = get("log-level") as LogLevel;
  if (!["debug", "info", "warn", "error"].includes(logLevel)) throw new ConfigError("--log-level must be debug, info, warn or error");
  const provider = (p: string): OidcProviderConfig => ({
    clientId: get(`oidc-${p}-client-id`) || null,
    issuer: get(`oidc-${p}-issuer`),
    jwksUrl: get(`oidc-${p}-jwks-url`),
  });
  return {
    port,
    host: get("host"),
    dataDir: resolve(get("data-dir")),
    databaseUrl: database.url,
    publicUrl: (get("public-url") || `http://localhost:${port}`).replace(/\/+$/, ""),
    logLevel,
    accessLog: boolSetting("access-log", get("access-log")),
    tokenTtl: int("token-ttl", 60, 31 * 86400),
    tokenSecret: get("token-secret") || null,
    dataKeyFile: get("data-key-file") ? resolve(get("data-key-file")) : null,
    trustedProxies: list(get("trusted-proxies")),
    smtpUrl: get("smtp-url") || null,
    smtpFrom: get("smtp-from"),
    egressAllow: list(get("egress-allow")),
    egressDeny: list(get("egress-deny")),
    oidc: { google: provider("google"), microsoft: provider("microsoft") },
    maxConcurrentHashes: int("max-concurrent-hashes", 1, 64),
    authRateLimit: int("auth-rate-limit", 1, 1_000_000),
    backupCron: cronSetting(get("backup-cron")),
    backupDir: get("backup-dir") ? resolve(get("backup-dir")) : join(resolve(get("data-dir")), "backups"),
    backupKeep: int("backup-keep", 1, 10_000),
    backupDatabaseUrl: backupDatabase.url,
    metricsToken: get("metrics-token") || null,
    metricsLoopbackOnly: boolSetting("metrics-loopback-only", get("metrics-loopback-only")),
    auditRetentionDays: int("audit-retention-days", 1, 36_500),
    eventRetentionDays: int("event-retention-days", 1, 36_500),
    accountingRetentionDays: int("accounting-retention-days", 0, 36_500),
    radiusAttemptRetentionDays: int("radius-attempt-retention-days", 0, 36_500),
    metricValueRetentionDays: int("metric-value-retention-days", 0, 36_500),
    qrAccessRetentionDays: int("qr-access-retention-days", 0, 36_500),
    historyRetentionDays: int("history-retention-days", 1, 36_500),
    leaseGraceMs: int("lease-grace-ms", 500, 600_000),
  };
}

export function settingsHelp(): string {
  const w = Math.max(...SETTINGS.map((s) => s.flag.length + s.env.length + 5));
  return SETTINGS.map((s) => {
    const names = `--${s.flag} / ${s.env}`.padEnd(w + 2);
    return `  ${names}${s.help}${s.default ? ` (default ${s.default})` : ""}`;
  }).join("\n");
}
