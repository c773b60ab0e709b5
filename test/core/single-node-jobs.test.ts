// source-only: two apps over one PostgreSQL database in this process, whose jobs and logs it reads.
// Cluster mode (issue 19 item 3): work only one node may do. The metric scheduler runs under a
// lease on one node at a time and moves to the other when its node closes.
// PostgreSQL only: on SQLite one process is the only node.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { MetricScheduler } from "../../src/modules/metric/jobs";
import { TEST_BACKEND } from "../support/backend";
import { makeApp, startAndLogin, type TestApp } from "../support/helpers";
import { FAST, LOOPBACK_ALLOWED, waitFor } from "../support/webhooks";

const pgOnly = TEST_BACKEND === "pg" ? describe : describe.skip;
/** Leases taken over in about a second and a half (the default grace is 10 s). */
const LEASE = { CORPADMIN_LEASE_GRACE_MS: "1000" };

interface Logged {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

interface Node {
  t: TestApp;
  logs: Logged[];
}

/** An app node; `shared`: over the database of that one (a second node of the same cluster). */
async function startNode(shared?: TestApp): Promise<Node> {
  const logs: Logged[] = [];
  const at = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => void logs.push({ level, msg, fields });
  const logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  const database: Record<string, string> = shared ? { CORPADMIN_DATABASE_URL: shared.config.databaseUrl! } : {};
  const t = await makeApp({ env: { ...LOOPBACK_ALLOWED, ...LEASE, ...database }, options: { logger, dispatchTuning: FAST } });
  return { t, logs };
}

const scheduler = (n: Node) => n.t.ctx.jobs.get<MetricScheduler>("metric-scheduler")!;
const leaseLog = (n: Node, msg: string, lease: string) => n.logs.filter((l) => l.msg === msg && l.fields.lease === lease);

pgOnly("job metric-scheduler: on one node of a cluster at a time", () => {
  let first: Node;
  let second: Node;
  const hits: number[] = [];
  let server: ReturnType<typeof Bun.serve>;
  beforeAll(() => {
    server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch() {
        hits.push(performance.now());
        return Response.json(1);
      },
    });
  });
  afterAll(async () => {
    server.stop(true);
    await second?.t.close();
    // The database is the first node's: dropped last.
    await first?.t.close();
  });

  test("a metric is collected by exactly one node; closing it hands the scheduler to the other", async () => {
    first = await startNode();
    const admin = await startAndLogin(first.t);
    second = await startNode(first.t);
    const res = await first.t.req("POST", "/api/metric", {
      token: admin.token,
      body: { name: "uplink", data_type: "Int", periodicity: "1s", start_date: new Date(Date.now() - 3_600_000).toISOString(), endpoint: `http://127.0.0.1:${server.port}/m` },
    });
    expect(res.status).toBe(200);

    // One node takes the lease, waits its grace and starts; the other keeps trying, and never runs
    // it meanwhile. (A proof late under load may move the lease: then they swap, never overlap.)
    const running = () => [first, second].filter((n) => scheduler(n).size === 1);
    await waitFor("a node running the scheduler", () => running().length > 0, 10_000);
    await waitFor("three collections", () => hits.length >= 3, 10_000);
    expect(running()).toHaveLength(1);
    const [holder] = running();
    const other = holder === first ? second : first;
    expect(leaseLog(holder, "lease: taken, starting", "metric-scheduler").at(-1)!.fields.node).toBe(holder.t.ctx.nodeId);
    expect(holder.t.ctx.nodeId).not.toBe(other.t.ctx.nodeId);
    // One request per tick of 1 s: two nodes would have hit each tick twice, milliseconds apart.
    for (let i = 1; i < hits.length; i++) expect(hits[i] - hits[i - 1]).toBeGreaterThan(500);

    // The holder closes (its database stays): the other takes the lease, reads the metric and collects.
    const closedAt = performance.now();
    await holder.t.close(false);
    expect(leaseLog(holder, "lease: lost, stopping", "metric-scheduler").at(-1)!.fields).toMatchObject({ reason: "closed", node: holder.t.ctx.nodeId });
    await waitFor("the other node running the scheduler", () => scheduler(other).size === 1, 10_000);
    expect(leaseLog(other, "lease: taken, starting", "metric-scheduler").at(-1)!.fields.node).toBe(other.t.ctx.nodeId);
    await waitFor("collections by the other node", () => hits.filter((h) => h > closedAt).length >= 2, 10_000);
    for (let i = 1; i < hits.length; i++) expect(hits[i] - hits[i - 1]).toBeGreaterThan(500);
  }, 60_000);
});
