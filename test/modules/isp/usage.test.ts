// Traffic usage from RADIUS accounting (routes.md, Network operations additions): records sent
// through POST /api/isp/radius/accounting as rlm_rest sends them, usage read through
// GET /api/contract/{id}/usage and GET /api/isp/usage. The corporation's timezone is
// America/Sao_Paulo (-03:00): local midnight is 03:00 UTC.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { join } from "node:path";
import { TEST_BACKEND, testSqliteOnly } from "../../support/backend";
import { makeApp, makePeerApp, startAndLogin, TARGET, type TestApp } from "../../support/helpers";
import { contractWith } from "../../support/isp";

let t: TestApp;
let admin: { token: string; corpId: string };
const SECRET = "nas-secret-usage";
const basic = `Basic ${Buffer.from(`acme:${SECRET}`).toString("base64")}`;
const G = 2 ** 32;

interface Rec {
  status: "Start" | "Interim-Update" | "Stop";
  at: string;
  time?: number;
  input?: number;
  output?: number;
  nas?: string;
}

async function acct(username: string, session: string, r: Rec) {
  const body: Record<string, unknown> = {
    "User-Name": username,
    "Acct-Session-Id": session,
    "NAS-IP-Address": r.nas ?? "192.0.2.20",
    "Acct-Status-Type": r.status,
    "Event-Timestamp": Math.floor(Date.parse(r.at) / 1000),
    "Acct-Session-Time": r.time ?? 0,
  };
  // 64-bit counters as the NAS sends them: the low 32 bits and the Gigawords.
  if (r.input !== undefined) Object.assign(body, { "Acct-Input-Octets": r.input % G, "Acct-Input-Gigawords": Math.floor(r.input / G) });
  if (r.output !== undefined) Object.assign(body, { "Acct-Output-Octets": r.output % G, "Acct-Output-Gigawords": Math.floor(r.output / G) });
  const res = await t.req("POST", "/api/isp/radius/accounting", { body, headers: { authorization: basic } });
  if (res.status !== 204) throw new Error(`accounting: ${res.status} ${res.text}`);
}

let n = 0;
async function customer() {
  const username = `user-${++n}`;
  const { contract } = await contractWith(t, admin.token, { username, password: "pw-123456" });
  return { id: contract.id as string, username, number: contract.number as string };
}

const usage = (id: string, query = "from=2026-03-01&to=2026-03-31") => t.req("GET", `/api/contract/${id}/usage?${query}`, { token: admin.token });
/** The contract's row of GET /api/isp/usage over a range (none when it has no usage there). */
async function listed(c: { id: string; username: string }, range: string): Promise<any[]> {
  const res = await t.req("GET", `/api/isp/usage?${range}&q=${c.username}&limit=500`, { token: admin.token });
  if (res.status !== 200) throw new Error(`usage list: ${res.status} ${res.text}`);
  return res.body.items.filter((r: any) => r.contract_id === c.id);
}
const day = (body: any, date: string) => body.items.find((i: any) => i.start === `${date}T00:00:00.000-03:00`);

beforeAll(async () => {
  t = await makeApp();
  admin = await startAndLogin(t);
  const nas = await t.req("POST", "/api/isp/nas", { token: admin.token, body: { name: "bng-usage", ip: "192.0.2.20", secret: SECRET } });
  expect(nas.status).toBe(200);
  const nas2 = await t.req("POST", "/api/isp/nas", { token: admin.token, body: { name: "bng-usage-2", ip: "192.0.2.21", secret: SECRET } });
  expect(nas2.status).toBe(200);
});
afterAll(() => t.close());

