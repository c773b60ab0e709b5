// Issue 19, "A cluster test": two corpadmin app nodes (separate `corpadmin serve` processes, each
// with its own data directory, the same token secret and data key) over the Patroni cluster of
// test/support/patroni.ts (3 etcd, 3 PostgreSQL 15 under Patroni, HAProxy). Fixtures through the
// API of node 1; then a writer through both nodes in turn (contract upserts, metric values, QR
// scans, city creations; contract upserts and cities fire webhooks) for RUN_MS, during which the
// database leader machine is SIGKILLed (its etcd member, Patroni, PostgreSQL), and later the app
// node running the metric scheduler then (the victim; the other is the survivor), so that its
// lease is taken over. Every 2xx (302 for a scan) is an acknowledged write. Asserted, with the
// figures printed: every acknowledged write present afterwards; the outage shorter than the TTL +
// 10 s; every event delivered to each webhook, no event under two webhook-ids, and a webhook-id
// repeated only after a kill (Standard Webhooks' at-least-once); one scheduler at a time (lease
// log lines), no two nodes collecting a metric in the same period, a metric created through the
// node not running it collected from the next period, and collecting goes on after the victim's
// death; socket clients on both nodes get the events written through the other node, and node 2's
// caches (slug index, corporations, permissions, sessions) learn of changes made through node 1
// through the change feed (bounds with margin for a loaded machine). A local receiver tells
// which node sent a request by the connection's owning process (test/support/app-node.ts
// connectionOwner); which node ran the metric scheduler when, by the nodes' lease log lines. Each
// figure is printed on a line starting "cluster ...".
// The binary pass only (CORPADMIN_TEST_TARGET=binary, where app-node.ts runs dist/corpadmin: the
// product as operators run it): from source it would repeat the same minute of cluster on
// the same code. CORPADMIN_TEST_CLUSTER=source runs it from source (`bun src/main.ts serve`).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { contractBody } from "../support/contract-body";
import { ADMIN, TARGET } from "../support/helpers";
import { verifyStandardWebhook } from "../support/webhooks";
import { connectionOwner, nodeSecrets, startAppNode, type AppNode } from "../support/app-node";
import { CLUSTER_TIMINGS, startCluster, type TestCluster } from "../support/patroni";

const RUN = TARGET === "binary" || process.env.CORPADMIN_TEST_CLUSTER === "source";
const clusterDescribe = RUN ? describe : describe.skip;

/** The writer's fixed time. */
const RUN_MS = 40_000;
/** The outage the issue allows: the TTL (the dead leader's key expires) plus 10 s. */
const OUTAGE_BOUND_MS = (CLUSTER_TIMINGS.ttl + 10) * 1000;
/** A request unanswered this long is not acknowledged. */
const REQUEST_TIMEOUT_MS = 5_000;
/** README: a crash loses at most the scans answered in its last 250 ms; 1 s allowed on this loaded machine (scan-loss.test.ts). */
const SCAN_LOSS_HARD_MS = 1_000;
/**
 * A delivery received this long before a kill (or during the database outage) may be sent again:
 * its sender may not have recorded the answer yet (the receiver answers at once).
 */
const RECORD_MARGIN_MS = 2_000;
/**
 * A socket must hear of a commit on the other node sooner than the hub's 5 s catch-up poll would
 * (normally well under 100 ms; the margin is for a loaded CI machine).
 */
const SOCKET_CROSS_NODE_MS = 4_000;
/** A cache has no periodic re-read: only the change feed can tell it, so any bound proves the feed; 10 s for a loaded machine. */
const CACHE_CROSS_NODE_MS = 10_000;
/** The collected metric's periodicity (its ticks are epoch-aligned: start_date below). */
const TICK_MS = 2_000;
/**
 * The nodes' lease grace (--lease-grace-ms; 10 s by default): the scheduler starts this long after
 * its node took the lease, so 4 s lets it run before the kills and move between the nodes within
 * the run (a takeover: a heartbeat, a fifth of it, plus the grace).
 */
const LEASE_GRACE_MS = 4_000;
/** A metric created through the node not running the scheduler is collected by the holder within a period and this (change feed, not the 60 s re-read; normally under 2 s). */
const METRIC_HEARD_MS = 10_000;
const CONTRACTS = 40;
const WEBHOOK_GROUPS = {
  a: ["CONTRACT_AFTER_INSERT", "CONTRACT_AFTER_UPDATE", "CITY_AFTER_INSERT"],
  b: ["CONTRACT_AFTER_UPDATE"],
} as const;

let cluster: TestCluster;
const nodes: AppNode[] = [];
const secrets = nodeSecrets();

beforeAll(async () => {
  if (!RUN) return;
  cluster = await startCluster();
  // Both at once: the second waits on the migration's advisory lock, then finds nothing pending.
  const env = { CORPADMIN_EGRESS_ALLOW: "127.0.0.0/8", CORPADMIN_AUTH_RATE_LIMIT: "100000", CORPADMIN_LEASE_GRACE_MS: String(LEASE_GRACE_MS) };
  nodes.push(...(await Promise.all(["app1", "app2"].map((name) => startAppNode(name, { databaseUrl: cluster.appUrl, secrets, env })))));
}, 330_000);

afterAll(async () => {
  for (const ws of sockets) ws?.ws.close();
  await Promise.all(nodes.map((n) => n.stop()));
  receiver?.stop(true);
  await cluster?.stop();
}, 60_000);

// ---------------------------------------------------------------------------------------------
// The receiver: webhooks (/hook/a, /hook/b) and the metric endpoint (/metric), each request
// stamped on this process's clock with the node that sent it.

