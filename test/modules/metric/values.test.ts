import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addCorp, addUser, makeApp, startAndLogin, UNKNOWN_ID, type TestApp } from "../../support/helpers";

let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
let otherToken: string;

beforeAll(async () => {
  // The values are timed in 2025: kept forever, so that no housekeeping pass (on PostgreSQL it
  // starts a lease's grace after the app, in the middle of these tests) prunes them meanwhile.
  t = await makeApp({ env: { CORPADMIN_METRIC_VALUE_RETENTION_DAYS: "0" } });
  admin = await startAndLogin(t);
  otherToken = (await addUser(t, await addCorp(t, "other-isp"), { services: ["platform.metric"] })).token;
});
afterAll(() => t.close());

async function metric(data_type: string, name = `v-${crypto.randomUUID().slice(0, 8)}`) {
  const res = await t.req("POST", "/api/metric", { token: admin.token, body: { name, data_type, periodicity: "1m", start_date: "2020-01-01T00:00:00Z" } });
  expect(res.status).toBe(200);
  return res.body as { id: string; name: string };
}
const post = (id: string, body: unknown, token = admin.token) => t.req("POST", `/api/metric/${id}/value`, { token, body });
const hist = (id: string, query: string, token = admin.token) => t.req("GET", `/api/metric/${id}/history?${query}`, { token });