describe("usage from accounting", () => {
  test("a counter wrapping past 2^32 is counted through its Gigawords", async () => {
    const c = await customer();
    await acct(c.username, "wrap-1", { status: "Start", at: "2026-03-10T12:00:00Z" });
    await acct(c.username, "wrap-1", { status: "Interim-Update", at: "2026-03-10T12:05:00Z", time: 300, input: G - 10, output: 5 });
    await acct(c.username, "wrap-1", { status: "Interim-Update", at: "2026-03-10T12:10:00Z", time: 600, input: 2 * G + 7, output: G + 1 });
    await acct(c.username, "wrap-1", { status: "Stop", at: "2026-03-10T12:15:00Z", time: 900, input: 2 * G + 100, output: G + 1 });
    const res = await usage(c.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ input_bytes: 2 * G + 100, output_bytes: G + 1, total_bytes: 3 * G + 101 });
    expect(day(res.body, "2026-03-10")).toEqual({ start: "2026-03-10T00:00:00.000-03:00", input_bytes: 2 * G + 100, output_bytes: G + 1, total_bytes: 3 * G + 101, session_seconds: 900 });
    expect(res.body.items).toHaveLength(31);
  });

  test("counters that go backwards count from zero; a NAS restart starts the session's counters again", async () => {
    const c = await customer();
    await acct(c.username, "reset-1", { status: "Start", at: "2026-03-11T12:00:00Z" });
    await acct(c.username, "reset-1", { status: "Interim-Update", at: "2026-03-11T12:05:00Z", time: 300, input: 1000, output: 2000 });
    // The counter went back (no Gigawords kept): what it shows now is new traffic.
    await acct(c.username, "reset-1", { status: "Interim-Update", at: "2026-03-11T12:10:00Z", time: 600, input: 50, output: 2500 });
    // The NAS restarts: Accounting-On closes its sessions; the same Acct-Session-Id starts again from zero.
    const on = await t.req("POST", "/api/isp/radius/accounting", { body: { "Acct-Status-Type": "Accounting-On", "NAS-IP-Address": "192.0.2.20", "Event-Timestamp": Date.parse("2026-03-11T12:15:00Z") / 1000 }, headers: { authorization: basic } });
    expect(on.status).toBe(204);
    await acct(c.username, "reset-1", { status: "Start", at: "2026-03-11T12:20:00Z" });
    await acct(c.username, "reset-1", { status: "Interim-Update", at: "2026-03-11T12:25:00Z", time: 300, input: 10, output: 20 });
    const res = await usage(c.id);
    expect(res.body).toMatchObject({ input_bytes: 1000 + 50 + 10, output_bytes: 2500 + 20 });
  });

  test("a duplicate Interim and a late one never count twice; a Stop without Start counts its whole session", async () => {
    const c = await customer();
    await acct(c.username, "dup-1", { status: "Start", at: "2026-03-12T12:00:00Z" });
    await acct(c.username, "dup-1", { status: "Interim-Update", at: "2026-03-12T12:05:00Z", time: 300, input: 100, output: 200 });
    await acct(c.username, "dup-1", { status: "Interim-Update", at: "2026-03-12T12:05:00Z", time: 300, input: 100, output: 200 });
    await acct(c.username, "dup-1", { status: "Interim-Update", at: "2026-03-12T12:15:00Z", time: 900, input: 700, output: 900 });
    // Late: the 600 s interim arrives after the 900 s one.
    await acct(c.username, "dup-1", { status: "Interim-Update", at: "2026-03-12T12:10:00Z", time: 600, input: 400, output: 500 });
    await acct(c.username, "dup-1", { status: "Stop", at: "2026-03-12T12:20:00Z", time: 1200, input: 800, output: 1000 });
    await acct(c.username, "dup-1", { status: "Stop", at: "2026-03-12T12:20:00Z", time: 1200, input: 800, output: 1000 });
    await acct(c.username, "lost-start", { status: "Stop", at: "2026-03-12T13:00:00Z", time: 600, input: 3000, output: 4000 });
    const res = await usage(c.id);
    expect(res.body).toMatchObject({ input_bytes: 800 + 3000, output_bytes: 1000 + 4000 });
    expect(day(res.body, "2026-03-12").session_seconds).toBe(1200 + 600);
  });

  test("growth across midnight in America/Sao_Paulo is split by the time on each side", async () => {
    const c = await customer();
    // 23:00 local (02:00 UTC) to 01:00 local (04:00 UTC): one hour on each side of local midnight.
    await acct(c.username, "night-1", { status: "Start", at: "2026-03-14T02:00:00Z" });
    await acct(c.username, "night-1", { status: "Interim-Update", at: "2026-03-14T04:00:00Z", time: 7200, input: 1001, output: 3000 });
    const res = await usage(c.id);
    expect(day(res.body, "2026-03-13")).toMatchObject({ input_bytes: 500, output_bytes: 1500, session_seconds: 3600 });
    expect(day(res.body, "2026-03-14")).toMatchObject({ input_bytes: 501, output_bytes: 1500, session_seconds: 3600 });
    expect(res.body).toMatchObject({ input_bytes: 1001, output_bytes: 3000 });
    const month = await usage(c.id, "from=2026-01-01&to=2026-04-30&bucket=month");
    expect(month.body.items.map((i: any) => [i.start, i.total_bytes])).toEqual([
      ["2026-01-01T00:00:00.000-03:00", 0],
      ["2026-02-01T00:00:00.000-03:00", 0],
      ["2026-03-01T00:00:00.000-03:00", 4001],
      ["2026-04-01T00:00:00.000-03:00", 0],
    ]);
  });

  test("two sessions of one contract at once add up", async () => {
    const c = await customer();
    await acct(c.username, "two-a", { status: "Start", at: "2026-03-15T12:00:00Z" });
    await acct(c.username, "two-b", { status: "Start", at: "2026-03-15T12:00:00Z", nas: "192.0.2.21" });
    await acct(c.username, "two-a", { status: "Interim-Update", at: "2026-03-15T12:05:00Z", time: 300, input: 10, output: 20 });
    await acct(c.username, "two-b", { status: "Interim-Update", at: "2026-03-15T12:05:00Z", time: 300, input: 1, output: 2, nas: "192.0.2.21" });
    await acct(c.username, "two-a", { status: "Stop", at: "2026-03-15T12:10:00Z", time: 600, input: 30, output: 40 });
    await acct(c.username, "two-b", { status: "Interim-Update", at: "2026-03-15T12:10:00Z", time: 600, input: 5, output: 6, nas: "192.0.2.21" });
    const res = await usage(c.id);
    expect(res.body).toMatchObject({ input_bytes: 35, output_bytes: 46, total_bytes: 81 });
  });

  test("GET /api/isp/usage ranks contracts by total_bytes, with q, filters, paging and CSV", async () => {
    const a = await customer();
    const b = await customer();
    await acct(a.username, "rank-a", { status: "Stop", at: "2026-05-02T12:00:00Z", time: 60, input: 10, output: 10 });
    await acct(b.username, "rank-b", { status: "Stop", at: "2026-05-03T12:00:00Z", time: 60, input: 500, output: 500 });
    const res = await t.req("GET", "/api/isp/usage?from=2026-05-01&to=2026-05-31", { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ page: 1, limit: 50, total: 2 });
    expect(res.body.items[0]).toMatchObject({ contract_id: b.id, number: b.number, username: b.username, input_bytes: 500, output_bytes: 500, total_bytes: 1000 });
    expect(res.body.items[0].customer_name).toBeString();
    expect(res.body.items[1]).toMatchObject({ contract_id: a.id, total_bytes: 20 });
    const asc = await t.req("GET", "/api/isp/usage?from=2026-05-01&to=2026-05-31&sort=total_bytes&limit=1", { token: admin.token });
    expect(asc.body.items.map((r: any) => r.contract_id)).toEqual([a.id]);
    expect(asc.body.total).toBe(2);
    const q = await t.req("GET", `/api/isp/usage?from=2026-05-01&to=2026-05-31&q=${a.username.toUpperCase()}`, { token: admin.token });
    expect(q.body.items.map((r: any) => r.contract_id)).toEqual([a.id]);
    const filtered = await t.req("GET", `/api/isp/usage?from=2026-05-01&to=2026-05-31&number=${encodeURIComponent(b.number)}`, { token: admin.token });
    expect(filtered.body.items.map((r: any) => r.contract_id)).toEqual([b.id]);
    // Ranked by the database: a filter on a sum or the id, a sort by id, a page past the last row.
    const period = "/api/isp/usage?from=2026-05-01&to=2026-05-31";
    const bySum = await t.req("GET", `${period}&total_bytes=1000`, { token: admin.token });
    expect(bySum.body).toMatchObject({ total: 1, items: [{ contract_id: b.id, number: b.number, username: b.username, total_bytes: 1000 }] });
    expect(Object.keys(bySum.body.items[0])).toEqual(["contract_id", "number", "username", "customer_name", "input_bytes", "output_bytes", "total_bytes"]);
    expect((await t.req("GET", `${period}&contract_id=${a.id}&input_bytes=10`, { token: admin.token })).body.items.map((r: any) => r.contract_id)).toEqual([a.id]);
    expect((await t.req("GET", `${period}&input_bytes=11`, { token: admin.token })).body).toMatchObject({ items: [], total: 0 });
    const byId = await t.req("GET", `${period}&sort=-contract_id`, { token: admin.token });
    expect(byId.body.items.map((r: any) => r.contract_id)).toEqual([a.id, b.id].sort().reverse());
    expect((await t.req("GET", `${period}&limit=1&page=3`, { token: admin.token })).body).toMatchObject({ items: [], total: 2, page: 3 });
    // Ranges that are not one whole month: grouped from the months and days they span.
    for (const range of ["from=2026-04-01&to=2026-05-31", "from=2026-05-02&to=2026-06-10"]) {
      const ranked = await t.req("GET", `/api/isp/usage?${range}&limit=1`, { token: admin.token });
      expect(ranked.body).toMatchObject({ total: 2, items: [{ contract_id: b.id, total_bytes: 1000 }] });
    }
    const csv = await t.req("GET", "/api/isp/usage?from=2026-05-01&to=2026-05-31&format=csv", { token: admin.token });
    expect(csv.status, csv.text).toBe(200);
    expect(csv.text.split("\r\n")[0]).toBe("contract_id,number,username,customer_name,input_bytes,output_bytes,total_bytes");
    expect(csv.text).toContain(`${b.id},${b.number},${b.username}`);
  });

  test("the current cycle by default; 400 for a bad range, bucket or sort; 404 for an unknown contract", async () => {
    const c = await customer();
    const now = new Date();
    await acct(c.username, "now-1", { status: "Stop", at: now.toISOString(), time: 10, input: 7, output: 8 });
    const res = await t.req("GET", `/api/contract/${c.id}/usage`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body.cycle).toMatchObject({ used_bytes: 15, allowance_bytes: null });
    expect(res.body.total_bytes).toBe(15);
    expect(Date.parse(res.body.cycle.start)).toBeLessThanOrEqual(now.getTime());
    expect(Date.parse(res.body.cycle.end)).toBeGreaterThan(now.getTime());
    // One bound: the other is the current cycle's (or the same day, when the cycle is on the wrong side).
    const fromOnly = await usage(c.id, "from=2026-03-10");
    expect(fromOnly.body.items[0].start).toBe("2026-03-10T00:00:00.000-03:00");
    expect(Date.parse(fromOnly.body.items.at(-1).start)).toBeLessThan(Date.parse(res.body.cycle.end));
    expect(fromOnly.body.total_bytes).toBe(15);
    const toOnly = await usage(c.id, "to=2026-03-10");
    expect(toOnly.body.items.map((i: any) => i.start)).toEqual(["2026-03-10T00:00:00.000-03:00"]);
    expect((await usage(c.id, "from=2026-03-10&to=2026-03-01")).status).toBe(400);
    expect((await usage(c.id, "from=yesterday")).status).toBe(400);
    expect((await usage(c.id, "from=2026-03-01&bucket=week")).status).toBe(400);
    expect((await t.req("GET", "/api/isp/usage?sort=nope", { token: admin.token })).status).toBe(400);
    expect((await t.req("GET", "/api/isp/usage?nope=1", { token: admin.token })).status).toBe(400);
    expect((await usage("0190a4d2-0000-7000-8000-000000000000")).status).toBe(404);
    expect((await t.req("GET", `/api/contract/${c.id}/usage`)).status).toBe(401);
  });
});

