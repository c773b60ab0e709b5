// Generated hostile query strings on every GET operation of the OpenAPI document (a new route is
// covered without anyone remembering): property names every JavaScript object inherits as filter
// keys, sort keys and values; huge or exotic numbers and far dates in every query parameter;
// exotic numbers in every filter of a list. Each answer is 200 or 400 (or what the operation answers without them), a 400
// is a problem document, it comes quickly, the serving process does not grow, and nothing changes.
import { beforeAll, expect, test } from "bun:test";
import { openApp } from "../support/helpers";
import { appChecksum } from "../support/checksum";
import { pathWith, seedFixtures } from "../support/reliability";
import { operationsOf, type Operation } from "../support/openapi";

const INHERITED = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "prototype"];
const NUMBERS = ["-1", "0", "501", "1e6", "1e308", "-0", "NaN", "Infinity", "0x10", "1e20", " 1", "9007199254740993"];
/** Dates at and past the ends of what date arithmetic represents (reports, ranges). */
const DATES = ["9999-12-31", "0000-01-01", "9999-12-31T23:59:59-14:00", "+275760-09-13T00:00:00Z"];
/** Operations that end the caller's session, or answer only on a WebSocket upgrade. */
const SKIPPED = new Set(["GET /api/auth/refresh", "GET /api/socket"]);
/** Values a required query parameter takes when it is not the one under test (each one the route accepts: GET /api/search needs 2 characters of q). */
const REQUIRED_DEFAULTS: Record<string, string> = { format: "csv", q: "ab" };
/** Slowest acceptable answer, and the most the serving process may grow over one operation's cases. */
const MAX_MS = 2_000;
const MAX_GROWTH = 100 * 1024 * 1024;

const { t, admin } = await openApp();
let ops: Operation[];
let values: Record<string, string>;

beforeAll(async () => {
  ops = await operationsOf(t);
  values = await seedFixtures(t, admin.token, ops, "hq", admin.corpId);
  await t.req("POST", `/api/metric/${values.metric}/value`, { token: admin.token, body: { value: 3 } });
});

const query = (pairs: [string, string][]) => (pairs.length ? `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")}` : "");

test("inherited names and exotic numbers in every query parameter and list filter: 200 or 400, fast, no growth, no change", async () => {
  const failures: string[] = [];
  let requests = 0;
  let operations = 0;
  let slowest = 0;
  let maxGrowth = 0;
  const before = await appChecksum(t);
  for (const op of ops) {
    if (op.method !== "GET" || SKIPPED.has(`${op.method} ${op.path}`)) continue;
    const path = pathWith(op, values);
    if (!path) continue;
    const required = op.requiredQuery.map((name): [string, string] => [name, REQUIRED_DEFAULTS[name] ?? "x"]);
    const baseline = await t.req("GET", path + query(required), { token: admin.token });
    const isList = baseline.status === 200 && baseline.body && typeof baseline.body === "object" && "page" in baseline.body;
    if (!op.query.length && !isList) continue;
    operations++;
    const cases: [string, string][][] = [];
    const withRequired = (pair: [string, string]) => [...required.filter(([name]) => name !== pair[0]), pair];
    for (const name of op.query) for (const v of [...NUMBERS, ...INHERITED, ...DATES]) cases.push(withRequired([name, v]));
    if (isList) {
      for (const name of INHERITED) {
        cases.push(withRequired([name, "1"]), withRequired([name, name]), withRequired(["sort", name]), withRequired(["sort", `-${name}`]));
      }
      // Every scalar field of the items is a filter: exotic numbers in each.
      const item = baseline.body.items?.[0] ?? {};
      for (const [field, value] of Object.entries(item)) {
        if (value !== null && typeof value === "object") continue;
        for (const v of NUMBERS) cases.push(withRequired([field, v]));
      }
    }
    const rssBefore = t.rss();
    for (const pairs of cases) {
      const url = path + query(pairs);
      const timed = async () => {
        const started = performance.now();
        const res = await t.req("GET", url, { token: admin.token });
        return { res, ms: performance.now() - started };
      };
      const { res, ms: first } = await timed();
      // A slow answer is asked twice more and the fastest counts: a costly query is slow every
      // time, a loaded machine's pause hits one request.
      let ms = first;
      for (let i = 0; i < 2 && ms > MAX_MS; i++) ms = Math.min(ms, (await timed()).ms);
      requests++;
      slowest = Math.max(slowest, ms);
      if (res.status !== 400 && res.status !== baseline.status) failures.push(`${url}: ${res.status} (${baseline.status} without it) ${res.text.slice(0, 160)}`);
      else if (res.status === 400 && !String(res.headers.get("content-type")).includes("application/problem+json")) failures.push(`${url}: 400 without a problem document`);
      if (ms > MAX_MS) failures.push(`${url}: ${Math.round(ms)} ms`);
    }
    const growth = t.rss() - rssBefore;
    maxGrowth = Math.max(maxGrowth, growth);
    if (growth > MAX_GROWTH) failures.push(`${op.path}: the process grew by ${Math.round(growth / 1048576)} MB`);
  }
  console.log(`hostile queries: ${operations} operations, ${requests} requests, slowest ${Math.round(slowest)} ms, largest growth ${Math.round(maxGrowth / 1048576)} MB, ${failures.length} failures`);
  expect(failures).toEqual([]);
  expect(operations).toBeGreaterThan(30);
  expect(await appChecksum(t)).toBe(before);
}, 300_000);
