// GET /metrics: off by default, a bearer token and/or loopback-only, Prometheus text format.
import { afterAll, expect, test } from "bun:test";
import { MetricsRegistry } from "../../../src/core/metrics";
import { inProcessOnly, makeApp, startAndLogin, testSourceOnly, type TestApp } from "../../support/helpers";
import { TEST_BACKEND } from "../../support/backend";
import { waitFor } from "../../support/wait";

const apps: TestApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.close();
});
async function app(env: Record<string, string> = {}) {
  const t = await makeApp({ env });
  apps.push(t);
  return t;
}

/** Parses the exposition text into `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

const TOKEN = "metrics-token-0123456789";

test("off unless a token or loopback-only is configured: 404 like any unknown path", async () => {
  const t = await app();
  const r = await t.req("GET", "/metrics");
  expect(r.status).toBe(404);
  expect(r.body.type).toBe("urn:corpadmin:problem:not-found");
  // Not part of the API document.
  const doc = await t.req("GET", "/api/openapi.json");
  expect(Object.keys(doc.body.paths)).not.toContain("/metrics");
});

// In-process: waits on and feeds the app's own counters.
testSourceOnly("with a token: 401 without it or with a wrong one; requests by route and status, latency histogram, databases", async () => {
  const t = await app({ CORPADMIN_METRICS_TOKEN: TOKEN });
  await startAndLogin(t);
  expect((await t.req("GET", "/metrics")).status).toBe(401);
  expect((await t.req("GET", "/metrics", { token: "wrong" })).status).toBe(401);
  expect((await t.req("GET", "/metrics", { headers: { authorization: `Basic ${TOKEN}` } })).status).toBe(401);

  await t.req("GET", "/api/health");
  await t.req("GET", "/api/health");
  await t.req("GET", "/no/such/path/123");
  await t.req("POST", "/api/login", { body: { corp: "acme", login: "admin", password: "wrong-password" } });
  // Requests are counted in Elysia's after-response hook, which error responses reach a little later.
  const counted = (labels: Record<string, string | number>) => t.ctx.serviceMetrics.counter("corpadmin_http_requests_total").get(labels);
  await waitFor(
    "the four requests counted",
    () => counted({ method: "GET", route: "/api/health", status: 200 }) === 2 && counted({ method: "GET", route: "unmatched", status: 404 }) && counted({ method: "POST", route: "/api/login", status: 403 }),
  );
  const r = await t.req("GET", "/metrics", { token: TOKEN });
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const s = samples(r.text);
  expect(s.get('corpadmin_http_requests_total{method="GET",route="/api/health",status="200"}')).toBe(2);
  expect(s.get('corpadmin_http_requests_total{method="POST",route="/api/login",status="403"}')).toBe(1);
  // Unknown paths share one label value: scanners cannot blow up the series count.
  expect(s.get('corpadmin_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
  expect([...s.keys()].some((k) => k.includes("/no/such/path"))).toBe(false);
  expect(s.get('corpadmin_http_request_duration_seconds_count{method="GET",route="/api/health"}')).toBe(2);
  expect(s.get('corpadmin_http_request_duration_seconds_bucket{method="GET",route="/api/health",le="+Inf"}')).toBe(2);
  expect(s.get('corpadmin_http_request_duration_seconds_bucket{method="GET",route="/api/health",le="10"}')).toBe(2);
  expect(r.text).toContain("# TYPE corpadmin_http_request_duration_seconds histogram");
  expect(r.text).toContain("# TYPE corpadmin_http_requests_total counter");

  expect(s.get("corpadmin_open_corporation_databases")).toBe(t.ctx.tenants.openCount());
  expect(s.get('corpadmin_corporations{status="ENABLED"}')).toBe(1);
  if (TEST_BACKEND === "pg") {
    // One database for the platform and every corporation: its size, not files.
    expect(s.get('corpadmin_database_size_bytes{corp="",database="postgresql"}')).toBeGreaterThan(0);
    expect([...s.keys()].filter((k) => k.startsWith("corpadmin_database_size_bytes"))).toHaveLength(1);
  } else {
    expect(s.get('corpadmin_database_size_bytes{corp="",database="platform"}')).toBeGreaterThan(0);
    expect(s.has('corpadmin_database_size_bytes{corp="acme",database="corporation"}')).toBe(true);
  }
  // Published from the start for the webhook dispatcher and the scheduler to feed.
  for (const name of ["corpadmin_webhook_queue_depth", "corpadmin_webhook_delivery_failures_total", "corpadmin_scheduler_runs_total", "corpadmin_scheduler_errors_total"]) {
    expect(s.get(name)).toBe(0);
  }
  // Other modules feed the registry on the context.
  t.ctx.serviceMetrics.counter("corpadmin_scheduler_runs_total").inc({ corp: "acme" }, 3);
  t.ctx.serviceMetrics.gauge("corpadmin_webhook_queue_depth").set({}, 7);
  const again = samples((await t.req("GET", "/metrics", { token: TOKEN })).text);
  expect(again.get('corpadmin_scheduler_runs_total{corp="acme"}')).toBe(3);
  expect(again.get("corpadmin_webhook_queue_depth")).toBe(7);
  // The token never shows up in the output.
  expect((await t.req("GET", "/metrics", { token: TOKEN })).text).not.toContain(TOKEN);
});

test("loopback-only: loopback clients (IPv4, IPv6, mapped) get it, others 403; with a token too, both are needed", async () => {
  const t = await app({ CORPADMIN_METRICS_LOOPBACK: "true" });
  for (const ip of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"]) expect((await t.req("GET", "/metrics", { ip })).status).toBe(200);
  for (const ip of ["10.0.0.5", "192.168.1.1", "2001:db8::1"]) expect((await t.req("GET", "/metrics", { ip })).status).toBe(403);

  const both = await app({ CORPADMIN_METRICS_LOOPBACK: "true", CORPADMIN_METRICS_TOKEN: TOKEN });
  expect((await both.req("GET", "/metrics", { ip: "127.0.0.1" })).status).toBe(401);
  expect((await both.req("GET", "/metrics", { ip: "10.0.0.5", token: TOKEN })).status).toBe(403);
  expect((await both.req("GET", "/metrics", { ip: "127.0.0.1", token: TOKEN })).status).toBe(200);
});

test("loopback-only over a real socket uses the peer address", async () => {
  // The socket peer decides (in-process: a resolver of the peer instead of the x-test-peer header).
  const t = await makeApp({ env: { CORPADMIN_METRICS_LOOPBACK: "1" }, options: inProcessOnly({ clientIp: (_req, peer) => peer ?? "0.0.0.0" }) });
  apps.push(t);
  const res = await fetch(`${t.listen()}/metrics`);
  expect(res.status).toBe(200);
  expect(await res.text()).toContain("corpadmin_info{version=");
});

test("the registry: format, escaping, idempotent declaration, wrong use refused", () => {
  const m = new MetricsRegistry();
  const c = m.counter("test_things_total", "Things\nseen");
  c.inc({ kind: 'a"b\\c\nd' });
  c.inc({ kind: 'a"b\\c\nd' }, 2);
  expect(m.counter("test_things_total")).toBe(c);
  expect(() => m.gauge("test_things_total")).toThrow("is a counter");
  expect(() => c.inc({}, -1)).toThrow();
  expect(() => m.counter("bad name")).toThrow();
  expect(() => c.inc({ "bad-label": 1 })).toThrow();
  const h = m.histogram("test_latency_seconds", "Latency", [0.1, 1]);
  h.observe({}, 0.05);
  h.observe({}, 0.5);
  h.observe({}, 5);
  const g = m.gauge("test_level");
  g.collect(() => {
    throw new Error("collector broke");
  });
  const text = m.render();
  expect(text).toContain("# HELP test_things_total Things\\nseen\n# TYPE test_things_total counter\n");
  expect(text).toContain('test_things_total{kind="a\\"b\\\\c\\nd"} 3\n');
  expect(text).toContain('test_latency_seconds_bucket{le="0.1"} 1\ntest_latency_seconds_bucket{le="1"} 2\ntest_latency_seconds_bucket{le="+Inf"} 3\ntest_latency_seconds_sum 5.55\ntest_latency_seconds_count 3\n');
  // A broken collector drops its own metric, not the scrape.
  expect(text).not.toContain("test_level");
  expect(text.endsWith("\n")).toBe(true);
});