// Source-only too: it loses the rollups through the in-process store (t.ctx) before the command runs.
describe("corpadmin usage rebuild", () => {
  (TARGET === "binary" ? test.skip : testSqliteOnly)("recomputes the rollups from the raw records: the same totals, day by day", async () => {
    const c = await customer();
    await acct(c.username, "rb-1", { status: "Start", at: "2026-07-01T02:00:00Z" });
    await acct(c.username, "rb-1", { status: "Interim-Update", at: "2026-07-01T04:00:00Z", time: 7200, input: G + 5, output: 10 });
    await acct(c.username, "rb-1", { status: "Interim-Update", at: "2026-07-01T04:00:00Z", time: 7200, input: G + 5, output: 10 });
    await acct(c.username, "rb-1", { status: "Stop", at: "2026-07-01T05:00:00Z", time: 10800, input: 40, output: 20 });
    const before = (await usage(c.id, "from=2026-06-01&to=2026-08-31")).body;
    expect(before).toMatchObject({ input_bytes: G + 5 + 40, output_bytes: 20 });
    // The rollups are lost (say, a restore of an older copy of them).
    await t.ctx.store.tenant(admin.corpId).write(async (tx) => {
      await tx.$client.query("DELETE FROM isp_usage_daily").run();
      await tx.$client.query("DELETE FROM isp_usage_monthly").run();
    });
    expect((await usage(c.id, "from=2026-06-01&to=2026-08-31")).body.total_bytes).toBe(0);
    expect((await listed(c, "from=2026-06-01&to=2026-08-31")).length).toBe(0);
    const cli = Bun.spawnSync(["bun", join(import.meta.dir, "../../../src/main.ts"), "usage", "rebuild", "--corp", "acme", "--data-dir", t.dir], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, CORPADMIN_TOKEN_SECRET: "test-secret-key-0123456789abcdef", CORPADMIN_LOG_LEVEL: "error" },
    });
    expect(cli.stderr.toString()).toBe("");
    expect(cli.exitCode).toBe(0);
    expect(cli.stdout.toString()).toMatch(/^acme: \d+ accounting records replayed\n$/);
    expect((await usage(c.id, "from=2026-06-01&to=2026-08-31")).body).toEqual(before);
    // The months too: whole months are read from them (the session started on June 30, local time).
    expect(await listed(c, "from=2026-06-01&to=2026-08-31")).toMatchObject([{ input_bytes: G + 5 + 40, output_bytes: 20 }]);
    const july = (await usage(c.id, "from=2026-07-01&to=2026-07-31")).body;
    expect(july.input_bytes).toBeGreaterThan(0);
    expect(await listed(c, "from=2026-07-01&to=2026-07-31")).toMatchObject([{ input_bytes: july.input_bytes, output_bytes: july.output_bytes }]);
    const unknown = Bun.spawnSync(["bun", join(import.meta.dir, "../../../src/main.ts"), "usage", "rebuild", "--corp", "nowhere", "--data-dir", t.dir], { stdout: "pipe", stderr: "pipe" });
    expect(unknown.exitCode).toBe(1);
  }, 60_000);
});

