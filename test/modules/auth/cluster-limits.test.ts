// Cluster mode (issue 19): two app nodes over one PostgreSQL database count the per-IP limit of the
// public rows and the login lockout together, as one node does alone.
import { describe, expect, test } from "bun:test";
import { Housekeeping } from "../../../src/modules/retention/housekeeping";
import { addUser, testSourceOnly, type TestApp } from "../../support/helpers";
import { twoNodes } from "../../support/one-database";

const LIMIT = 10;
const limited = { options: { publicAuthLimit: LIMIT } };
const { db, a, b, admin } = await twoNodes({ a: limited, b: limited });

describe("POST /api/corp/check: the per-IP limit holds across app nodes", () => {
  test("requests through both nodes count against one limit; another IP is not limited", async () => {
    // Windows are minutes aligned on the clock: start well inside one.
    const into = Date.now() % 60_000;
    if (into > 45_000) await Bun.sleep(60_000 - into + 100);
    const ip = "198.51.100.77";
    const check = (app: TestApp, from = ip) => app.req("POST", "/api/corp/check", { body: { auth_name: "acme" }, ip: from });
    for (let i = 0; i < LIMIT; i++) expect((await check(i % 2 ? b : a)).status).toBe(200);
    for (const app of [a, b]) {
      const limited = await check(app);
      expect(limited.status).toBe(429);
      expect(limited.body.type).toBe("urn:corpadmin:problem:rate-limited");
      const retry = Number(limited.headers.get("retry-after"));
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(60);
    }
    expect((await check(a, "198.51.100.78")).status).toBe(200);
    expect((await check(b, "198.51.100.78")).status).toBe(200);
    const [row] = await db.sql`SELECT count FROM rate_limit_windows WHERE key = ${ip}`;
    expect(Number(row.count)).toBeGreaterThan(LIMIT);
  });
});

describe("POST /api/corp/check: the per-IP counters are pruned once their minute ended", () => {
  testSourceOnly("housekeeping deletes ended windows and keeps the current one", async () => {
    const now = Date.now();
    const current = Math.floor(now / 60_000) * 60_000;
    await db.sql`INSERT INTO rate_limit_windows (key, window_start, count) VALUES ('192.0.2.250', ${current - 120_000}, 3), ('192.0.2.251', ${current}, 1)`;
    const report = await new Housekeeping(a.ctx, { now: () => now + 61_000 }).runOnce();
    expect(report.pruned.rate_limit_windows).toBeGreaterThanOrEqual(1);
    const left = (await db.sql`SELECT key FROM rate_limit_windows WHERE key IN ('192.0.2.250', '192.0.2.251')`).map((r: { key: string }) => r.key);
    expect(left).toEqual([]);
    await db.sql`INSERT INTO rate_limit_windows (key, window_start, count) VALUES ('192.0.2.252', ${current}, 1)`;
    await new Housekeeping(a.ctx, { now: () => now }).runOnce();
    expect(await db.sql`SELECT key FROM rate_limit_windows WHERE key = '192.0.2.252'`).toHaveLength(1);
  });
});

describe("POST /api/login: the lockout holds across app nodes", () => {
  test("20 parallel wrong logins through both nodes: at most 5 are evaluated, the rest 429; then the right password is 429 on both", async () => {
    const u = await addUser(a, admin.corpId, { login: "lock-two-nodes" });
    // Each login comes from its own address, so the per-IP limit stays out of the way.
    const login = (app: TestApp, password: string, i: number) =>
      app.req("POST", "/api/login", { body: { corp: "acme", login: u.login, password }, ip: `203.0.113.${i + 1}` });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => login(i % 2 ? b : a, "wrong-password", i)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 403).length).toBe(5);
    expect(statuses.filter((s) => s === 429).length).toBe(15);
    const [row] = await db.sql`SELECT failures FROM login_failures WHERE login = ${u.login}`;
    expect(Number(row.failures)).toBe(5);
    for (const [i, app] of [a, b].entries()) {
      const right = await login(app, u.password, 100 + i);
      expect(right.status).toBe(429);
      expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(14 * 60);
    }
  });

  test("a success on one node clears the count the other node added to", async () => {
    const u = await addUser(a, admin.corpId, { login: "reset-two-nodes" });
    let n = 0;
    const login = (app: TestApp, password: string) => app.req("POST", "/api/login", { body: { corp: "acme", login: u.login, password }, ip: `192.0.2.${++n}` });
    for (let i = 0; i < 4; i++) expect((await login(i % 2 ? b : a, "wrong")).status).toBe(403);
    expect((await login(b, u.password)).status).toBe(200);
    expect(await db.sql`SELECT failures FROM login_failures WHERE login = ${u.login}`).toHaveLength(0);
    for (let i = 0; i < 4; i++) expect((await login(i % 2 ? a : b, "wrong")).status).toBe(403);
    expect((await login(a, u.password)).status).toBe(200);
  });
});
