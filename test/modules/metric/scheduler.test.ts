// The collector against a real local HTTP endpoint, with real 1 s periodicities.
// source-only: drives the metric scheduler in-process.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { MetricScheduler } from "../../../src/modules/metric/jobs";
import { ADMIN, makeApp, startAndLogin, type TestApp } from "../../support/helpers";
import { TEST_BACKEND, testSqliteOnly } from "../../support/backend";
import { DEADLINE_MS, waitFor } from "../../support/wait";

const LOOPBACK = { CORPADMIN_EGRESS_ALLOW: "127.0.0.0/8,::1/128" };
const TZ = "America/Sao_Paulo"; // startAndLogin's corporation

interface Endpoint {
  hits: number;
  inFlight: number;
  maxInFlight: number;
}
const endpoints = new Map<string, Endpoint>();
let flakyDown = true;
/** "/slow" answers once the test lets it (a fixed delay would race the machine's load). */
let slowAnswered = Promise.withResolvers<void>();
const hit = (path: string) => endpoints.get(path)?.hits ?? 0;
let server: ReturnType<typeof Bun.serve>;
let base: string;

const BODIES: Record<string, () => Response | Promise<Response>> = {
  "/int": () => Response.json(42),
  "/obj": () => Response.json({ value: 7, unit: "ms" }),
  "/float": () => Response.json(2.5),
  "/text": () => Response.json("link up"),
  "/bool": () => Response.json({ value: true }),
  "/plain": () => new Response("42 packets"),
  "/wrong-type": () => Response.json("42"),
  "/error": () => Response.json(42, { status: 500 }),
  // A chunked body (no length) over the 64 KiB a value may take.
  "/huge": () => new Response(new Blob([`[${"1,".repeat(64 * 1024)}1]`]).stream()),
  "/flaky": () => (flakyDown ? new Response("down", { status: 503 }) : Response.json(3)),
  "/slow": async () => {
    await slowAnswered.promise;
    return Response.json(5);
  },
};

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const e = endpoints.get(path) ?? { hits: 0, inFlight: 0, maxInFlight: 0 };
      endpoints.set(path, e);
      e.hits++;
      e.inFlight++;
      e.maxInFlight = Math.max(e.maxInFlight, e.inFlight);
      try {
        const make = BODIES[path.replace(/^\/[a-z0-9]+(?=\/)/, "")] ?? BODIES[path] ?? (() => Response.json(1));
        return await make();
      } finally {
        e.inFlight--;
      }
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => {
  slowAnswered.resolve();
  server.stop(true);
});