describe("cluster mode", () => {
  // Two nodes over one PostgreSQL database add to the same contract's day at once.
  (TEST_BACKEND === "pg" ? test : test.skip)("rollups written by two nodes at once add up exactly", async () => {
    const c = await customer();
    const peer = await makePeerApp(t);
    try {
      const sessions = Array.from({ length: 40 }, (_, k) => k);
      const via = (app: TestApp, body: Record<string, unknown>) => app.req("POST", "/api/isp/radius/accounting", { body, headers: { authorization: basic } });
      const results = await Promise.all(
        sessions.map(async (k) => {
          const app = k % 2 ? peer : t;
          const base = { "User-Name": c.username, "Acct-Session-Id": `node-${k}`, "NAS-IP-Address": "192.0.2.20", "Event-Timestamp": Date.parse("2026-09-10T12:00:00Z") / 1000 };
          const a = await via(app, { ...base, "Acct-Status-Type": "Start" });
          const b = await via(app, { ...base, "Acct-Status-Type": "Stop", "Acct-Session-Time": 60, "Event-Timestamp": base["Event-Timestamp"] + 60, "Acct-Input-Octets": 1000 + k, "Acct-Output-Octets": 7 });
          return [a.status, b.status];
        }),
      );
      expect(results.flat().every((s) => s === 204)).toBe(true);
      const res = await usage(c.id, "from=2026-09-01&to=2026-09-30");
      expect(res.body).toMatchObject({ input_bytes: 40 * 1000 + (39 * 40) / 2, output_bytes: 40 * 7 });
      expect(day(res.body, "2026-09-10").session_seconds).toBe(40 * 60);
      // The month's rollup (whole September) and the day's (an edge range) agree.
      expect(await listed(c, "from=2026-09-01&to=2026-09-30")).toMatchObject([{ input_bytes: 40 * 1000 + (39 * 40) / 2, output_bytes: 40 * 7 }]);
      expect(await listed(c, "from=2026-09-10&to=2026-09-10")).toMatchObject([{ input_bytes: 40 * 1000 + (39 * 40) / 2, output_bytes: 40 * 7 }]);
    } finally {
      await peer.close();
    }
  }, 60_000);
});

