// source-only: drives src/core/pg/lease.ts directly against a throwaway PostgreSQL (killed backends, a restart).
// Work only one node may do: of the nodes competing for a lease exactly one runs the work, another
// takes over when the holder's session ends, and the old holder has stopped before the new one
// starts (every start and stop is stamped on one clock and the intervals must not overlap).
import { afterEach, describe, expect, test } from "bun:test";
import { PgDoors } from "../../../src/core/pg/door";
import { LeaseLost, Leases, type LeaseHandle } from "../../../src/core/pg/lease";
import { throwawayPostgres } from "../../support/postgres";

const timing = { graceMs: 1_500, heartbeatMs: 250, stopBudgetMs: 250 };
/** A takeover's bound once the holder's session ends: a heartbeat to notice the free lock, the grace, slack for this loaded machine. */
const TAKEOVER_MS = timing.heartbeatMs + timing.graceMs + 1_500;

const pg = await throwawayPostgres();
const su = pg.connect(pg.url);
/** The work's own writes go through a node's doors (another pool than the lease's connection). */
const app = pg.connect(pg.appUrl, 4);
await app`CREATE TABLE work_log (note text NOT NULL)`;
const doors = new PgDoors(app);

type Stamp = { node: string; kind: "start" | "stop"; at: number };
let log: Stamp[] = [];
let nodes: Leases[] = [];
afterEach(async () => {
  await Promise.all(nodes.map((n) => n.close()));
  nodes = [];
  log = [];
});

/** A node competing for the lease "scheduler" with a job that stamps its starts and stops. */
function node(label: string) {
  const leases = new Leases(pg.appUrl, timing);
  nodes.push(leases);
  const job = leases.job({
    name: "scheduler",
    start: () => void log.push({ node: label, kind: "start", at: performance.now() }),
    stop: () => void log.push({ node: label, kind: "stop", at: performance.now() }),
  });
  job.start();
  return { leases, job };
}

const runningNow = () => {
  const on = new Set<string>();
  for (const s of log) s.kind === "start" ? on.add(s.node) : on.delete(s.node);
  return [...on];
};

/** Every run (start..stop) ends before the next one starts; at most one run is open. */
function expectNoOverlap(): void {
  let open: string | null = null;
  let lastStop = -Infinity;
  for (const s of log) {
    if (s.kind === "start") {
      expect(open).toBeNull();
      expect(s.at).toBeGreaterThanOrEqual(lastStop);
      open = s.node;
    } else {
      expect(s.node).toBe(open!);
      open = null;
      lastStop = s.at;
    }
  }
}

async function until(cond: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`not within ${ms} ms: ${JSON.stringify(log)}`);
    await Bun.sleep(20);
  }
}

/** The backends holding an advisory lock (only leases take session locks in this database). */
// The lease sessions: a lease lock is exclusive, while a fenced write in flight holds the fence key
// shared (its backend must not be taken for the holder's).
/** The sessions holding an exclusive advisory lock, but the platform door's writer lock (a fenced write in flight holds it). */
const holders = async () =>
  (
    await su`SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND mode = 'ExclusiveLock' AND database = (SELECT oid FROM pg_database WHERE datname = 'corpadmin')
      AND ((classid::int8 << 32) | objid::int8) <> hashtextextended('corpadmin:platform', 0)`
  ).map((r: { pid: number }) => r.pid);

