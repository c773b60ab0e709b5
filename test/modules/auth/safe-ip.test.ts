import { beforeAll, describe, expect, test } from "bun:test";
import { ADMIN, addCorp, addMember, addUser, makeApp, startAndLogin, UNKNOWN_ID, openApp, serviceRoles, type User } from "../../support/helpers";

const { t, admin } = await openApp();
let manager: User, plain: User, otherCorp: string;

beforeAll(async () => {
  ({ manager, plain, otherCorp } = await serviceRoles(t, admin.corpId, "platform.auth", "ip-"));
  // Tests talk from 127.0.0.1: without this range, acme's first range would shut them out too.
  expect((await add("acme", { range: "127.0.0.0/8", description: "loopback" }, admin.token)).status).toBe(200);
});

const add = (domain: string, body: unknown, token = manager.token) => t.req("POST", `/api/auth/safe-ip/${domain}`, { token, body });

describe("GET /api/auth/safe-ip; GET|POST /api/auth/safe-ip/{domain}; DELETE /api/auth/safe-ip/{domain}/{id}: safe IP range rows", () => {
  test.each([
    ["10.1.2.3/8", "10.0.0.0/8"],
    ["192.0.2.7", "192.0.2.7/32"],
    ["2001:DB8:0:0::1/48", "2001:db8::/48"],
    ["2001:db8::abcd", "2001:db8::abcd/128"],
    ["::ffff:198.51.100.1", "198.51.100.1/32"],
    ["::ffff:198.51.100.1/120", "198.51.100.0/24"],
  ])("%s is stored as %s", async (input, canonical) => {
    const res = await add("acme", { range: input, description: `from ${input}` });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ domain: "acme", range: canonical, description: `from ${input}` });
    expect(res.headers.get("location")).toBe(`/api/auth/safe-ip/acme/${res.body.id}`);
    expect((await t.req("DELETE", `/api/auth/safe-ip/acme/${res.body.id}`, { token: manager.token })).status).toBe(204);
  });

  test("409 when the canonical range is already there; list, filter and delete", async () => {
    const first = await add("acme", { range: "172.16.0.0/12" });
    expect(first.status).toBe(200);
    const dup = await add("acme", { range: "172.20.1.1/12" });
    expect(dup.status).toBe(409);
    // the same range in another domain is fine
    expect((await add("other-isp", { range: "172.16.0.0/12" }, admin.token)).status).toBe(200);
    const mine = await t.req("GET", "/api/auth/safe-ip/acme", { token: manager.token });
    expect(mine.status).toBe(200);
    expect(mine.body.items.map((r: { range: string }) => r.range)).toEqual(["127.0.0.0/8", "172.16.0.0/12"]);
    const all = await t.req("GET", "/api/auth/safe-ip", { token: admin.token });
    expect(all.body.total).toBe(3);
    expect(all.body.items.map((r: { domain: string }) => r.domain).sort()).toEqual(["acme", "acme", "other-isp"]);
    const filtered = await t.req("GET", "/api/auth/safe-ip?domain=other-isp", { token: admin.token });
    expect(filtered.body.items.map((r: { domain: string }) => r.domain)).toEqual(["other-isp"]);
    expect((await t.req("GET", "/api/auth/safe-ip?q=172.16", { token: admin.token })).body.total).toBe(2);
    expect((await t.req("DELETE", `/api/auth/safe-ip/acme/${first.body.id}`, { token: manager.token })).status).toBe(204);
    expect((await t.req("DELETE", `/api/auth/safe-ip/acme/${first.body.id}`, { token: manager.token })).status).toBe(404);
    const others = (await t.req("GET", "/api/auth/safe-ip/other-isp", { token: admin.token })).body.items;
    expect((await t.req("DELETE", `/api/auth/safe-ip/acme/${others[0].id}`, { token: admin.token })).status).toBe(404);
    expect((await t.req("DELETE", `/api/auth/safe-ip/other-isp/${others[0].id}`, { token: admin.token })).status).toBe(204);
  });

  test("400 naming the field", async () => {
    for (const range of ["not-an-ip", "10.0.0.0/33", "2001:db8::/129", "", "10.0.0.0/8/8"]) {
      const res = await add("acme", { range });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe("range");
    }
    const long = await add("acme", { range: "10.0.0.0/8", description: "x".repeat(201) });
    expect(long.status).toBe(400);
    expect(long.body.errors[0].path).toBe("description");
  });

  test("another domain is 404 unless *; unknown domain 404; 403 without platform.auth; 401", async () => {
    expect((await t.req("GET", "/api/auth/safe-ip/other-isp", { token: manager.token })).status).toBe(404);
    expect((await add("other-isp", { range: "10.0.0.0/8" })).status).toBe(404);
    expect((await t.req("DELETE", `/api/auth/safe-ip/other-isp/${UNKNOWN_ID}`, { token: manager.token })).status).toBe(404);
    expect((await t.req("GET", "/api/auth/safe-ip/nowhere", { token: admin.token })).status).toBe(404);
    expect((await t.req("DELETE", `/api/auth/safe-ip/acme/${UNKNOWN_ID}`, { token: manager.token })).status).toBe(404);
    expect((await t.req("GET", "/api/auth/safe-ip/acme", { token: plain.token })).status).toBe(403);
    expect((await add("acme", { range: "10.0.0.0/8" }, plain.token)).status).toBe(403);
    expect((await t.req("GET", "/api/auth/safe-ip", { token: manager.token })).status).toBe(403);
    expect((await t.req("GET", "/api/auth/safe-ip")).status).toBe(401);
    expect((await t.req("GET", "/api/auth/safe-ip/acme")).status).toBe(401);
    expect((await t.req("POST", "/api/auth/safe-ip/acme", { body: { range: "10.0.0.0/8" } })).status).toBe(401);
  });
});