describe("usage against a reference sum (random record sequences)", () => {
  test("duplicates, reordering and resets never change the total the counters say", async () => {
    const c = await customer();
    let run = 0;
    let expectedIn = 0;
    let expectedOut = 0;
    // One session's true history: a Start, interims with growing counters (sometimes past 2^32),
    // a Stop; delivered with duplicates, adjacent swaps and the Start sometimes lost.
    const session = fc.record({
      steps: fc.array(fc.record({ dt: fc.integer({ min: 1, max: 20_000 }), din: fc.integer({ min: 0, max: 3 * G }), dout: fc.integer({ min: 0, max: 2 ** 31 }) }), { minLength: 1, maxLength: 6 }),
      dropStart: fc.boolean(),
      dups: fc.array(fc.nat(), { maxLength: 3 }),
      swaps: fc.array(fc.nat(), { maxLength: 3 }),
      offset: fc.integer({ min: 0, max: 40 * 86_400 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(session, { minLength: 1, maxLength: 3 }), async (sessions) => {
        for (const s of sessions) {
          const id = `prop-${++run}`;
          const t0 = Date.parse("2026-06-01T00:00:00Z") + s.offset * 1000;
          let time = 0;
          let input = 0;
          let output = 0;
          const recs: Rec[] = [];
          if (!s.dropStart) recs.push({ status: "Start", at: new Date(t0).toISOString() });
          s.steps.forEach((step, k) => {
            time += step.dt;
            input += step.din;
            output += step.dout;
            recs.push({ status: k === s.steps.length - 1 ? "Stop" : "Interim-Update", at: new Date(t0 + time * 1000).toISOString(), time, input, output });
          });
          for (const d of s.dups) recs.splice(d % recs.length, 0, recs[d % recs.length]);
          for (const w of s.swaps) {
            const k = w % recs.length;
            if (k + 1 < recs.length && recs[k].status !== "Start" && recs[k + 1].status !== "Start") [recs[k], recs[k + 1]] = [recs[k + 1], recs[k]];
          }
          // Reference: the record of the latest session time that arrived before the Stop (later ones are dropped:
          // the session is closed) holds the session's counters; the Stop is the latest of all.
          const last = recs.reduce((best, r) => ((r.time ?? 0) > (best.time ?? 0) ? r : best));
          expectedIn += last.input ?? 0;
          expectedOut += last.output ?? 0;
          for (const r of recs) await acct(c.username, id, r);
        }
        const res = await usage(c.id, "from=2026-04-01&to=2026-08-31");
        expect(res.body.input_bytes).toBe(expectedIn);
        expect(res.body.output_bytes).toBe(expectedOut);
        expect(res.body.items.reduce((sum: number, i: any) => sum + i.total_bytes, 0)).toBe(expectedIn + expectedOut);
        // The usage list reads whole months from the monthly rollup and the ends from the days:
        // over whole months, over a range with partial months at both ends, and within one month,
        // it says what the days say.
        expect(await listed(c, "from=2026-04-01&to=2026-08-31")).toMatchObject([{ input_bytes: expectedIn, output_bytes: expectedOut }]);
        for (const range of ["from=2026-05-17&to=2026-07-09", "from=2026-06-03&to=2026-06-20", "from=2026-06-01&to=2026-07-14"]) {
          const days = (await usage(c.id, range)).body;
          const rows = await listed(c, range);
          expect(rows.length ? { input_bytes: rows[0].input_bytes, output_bytes: rows[0].output_bytes } : { input_bytes: 0, output_bytes: 0 }).toEqual({ input_bytes: days.input_bytes, output_bytes: days.output_bytes });
        }
      }),
      { numRuns: 25 },
    );
  });
});
