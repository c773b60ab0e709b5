// Cluster mode (issue 19): the app over a PostgreSQL server that goes away (a failover cut short to
// its essentials on one throwaway server: a restart with the server down for a while, the app's
// sessions terminated, the database turned read-only as a replica is). Requests cut by it answer
// 503 with Retry-After, never 500; requests after it succeed; the process does not exit; the
// metric collector goes on collecting once the database is back, and while it hangs. PostgreSQL backend only.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { makeApp, startAndLogin, type Res, type TestApp } from "../support/helpers";
import { TEST_BACKEND, testPostgres } from "../support/backend";
import type { TestPostgres } from "../support/postgres";
import { waitFor } from "../support/wait";

const onPostgres = TEST_BACKEND === "pg" ? describe : describe.skip;

let pg: TestPostgres;
let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
let superuser: SQL;
let database: string;
let valuesMetric: string;
let collectedMetric: string;

/** Collections of the metric below, by the time the receiver answered them. */
const hits: number[] = [];
let receiver: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  if (TEST_BACKEND !== "pg") return;
  receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch() {
      hits.push(Date.now());
      return Response.json({ value: hits.length });
    },
  });
  pg = await testPostgres();
  t = await makeApp({ env: { CORPADMIN_EGRESS_ALLOW: "127.0.0.0/8" } });
  admin = await startAndLogin(t);
  database = new URL(t.config.databaseUrl!).pathname.slice(1);
  superuser = new SQL({ url: `postgres://postgres@127.0.0.1:${pg.port}/postgres`, max: 1 });
  const metric = async (name: string, endpoint: string | null) => {
    const res = await t.req("POST", "/api/metric", {
      token: admin.token,
      body: { name, endpoint, data_type: "Int", periodicity: "1s", start_date: "2025-01-01T00:00:00.000Z", end_date: null, daily_start_time: "00:00", daily_end_time: "00:00" },
    });
    expect(res.status).toBe(200);
    return res.body.id as string;
  };
  valuesMetric = await metric("written", null);
  collectedMetric = await metric("collected", `http://127.0.0.1:${receiver.port}/metric`);
}, 60_000);

afterAll(async () => {
  if (TEST_BACKEND !== "pg") return;
  await superuser?.close();
  await t?.close();
  receiver?.stop(true);
});

let written = 0;
/** A write and a read of the corporation, and a platform read (the session's check). */
const traffic = (): Promise<Res>[] => [
  t.req("POST", `/api/metric/${valuesMetric}/value`, { token: admin.token, body: { value: ++written } }),
  t.req("GET", `/api/metric/${valuesMetric}`, { token: admin.token }),
  t.req("GET", "/api/corp", { token: admin.token }),
];

/** Sends traffic until `during` settles; every answer is 2xx or the 503 of an outage. */
async function through(during: Promise<unknown>): Promise<{ ok: number; unavailable: number }> {
  let done = false;
  void during.finally(() => (done = true));
  const seen = { ok: 0, unavailable: 0 };
  while (!done) {
    for (const res of await Promise.all(traffic())) {
      if (res.status === 503) {
        expect(res.body.type).toBe("urn:corpadmin:problem:unavailable");
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
        seen.unavailable++;
      } else {
        expect(res.status, `${res.status}: ${res.text}`).toBeLessThan(300);
        seen.ok++;
      }
    }
    await Bun.sleep(20);
  }
  await during;
  return seen;
}

/** Once the database is back: the same requests succeed again (a pool's dead connections are not reused). */
async function back(): Promise<void> {
  for (let i = 0; i < 5; i++) for (const res of await Promise.all(traffic())) expect(res.status, `${res.status}: ${res.text}`).toBeLessThan(300);
}

/** Ends the app's sessions, and waits (up to 5 s each) until they are gone. */
const storedAt = (body: unknown): number[] => ((Array.isArray(body) ? body : (body as { items: unknown[] }).items) as { at: string }[]).map((v) => Date.parse(v.at));