describe("POST /api/login; GET /api/auth/refresh; POST /api/auth/corp: safe IP range enforcement", () => {
  let corpId: string;
  let user: User;
  const loginFrom = (ip: string, password = user.password, l = user.login) => t.req("POST", "/api/login", { body: { corp: "fenced", login: l, password }, ip });

  beforeAll(async () => {
    corpId = await addCorp(t, "fenced");
    user = await addUser(t, corpId, { login: "fenced-user", services: ["platform.auth"] });
    expect((await add("fenced", { range: "10.0.0.0/8" }, admin.token)).status).toBe(200);
    expect((await add("fenced", { range: "2001:db8::/32" }, admin.token)).status).toBe(200);
  });

  test.each([
    ["10.20.30.40", 200],
    ["::ffff:10.20.30.40", 200],
    ["2001:db8:1::5", 200],
    ["192.168.1.1", 403],
    ["::ffff:192.168.1.1", 403],
    ["2001:db9::1", 403],
  ])("login from %s: %d", async (ip, status) => {
    const res = await loginFrom(ip as string);
    expect(res.status).toBe(status as number);
    if (status === 403) expect(res.body.type).toBe("urn:corpadmin:problem:ip-not-allowed");
  });

  test("credentials are checked first: a wrong password from outside is invalid-credentials", async () => {
    const res = await loginFrom("192.168.1.1", "wrong-password");
    expect(res.body.type).toBe("urn:corpadmin:problem:invalid-credentials");
  });

  test("a token carried to another network is refused on every request, and refresh too", async () => {
    const token = (await loginFrom("10.0.0.1")).body.access_token;
    expect((await t.req("GET", "/api/auth/credentials", { token, ip: "10.9.9.9" })).status).toBe(200);
    expect((await t.req("GET", "/api/auth/credentials", { token, ip: "::ffff:10.9.9.9" })).status).toBe(200);
    const outside = await t.req("GET", "/api/auth/credentials", { token, ip: "203.0.113.5" });
    expect(outside.status).toBe(403);
    expect(outside.body.type).toBe("urn:corpadmin:problem:ip-not-allowed");
    expect((await t.req("GET", "/api/auth/safe-ip/fenced", { token, ip: "2001:db9::1" })).status).toBe(403);
    expect((await t.req("GET", "/api/auth/refresh", { token, ip: "203.0.113.5" })).status).toBe(403);
  });

  test("changing into the corporation checks the ranges too", async () => {
    const both = await addUser(t, otherCorp, { login: "fence-hopper" });
    await addMember(t, corpId, both.userId);
    const fromOutside = await t.req("POST", "/api/auth/corp", { token: both.token, body: { corp: "fenced" }, ip: "203.0.113.5" });
    expect(fromOutside.status).toBe(403);
    expect(fromOutside.body.type).toBe("urn:corpadmin:problem:ip-not-allowed");
    expect((await t.req("POST", "/api/auth/corp", { token: both.token, body: { corp: "fenced" }, ip: "10.1.1.1" })).status).toBe(200);
  });

  test("super_admin is exempt; a corporation without ranges accepts any address", async () => {
    const res = await t.req("POST", "/api/login", { body: { corp: "fenced", login: ADMIN.login, password: ADMIN.password }, ip: "203.0.113.5" });
    expect(res.status).toBe(200);
    expect((await t.req("GET", "/api/auth/credentials", { token: res.body.access_token, ip: "198.51.100.1" })).status).toBe(200);
    const open = await addUser(t, otherCorp, { login: "open-user" });
    expect((await t.req("GET", "/api/auth/credentials", { token: open.token, ip: "203.0.113.5" })).status).toBe(200);
  });

  test("removing a range takes effect on the next request", async () => {
    const corp2 = await addCorp(t, "fenced-two");
    const u = await addUser(t, corp2, { login: "fenced-two-user" });
    const range = await add("fenced-two", { range: "10.0.0.0/8" }, admin.token);
    expect((await t.req("GET", "/api/auth/credentials", { token: u.token, ip: "192.0.2.1" })).status).toBe(403);
    await t.req("DELETE", `/api/auth/safe-ip/fenced-two/${range.body.id}`, { token: admin.token });
    expect((await t.req("GET", "/api/auth/credentials", { token: u.token, ip: "192.0.2.1" })).status).toBe(200);
  });
});

describe("POST /api/auth/safe-ip/{domain}: safe IP ranges across a restart", () => {
  test("ranges stored before the app started are enforced from its first request", async () => {
    const first = await makeApp();
    const boss = await startAndLogin(first);
    const corp = await addCorp(first, "fenced-restart");
    const u = await addUser(first, corp, { login: "fenced-restart-user" });
    expect((await first.req("POST", "/api/auth/safe-ip/fenced-restart", { token: boss.token, body: { range: "10.0.0.0/8" } })).status).toBe(200);
    await first.close(false);
    const again = await makeApp({ dir: first.dir });
    try {
      const outside = await again.req("GET", "/api/auth/credentials", { token: u.token, ip: "192.0.2.1" });
      expect(outside.status).toBe(403);
      expect(outside.body.type).toBe("urn:corpadmin:problem:ip-not-allowed");
      expect((await again.req("GET", "/api/auth/credentials", { token: u.token, ip: "10.1.2.3" })).status).toBe(200);
    } finally {
      await again.close();
    }
  });
});
