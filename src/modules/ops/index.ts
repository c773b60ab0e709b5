// Operations inside the running service: GET /metrics, the request metrics, the audit log's
// retention, the scheduled backup and the backup rows of the API (backup-api.ts). (The CLI side
// lives in src/cli/.)
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { createHash, timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { normalizeAddress } from "../../lib/client-ip";
import { forbidden, notFound, unauthorized } from "../../lib/problem";
import { VERSION } from "../../version";
import { BackupLock, startBackupSchedule } from "./backup";
import { backupRoutes } from "./backup-api";
import { labelKey, type MetricsRegistry } from "../../core/metrics";

const REQUESTS = "corpadmin_http_requests_total";
const DURATION = "corpadmin_http_request_duration_seconds";

/** Rendered label sets of the request metrics, by method, route and status (a small set). */
const requestKeys = new WeakMap<MetricsRegistry, Map<string, { counter: string; histogram: string }>>();

/** Called once per response (src/app.ts). `route` is the matched pattern, never the raw path. */
export function recordRequest(metrics: MetricsRegistry, method: string, route: string | undefined, status: number, seconds: number): void {
  // Unmatched paths are unbounded (scanners): they share one label value.
  const r = route || "unmatched";
  let keys = requestKeys.get(metrics);
  if (!keys) requestKeys.set(metrics, (keys = new Map()));
  const id = `${method} ${status} ${r}`;
  let key = keys.get(id);
  if (!key) {
    key = { counter: labelKey({ method, route: r, status }), histogram: labelKey({ method, route: r }) };
    if (keys.size < 1_000) keys.set(id, key);
  }
  metrics.counter(REQUESTS, "HTTP requests, by method, route pattern and status").incKey(key.counter);
  metrics.histogram(DURATION, "HTTP request latency in seconds, by method and route pattern").observeKey(key.histogram, seconds);
}

function fileSize(path: string): number {
  let size = 0;
  for (const p of [path, `${path}-wal`]) if (existsSync(p)) size += statSync(p).size;
  return size;
}

function isLoopback(ip: string): boolean {
  const addr = normalizeAddress(ip);
  return !!addr && addr.range() === "loopback";
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Metrics computed at scrape time from what the service already holds. */
function registerCollectors(ctx: AppContext): void {
  const m = ctx.serviceMetrics;
  const startedAt = ctx.now() / 1000;
  m.gauge("corpadmin_info", "Build information").collect(() => [[{ version: VERSION }, 1]]);
  m.gauge("corpadmin_start_time_seconds", "When the service started, in Unix seconds").collect(() => [[{}, startedAt]]);
  m.gauge("corpadmin_open_corporation_databases", "Corporation databases open in the handle cache").collect(() => [[{}, ctx.tenants.openCount()]]);
  const byStatus = ctx.platform.$client.query("SELECT status, count(*) AS n FROM corporations GROUP BY status");
  m.gauge("corpadmin_corporations", "Corporations, by status").collect(() =>
    (byStatus.all() as { status: string; n: number }[]).map((r) => [{ status: r.status }, r.n]),
  );
  const corpFiles = ctx.platform.$client.query(
    "SELECT c.id, c.auth_name, s.path, s.builtin FROM corporations c JOIN servers s ON s.id = c.server_id",
  );
  m.gauge("corpadmin_database_size_bytes", "Database file sizes (WAL included)").collect(() => {
    const out: [Record<string, string>, number][] = [[{ database: "platform", corp: "" }, fileSize(join(ctx.config.dataDir, "platform.db"))]];
    for (const c of corpFiles.all() as { id: string; auth_name: string; path: string; builtin: number }[]) {
      const dir = c.builtin ? join(ctx.config.dataDir, "corps") : c.path;
      out.push([{ database: "corporation", corp: c.auth_name }, fileSize(join(dir, `${c.id}.db`))]);
    }
    return out;
  });
}

function startBackgroundWork(ctx: AppContext, lock: BackupLock): void {
  ctx.onClose(ctx.audit.startRetention());
  if (ctx.config.backupCron) {
    ctx.onClose(
      startBackupSchedule({
        cron: ctx.config.backupCron,
        dataDir: ctx.config.dataDir,
        backupDir: ctx.config.backupDir,
        keep: ctx.config.backupKeep,
        logger: ctx.logger,
        metrics: ctx.serviceMetrics,
        lock,
      }),
    );
  }
}

export function opsModule(ctx: AppContext) {
  registerCollectors(ctx);
  // One backup at a time: the scheduled one and POST /api/backup.
  const backupLock = new BackupLock();
  startBackgroundWork(ctx, backupLock);
  const { metricsToken, metricsLoopbackOnly } = ctx.config;
  const tokenDigest = metricsToken ? digest(metricsToken) : null;
  return new Elysia({ name: "ops" }).use(backupRoutes(ctx, backupLock)).get(
    "/metrics",
    ({ request, server }) => {
      // Off unless configured: answer as for any unknown path.
      if (!tokenDigest && !metricsLoopbackOnly) throw notFound("Route");
      if (metricsLoopbackOnly) {
        const ip = ctx.clientIp(request, server?.requestIP(request)?.address ?? null);
        if (!isLoopback(ip)) throw forbidden("Metrics are served to loopback clients only");
      }
      if (tokenDigest) {
        const header = request.headers.get("authorization") ?? "";
        const given = header.toLowerCase().startsWith("bearer ") ? header.slice(7).trim() : "";
        if (!given || !timingSafeEqual(digest(given), tokenDigest)) throw unauthorized("A valid metrics bearer token is required");
      }
      return new Response(ctx.serviceMetrics.render(), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" } });
    },
    // Not part of the API contract: an operator endpoint outside /api.
    { detail: { hide: true } },
  );
}