const terminateApp = () => superuser`SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = ${database} AND pid <> pg_backend_pid()`;

onPostgres("POST /api/metric/{id}/value, GET /api/metric/{id}, GET /api/corp: a database outage answers 503, never 500", () => {
  test("the server stopped for 2 s and started again: 503 with Retry-After meanwhile, then 2xx", async () => {
    await back();
    const seen = await through(Bun.sleep(200).then(() => pg.restart(2_000)));
    expect(seen.unavailable).toBeGreaterThan(0);
    await back();
  }, 60_000);

  test("the app's sessions terminated under load (a primary's crash): 503 or 2xx, then 2xx", async () => {
    const cut = (async () => {
      for (let i = 0; i < 5; i++) {
        await Bun.sleep(100);
        await terminateApp();
      }
    })();
    await through(cut);
    await back();
  }, 60_000);

  test("the database read-only, as a replica reached before its promotion: writes answer 503, reads 200; writes succeed once it is writable", async () => {
    await superuser.unsafe(`ALTER DATABASE ${database} SET default_transaction_read_only = on`);
    try {
      await terminateApp(); // the setting holds for new sessions
      for (let i = 0; i < 3; i++) {
        const [write, read, platform] = await Promise.all(traffic());
        expect(write.status, write.text).toBe(503);
        expect(write.body.detail).toContain("read-only");
        expect(write.headers.get("retry-after")).toBe("1");
        expect(read.status).toBe(200);
        expect(platform.status).toBe(200);
      }
    } finally {
      await superuser.unsafe(`ALTER DATABASE ${database} SET default_transaction_read_only = off`);
    }
    await terminateApp();
    await back();
  }, 60_000);
});

onPostgres("GET /api/metric/{id}/history, job metric scheduler: collecting goes on after a database outage", () => {
  // The lease is lost while the server is down (its proof cannot answer): collecting resumes a
  // lease grace (5 s in the tests) after the server's return, waited for.
  test("the server down for 4 s: collections of a 1 s metric resume once it is back", async () => {
    // Wait for the collector to run at all (after the lease's grace, then a tick a second).
    await waitFor("two collections", () => hits.length >= 2);
    await pg.restart(4_000);
    const up = Date.now();
    await waitFor("two collections after the return", () => hits.filter((at) => at > up).length >= 2);
    // And the values are stored again.
    await waitFor("a value stored after the return", async () => {
      const res = await t.req("GET", `/api/metric/${collectedMetric}/history`, { token: admin.token });
      expect(res.status, res.text).toBe(200);
      return storedAt(res.body).some((at) => at > up);
    });
  }, 60_000);

  // The scheduler runs under a lease (one node at a time): a server that does not answer cannot
  // prove the lease, so the scheduler stops within a heartbeat or two of the hang (it may not run
  // beside a node that took over meanwhile), and starts again a grace after the server answers.
  test("the server hung for 4 s (its processes stopped): the scheduler stops with its lease, and collecting resumes once the server answers", async () => {
    const processes = [pg.pid, ...Bun.spawnSync(["pgrep", "-P", String(pg.pid)]).stdout.toString().split(/\s+/).filter(Boolean).map(Number)];
    for (const pid of processes) process.kill(pid, "SIGSTOP");
    let to: number;
    try {
      await Bun.sleep(4_000);
    } finally {
      to = Date.now();
      for (const pid of processes) process.kill(pid, "SIGCONT");
    }
    await waitFor("two values stored after the hang", async () => {
      const res = await t.req("GET", `/api/metric/${collectedMetric}/history`, { token: admin.token });
      expect(res.status, res.text).toBe(200);
      return storedAt(res.body).filter((at) => at > to).length >= 2;
    });
    expect(hits.some((at) => at > to)).toBe(true);
  }, 60_000);
});