interface Hit {
  path: string;
  at: number;
  /** Index in `nodes`, or -1 when the sender was not found. */
  node: number;
  webhookId: string | null;
  key: string | null;
}
const hits: Hit[] = [];
/** Each webhook's secret (from its create response), by its receiver path. */
const hookSecrets = new Map<string, string>();
/** Deliveries whose Standard Webhooks signature did not verify with their webhook's secret. */
const badSignatures: string[] = [];
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req, server) {
    const at = performance.now();
    const peer = server.requestIP(req);
    const owner = peer ? connectionOwner(peer.port, server.port!, nodes.map((n) => n.pid)) : null;
    const node = owner === null ? -1 : nodes.findIndex((n) => n.pid === owner);
    const path = new URL(req.url).pathname;
    const body = await req.text();
    let key: string | null = null;
    try {
      key = eventKey(JSON.parse(body));
    } catch {
      // the metric's GET has no body
    }
    hits.push({ path, at, node, webhookId: req.headers.get("webhook-id"), key });
    if (path === "/metric") return Response.json({ value: hits.length });
    // Either node signs with the webhook's secret, whichever node created it.
    const secret = hookSecrets.get(path);
    if (!secret || !(await verifyStandardWebhook(secret, Object.fromEntries(req.headers), body, Date.now()))) badSignatures.push(`${path} ${req.headers.get("webhook-id")} by ${nodes[node]?.name ?? "?"}`);
    return new Response("ok");
  },
});
const hookUrl = (name: string) => `http://127.0.0.1:${receiver.port}/hook/${name}`;

/** One event of the writer's, as its webhook body, socket message or outbox payload says: the type, the record, and the write's sequence number for contracts. */
function eventKey(p: { type: string; data?: { id?: string; original?: { seq?: number } | null } }): string {
  return `${p.type}:${p.data?.id ?? ""}:${p.data?.original?.seq ?? ""}`;
}

// ---------------------------------------------------------------------------------------------
// HTTP through a node.

async function call(node: AppNode, method: string, path: string, o: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const res = await fetch(node.base + path, {
    method,
    headers: {
      ...o.headers,
      ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
      ...(o.body !== undefined ? { "content-type": "application/json" } : {}),
    },
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
    redirect: "manual",
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: res.status, body, text };
}

async function must(node: AppNode, method: string, path: string, o: { token?: string; body?: unknown } = {}) {
  const res = await call(node, method, path, o);
  if (res.status !== 200 && res.status !== 204) throw new Error(`${node.name}: ${method} ${path} → ${res.status} ${res.text.slice(0, 300)}`);
  return res.body;
}

async function until(what: string, cond: () => boolean | Promise<boolean>, ms: number, poll = 50): Promise<void> {
  const end = performance.now() + ms;
  while (!(await cond())) {
    if (performance.now() > end) throw new Error(`not within ${(ms / 1000).toFixed(1)} s: ${what}`);
    await Bun.sleep(poll);
  }
}

// ---------------------------------------------------------------------------------------------
// Fixtures (through node 1) and a socket client on each node.

interface Fixtures {
  corpId: string;
  token: string;
  valuesMetric: string;
  collectedMetric: string;
  /** Index in `nodes` of the node running the scheduler when the collected metric was created (through the other). */
  schedulerHolder: number;
  /** When that metric's create was answered (performance.now()). */
  collectedCreatedAt: number;
  qr: { id: string; slug: string };
}
let fx: Fixtures;

interface SocketClient {
  ws: WebSocket;
  /** Event key → when it arrived. */
  got: Map<string, number>;
  openedAt: number;
  openedWall: number;
  closed: { code: number; at: number } | null;
}
const sockets: SocketClient[] = [];

async function openSocket(node: AppNode, token: string): Promise<SocketClient> {
  const { ticket } = await must(node, "GET", "/api/user/socket", { token });
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${node.base.replace("http", "ws")}/api/socket?ticket=${encodeURIComponent(ticket)}`);
    const client: SocketClient = { ws, got: new Map(), openedAt: 0, openedWall: 0, closed: null };
    const timer = setTimeout(() => reject(new Error(`${node.name}: the socket did not open within 5 s`)), 5_000);
    ws.onmessage = (e) => {
      const key = eventKey(JSON.parse(String(e.data)));
      if (!client.got.has(key)) client.got.set(key, performance.now());
    };
    ws.onclose = (e) => {
      client.closed = { code: e.code, at: performance.now() };
      reject(new Error(`${node.name}: the socket was refused (${e.code})`));
    };
    ws.onopen = () => {
      clearTimeout(timer);
      client.openedAt = performance.now();
      client.openedWall = Date.now();
      resolve(client);
    };
  });
}

/** The metric scheduler's runs on each node, from its lease log lines (wall clock, ms); a run open at a kill ends at the kill. */
const LEASE = "metric-scheduler";
function schedulerRuns(killedAtWall: Map<number, number>): { node: number; from: number; to: number }[] {
  const runs: { node: number; from: number; to: number }[] = [];
  nodes.forEach((n, i) => {
    let from: number | null = null;
    for (const e of n.logEntries("info")) {
      if (e.lease !== LEASE) continue;
      const at = Date.parse(String(e.time));
      if (e.msg === "lease: taken, starting") from = at;
      else if (e.msg === "lease: lost, stopping" && from !== null) {
        runs.push({ node: i, from, to: at });
        from = null;
      }
    }
    if (from !== null) runs.push({ node: i, from, to: killedAtWall.get(i) ?? Date.now() });
  });
  return runs.sort((a, b) => a.from - b.from);
}

/** The node whose last lease line of the metric scheduler is a start (running it now), else -1. */
function schedulerHolder(): number {
  return nodes.findIndex((n) => n.alive && n.logEntries("info").filter((e) => e.lease === LEASE).at(-1)?.msg === "lease: taken, starting");
}

beforeAll(async () => {
  if (!RUN) return;
  const [n1] = nodes;
  await must(n1, "POST", "/api/start", { body: { user: ADMIN, corp: { auth_name: "isp", company_name: "ISP Cluster", timezone: "UTC" } } });
  const login = await must(n1, "POST", "/api/login", { body: { corp: "isp", login: ADMIN.login, password: ADMIN.password } });
  const token = login.access_token as string;
  const corpId = login.credentials.corp as string;
  await must(n1, "POST", "/api/externalapp", { token, body: { name: "erp" } });
  for (const [name, groups] of Object.entries(WEBHOOK_GROUPS)) {
    const hook = await must(n1, "POST", "/api/webhook", { token, body: { name: `hook-${name}`, target: hookUrl(name), email: "ops@example.com", log_enabled: true, groups } });
    hookSecrets.set(`/hook/${name}`, hook.secret);
  }
  const metric = (name: string, endpoint: string | null, periodicity: string) =>
    must(n1, "POST", "/api/metric", {
      token,
      body: { name, endpoint, data_type: "Int", periodicity, start_date: "2025-01-01T00:00:00.000Z", end_date: null, daily_start_time: "00:00", daily_end_time: "00:00" },
    });
  const valuesMetric = (await metric("writes", null, "1h")).id as string;
  // The collected metric is created once a scheduler runs, through the other node: the holder
  // hears of it through the change feed (it read every metric when it started, before this one).
  await until("a node running the metric scheduler (its lease log line)", () => schedulerHolder() >= 0, 30_000, 100);
  const holder = schedulerHolder();
  // Past its start-up read of every metric: the new one can reach it only through the change feed.
  await Bun.sleep(1_000);
  const viaOther = nodes[1 - holder];
  const collectedMetric = (
    await must(viaOther, "POST", "/api/metric", {
      token,
      body: { name: "collected", endpoint: `http://127.0.0.1:${receiver.port}/metric`, data_type: "Int", periodicity: `${TICK_MS / 1000}s`, start_date: "2025-01-01T00:00:00.000Z", end_date: null, daily_start_time: "00:00", daily_end_time: "00:00" },
    })
  ).id as string;
  const collectedCreatedAt = performance.now();
  const qr = await must(n1, "POST", "/api/qrcode", { token, body: { name: "flyer", kind: "dynamic", target: "https://example.com/flyer" } });
  fx = { corpId, token, valuesMetric, collectedMetric, schedulerHolder: holder, collectedCreatedAt, qr: { id: qr.id, slug: qr.slug } };
  // The token of node 1's login works on node 2: same secret, sessions in the shared database.
  sockets.push(...(await Promise.all(nodes.map((n) => openSocket(n, token)))));
  // A socket streams from the outbox position its node reads just after it opened
  // (socket/hub.ts add): an event committed before that read is not streamed, and a test writing
  // at once could miss its first event on a loaded machine. Warm-up cities until each socket has
  // received one: from then on both stream everything.
  for (let i = 0; !sockets.every((s) => s.got.size > 0); i++) {
    if (i >= 40) throw new Error("the sockets received no warm-up event within 40 writes");
    await must(n1, "POST", "/api/city", { token, body: { name: `Warm-up ${i}`, state: "SP", country: "BR" } });
    const end = performance.now() + 500;
    while (performance.now() < end && !sockets.every((s) => s.got.size > 0)) await Bun.sleep(10);
  }
}, 60_000);