describe("POST /api/metric/{id}/value", () => {
  test("stores the value at the given instant (any offset; UTC back) and answers it with metric_id", async () => {
    const m = await metric("Float");
    const res = await post(m.id, { value: 21.5, at: "2025-03-01T12:00:00.250-03:00" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ metric_id: m.id, value: 21.5, at: "2025-03-01T15:00:00.250+00:00" });
    const h = await hist(m.id, "from=2025-03-01T00:00:00Z&to=2025-03-02T00:00:00Z");
    expect(h.body.items).toEqual([res.body]);
  });

  test("`at` left out or null is now", async () => {
    const m = await metric("Int");
    const before = Date.now();
    const res = await post(m.id, { value: 3 });
    const res2 = await post(m.id, { value: 4, at: null });
    expect(res.status).toBe(200);
    expect(res2.status).toBe(200);
    for (const r of [res, res2]) {
      const at = Date.parse(r.body.at);
      expect(at).toBeGreaterThanOrEqual(before - 1);
      expect(at).toBeLessThanOrEqual(Date.now() + 1);
    }
    const h = await hist(m.id, "");
    expect(h.body.items.map((v: { value: number }) => v.value)).toEqual([3, 4]);
  });

  const cases: [type: string, good: unknown[], bad: unknown[]][] = [
    ["Int", [0, -7, 42, Number.MAX_SAFE_INTEGER], [1.5, "1", true, 2 ** 53, 1e300]],
    ["Float", [0, 1, -2.75, 1e-9], ["1.2", false]],
    ["Bool", [true, false], [1, 0, "true"]],
    ["Text", ["", "up", "42", "true", "é".repeat(4096)], [5, true, "x".repeat(4097)]],
  ];
  test.each(cases)("%s: values of the type are stored as they were sent, others are 400 naming value", async (type, good, bad) => {
    const m = await metric(type);
    let second = 0;
    for (const value of good) {
      const at = `2025-01-01T00:00:${String(second++).padStart(2, "0")}Z`;
      const res = await post(m.id, { value, at });
      expect(res.status).toBe(200);
      expect(res.body.value).toEqual(value);
    }
    const h = await hist(m.id, "from=2025-01-01T00:00:00Z&to=2025-01-01T00:01:00Z&limit=500");
    expect(h.body.items.map((v: { value: unknown }) => v.value)).toEqual(good);
    for (const value of bad) {
      const res = await post(m.id, { value, at: "2025-01-01T00:00:00Z" });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(["value"]);
    }
    expect((await hist(m.id, "from=2025-01-01T00:00:00Z&to=2025-01-01T00:01:00Z&limit=500")).body.total).toBe(good.length);
  });

  test("a missing or null value, a malformed at: 400 naming the field", async () => {
    const m = await metric("Int");
    for (const [body, field] of [
      [{}, "value"],
      [{ value: null }, "value"],
      [{ value: [1] }, "value"],
      [{ value: 1, at: "2025-01-01T00:00:00" }, "at"],
      [{ value: 1, at: "tomorrow" }, "at"],
    ] as const) {
      const res = await post(m.id, body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe(field);
    }
  });

  test("by name; 404 unknown metric or another corporation's; 401; 403; values fire no events", async () => {
    const m = await metric("Int", `by name ${crypto.randomUUID().slice(0, 4)}`);
    const byName = await t.req("POST", `/api/metric/name/${encodeURIComponent(m.name)}/value`, { token: admin.token, body: { value: 9, at: "2025-05-05T05:05:05Z" } });
    expect(byName.status).toBe(200);
    expect(byName.body).toEqual({ metric_id: m.id, value: 9, at: "2025-05-05T05:05:05.000+00:00" });
    const bad = await t.req("POST", `/api/metric/name/${encodeURIComponent(m.name)}/value`, { token: admin.token, body: { value: "9" } });
    expect(bad.status).toBe(400);
    expect((await post(UNKNOWN_ID, { value: 1 })).status).toBe(404);
    expect((await post(m.id, { value: 1 }, otherToken)).status).toBe(404);
    expect((await t.req("POST", `/api/metric/name/${encodeURIComponent(m.name)}/value`, { token: otherToken, body: { value: 1 } })).status).toBe(404);
    expect((await t.req("POST", `/api/metric/${m.id}/value`, { body: { value: 1 } })).status).toBe(401);
    const u = await addUser(t, admin.corpId, { services: ["platform.city"] });
    expect((await post(m.id, { value: 1 }, u.token)).status).toBe(403);
    const n = t.sql(admin.corpId).query("SELECT count(*) AS n FROM events WHERE record_id = ?").get(m.id) as { n: number };
    expect(n.n).toBe(1); // its METRIC_AFTER_INSERT only
  });
});

describe("POST /api/metric/{id}/value, concurrently (group commit)", () => {
  test("each value is stored when it is answered; a bad one and an unknown metric fail alone", async () => {
    const m = await metric("Int");
    const stored = t.sql(admin.corpId).query("SELECT 1 FROM metric_values WHERE metric_id = ?1 AND value = ?2");
    const unseen: number[] = [];
    const sent = Array.from({ length: 300 }, async (_, i) => {
      const bad = i % 50 === 7;
      const res = await post(m.id, { value: bad ? "x" : i, at: "2025-06-01T00:00:00Z" });
      // Read on another connection the moment the answer arrives: only a committed row is there.
      if (res.status === 200 && !stored.get(m.id, i)) unseen.push(i);
      return res.status;
    });
    const [statuses, unknown] = await Promise.all([Promise.all(sent), post(UNKNOWN_ID, { value: 1 })]);
    expect(unseen).toEqual([]);
    expect(unknown.status).toBe(404);
    expect(statuses.filter((s) => s === 400).length).toBe(6);
    expect(statuses.filter((s) => s === 200).length).toBe(294);
    const h = await hist(m.id, "from=2025-06-01T00:00:00Z&to=2025-06-01T00:00:00Z&limit=1");
    expect(h.body.total).toBe(294);
  });

  test("values for several metrics at once, by id and by name: each on its own metric, checked against its own type", async () => {
    const ints = await metric("Int");
    const texts = await metric("Text");
    const bools = await metric("Bool");
    const at = "2025-06-02T00:00:00Z";
    const byName = (m: { name: string }, body: unknown) => t.req("POST", `/api/metric/name/${encodeURIComponent(m.name)}/value`, { token: admin.token, body });
    // Sent together: they share batches, each batch naming several metrics.
    const sent = Array.from({ length: 120 }, (_, i) => {
      const k = i % 6;
      if (k === 0) return post(ints.id, { value: i, at });
      if (k === 1) return byName(ints, { value: i, at });
      if (k === 2) return post(texts.id, { value: `t${i}`, at });
      if (k === 3) return byName(bools, { value: i % 4 === 1, at });
      if (k === 4) return post(texts.id, { value: i, at }); // a number for a Text metric: 400
      return byName(bools, { value: "yes", at: "sometime soon" }); // both fields wrong: 400 naming both
    });
    const results = await Promise.all(sent);
    results.forEach((res, i) => {
      const k = i % 6;
      if (k === 4) {
        expect(res.status).toBe(400);
        expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(["value"]);
      } else if (k === 5) {
        expect(res.status).toBe(400);
        expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(["value", "at"]);
      } else {
        expect(res.status).toBe(200);
        const id = k <= 1 ? ints.id : k === 2 ? texts.id : bools.id;
        expect(res.body).toEqual({ metric_id: id, value: k <= 1 ? i : k === 2 ? `t${i}` : i % 4 === 1, at: "2025-06-02T00:00:00.000+00:00" });
      }
    });
    const values = async (m: { id: string }) => (await hist(m.id, "from=2025-06-02T00:00:00Z&to=2025-06-02T00:00:00Z&limit=500")).body.items.map((v: { value: unknown }) => v.value);
    const sorted = (xs: unknown[]) => [...xs].sort((a, b) => String(a).localeCompare(String(b)));
    expect(sorted(await values(ints))).toEqual(sorted(results.flatMap((_, i) => (i % 6 <= 1 ? [i] : []))));
    expect(sorted(await values(texts))).toEqual(sorted(results.flatMap((_, i) => (i % 6 === 2 ? [`t${i}`] : []))));
    expect(sorted(await values(bools))).toEqual(sorted(results.flatMap((_, i) => (i % 6 === 3 ? [i % 4 === 1] : []))));
  });

  test("a value the database refuses fails alone: the others sent with it are stored", async () => {
    const m = await metric("Text");
    const at = "2025-06-03T00:00:00Z";
    // PostgreSQL cannot store U+0000 (400 there); SQLite stores it as sent.
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => post(m.id, { value: i === 17 ? "a\u0000b" : `v${i}`, at })));
    results.forEach((res, i) => {
      if (i === 17) expect([200, 400]).toContain(res.status);
      else expect(res.status).toBe(200);
    });
    const h = await hist(m.id, "from=2025-06-03T00:00:00Z&to=2025-06-03T00:00:00Z&limit=500");
    expect(h.body.total).toBe(results[17].status === 200 ? 40 : 39);
  });

  test("a metric deleted while its values are posted: each value stored and answered 200, or answered 404; none left behind", async () => {
    const m = await metric("Int");
    const sent = Array.from({ length: 100 }, (_, i) => post(m.id, { value: i, at: "2025-06-04T00:00:00Z" }));
    const deleted = t.req("DELETE", `/api/metric/${m.id}`, { token: admin.token });
    const statuses = (await Promise.all(sent)).map((r) => r.status);
    expect((await deleted).status).toBe(204);
    for (const s of statuses) expect([200, 404]).toContain(s);
    const left = t.sql(admin.corpId).query("SELECT count(*) AS n FROM metric_values WHERE metric_id = ?1").get(m.id) as { n: number };
    expect(Number(left.n)).toBe(0);
  });
});

