// The service's own metrics: per-request counters (recordRequest, called from src/app.ts), the
// gauges computed at scrape time, and who may scrape.
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { createHash, timingSafeEqual } from "node:crypto";
import type { AppContext } from "../../core/context";
import { labelKey, type Counter, type Histogram, type MetricsRegistry } from "../../core/metrics";
import { normalizeAddress } from "../../lib/client-ip";
import { forbidden, notFound, unauthorized } from "../../lib/problem";
import { VERSION } from "../../version";
import { allCorpRefs, corpCountsByStatus } from "../corp/service";
import { serverDirs } from "../server/service";

const REQUESTS = "corpadmin_http_requests_total";
const DURATION = "corpadmin_http_request_duration_seconds";

/** A registry's request metrics, and their rendered label sets by route, method and status (a small set). */
interface RequestSeries {
  requests: Counter;
  duration: Histogram;
  keys: Map<string, Map<string, Map<number, { counter: string; histogram: string }>>>;
  size: number;
}
const requestSeries = new WeakMap<MetricsRegistry, RequestSeries>();

/**
 * Called once per response (src/app.ts). `route` is the matched pattern, never the raw path.
 * Kept cheap, as GET /q/{slug} answers in a few microseconds: the metrics are looked up once per
 * registry and the label sets through maps of the parts (no key text made per request).
 */
export function recordRequest(metrics: MetricsRegistry, method: string, route: string | undefined, status: number, seconds: number): void {
  // Unmatched paths are unbounded (scanners): they share one label value.
  const r = route || "unmatched";
  let s = requestSeries.get(metrics);
  if (!s) {
    s = {
      requests: metrics.counter(REQUESTS, "HTTP requests, by method, route pattern and status"),
      duration: metrics.histogram(DURATION, "HTTP request latency in seconds, by method and route pattern"),
      keys: new Map(),
      size: 0,
    };
    requestSeries.set(metrics, s);
  }
  let key = s.keys.get(r)?.get(method)?.get(status);
  if (!key) {
    key = { counter: labelKey({ method, route: r, status }), histogram: labelKey({ method, route: r }) };
    if (s.size < 1_000) {
      let byMethod = s.keys.get(r);
      if (!byMethod) s.keys.set(r, (byMethod = new Map()));
      let byStatus = byMethod.get(method);
      if (!byStatus) byMethod.set(method, (byStatus = new Map()));
      byStatus.set(status, key);
      s.size++;
    }
  }
  s.requests.incKey(key.counter);
  s.duration.observeKey(key.histogram, seconds);
}

function fileSize(path: string): number {
  let size = 0;
  for (const p of [path, `${path}-wal`]) if (existsSync(p)) size += statSync(p).size;
  return size;
}

/** What the scrape-time gauges read from the platform database, refreshed before each scrape. */
interface DatabaseFacts {
  byStatus: { status: string; n: number }[];
  corpFiles: { auth_name: string; path: string }[];
  /** PostgreSQL: the size of the one database every corporation shares (no files of ours). */
  sharedSize: number | null;
}

/**
 * Registers the metrics computed at scrape time from what the service already holds; returns the
 * step that reads their database part (the registry renders synchronously, the store is async).
 */
export function registerCollectors(ctx: AppContext): () => Promise<void> {
  const m = ctx.serviceMetrics;
  const startedAt = ctx.now() / 1000;
  let facts: DatabaseFacts | null = null;
  // A collector that throws drops its own series, not the scrape.
  const current = () => {
    if (!facts) throw new Error("the platform database could not be read");
    return facts;
  };
  m.gauge("corpadmin_info", "Build information").collect(() => [[{ version: VERSION }, 1]]);
  m.gauge("corpadmin_start_time_seconds", "When the service started, in Unix seconds").collect(() => [[{}, startedAt]]);
  m.gauge("corpadmin_open_corporation_databases", "Corporation databases open in the handle cache").collect(() => [[{}, ctx.tenants.openCount()]]);
  m.gauge("corpadmin_corporations", "Corporations, by status").collect(() => current().byStatus.map((r) => [{ status: r.status }, r.n]));
  m.gauge("corpadmin_database_size_bytes", "Database file sizes (WAL included); on PostgreSQL the shared database's size").collect(() => {
    const { sharedSize } = current();
    if (sharedSize !== null) return [[{ database: "postgresql", corp: "" }, sharedSize]];
    const out: [Record<string, string>, number][] = [[{ database: "platform", corp: "" }, fileSize(join(ctx.config.dataDir, "platform.db"))]];
    for (const c of current().corpFiles) out.push([{ database: "corporation", corp: c.auth_name }, fileSize(c.path)]);
    return out;
  });
  return async () => {
    try {
      facts = await ctx.store.platform.read(async (db) => {
        if (!ctx.tenants.filesPerCorp) {
          return { byStatus: await corpCountsByStatus(db), corpFiles: [], sharedSize: await (await import("../../core/pg/store")).sharedDatabaseSize(db) };
        }
        const dirs = await serverDirs(db);
        const corpFiles = (await allCorpRefs(db)).map((c) => {
          const server = dirs.get(c.server_id)!;
          return { auth_name: c.auth_name, path: join(server.builtin ? join(ctx.config.dataDir, "corps") : server.path, `${c.id}.db`) };
        });
        return { byStatus: await corpCountsByStatus(db), corpFiles, sharedSize: null };
      });
    } catch {
      facts = null;
    }
  };
}

function isLoopback(ip: string): boolean {
  const addr = normalizeAddress(ip);
  return !!addr && addr.range() === "loopback";
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Who may scrape GET /metrics (off unless a token or loopback-only is configured). */
export function metricsAccess(ctx: AppContext): (request: Request, peer: string | null) => void {
  const { metricsToken, metricsLoopbackOnly } = ctx.config;
  const tokenDigest = metricsToken ? digest(metricsToken) : null;
  return (request, peer) => {
    // Off unless configured: answer as for any unknown path.
    if (!tokenDigest && !metricsLoopbackOnly) throw notFound("Route");
    if (metricsLoopbackOnly) {
      const ip = ctx.clientIp(request, peer);
      if (!isLoopback(ip)) throw forbidden("Metrics are served to loopback clients only");
    }
    if (tokenDigest) {
      const header = request.headers.get("authorization") ?? "";
      const given = header.toLowerCase().startsWith("bearer ") ? header.slice(7).trim() : "";
      if (!given || !timingSafeEqual(digest(given), tokenDigest)) throw unauthorized("A valid metrics bearer token is required");
    }
  };
}