// ---------------------------------------------------------------------------------------------

clusterDescribe("cluster: two corpadmin nodes over the Patroni cluster", () => {
  test("GET /api/socket: an event written through one node reaches a socket on the other sooner than the 5 s catch-up poll", async () => {
    const latencies: number[] = [];
    for (const [from, to] of [[0, 1], [1, 0]]) {
      // One after another: each write comes right after the last arrival, so a periodic catch-up
      // (rather than a wake-up across nodes) cannot deliver them all in time.
      for (let i = 0; i < 3; i++) {
        const city = await must(nodes[from], "POST", "/api/city", { token: fx.token, body: { name: `Quiet ${from}-${i}`, state: "SP", country: "BR" } });
        const key = eventKey({ type: "CITY_AFTER_INSERT", data: city });
        const sent = performance.now();
        await until(`the socket on ${nodes[to].name} receives CITY_AFTER_INSERT "${city.name}" written through ${nodes[from].name}`, () => sockets[to].got.has(key), 10_000, 10);
        await until(`the socket on ${nodes[from].name} (the writer) receives it too`, () => sockets[from].got.has(key), 10_000, 10);
        const latency = sockets[to].got.get(key)! - sent;
        latencies.push(latency);
        expect(latency, `${nodes[to].name}'s socket got an event of ${nodes[from].name} ${(latency / 1000).toFixed(2)} s late`).toBeLessThan(SOCKET_CROSS_NODE_MS);
      }
    }
    console.log(`cluster sockets: events across nodes arrived after ${latencies.map((l) => `${Math.round(l)} ms`).join(", ")}`);
  }, 60_000);

  test("a change through node 1 reaches node 2's caches through the change feed: PUT /api/qrcode/{id}/inactive, POST /api/corp/{id}/block, DELETE /api/workgroup/{id}/service/{serviceId}, DELETE /api/logout", async () => {
    const [n1, n2] = nodes;
    /** Polls `probe` on node 2 until it holds; the time that took (Infinity past the bound and 2 s). */
    const seen = async (probe: () => Promise<boolean>): Promise<number> => {
      const from = performance.now();
      while (performance.now() - from < CACHE_CROSS_NODE_MS + 2_000) {
        if (await probe()) return performance.now() - from;
        await Bun.sleep(20);
      }
      return Infinity;
    };
    const scan = (slug: string) => call(n2, "GET", `/q/${slug}`, { headers: { "user-agent": "cache-probe" } }).then((r) => r.status);
    const took: Record<string, number> = {};

    // The slug index: a code node 2 has redirected for, made inactive through node 1.
    const code = await must(n1, "POST", "/api/qrcode", { token: fx.token, body: { name: "poster", kind: "dynamic", target: "https://example.com/poster" } });
    expect(await scan(code.slug)).toBe(302);
    await must(n1, "PUT", `/api/qrcode/${code.id}/inactive`, { token: fx.token });
    took["QR code inactive (slug index)"] = await seen(async () => (await scan(code.slug)) === 410);

    // The corporation cache: another corporation's code, then the corporation blocked through node 1.
    const other = await must(n1, "POST", "/api/corp", { token: fx.token, body: { auth_name: "other", company_name: "Other ISP", timezone: "UTC" } });
    const otherToken = (await must(n1, "POST", "/api/login", { body: { corp: "other", login: ADMIN.login, password: ADMIN.password } })).access_token;
    const otherCode = await must(n1, "POST", "/api/qrcode", { token: otherToken, body: { name: "flyer", kind: "dynamic", target: "https://example.com/other" } });
    expect(await scan(otherCode.slug)).toBe(302);
    await must(n1, "POST", `/api/corp/${other.id}/block`, { token: fx.token });
    took["corporation blocked (corporation cache)"] = await seen(async () => (await scan(otherCode.slug)) === 410);

    // Permissions: a user whose workgroup grants platform.city, the grant taken away through node 1.
    const user = await must(n1, "POST", "/api/user", { token: fx.token, body: { name: "Clerk", email: "clerk@example.com", login: "clerk", password: "clerk-password-1", super_admin: false } });
    const wg = await must(n1, "POST", "/api/workgroup", { token: fx.token, body: { name: "clerks" } });
    const service = (await must(n1, "GET", "/api/service?identifier=platform.city", { token: fx.token })).items[0];
    await must(n1, "POST", `/api/workgroup/${wg.id}/user/${user.id}`, { token: fx.token });
    await must(n1, "POST", `/api/workgroup/${wg.id}/service/${service.id}`, { token: fx.token });
    const clerk = (await must(n1, "POST", "/api/login", { body: { corp: "isp", login: "clerk", password: "clerk-password-1" } })).access_token;
    expect((await call(n2, "GET", "/api/city", { token: clerk })).status).toBe(200);
    await must(n1, "DELETE", `/api/workgroup/${wg.id}/service/${service.id}`, { token: fx.token });
    took["grant taken away (permissions)"] = await seen(async () => (await call(n2, "GET", "/api/city", { token: clerk })).status === 403);

    // Sessions: a token used on node 2, logged out through node 1.
    const session = (await must(n1, "POST", "/api/login", { body: { corp: "isp", login: ADMIN.login, password: ADMIN.password } })).access_token;
    expect((await call(n2, "GET", "/api/city", { token: session })).status).toBe(200);
    await must(n1, "DELETE", "/api/logout", { token: session });
    took["logout (sessions)"] = await seen(async () => (await call(n2, "GET", "/api/city", { token: session })).status === 401);

    console.log(`cluster caches: node 2 saw ${Object.entries(took).map(([what, ms]) => `${what} after ${Number.isFinite(ms) ? `${Math.round(ms)} ms` : `more than ${(CACHE_CROSS_NODE_MS + 2_000) / 1000} s`}`).join(", ")}`);
    expect(Object.entries(took).filter(([, ms]) => !(ms < CACHE_CROSS_NODE_MS))).toEqual([]);
  }, 90_000);

  test("RADIUS accounting for one contract through both nodes: the usage rollups add up exactly, and fair use throttles it once", async () => {
    const [n1, n2] = nodes;
    const token = fx.token;
    const secret = "two-nodes-nas-secret";
    await must(n1, "POST", "/api/isp/nas", { token, body: { name: "bng-two-nodes", ip: "192.0.2.77", secret } });
    const city = await must(n1, "POST", "/api/city", { token, body: { name: "Usage City", state: "SP", country: "BR" } });
    const person = await must(n1, "POST", "/api/person", { token, body: { name: "Two Nodes Customer" } });
    const contract = await must(n1, "POST", "/api/contract", { token, body: { customer_id: person.id, number: "TWO-NODES-USAGE", start_date: "2025-01-01", total_value: 1, address: { line1: "Rua 1", city_id: city.id } } });
    // 50,000 bytes allowed; the sessions below carry 210,000.
    await must(n2, "POST", `/api/contract/${contract.id}/config`, { token, body: { username: "two-nodes-usage", allowance_gb: 0.00005, throttle_max_upload: "1M", throttle_max_download: "2M" } });
    const basic = `Basic ${Buffer.from(`isp:${secret}`).toString("base64")}`;
    const acct = async (node: AppNode, session: string, status: string, time: number, input: number) => {
      const body = { "User-Name": "two-nodes-usage", "Acct-Session-Id": session, "NAS-IP-Address": "192.0.2.77", "Acct-Status-Type": status, "Event-Timestamp": Math.floor(Date.now() / 1000), "Acct-Session-Time": time, "Acct-Input-Octets": input };
      const res = await call(node, "POST", "/api/isp/radius/accounting", { body, headers: { authorization: basic } });
      expect(res.status, res.text).toBe(204);
    };
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const node = nodes[i % 2];
        await acct(node, `two-${i}`, "Start", 0, 0);
        await acct(node, `two-${i}`, "Interim-Update", 60, 1_000 * (i + 1));
      }),
    );
    for (const node of nodes) {
      const usage = await must(node, "GET", `/api/contract/${contract.id}/usage`, { token });
      expect(usage.input_bytes).toBe(210_000);
      expect(usage.cycle.used_bytes).toBe(210_000);
    }
    await until("network.state throttled", async () => (await must(n2, "GET", `/api/contract/${contract.id}`, { token })).network.state === "throttled", 20_000);
    // Both nodes checked their own records' marks: still one throttle.
    await Bun.sleep(4_000);
    const changes = (await must(n1, "GET", `/api/history?target_id=${contract.id}&action=throttle`, { token })).items;
    expect(changes).toHaveLength(1);
    expect(changes[0].actor).toBe("system:fair-use");
    // The sweep is single-node: one node holds the job.
    const jobs = (await must(n1, "GET", "/api/system/jobs", { token })).items as { name: string; node: string | null }[];
    expect(jobs.find((j) => j.name === "fair-use")).toBeDefined();
  }, 90_000);

  test("a writer through both nodes; the database leader machine, then the app node running the metric scheduler, SIGKILLed: every acknowledged write present, the outage < TTL + 10 s", async () => {
    run = await writeAndKill();
    const { acked, victim, survivor } = run;
    const [dead, alive] = [nodes[victim].name, nodes[survivor].name];
    const sql = new SQL(cluster.url);
    try {
      const stored = await storedOf(sql);
      // Scans reach the database up to a flush later: wait (bounded) for the survivor's.
      await until(`${alive}'s acknowledged scans stored`, async () => {
        const rows = (await sql`SELECT referer FROM qr_accesses WHERE corp_id = ${fx.corpId} AND qrcode_id = ${fx.qr.id}`) as { referer: string }[];
        const refs = new Set(rows.map((r) => r.referer));
        stored.scans = refs;
        return acked.filter((a) => a.kind === "scan" && a.node === survivor).every((a) => refs.has(scanRef(a.n)));
      }, 15_000, 250).catch(() => {});
      const lost = {
        contract: acked.filter((a) => a.kind === "contract" && !stored.contractSeqs.has(a.n)),
        value: acked.filter((a) => a.kind === "value" && !stored.values.has(a.n)),
        city: acked.filter((a) => a.kind === "city" && !stored.cities.has(cityName(a.n))),
        scan: acked.filter((a) => a.kind === "scan" && !stored.scans.has(scanRef(a.n))),
      };
      // Read back through the survivor: each contract holds its last acknowledged write (or a later one).
      const last = new Map<number, number>();
      for (const a of acked) if (a.kind === "contract") last.set(a.n % CONTRACTS, a.n);
      const stale: string[] = [];
      for (const [k, n] of last) {
        const c = await must(nodes[survivor], "GET", `/api/contract/externalapp/name/erp/identity/contract-${k}`, { token: fx.token });
        if (!(c.original?.seq >= n)) stale.push(`contract-${k}: seq ${c.original?.seq}, acknowledged ${n}`);
      }
      // Scans answered by the victim just before its death may still have been in its memory (README).
      const scanAge = lost.scan.map((a) => (a.node === victim ? run!.killedAt - a.answered : Infinity));
      const dbWrites = acked.filter((a) => a.kind !== "scan");
      let outage = 0;
      for (let i = 1; i < dbWrites.length; i++) outage = Math.max(outage, dbWrites[i].answered - dbWrites[i - 1].answered);
      const count = (kind: Kind) => acked.filter((a) => a.kind === kind).length;
      console.log(
        `cluster two nodes: kills 2 (database leader ${run.dbKilled} at ${s(run.dbKilledAt - run.t0)}, new leader ${run.newLeader}; ${dead}, running the metric scheduler, at ${s(run.killedAt - run.t0)}), ` +
          `acknowledged ${acked.length} (contracts ${count("contract")}, values ${count("value")}, cities ${count("city")}, scans ${count("scan")}) of ${run.attempts} attempts ` +
          `(${run.failedVictimAfterKill} refused by dead ${dead}; failures: ${JSON.stringify(run.failures)}; errors logged: ${nodes.map((n) => `${n.name} ${errorsOf(n)}`).join(", ")}), ` +
          `lost ${lost.contract.length + lost.value.length + lost.city.length} writes + ${lost.scan.length} scans (in ${dead}'s memory, answered ${scanAge.map((a) => `${Math.round(a)} ms`).join(", ") || "-"} before its death), ` +
          `stale reads across nodes ${run.staleReads.length}, outage ${s(outage)} (database writes back ${s(run.dbBackAt - run.dbKilledAt)} after the kill; TTL ${CLUSTER_TIMINGS.ttl} s)`,
      );
      expect(lost.contract).toEqual([]);
      expect(lost.value).toEqual([]);
      expect(lost.city).toEqual([]);
      expect(scanAge.filter((age) => !(age <= SCAN_LOSS_HARD_MS))).toEqual([]);
      expect(stale).toEqual([]);
      expect(run.staleReads).toEqual([]);
      expect(outage).toBeLessThan(OUTAGE_BOUND_MS);
      // Both nodes did write, and the survivor went on alone after the victim's death.
      expect(acked.some((a) => a.node === victim)).toBe(true);
      expect(acked.filter((a) => a.node === survivor && a.sent > run!.killedAt).length).toBeGreaterThan(20);
    } finally {
      await sql.close();
    }
  }, 180_000);

  test("POST webhook deliveries: every event reaches each webhook, never under two webhook-ids, a webhook-id again only after a kill", async () => {
    if (!run) throw new Error("the writer's run did not complete");
    const sql = new SQL(cluster.url);
    let expected: Map<string, string[]>;
    try {
      const events = (await sql`SELECT type, payload FROM events WHERE corp_id = ${fx.corpId} ORDER BY seq`) as { type: string; payload: string }[];
      expected = new Map(Object.keys(WEBHOOK_GROUPS).map((w) => [w, [] as string[]]));
      for (const e of events) {
        const p = JSON.parse(e.payload);
        const key = eventKey({ type: e.type, data: p.data ?? p });
        for (const [w, groups] of Object.entries(WEBHOOK_GROUPS)) if ((groups as readonly string[]).includes(e.type)) expected.get(w)!.push(key);
      }
    } finally {
      await sql.close();
    }
    const received = (w: string) => hits.filter((h) => h.path === `/hook/${w}`);
    const missing = (w: string) => {
      const keys = new Set(received(w).map((h) => h.key));
      return expected.get(w)!.filter((k) => !keys.has(k));
    };
    // Deliveries left pending by a kill go out on the next pass of the node alive.
    await until("every event of the outbox delivered to each webhook", () => Object.keys(WEBHOOK_GROUPS).every((w) => missing(w).length === 0), 60_000, 250).catch(() => {});

    const windows = [
      [run.dbKilledAt - RECORD_MARGIN_MS, run.dbBackAt + RECORD_MARGIN_MS],
      [run.killedAt - RECORD_MARGIN_MS, run.killedAt],
    ];
    const figures: string[] = [];
    const failures: Record<string, unknown> = {};
    for (const w of Object.keys(WEBHOOK_GROUPS)) {
      const got = received(w);
      const idsOfKey = new Map<string, Set<string>>();
      const byId = new Map<string, Hit[]>();
      for (const h of got) {
        if (!idsOfKey.has(h.key!)) idsOfKey.set(h.key!, new Set());
        idsOfKey.get(h.key!)!.add(h.webhookId!);
        if (!byId.has(h.webhookId!)) byId.set(h.webhookId!, []);
        byId.get(h.webhookId!)!.push(h);
      }
      const beyondId = [...idsOfKey].filter(([, ids]) => ids.size > 1).map(([k]) => k);
      const repeats = [...byId.values()].filter((hs) => hs.length > 1);
      const unexplained = repeats.filter((hs) => !windows.some(([from, to]) => hs[0].at >= from && hs[0].at <= to));
      const twoNodes = repeats.filter((hs) => new Set(hs.map((h) => h.node)).size > 1).length;
      figures.push(
        `${w}: ${expected.get(w)!.length} events, ${got.length} requests, missing ${missing(w).length}, duplicates beyond webhook-id ${beyondId.length}, ` +
          `webhook-ids repeated ${repeats.length} (${repeats.length - unexplained.length} after a kill, ${unexplained.length} without one; ${twoNodes} by both nodes), ` +
          `sent by app1 ${got.filter((h) => h.node === 0).length}, app2 ${got.filter((h) => h.node === 1).length}`,
      );
      failures[w] = {
        missing: missing(w).slice(0, 5),
        beyondId: beyondId.slice(0, 5),
        unexplained: unexplained.slice(0, 5).map((hs) => hs.map((h) => `${h.webhookId} by ${nodes[h.node]?.name ?? "?"} at ${s(h.at - run!.t0)}`)),
      };
    }
    console.log(`cluster webhooks: ${figures.join("; ")}; signatures that did not verify ${badSignatures.length}`);
    expect(badSignatures.slice(0, 5)).toEqual([]);
    for (const w of Object.keys(WEBHOOK_GROUPS)) {
      expect(failures[w]).toEqual({ missing: [], beyondId: [], unexplained: [] });
    }
  }, 90_000);

  test("metric collection: one scheduler at a time, no two nodes collecting in the same period; a metric created through the other node collected at once; collecting goes on after the death of the node running it", async () => {
    if (!run) throw new Error("the writer's run did not complete");
    const { victim, survivor, killedAt } = run;
    const [dead, alive] = [nodes[victim].name, nodes[survivor].name];
    const collectedAfter = () => hits.filter((h) => h.path === "/metric" && h.node === survivor && h.at > killedAt);
    // A lease held by the dead node is taken over within its heartbeat and grace.
    let waited = "";
    await until(`a collection by ${alive} after ${dead}'s death`, () => collectedAfter().length > 0, 30_000, 250).catch((err) => (waited = (err as Error).message));
    const requests = hits.filter((h) => h.path === "/metric");
    // Each request falls on the tick nearest it (a timer may fire late on this loaded machine).
    const perTick = new Map<number, Set<number>>();
    const t0Wall = Date.now() - performance.now();
    for (const h of requests) {
      const tick = Math.round((t0Wall + h.at) / TICK_MS);
      if (!perTick.has(tick)) perTick.set(tick, new Set());
      perTick.get(tick)!.add(h.node);
    }
    const shared = [...perTick].filter(([, ns]) => ns.size > 1).map(([tick]) => new Date(tick * TICK_MS).toISOString());
    const by = (i: number) => requests.filter((h) => h.node === i).length;
    const first = collectedAfter()[0];
    const lastBefore = requests.filter((h) => h.at < killedAt).at(-1);
    // The scheduler's runs by the lease log lines: never two at once.
    const runs = schedulerRuns(new Map([[victim, run.killedWall]]));
    const overlaps = runs.flatMap((a, i) => runs.slice(i + 1).filter((b) => b.node !== a.node && b.from < a.to && a.from < b.to).map((b) => `${nodes[a.node].name} and ${nodes[b.node].name}`));
    const rel = (wall: number) => s(wall - t0Wall - run!.t0);
    // The metric created through the node not running the scheduler: the holder's first collection.
    const heard = requests[0];
    const heardAfter = heard ? heard.at - fx.collectedCreatedAt : Infinity;
    console.log(
      `cluster metric scheduler: runs ${runs.map((r) => `${nodes[r.node].name} ${rel(r.from)}–${rel(r.to)}`).join(", ")} (from the writer's start; overlapping ${overlaps.length}); ` +
        `the metric created through ${nodes[1 - fx.schedulerHolder].name} first collected by ${heard ? (nodes[heard.node]?.name ?? "?") : "none"} ${Number.isFinite(heardAfter) ? `${Math.round(heardAfter)} ms` : "never"} after (period ${TICK_MS / 1000} s); ` +
        `${requests.length} collections over ${perTick.size} periods (app1 ${by(0)}, app2 ${by(1)}, unknown ${by(-1)}); ` +
        `periods collected by both nodes ${shared.length}; the last collection before ${dead}'s death by ${lastBefore ? (nodes[lastBefore.node]?.name ?? "?") : "none"}; ${alive} took over and collected ${first ? `${s(first.at - killedAt)} after ${dead}'s death` : `nothing after ${dead}'s death`}`,
    );
    expect(overlaps).toEqual([]);
    expect(heard?.node).toBe(fx.schedulerHolder);
    expect(heardAfter).toBeLessThan(TICK_MS + METRIC_HEARD_MS);
    // A request whose sender is gone by the time it is looked up: only the node being killed then.
    expect(requests.filter((h) => h.node === -1 && Math.abs(h.at - killedAt) > 2_000).map((h) => s(h.at - run!.t0))).toEqual([]);
    // The victim ran the scheduler when it died (the run chosen so), and the survivor took it over.
    expect(lastBefore?.node).toBe(victim);
    expect(shared).toEqual([]);
    expect(waited).toBe("");
  }, 60_000);

  test("GET /api/socket: the surviving node's socket got every event committed while it was open, through either node", async () => {
    if (!run) throw new Error("the writer's run did not complete");
    const { victim, survivor } = run;
    const [s1, s2] = [sockets[victim], sockets[survivor]];
    const sql = new SQL(cluster.url);
    let keys: string[];
    try {
      // Committed a second after it opened, so surely after its starting point in the outbox.
      const events = (await sql`SELECT type, payload, created_at FROM events WHERE corp_id = ${fx.corpId} AND type IN ('CONTRACT_AFTER_INSERT', 'CONTRACT_AFTER_UPDATE', 'CITY_AFTER_INSERT') ORDER BY seq`) as {
        type: string;
        payload: string;
        created_at: string;
      }[];
      keys = events.filter((e) => Date.parse(e.created_at) > s2.openedWall + 1_000).map((e) => eventKey({ type: e.type, data: JSON.parse(e.payload).data ?? JSON.parse(e.payload) }));
    } finally {
      await sql.close();
    }
    await until(`${nodes[survivor].name}'s socket has every event`, () => keys.every((k) => s2.got.has(k)), 15_000, 100).catch(() => {});
    const missing = keys.filter((k) => !s2.got.has(k));
    console.log(
      `cluster sockets: ${nodes[survivor].name}'s socket got ${keys.length - missing.length} of ${keys.length} events (closed: ${s2.closed ? s2.closed.code : "no"}); ` +
        `${nodes[victim].name}'s socket got ${s1.got.size} before its death`,
    );
    expect(s2.closed).toBeNull();
    expect(missing.slice(0, 5)).toEqual([]);
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
// The writer.

type Kind = "contract" | "value" | "scan" | "city";
const KINDS: Kind[] = ["contract", "value", "scan", "city"];
interface Ack {
  n: number;
  kind: Kind;
  node: number;
  sent: number;
  answered: number;
}
interface Run {
  t0: number;
  acked: Ack[];
  attempts: number;
  failures: Record<string, number>;
  failedVictimAfterKill: number;
  staleReads: string[];
  dbKilled: string;
  newLeader: string;
  dbKilledAt: number;
  dbBackAt: number;
  /** Index in `nodes` of the app node killed (the one running the metric scheduler then), and of the other. */
  victim: number;
  survivor: number;
  killedAt: number;
  /** Date.now() at the victim's kill (the nodes' log lines are stamped on the wall clock). */
  killedWall: number;
}
let run: Run | null = null;

/** How many errors a node logged, and their distinct messages. */
function errorsOf(node: AppNode): string {
  const entries = node.logEntries("error");
  const msgs = new Map<string, number>();
  for (const e of entries) {
    const what = `${e.msg}${e.path ? ` ${e.path}` : ""}${e.error ? `: ${String(e.error).slice(0, 160)}` : ""}`;
    msgs.set(what, (msgs.get(what) ?? 0) + 1);
  }
  return `${entries.length}${entries.length ? ` (${[...msgs].map(([m, c]) => `"${m}" ×${c}`).join(", ")})` : ""}`;
}

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const scanRef = (n: number) => `https://ref.example/${n}`;
const cityName = (n: number) => `City ${n}`;

/**
 * The writer for RUN_MS; the leader machine killed after 5 s; 5 s after writes are back through
 * both nodes, and once a node runs the metric scheduler again, that node.
 */
async function writeAndKill(): Promise<Run> {
  const acked: Ack[] = [];
  const failures: Record<string, number> = {};
  const staleReads: string[] = [];
  let attempts = 0;
  let failedVictimAfterKill = 0;
  let victim = -1;
  let killedAt = Infinity;
  let killedWall = Infinity;
  let stopped = false;
  const t0 = performance.now();

  const one = async (n: number) => {
    const kind = KINDS[n & 3];
    const node = (n >> 2) & 1;
    const target = nodes[node];
    const sent = performance.now();
    attempts++;
    let status: number;
    try {
      if (kind === "contract") {
        const k = n % CONTRACTS;
        const body = { ...contractBody(k), json_original: { source: "erp", seq: n } };
        status = (await call(target, "POST", "/api/contract/create/externalapp/name/erp", { token: fx.token, body })).status;
        // Read it back through the other node at once (caches across nodes).
        const other = nodes[1 - node];
        if (status === 200 && other.alive) {
          const back = await call(other, "GET", `/api/contract/externalapp/name/erp/identity/contract-${k}`, { token: fx.token }).catch(() => null);
          if (back?.status === 200 && !(back.body.original?.seq >= n)) staleReads.push(`${other.name} read contract-${k} at seq ${back.body.original?.seq} after ${target.name} acknowledged ${n}`);
        }
      } else if (kind === "value") {
        status = (await call(target, "POST", `/api/metric/${fx.valuesMetric}/value`, { token: fx.token, body: { value: n } })).status;
      } else if (kind === "scan") {
        status = (await call(target, "GET", `/q/${fx.qr.slug}`, { headers: { "user-agent": "Mozilla/5.0 Firefox/128.0", referer: scanRef(n) } })).status;
      } else {
        status = (await call(target, "POST", "/api/city", { token: fx.token, body: { name: cityName(n), state: "SP", country: "BR" } })).status;
      }
    } catch (err) {
      status = 0;
      const why = `${kind} via ${target.name}: ${(err as Error).name}`;
      failures[why] = (failures[why] ?? 0) + 1;
    }
    const ok = kind === "scan" ? status === 302 : status === 200;
    if (ok) acked.push({ n, kind, node, sent, answered: performance.now() });
    else {
      if (status) failures[`${kind} via ${target.name}: ${status}`] = (failures[`${kind} via ${target.name}: ${status}`] ?? 0) + 1;
      if (node === victim && sent > killedAt) failedVictimAfterKill++;
      await Bun.sleep(20);
    }
  };
  const done = (async () => {
    for (let n = 0; !stopped; n++) {
      await one(n);
      // A breath for the other processes of this 2-core machine.
      await Bun.sleep(1);
    }
  })();

  const isDbWrite = (a: Ack) => a.kind !== "scan";
  /** A node that died on its own ends the run at once, naming it (its log's tail follows). */
  const living = (cond: () => boolean) => () => {
    const dead = nodes.filter((n) => n.died);
    if (dead.length) throw new Error(`${dead.map((n) => `${n.name} ${n.died}`).join(", ")} (the test did not kill it)`);
    return cond();
  };
  try {
    await until("writes acknowledged through both nodes", living(() => [0, 1].every((i) => acked.filter((a) => a.node === i && isDbWrite(a)).length >= 20)), 30_000);
    await until("5 s of writes", () => performance.now() > t0 + 5_000, 10_000);
    const killed = await cluster.killLeader({ etcd: true });
    const dbKilledAt = performance.now();
    await until(
      "database writes acknowledged again through both nodes after the leader machine's death",
      living(() => [0, 1].every((i) => acked.some((a) => a.node === i && isDbWrite(a) && a.sent > dbKilledAt))),
      OUTAGE_BOUND_MS + 15_000,
    );
    const dbBackAt = acked.find((a) => isDbWrite(a) && a.sent > dbKilledAt)!.answered;
    await Bun.sleep(5_000);
    // The failover ended every lease: wait (bounded) for the scheduler's to be taken again.
    await until("a node running the metric scheduler again after the failover (its lease log line)", living(() => schedulerHolder() >= 0), 20_000, 100);
    victim = schedulerHolder();
    const survivor = 1 - victim;
    // ... and collecting (it is killed at work, not between its start and its first period).
    const foundAt = performance.now();
    await until(`a collection by ${nodes[victim].name}, running the scheduler`, living(() => hits.some((h) => h.path === "/metric" && h.node === victim && h.at > foundAt)), 3 * TICK_MS, 50);
    killedAt = performance.now();
    killedWall = Date.now();
    await nodes[victim].kill();
    await until(`the run's time, and 15 s of writes after ${nodes[victim].name}'s death`, living(() => performance.now() > Math.max(t0 + RUN_MS, killedAt + 15_000)), RUN_MS + 30_000, 100);
    stopped = true;
    await done;
    const leader = await cluster.leader();
    return { t0, acked, attempts, failures, failedVictimAfterKill, staleReads, dbKilled: killed.name, newLeader: leader.name, dbKilledAt, dbBackAt, victim, survivor, killedAt, killedWall };
  } catch (err) {
    stopped = true;
    await done;
    // The request lines left out: what went wrong is in the others.
    const tail = (n: AppNode) => n.logTail(2_000).split("\n").filter((l) => !l.includes('"msg":"request"')).slice(-15).join("\n");
    throw new Error(`${(err as Error).message}\n${nodes.map((n) => `--- ${n.name} log tail (no request lines) ---\n${tail(n)}`).join("\n")}`);
  }
}

interface Stored {
  contractSeqs: Set<number>;
  values: Set<number>;
  cities: Set<string>;
  scans: Set<string>;
}

/** What the database holds of the writer's writes (as the superuser: row-level security does not apply). */
async function storedOf(sql: SQL): Promise<Stored> {
  const events = (await sql`SELECT payload FROM events WHERE corp_id = ${fx.corpId} AND type IN ('CONTRACT_AFTER_INSERT', 'CONTRACT_AFTER_UPDATE')`) as { payload: string }[];
  const contractSeqs = new Set<number>();
  for (const e of events) {
    const p = JSON.parse(e.payload);
    const seq = (p.data ?? p).original?.seq;
    if (typeof seq === "number") contractSeqs.add(seq);
  }
  const values = new Set(((await sql`SELECT value FROM metric_values WHERE corp_id = ${fx.corpId} AND metric_id = ${fx.valuesMetric}`) as { value: number }[]).map((r) => Number(r.value)));
  const cities = new Set(((await sql`SELECT name FROM cities WHERE corp_id = ${fx.corpId}`) as { name: string }[]).map((r) => r.name));
  return { contractSeqs, values, cities, scans: new Set() };
}
