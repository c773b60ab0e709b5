// Every operation of the OpenAPI document, checked from the outside: no token → 401, a token
// without the permission → 403, a malformed path id → 404. New routes are covered automatically.
import { beforeAll, expect, test } from "bun:test";
import { addUser, UNKNOWN_ID, openApp, type User } from "../support/helpers";
import { fill, operationsOf, type Operation } from "../support/openapi";

const { t, admin } = await openApp();
let nobody: User;
let ops: Operation[];

beforeAll(async () => {
  nobody = await addUser(t, admin.corpId, { login: "no-permissions" });
  ops = await operationsOf(t);
});

// Operations that end the caller's session when they succeed: the admin logs in again after them.
const REVOKING = new Set(["DELETE /api/logout", "GET /api/auth/refresh", "POST /api/auth/corp"]);
async function afterCall(op: Operation) {
  if (!REVOKING.has(`${op.method} ${op.path}`)) return;
  const res = await t.req("POST", "/api/login", { body: { corp: "acme", login: "admin", password: "admin-password-1" } });
  admin.token = res.body.access_token;
}

const plausible = (op: Operation): Record<string, string> => Object.fromEntries(op.params.map((p) => [p.name, p.uuid ? UNKNOWN_ID : "probe"]));
const bodyFor = (op: Operation) => (op.hasBody || ["POST", "PUT", "PATCH"].includes(op.method) ? {} : undefined);

test("route matrix: 401 without a credential, 403 without the permission, 404 for a malformed id", async () => {
  let requests = 0;
  const failures: string[] = [];
  const expectStatus = async (op: Operation, label: string, path: string, expected: number[], token?: string) => {
    requests++;
    const res = await t.req(op.method, path, { token, body: bodyFor(op) });
    if (!expected.includes(res.status)) failures.push(`${op.method} ${op.path} [${label}]: ${res.status}, expected ${expected.join("/")}`);
    else if (res.status >= 400 && !String(res.headers.get("content-type")).includes("application/problem+json")) {
      failures.push(`${op.method} ${op.path} [${label}]: ${res.status} without a problem document`);
    }
  };
  const guarded = ops.filter((op) => op.guard);
  for (const op of guarded) {
    const path = fill(op.path, plausible(op));
    await expectStatus(op, "no token", path, [401]);
    if (op.guard!.guard !== "token") await expectStatus(op, "no permission", path, [403], nobody.token);
    const uuids = op.params.filter((p) => p.uuid);
    if (uuids.length) {
      const malformed = fill(op.path, { ...plausible(op), ...Object.fromEntries(uuids.map((p) => [p.name, "not-a-uuid"])) });
      await expectStatus(op, "malformed id", malformed, [404], admin.token);
      await afterCall(op);
    }
  }
  console.log(`route matrix: ${ops.length} operations (${guarded.length} guarded), ${requests} requests, ${failures.length} failures`);
  expect(failures).toEqual([]);
  expect(guarded.length).toBeGreaterThan(0);
});

test("no operation answers 5xx to an unknown id or a junk body", async () => {
  const failures: string[] = [];
  for (const op of ops) {
    if (op.path === "/api/start") continue; // would start the instance; covered by its own tests
    for (const body of [{}, { id: "x", __proto__: { polluted: true } }, [], "text", 12]) {
      const res = await t.req(op.method, fill(op.path, plausible(op)), { token: admin.token, body: ["POST", "PUT", "PATCH"].includes(op.method) ? body : undefined });
      if (res.status >= 500) failures.push(`${op.method} ${op.path}: ${res.status} ${res.text.slice(0, 200)}`);
      await afterCall(op);
    }
  }
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(failures).toEqual([]);
});

test("SQL injection probes in q, sort, filters and string path parameters change nothing", async () => {
  const failures: string[] = [];
  const before = t.sql().query("SELECT count(*) AS n FROM sqlite_master").get();
  const probes = ["' OR '1'='1", "x'; DROP TABLE users; --", "\" OR 1=1 --", "%' --", "1) UNION SELECT * FROM sessions --"];
  for (const op of ops.filter((o) => o.method === "GET" && o.guard)) {
    const stringParams = op.params.filter((p) => !p.uuid);
    if (op.params.length === 0) {
      for (const probe of probes) {
        const q = await t.req("GET", `${op.path}?q=${encodeURIComponent(probe)}`, { token: admin.token });
        await afterCall(op);
        if (q.status >= 500 || (q.status === 200 && Array.isArray(q.body?.items) && q.body.items.length > 0 && q.body.total !== undefined && q.body.total > 0 && !JSON.stringify(q.body.items).includes(probe))) {
          failures.push(`${op.path}?q=${probe}: ${q.status} ${q.text.slice(0, 120)}`);
        }
        const sort = await t.req("GET", `${op.path}?sort=${encodeURIComponent(probe)}`, { token: admin.token });
        await afterCall(op);
        if (sort.status >= 500 || sort.status === 200 && op.path !== "/api/openapi.json" && sort.body?.items !== undefined && sort.body?.page !== undefined) failures.push(`${op.path}?sort=${probe}: ${sort.status}`);
        const filter = await t.req("GET", `${op.path}?id=${encodeURIComponent(probe)}`, { token: admin.token });
        await afterCall(op);
        if (filter.status >= 500 || (filter.status === 200 && (filter.body?.total ?? 0) > 0)) failures.push(`${op.path}?id=${probe}: ${filter.status}`);
      }
    } else if (stringParams.length) {
      for (const probe of probes) {
        const values = Object.fromEntries(op.params.map((p) => [p.name, p.uuid ? UNKNOWN_ID : probe]));
        const res = await t.req("GET", fill(op.path, values), { token: admin.token });
        if (res.status >= 500 || res.status === 200) failures.push(`${fill(op.path, values)}: ${res.status}`);
      }
    }
  }
  expect(failures).toEqual([]);
  expect(t.sql().query("SELECT count(*) AS n FROM sqlite_master").get()).toEqual(before);
  expect((await t.req("GET", "/api/auth/credentials", { token: admin.token })).status).toBe(200);
});