describe("GET /api/metric/{id}/history", () => {
  test("raw: values by at, from and to inclusive, paged, sorted, filtered", async () => {
    const m = await metric("Int");
    const at = (min: number) => new Date(Date.UTC(2025, 5, 1, 10, min)).toISOString();
    // posted out of order: the history is by `at`
    for (const [min, value] of [[30, 3], [0, 1], [59, 6], [15, 2], [45, 4], [60, 7]]) expect((await post(m.id, { value, at: at(min) })).status).toBe(200);
    const from = encodeURIComponent(at(0));
    const to = encodeURIComponent(at(59));
    const all = await hist(m.id, `from=${from}&to=${to}`);
    expect(all.status).toBe(200);
    expect(all.body).toEqual({
      items: [0, 15, 30, 45, 59].map((min, i) => ({ metric_id: m.id, value: [1, 2, 3, 4, 6][i], at: at(min).replace("Z", "+00:00") })),
      page: 1,
      limit: 50,
      total: 5,
    });
    const page2 = await hist(m.id, `from=${from}&to=${to}&limit=2&page=2`);
    expect(page2.body.items.map((v: { value: number }) => v.value)).toEqual([3, 4]);
    expect(page2.body.total).toBe(5);
    const desc = await hist(m.id, `from=${from}&to=${to}&sort=-at&limit=3`);
    expect(desc.body.items.map((v: { value: number }) => v.value)).toEqual([6, 4, 3]);
    const byValue = await hist(m.id, `from=${from}&to=${to}&sort=-value`);
    expect(byValue.body.items.map((v: { value: number }) => v.value)).toEqual([6, 4, 3, 2, 1]);
    const filtered = await hist(m.id, `from=${from}&to=${to}&value=4`);
    expect(filtered.body.items.map((v: { at: string }) => v.at)).toEqual([at(45).replace("Z", "+00:00")]);
    for (const q of ["sort=color", "q=x", "color=red", "value=abc", "limit=0", "page=0"]) {
      const res = await hist(m.id, `from=${from}&to=${to}&${q}`);
      expect(res.status).toBe(400);
    }
  });

  test("without from and to: the last 24 hours", async () => {
    const m = await metric("Int");
    const now = Date.now();
    await post(m.id, { value: 1, at: new Date(now - 25 * 3600_000).toISOString() });
    await post(m.id, { value: 2, at: new Date(now - 23 * 3600_000).toISOString() });
    await post(m.id, { value: 3, at: new Date(now - 60_000).toISOString() });
    await post(m.id, { value: 4, at: new Date(now + 3600_000).toISOString() });
    const res = await hist(m.id, "");
    expect(res.body.items.map((v: { value: number }) => v.value)).toEqual([2, 3]);
    // `to` alone: the 24 hours before it
    const to = encodeURIComponent(new Date(now - 22 * 3600_000).toISOString());
    expect((await hist(m.id, `to=${to}`)).body.items.map((v: { value: number }) => v.value)).toEqual([1, 2]);
  });

  test("400 when from is after to, or a bound is malformed; 404 and 401 and 403 as elsewhere", async () => {
    const m = await metric("Int");
    const bad = await hist(m.id, "from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z");
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("from");
    expect((await hist(m.id, "from=2025-01-02")).body.errors[0].path).toBe("from");
    expect((await hist(m.id, "to=soon")).body.errors[0].path).toBe("to");
    expect((await hist(m.id, "bucket=1x")).body.errors[0].path).toBe("bucket");
    expect((await hist(UNKNOWN_ID, "")).status).toBe(404);
    expect((await hist(m.id, "", otherToken)).status).toBe(404);
    expect((await t.req("GET", `/api/metric/${m.id}/history`)).status).toBe(401);
    const u = await addUser(t, admin.corpId, { services: ["platform.city"] });
    expect((await hist(m.id, "", u.token)).status).toBe(403);
  });

  test("buckets: epoch-aligned count/min/max/avg/sum with exact sums and averages; empty ones left out", async () => {
    const m = await metric("Int");
    const T = (h: number, min: number, s = 0) => new Date(Date.UTC(2025, 6, 10, h, min, s)).toISOString();
    const values: [string, number][] = [
      [T(9, 59, 59), 1000], // before from: left out
      [T(10, 0), 4],
      [T(10, 20), -2],
      [T(10, 59, 59), 10],
      [T(11, 0), 7], // first instant of the next bucket
      [T(13, 30), 1],
      [T(13, 31), 2],
      [T(14, 0), 500], // after to: left out
    ];
    for (const [at, value] of values) expect((await post(m.id, { value, at })).status).toBe(200);
    const res = await hist(m.id, `from=${encodeURIComponent(T(10, 0))}&to=${encodeURIComponent(T(13, 59, 59))}&bucket=1h`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      items: [
        { start: "2025-07-10T10:00:00.000+00:00", count: 3, min: -2, max: 10, avg: 4, sum: 12 },
        { start: "2025-07-10T11:00:00.000+00:00", count: 1, min: 7, max: 7, avg: 7, sum: 7 },
        { start: "2025-07-10T13:00:00.000+00:00", count: 2, min: 1, max: 2, avg: 1.5, sum: 3 },
      ],
    });
    // a from inside a bucket: the bucket keeps its epoch-aligned start and counts from `from` on
    const mid = await hist(m.id, `from=${encodeURIComponent(T(10, 10))}&to=${encodeURIComponent(T(11, 30))}&bucket=30m`);
    expect(mid.body.items).toEqual([
      { start: "2025-07-10T10:00:00.000+00:00", count: 1, min: -2, max: -2, avg: -2, sum: -2 },
      { start: "2025-07-10T10:30:00.000+00:00", count: 1, min: 10, max: 10, avg: 10, sum: 10 },
      { start: "2025-07-10T11:00:00.000+00:00", count: 1, min: 7, max: 7, avg: 7, sum: 7 },
    ]);
    // one day buckets align to UTC midnight (the epoch), not to the corporation's midnight
    const day = await hist(m.id, `from=2025-07-09T12:00:00Z&to=2025-07-11T12:00:00Z&bucket=1d`);
    expect(day.body.items).toEqual([{ start: "2025-07-10T00:00:00.000+00:00", count: 8, min: -2, max: 1000, avg: 1522 / 8, sum: 1522 }]);
  });

  test("buckets of Float values: exact sums and averages", async () => {
    const m = await metric("Float");
    for (const [s, value] of [[0, 0.5], [10, 1.25], [20, 2.25], [65, -0.75]] as const) {
      await post(m.id, { value, at: new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString() });
    }
    const res = await hist(m.id, "from=2025-01-01T00:00:00Z&to=2025-01-01T00:05:00Z&bucket=1m");
    expect(res.body.items).toEqual([
      { start: "2025-01-01T00:00:00.000+00:00", count: 3, min: 0.5, max: 2.25, avg: 4 / 3, sum: 4 },
      { start: "2025-01-01T00:01:00.000+00:00", count: 1, min: -0.75, max: -0.75, avg: -0.75, sum: -0.75 },
    ]);
  });

  test("buckets of Bool and Text values: count only, the rest null", async () => {
    for (const [type, vals] of [["Bool", [true, false, true]], ["Text", ["a", "b", "c"]]] as const) {
      const m = await metric(type);
      for (const [i, value] of vals.entries()) await post(m.id, { value, at: `2025-01-01T00:0${i * 2}:00Z` });
      const res = await t.req("GET", `/api/metric/name/${encodeURIComponent(m.name)}/history?from=2025-01-01T00:00:00Z&to=2025-01-01T01:00:00Z&bucket=3m`, { token: admin.token });
      expect(res.body.items).toEqual([
        { start: "2025-01-01T00:00:00.000+00:00", count: 2, min: null, max: null, avg: null, sum: null },
        { start: "2025-01-01T00:03:00.000+00:00", count: 1, min: null, max: null, avg: null, sum: null },
      ]);
    }
  });

  test("instants before 1970 fall in floor-aligned buckets", async () => {
    const m = await metric("Int");
    await post(m.id, { value: 5, at: "1969-12-31T23:30:00Z" });
    await post(m.id, { value: 6, at: "1970-01-01T00:10:00Z" });
    const res = await hist(m.id, "from=1969-12-31T22:00:00Z&to=1970-01-01T02:00:00Z&bucket=1h");
    expect(res.body.items.map((b: { start: string; sum: number }) => [b.start, b.sum])).toEqual([
      ["1969-12-31T23:00:00.000+00:00", 5],
      ["1970-01-01T00:00:00.000+00:00", 6],
    ]);
  });

  test("at most 10 000 buckets", async () => {
    const m = await metric("Int");
    const ok = await hist(m.id, "from=2025-01-01T00:00:00Z&to=2025-01-01T02:46:39Z&bucket=1s");
    expect(ok.status).toBe(200);
    const over = await hist(m.id, "from=2025-01-01T00:00:00Z&to=2025-01-01T02:46:40Z&bucket=1s");
    expect(over.status).toBe(400);
    expect(over.body.errors[0].path).toBe("bucket");
    expect((await hist(m.id, "from=2000-01-01T00:00:00Z&to=2025-01-01T00:00:00Z&bucket=1h")).status).toBe(400);
  });
});