function localHHMM(ms: number): string {
  return new Intl.DateTimeFormat("en-GB", { timeZone: TZ, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(ms);
}

interface Logged {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}
function capture(): { logs: Logged[]; logger: any } {
  const logs: Logged[] = [];
  const at = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => void logs.push({ level, msg, fields });
  return { logs, logger: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") } };
}

async function setup(opts: { dir?: string } = {}) {
  const { logs, logger } = capture();
  const t = await makeApp({ env: LOOPBACK, options: { logger }, dir: opts.dir });
  // On PostgreSQL the scheduler runs under a lease: it starts once its grace is over (5 s there).
  const deadline = Date.now() + DEADLINE_MS;
  while (TEST_BACKEND === "pg" && !logs.some((l) => l.msg === "lease: taken, starting" && l.fields.lease === "metric-scheduler")) {
    if (Date.now() > deadline) throw new Error("the metric scheduler did not start");
    await Bun.sleep(20);
  }
  return { t, logs };
}

const HOUR = 3_600_000;
const metricBody = (over: Record<string, unknown>) => ({
  name: `s-${crypto.randomUUID().slice(0, 8)}`,
  data_type: "Int",
  periodicity: "1s",
  start_date: new Date(Date.now() - HOUR).toISOString(),
  ...over,
});
/**
 * Collection is timed by the real clock, and a loaded machine (PostgreSQL's writes beside other
 * suites) can make a tick or its write late: what must happen is waited for, up to this, instead
 * of a fixed sleep; what must not happen is still watched over a fixed time.
 */
const LATE_MS = DEADLINE_MS;
const valuesOf = (t: TestApp, corpId: string, metricId: string) =>
  t.sql(corpId).query("SELECT at, at_ms, value FROM metric_values WHERE metric_id = ? ORDER BY at_ms").all(metricId) as { at: string; at_ms: number; value: unknown }[];

describe("job metric scheduler: the collector", () => {
  let t: TestApp;
  let logs: Logged[];
  let admin: Awaited<ReturnType<typeof startAndLogin>>;
  beforeAll(async () => {
    ({ t, logs } = await setup());
    admin = await startAndLogin(t);
  });
  afterAll(() => t.close());

  const create = async (over: Record<string, unknown>) => {
    const res = await t.req("POST", "/api/metric", { token: admin.token, body: metricBody(over) });
    expect(res.status).toBe(200);
    return res.body as { id: string; name: string; start_date: string };
  };

  test("collects inside the window and not outside it; stores only values of the data type", async () => {
    const now = Date.now();
    let endingAt = 0;
    const ep = (name: string, kind: string) => `${base}/${name}${kind}`;
    const m = {
      whole: await create({ endpoint: ep("whole", "/int") }),
      window: await create({ endpoint: ep("window", "/int"), daily_start_time: localHHMM(now - HOUR), daily_end_time: localHHMM(now + HOUR) }),
      outside: await create({ endpoint: ep("outside", "/int"), daily_start_time: localHHMM(now + HOUR), daily_end_time: localHHMM(now + 2 * HOUR) }),
      // the reverse of the window above crosses midnight and excludes now
      reversed: await create({ endpoint: ep("reversed", "/int"), daily_start_time: localHHMM(now + HOUR), daily_end_time: localHHMM(now - HOUR) }),
      future: await create({ endpoint: ep("future", "/int"), start_date: new Date(now + HOUR).toISOString() }),
      ended: await create({ endpoint: ep("ended", "/int"), start_date: new Date(now - 2 * HOUR).toISOString(), end_date: new Date(now - HOUR).toISOString() }),
      obj: await create({ endpoint: ep("obj", "/obj") }),
      float: await create({ endpoint: ep("float", "/int"), data_type: "Float" }),
      text: await create({ endpoint: ep("text", "/text"), data_type: "Text" }),
      bool: await create({ endpoint: ep("bool", "/bool"), data_type: "Bool" }),
      plain: await create({ endpoint: ep("plain", "/plain") }),
      wrong: await create({ endpoint: ep("wrong", "/wrong-type") }),
      error: await create({ endpoint: ep("error", "/error") }),
      noEndpoint: await create({}),
      // ends while the test runs: its job stops by itself (4 s after it is made: creating the
      // others can take seconds on a loaded machine, and it must tick before it ends)
      ending: await create({ endpoint: ep("ending", "/int"), end_date: new Date((endingAt = Date.now() + 4_000)).toISOString() }),
    };
    const scheduler = t.ctx.jobs.get<MetricScheduler>("metric-scheduler")!;
    expect(scheduler.nextTick(admin.corpId, m.ended.id)).toBeNull();
    expect(scheduler.nextTick(admin.corpId, m.noEndpoint.id)).toBeNull();
    expect(scheduler.nextTick(admin.corpId, m.future.id)).toBe(Date.parse(m.future.start_date));
    const vals = (k: keyof typeof m) => valuesOf(t, admin.corpId, m[k].id);
    // Cheap conditions first: the endpoints' hits, the ended job; then the stored values.
    await waitFor(
      "two ticks of every collecting metric, and the ending one gone",
      () =>
        hit("/whole/int") >= 2 &&
        hit("/window/int") >= 2 &&
        hit("/plain/plain") >= 2 &&
        hit("/wrong/wrong-type") >= 2 &&
        hit("/error/error") >= 2 &&
        scheduler.nextTick(admin.corpId, m.ending.id) === null,
      LATE_MS,
    );
    // One query a poll (on PostgreSQL each is a psql run that holds this process's event loop).
    const counts = () => {
      const rows = t.sql(admin.corpId).query("SELECT metric_id, count(*) AS n FROM metric_values GROUP BY metric_id").all() as { metric_id: string; n: number }[];
      return (k: keyof typeof m) => Number(rows.find((r) => r.metric_id === m[k].id)?.n ?? 0);
    };
    await waitFor(
      "the values of those ticks",
      () => {
        const n = counts();
        return n("whole") >= 2 && n("window") >= 2 && (["obj", "float", "text", "bool"] as const).every((k) => n(k) > 0);
      },
      LATE_MS,
    );

    for (const k of ["whole", "window"] as const) {
      const v = vals(k);
      expect(v.length).toBeGreaterThanOrEqual(2);
      expect(v.every((x) => x.value === 42)).toBe(true);
      // samples fall on start_date + k·1s
      expect(v.every((x) => (x.at_ms - Date.parse(m[k].start_date)) % 1000 === 0)).toBe(true);
    }
    expect(scheduler.nextTick(admin.corpId, m.ending.id)).toBeNull();
    expect(hit("/ending/int")).toBeGreaterThanOrEqual(1);
    expect(vals("ending").every((x) => x.at_ms < endingAt)).toBe(true);
    for (const k of ["outside", "reversed", "future", "ended"] as const) {
      expect(hit(`/${k}/int`)).toBe(0);
      expect(vals(k)).toEqual([]);
    }
    expect(vals("obj").map((x) => x.value)).toContain(7);
    expect(vals("float").map((x) => x.value)).toContain(42);
    expect(vals("text").map((x) => x.value)).toContain("link up");
    expect(vals("bool").map((x) => x.value)).toContain(1);
    // the HTTP history shows the Bool as a boolean
    const h = await t.req("GET", `/api/metric/${m.bool.id}/history`, { token: admin.token });
    expect(h.body.items[0].value).toBe(true);
    for (const k of ["plain", "wrong", "error"] as const) {
      expect(hit(`/${k}/${k === "plain" ? "plain" : k === "wrong" ? "wrong-type" : "error"}`)).toBeGreaterThanOrEqual(2);
      expect(vals(k)).toEqual([]);
    }
    // why nothing was stored is logged, without the endpoint's path or query
    const why = (id: string) => logs.filter((l) => l.fields.metric_id === id).map((l) => `${l.level} ${l.msg}`);
    expect(why(m.plain.id)).toContain("warn metric endpoint body is not JSON; nothing stored");
    expect(why(m.wrong.id)).toContain('warn metric endpoint body is not a Int value nor {"value": ...}; nothing stored');
    expect(why(m.error.id)).toContain("warn metric endpoint answered an error status; nothing stored");
    expect(why(m.outside.id)).toContain("debug metric not collected: outside its window");
    expect(JSON.stringify(logs)).not.toContain("/plain");
  }, 60_000);

  test("changing or deleting a metric changes its job at once", async () => {
    const m = await create({ endpoint: `${base}/first/int`, periodicity: "1h" });
    const scheduler = t.ctx.jobs.get<MetricScheduler>("metric-scheduler")!;
    // On PostgreSQL the scheduler runs under a lease, which a late proof on a loaded machine moves
    // (the scheduler stops, then starts again and reads every metric): there the job is waited for.
    const tick =
      TEST_BACKEND === "pg" ? (await waitFor("the metric's job", () => scheduler.nextTick(admin.corpId, m.id), LATE_MS))! : scheduler.nextTick(admin.corpId, m.id)!;
    expect(tick).toBeGreaterThan(Date.now());
    expect((tick - Date.parse(m.start_date)) % HOUR).toBe(0);
    await Bun.sleep(1_200);
    expect(hit("/first/int")).toBe(0);

    // a 1 s periodicity starts collecting within the second
    const put = (body: Record<string, unknown>) => t.req("PUT", `/api/metric/${m.id}`, { token: admin.token, body: metricBody({ name: m.name, start_date: m.start_date, ...body }) });
    expect((await put({ endpoint: `${base}/first/int` })).status).toBe(200);
    await waitFor("a tick of the 1 s periodicity", () => hit("/first/int") >= 1, LATE_MS);

    // another endpoint: the old one hears nothing more
    expect((await put({ endpoint: `${base}/second/int` })).status).toBe(200);
    // A request sent just before the change may still be on its way (a loaded machine): it lands first.
    await Bun.sleep(1_000);
    const firstAfter = hit("/first/int");
    await Bun.sleep(2_000);
    expect(hit("/first/int")).toBe(firstAfter);
    await waitFor("a tick on the second endpoint", () => hit("/second/int") >= 1, LATE_MS);

    // no endpoint: no job
    expect((await put({ endpoint: null })).status).toBe(200);
    expect(scheduler.nextTick(admin.corpId, m.id)).toBeNull();
    expect((await put({ endpoint: `${base}/third/int` })).status).toBe(200);
    await waitFor("a tick on the third endpoint", () => hit("/third/int") >= 1, LATE_MS);

    // deleted (by name): silence
    expect((await t.req("DELETE", `/api/metric/name/${m.name}`, { token: admin.token })).status).toBe(204);
    expect(scheduler.nextTick(admin.corpId, m.id)).toBeNull();
    await Bun.sleep(1_000);
    const thirdAfter = hit("/third/int");
    await Bun.sleep(1_500);
    expect(hit("/third/int")).toBe(thirdAfter);
  }, 60_000);

  test("a failing endpoint warns once per reason, then says when it works again", async () => {
    const m = await create({ endpoint: `${base}/flaky1/flaky` });
    const mine = () => logs.filter((l) => l.fields.metric_id === m.id && l.level !== "debug");
    // The second failure is handled (and not logged again) before the third request.
    await waitFor("three failing requests", () => hit("/flaky1/flaky") >= 3, LATE_MS);
    expect(mine().map((l) => `${l.level} ${l.msg}`)).toEqual(["warn metric endpoint answered an error status; nothing stored"]);
    expect(mine()[0].fields).toMatchObject({ status: 503, host: `127.0.0.1:${server.port}` });
    flakyDown = false;
    await waitFor("the recovery logged", () => mine().length >= 2, LATE_MS);
    expect(mine().map((l) => `${l.level} ${l.msg}`)).toEqual(["warn metric endpoint answered an error status; nothing stored", "info metric collection works again"]);
    await waitFor("a value stored", () => valuesOf(t, admin.corpId, m.id).length >= 1, LATE_MS);
    await t.req("DELETE", `/api/metric/${m.id}`, { token: admin.token });
  }, 60_000);

  test("a body over 64 KiB is not read further: nothing stored, why is logged", async () => {
    const m = await create({ endpoint: `${base}/huge1/huge` });
    await waitFor("the refusal logged", () => logs.some((l) => l.fields.metric_id === m.id && l.level === "warn"), LATE_MS);
    expect(hit("/huge1/huge")).toBeGreaterThanOrEqual(1);
    const mine = logs.filter((l) => l.fields.metric_id === m.id && l.level !== "debug");
    expect(mine.map((l) => `${l.level} ${l.msg}`)).toEqual(["warn metric endpoint body is too large to be a value; nothing stored"]);
    expect(mine[0].fields).toMatchObject({ limit: 64 * 1024 });
    expect(valuesOf(t, admin.corpId, m.id)).toEqual([]);
    await t.req("DELETE", `/api/metric/${m.id}`, { token: admin.token });
  }, 60_000);

  test("runs of one metric never overlap, and a slow endpoint delays no other metric", async () => {
    const slow = await create({ endpoint: `${base}/slow1/slow` });
    const fast = await create({ endpoint: `${base}/fast1/int` });
    // The slow endpoint holds its first request until the test answers it: meanwhile the fast
    // metric is collected tick after tick, and the slow one's ticks start no second request.
    await waitFor("the slow request", () => hit("/slow1/slow") >= 1, LATE_MS);
    await waitFor("the fast metric's values while the slow request is held", () => valuesOf(t, admin.corpId, fast.id).length >= 3, LATE_MS);
    await waitFor("a slow tick skipped", () => logs.some((l) => l.fields.metric_id === slow.id && l.msg === "metric not collected: the previous request is still running"), LATE_MS);
    expect(hit("/slow1/slow")).toBe(1);
    expect(valuesOf(t, admin.corpId, slow.id)).toEqual([]);
    slowAnswered.resolve();
    await waitFor("the slow answer stored", () => valuesOf(t, admin.corpId, slow.id).length >= 1, LATE_MS);
    expect(valuesOf(t, admin.corpId, slow.id).every((v) => v.value === 5)).toBe(true);
    expect(endpoints.get("/slow1/slow")!.maxInFlight).toBe(1);
    await t.req("DELETE", `/api/metric/${slow.id}`, { token: admin.token });
    await t.req("DELETE", `/api/metric/${fast.id}`, { token: admin.token });
  }, 60_000);
});

describe("job metric scheduler: the corporation's state", () => {
  test("a corporation not ENABLED collects nothing; a deleted one loses its jobs", async () => {
    const { t } = await setup();
    await startAndLogin(t);
    const { addCorp } = await import("../../support/helpers");
    const { createMetric } = await import("../../../src/modules/metric/service");
    const corpId = await addCorp(t, "state-isp");
    const m = await createMetric(t.ctx.store.tenant(corpId), metricBody({ endpoint: `${base}/state/int` }) as any, { platform: t.ctx.store.platform });
    const scheduler = t.ctx.jobs.get<MetricScheduler>("metric-scheduler")!;
    scheduler.sync(corpId, m);
    const setStatus = (status: string) => {
      t.sqlWrite().query("UPDATE corporations SET status = ? WHERE id = ?").run(status, corpId);
      t.ctx.corps.invalidate(corpId);
    };
    setStatus("MAINTENANCE");
    await Bun.sleep(1_300);
    expect(hit("/state/int")).toBe(0);
    setStatus("ENABLED");
    await waitFor("a tick once enabled", () => hit("/state/int") >= 1, LATE_MS);
    t.sqlWrite().query("DELETE FROM corp_services WHERE corp_id = ?").run(corpId);
    t.sqlWrite().query("DELETE FROM corporations WHERE id = ?").run(corpId);
    t.ctx.corps.invalidate(corpId);
    await waitFor("the deleted corporation's job gone", () => scheduler.nextTick(corpId, m.id) === null, LATE_MS);
    const after = hit("/state/int");
    await Bun.sleep(1_200);
    expect(hit("/state/int")).toBe(after);
    await t.close();
  }, 60_000);
});

describe("job metric scheduler: process start and shutdown", () => {
  test("jobs are rebuilt from every corporation's metrics at start, and stop on close", async () => {
    const first = await setup();
    const dir = first.t.dir;
    const admin = await startAndLogin(first.t);
    const res = await first.t.req("POST", "/api/metric", { token: admin.token, body: metricBody({ endpoint: `${base}/restart/int`, periodicity: "1h" }) });
    expect(res.status).toBe(200);
    await first.t.close(false);

    // a second corporation's metric is found too
    const second = await setup({ dir });
    const login = await second.t.req("POST", "/api/login", { body: { corp: "acme", login: ADMIN.login, password: ADMIN.password } });
    const token = login.body.access_token;
    const { addCorp } = await import("../../support/helpers");
    const other = await addCorp(second.t, "second-isp");
    const { createMetric } = await import("../../../src/modules/metric/service");
    const otherMetric = await createMetric(second.t.ctx.store.tenant(other), metricBody({ endpoint: `${base}/restart2/int` }) as any, { platform: second.t.ctx.store.platform });
    await second.t.close(false);

    const third = await setup({ dir });
    const scheduler = third.t.ctx.jobs.get<MetricScheduler>("metric-scheduler")!;
    // the jobs are built by the first background pass after start-up
    await waitFor("both jobs rebuilt", () => scheduler.size >= 2, LATE_MS);
    expect(scheduler.size).toBe(2);
    expect(scheduler.nextTick(admin.corpId, res.body.id)).toBeGreaterThan(Date.now());
    await waitFor("a value of the second corporation's metric", () => hit("/restart2/int") >= 1 && valuesOf(third.t, other, otherMetric.id).length >= 1, LATE_MS);
    await third.t.close();
    const after = hit("/restart2/int");
    await Bun.sleep(1_500);
    expect(hit("/restart2/int")).toBe(after);
    expect(token).toBeString();
  }, 60_000);

  // SQLite-only: it proves an unindexed corporation's file is never opened by making it unreadable.
  testSqliteOnly("start-up reads only the corporations indexed as collecting; without the index it reads every one and rebuilds it", async () => {
    const first = await setup();
    const dir = first.t.dir;
    await startAndLogin(first.t);
    const { addCorp } = await import("../../support/helpers");
    const { createMetric, deleteMetric } = await import("../../../src/modules/metric/service");
    const idle = await addCorp(first.t, "idle-isp");
    const collecting = await addCorp(first.t, "collecting-isp");
    const platform = first.t.ctx.store.platform;
    await createMetric(first.t.ctx.store.tenant(idle), metricBody({ endpoint: null }) as any, { platform });
    const gone = await createMetric(first.t.ctx.store.tenant(collecting), metricBody({ endpoint: `${base}/index/gone` }) as any, { platform });
    const kept = await createMetric(first.t.ctx.store.tenant(collecting), metricBody({ endpoint: `${base}/index/int`, periodicity: "1h" }) as any, { platform });
    const index = (t: TestApp) => (t.sql().query("SELECT key FROM settings WHERE key LIKE 'metric-collector:%' ORDER BY key").all() as { key: string }[]).map((r) => r.key);
    expect(index(first.t)).toEqual([`metric-collector:corp:${collecting}`, "metric-collector:indexed"]);
    // Deleting one of two collected metrics keeps the corporation indexed.
    await deleteMetric(first.t.ctx.store.tenant(collecting), { id: gone.id }, { platform });
    await Bun.sleep(50);
    expect(index(first.t)).toContain(`metric-collector:corp:${collecting}`);
    await first.t.close(false);

    // A corporation that is not indexed is not opened: its file is unreadable and nobody notices.
    const { writeFileSync, rmSync } = await import("node:fs");
    const idleFile = `${dir}/corps/${idle}.db`;
    for (const suffix of ["-wal", "-shm"]) rmSync(idleFile + suffix, { force: true });
    writeFileSync(idleFile, "not a database ".repeat(512));
    const notStarted = (logs: Logged[]) => logs.filter((l) => l.msg === "metric jobs of a corporation not started").map((l) => l.fields.corp_id);
    const second = await setup({ dir });
    // Jobs are built by the scheduler's start, in the background after the app's.
    await waitFor("the indexed corporation's job", () => second.t.ctx.jobs.get<MetricScheduler>("metric-scheduler")!.size >= 1, LATE_MS);
    expect(second.t.ctx.jobs.get<MetricScheduler>("metric-scheduler")!.size).toBe(1);
    expect(notStarted(second.logs)).toEqual([]);
    await second.t.close(false);

    // Without the index (a restored backup): every corporation is read, the jobs are built, and
    // the index stays incomplete while one corporation cannot be read.
    const { Database } = await import("bun:sqlite");
    const raw = new Database(`${dir}/platform.db`);
    raw.exec("DELETE FROM settings");
    raw.close();
    const third = await setup({ dir });
    const scheduler = third.t.ctx.jobs.get<MetricScheduler>("metric-scheduler")!;
    await waitFor(
      "every corporation read and the index rebuilt",
      () => scheduler.size >= 1 && notStarted(third.logs).length > 0 && index(third.t).length > 0,
      LATE_MS,
    );
    expect(scheduler.size).toBe(1);
    expect(scheduler.nextTick(collecting, kept.id)).toBeGreaterThan(Date.now());
    expect(notStarted(third.logs)).toEqual([idle]);
    expect(index(third.t)).toEqual([`metric-collector:corp:${collecting}`]);

    // Removing the last endpoint drops the corporation from the index.
    await deleteMetric(third.t.ctx.store.tenant(collecting), { id: kept.id }, { platform: third.t.ctx.store.platform });
    await waitFor("the corporation dropped from the index", () => index(third.t).length === 0, LATE_MS);
    await third.t.close();
  }, 60_000);

  test("the egress policy applies: without loopback allowed nothing is fetched, and why is logged", async () => {
    const { logs, logger } = capture();
    const t = await makeApp({ options: { logger } });
    const admin = await startAndLogin(t);
    const res = await t.req("POST", "/api/metric", { token: admin.token, body: metricBody({ endpoint: `${base}/refused/int` }) });
    const refused = await waitFor("the refusal logged", () => logs.find((l) => l.fields.metric_id === res.body.id && l.msg === "metric endpoint request failed"), LATE_MS);
    expect(hit("/refused/int")).toBe(0);
    expect(String(refused?.fields.error)).toContain("not allowed by the egress policy");
    await t.close();
  }, 60_000);
});