test("another corporation's real ids are 404 from a fully permitted user of this corporation", async () => {
  const { seedFixtures, pathWith } = await import("../support/reliability");
  const { addCorp } = await import("../support/helpers");
  const ALL = ["auth", "corp", "user", "workgroup", "service", "server", "core", "city", "externalapp", "person", "product", "contract", "webhook", "metric", "isp", "qrcode"].map((a) => `platform.${a}`);
  const theirs = await seedFixtures(t, admin.token, ops, "a", admin.corpId);
  const other = await addCorp(t, "rival-isp");
  const rival = await addUser(t, other, { login: "rival-admin", services: ALL });
  const failures: string[] = [];
  const uncovered: string[] = [];
  let tried = 0;
  for (const op of ops) {
    const g = op.guard;
    if (!g || g.guard === "*" || g.guard === "self" || op.params.length === 0) continue;
    if (REVOKING.has(`${op.method} ${op.path}`)) continue;
    const path = pathWith(op, theirs);
    if (!path) {
      uncovered.push(`${op.method} ${op.path}`);
      continue;
    }
    tried++;
    const res = await t.req(op.method, path, { token: rival.token, body: bodyFor(op) });
    // Corporation-scoped platform rows may refuse outright (403) instead of hiding (404).
    const acceptable = [404, ...(op.hasBody || op.requiredQuery.length ? [400] : []), ...(op.path.startsWith("/api/corp/") ? [403] : [])];
    if (!acceptable.includes(res.status)) failures.push(`${op.method} ${path}: ${res.status} ${res.text.slice(0, 120)}`);
  }
  console.log(`other-tenant ids: ${tried} operations tried, ${uncovered.length} without a fixture, ${failures.length} failures`);
  if (uncovered.length) console.log(`  without a fixture: ${uncovered.join(", ")}`);
  expect(failures).toEqual([]);
  // A new route with a path id needs a fixture in fixtures.ts: then it is covered here too.
  expect(uncovered).toEqual([]);
  expect(tried).toBeGreaterThan(0);
});

test("a method a path does not have is 405 with Allow listing the ones it has; an unknown path stays 404", async () => {
  const methods = new Map<string, { sample: string; methods: Set<string> }>();
  for (const op of ops) {
    const entry = methods.get(op.path) ?? { sample: fill(op.path, plausible(op)), methods: new Set<string>() };
    entry.methods.add(op.method);
    methods.set(op.path, entry);
  }
  const failures: string[] = [];
  for (const [path, { sample, methods: has }] of methods) {
    const wrong = ["DELETE", "PATCH", "PUT", "POST", "GET"].find((m) => !has.has(m));
    if (!wrong) continue;
    const res = await t.req(wrong, sample, { token: admin.token, body: wrong === "GET" ? undefined : {} });
    // Another route may own that method on a path of the same shape (GET /api/user/{id} vs
    // GET /api/user/socket): only a 404 "Route not found" or a 405 without Allow is a failure.
    if (res.status === 405) {
      const allow = (res.headers.get("allow") ?? "").split(", ");
      if (![...has].every((m) => allow.includes(m))) failures.push(`${wrong} ${path}: Allow ${res.headers.get("allow")} lacks one of ${[...has].join(", ")}`);
      if (res.body.type !== "urn:corpadmin:problem:method-not-allowed") failures.push(`${wrong} ${path}: 405 without its problem type`);
    } else if (res.status === 404 && res.body?.detail === "Route not found") failures.push(`${wrong} ${path}: 404 Route not found`);
  }
  expect(failures).toEqual([]);
  const health = await t.req("DELETE", "/api/health");
  expect(health.status).toBe(405);
  expect(health.headers.get("allow")).toBe("GET, HEAD");
  expect(health.headers.get("content-type")).toContain("application/problem+json");
  const city = await t.req("PATCH", "/api/city", { token: admin.token, body: {} });
  expect(city.status).toBe(405);
  expect(city.headers.get("allow")).toBe("GET, HEAD, POST");
  expect((await t.req("GET", "/api/no-such-thing")).status).toBe(404);
  expect((await t.req("DELETE", "/api/no-such-thing/at/all")).status).toBe(404);
});