describe("core/pg/lease: work only one node may do", () => {
  test("timings that leave no time to renew and stop are refused", () => {
    expect(() => new Leases(pg.appUrl, { graceMs: 1_000, heartbeatMs: 800, stopBudgetMs: 300 })).toThrow("heartbeatMs + stopBudgetMs < graceMs");
    expect(() => new Leases(pg.appUrl, { heartbeatMs: 0 })).toThrow();
  });

  test("two nodes compete: exactly one holds the lock and runs the work, and keeps it", async () => {
    node("a");
    node("b");
    await until(() => runningNow().length === 1, TAKEOVER_MS * 2);
    // Several heartbeats and more than a grace later: still one run, no flapping.
    await Bun.sleep(timing.graceMs + 4 * timing.heartbeatMs);
    expect(log.length).toBe(1);
    expect(await holders()).toHaveLength(1);
  }, 30_000);

  test("the holder's backend killed: it stops at once, the other takes over within heartbeat + grace, never both", async () => {
    node("a");
    node("b");
    await until(() => runningNow().length === 1, TAKEOVER_MS * 2);
    const [first] = runningNow();
    const [pid] = await holders();
    const killedAt = performance.now();
    await su`SELECT pg_terminate_backend(${pid})`;
    await until(() => runningNow().length === 1 && runningNow()[0] !== first, TAKEOVER_MS);
    const stop = log.find((s) => s.node === first && s.kind === "stop")!;
    const start = log.findLast((s) => s.kind === "start")!;
    expect(stop.at - killedAt).toBeLessThan(timing.heartbeatMs * 2 + 500);
    expect(start.at - killedAt).toBeGreaterThanOrEqual(timing.graceMs);
    expect(start.at - killedAt).toBeLessThan(TAKEOVER_MS);
    expectNoOverlap();
  }, 30_000);

  test("the holder's backend hangs (its proofs get no answer, the lock stays taken): it stops within its proof, the other takes over once the session ends", async () => {
    node("a");
    node("b");
    await until(() => runningNow().length === 1, TAKEOVER_MS * 2);
    const [pid] = await holders();
    const hungAt = performance.now();
    process.kill(pid, "SIGSTOP");
    try {
      // A proof that does not answer within a heartbeat is a loss.
      await until(() => runningNow().length === 0, timing.heartbeatMs * 3 + 500);
      expect(log.at(-1)!.at - hungAt).toBeLessThan(timing.graceMs - timing.stopBudgetMs + 500);
      // The hung backend still holds the lock: nobody runs meanwhile.
      await Bun.sleep(timing.graceMs);
      expect(runningNow()).toEqual([]);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    // Resumed, the backend finds its client gone and ends, freeing the lock.
    await until(() => runningNow().length === 1, TAKEOVER_MS * 2);
    expectNoOverlap();
  }, 30_000);

  test("the holder closes its lease (a node shutting down): it stops, the other takes over after its grace", async () => {
    const a = node("a");
    await until(() => runningNow().length === 1, TAKEOVER_MS * 2);
    node("b");
    await Bun.sleep(timing.heartbeatMs * 2);
    const closedAt = performance.now();
    await a.job.stop();
    expect(runningNow()).toEqual([]);
    await until(() => runningNow()[0] === "b", TAKEOVER_MS);
    expect(log.at(-1)!.at - closedAt).toBeLessThan(TAKEOVER_MS);
    expect(log.map((s) => `${s.node}:${s.kind}`)).toEqual(["a:start", "a:stop", "b:start"]);
    expectNoOverlap();
  }, 30_000);

  test("a restarted PostgreSQL: the holder stops, then exactly one node holds and runs again", async () => {
    node("a");
    node("b");
    node("c");
    await until(() => runningNow().length === 1, TAKEOVER_MS * 2);
    await pg.restart();
    // Every session ended with the server: whoever ran has stopped, and one node takes it again.
    await until(() => log.filter((s) => s.kind === "start").length === 2 && runningNow().length === 1, TAKEOVER_MS * 3);
    await Bun.sleep(timing.graceMs + 4 * timing.heartbeatMs);
    expect(runningNow()).toHaveLength(1);
    expect(log.filter((s) => s.kind === "start")).toHaveLength(2);
    expect(await holders()).toHaveLength(1);
    expectNoOverlap();
  }, 60_000);

  test("closing the node's leases stops its work and frees the lock", async () => {
    const a = node("a");
    await until(() => runningNow().length === 1, TAKEOVER_MS * 2);
    await a.leases.close();
    expect(log.map((s) => s.kind)).toEqual(["start", "stop"]);
    expect(await holders()).toEqual([]);
  }, 30_000);

  /** A node running the work through run(), which hands the lease (for fence) to start. */
  function fencedNode(label: string, opts = timing) {
    const leases = new Leases(pg.appUrl, opts);
    nodes.push(leases);
    let lease: LeaseHandle | null = null;
    leases.run("scheduler", {
      start: (l) => {
        lease = l;
        log.push({ node: label, kind: "start", at: performance.now() });
      },
      stop: () => void log.push({ node: label, kind: "stop", at: performance.now() }),
    });
    return { lease: () => lease! };
  }
  /** `passed`: called once the write is past its fence; the write goes on when it resolves. */
  const fencedWrite = (lease: LeaseHandle, note: string, passed: () => Promise<unknown> = async () => {}) =>
    doors.platform.write(async (tx) => {
      await lease.fence(tx);
      await passed();
      await tx.$client.query("INSERT INTO work_log (note) VALUES (?1)").run(note);
    });
  const notes = async () => (await su`SELECT note FROM work_log ORDER BY note`).map((r: { note: string }) => r.note);

  test("fence: the holder's write goes through; once its lease session is gone the write is refused by the database, before the node itself notices", async () => {
    await su`TRUNCATE work_log`;
    // Slow heartbeats: the node does not learn of the loss for seconds, the fence must.
    const a = fencedNode("a", { graceMs: 6_000, heartbeatMs: 2_000, stopBudgetMs: 1_000 });
    await until(() => runningNow().length === 1, 30_000);
    await fencedWrite(a.lease(), "held");
    // The session ended (waited for: gone from pg_locks), then a write. Refused while the node
    // still runs the work is the database's refusal; should a heartbeat have noticed the loss
    // first (a loaded machine), the node takes the lease again and the case is tried anew.
    for (let attempt = 1; ; attempt++) {
      const [pid] = await holders();
      expect((await su`SELECT pg_terminate_backend(${pid}, 10000) AS gone`)[0].gone).toBe(true);
      await expect(fencedWrite(a.lease(), "after the loss")).rejects.toBeInstanceOf(LeaseLost);
      if (a.lease().running) break; // not noticed yet, even after the refusal
      if (attempt === 5) throw new Error("the node noticed each loss before its write");
      await until(() => runningNow().length === 1, 30_000);
    }
    expect(await notes()).toEqual(["held"]);
  }, 120_000);

  test("fence: a new holder does not start while a fenced write of the old holder is in flight", async () => {
    await su`TRUNCATE work_log`;
    // Slow heartbeats, a 5 s proof: a loaded machine does not move the lease before the write.
    const slow = { graceMs: 6_000, heartbeatMs: 2_000, stopBudgetMs: 1_000 };
    const a = fencedNode("a", slow);
    await until(() => runningNow().length === 1, 30_000);
    fencedNode("b", slow);
    let release!: () => void;
    let passed = false;
    let failed: unknown = null;
    const inFlight = fencedWrite(a.lease(), "in flight", () => {
      passed = true;
      return new Promise<void>((r) => (release = r));
    });
    inFlight.catch((err) => (failed = err));
    // The write is past its fence (it holds the fence key shared) before the holder's session ends.
    await until(() => passed || failed !== null, 15_000);
    expect(failed).toBeNull();
    const [pid] = await holders();
    expect((await su`SELECT pg_terminate_backend(${pid}, 10000) AS gone`)[0].gone).toBe(true);
    await until(() => log.some((s) => s.node === "a" && s.kind === "stop"), 15_000);
    // b takes the lock within a heartbeat or two, then waits for the write before its grace even
    // begins: a grace later it has not started.
    await Bun.sleep(slow.graceMs);
    expect(runningNow()).toEqual([]);
    const releasedAt = performance.now();
    release();
    await inFlight; // it passed the fence while a held the lease: it commits
    await until(() => runningNow().length === 1, 30_000);
    // b's grace began once the write ended.
    expect(log.at(-1)!.at - releasedAt).toBeGreaterThanOrEqual(slow.graceMs);
    expect(await notes()).toEqual(["in flight"]);
    expectNoOverlap();
  }, 120_000);
});
