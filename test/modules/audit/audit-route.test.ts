// GET /api/audit (routes.md, Operator additions): filters, sort, the corporation confinement of
// platform.corp, and the usual 400/401/403.
import { beforeAll, expect, test } from "bun:test";
import { ADMIN, addCorp, addUser, openApp, type User } from "../../support/helpers";

const { t, admin } = await openApp();
let betaId: string;
let corpAdmin: User;

beforeAll(async () => {
  betaId = await addCorp(t, "beta");
  corpAdmin = await addUser(t, admin.corpId, { login: "acme-boss", services: ["platform.corp"] });
  // A failed login in acme, one in beta, and a user created in acme by the super-admin.
  await t.req("POST", "/api/login", { body: { corp: "acme", login: ADMIN.login, password: "wrong-password-123" }, ip: "203.0.113.9" });
  await t.req("POST", "/api/login", { body: { corp: "beta", login: ADMIN.login, password: "wrong-password-123" } });
  await t.req("POST", "/api/user", { token: admin.token, body: { name: "Ann", email: "ann@example.com", login: "ann", password: "ann-password-1" }, headers: { "x-request-id": "req-create-ann" } });
});

const list = (query: string, token = admin.token) => t.req("GET", `/api/audit${query}`, { token });

test("super-admin: every corporation, newest first, with the actor's login", async () => {
  const res = await list("");
  expect(res.status).toBe(200);
  const items = res.body.items as any[];
  expect(items.length).toBe(res.body.total);
  expect(items.map((e) => e.at)).toEqual([...items.map((e) => e.at)].sort().reverse());
  expect(new Set(items.map((e) => e.corp_id))).toContain(betaId);
  const created = items.find((e) => e.action === "user.create");
  expect(created).toMatchObject({ actor_user_id: admin.userId, actor: ADMIN.login, corp_id: admin.corpId, outcome: "success", request_id: "req-create-ann" });
  expect(Object.keys(created).sort()).toEqual(["action", "actor", "actor_user_id", "at", "corp_id", "id", "ip", "outcome", "reason", "request_id", "target"]);
});

test("filters: action, outcome, corp_id, actor_user_id, q, from/to", async () => {
  const failures = (await list("?action=auth.login&outcome=failure")).body.items as any[];
  expect(failures.filter((e) => e.target === ADMIN.login)).toHaveLength(2);
  expect(failures.every((e) => e.reason === "invalid-credentials" && e.actor === null)).toBe(true);
  const beta = (await list(`?corp_id=${betaId}`)).body.items as any[];
  expect(beta.length).toBeGreaterThan(0);
  expect(beta.every((e) => e.corp_id === betaId)).toBe(true);
  const byActor = (await list(`?actor_user_id=${admin.userId}`)).body.items as any[];
  expect(byActor.length).toBeGreaterThan(0);
  expect(byActor.every((e) => e.actor_user_id === admin.userId)).toBe(true);
  // Two users created: the fixture's (helpers create users through the API) and Ann.
  expect((await list("?q=user.cre")).body.items.map((e: any) => e.action)).toEqual(["user.create", "user.create"]);
  expect((await list("?q=203.0.113")).body.total).toBe(0); // q searches action and target only
  const all = (await list("?sort=at")).body.items as any[];
  const middle = all[Math.floor(all.length / 2)].at;
  const later = (await list(`?from=${encodeURIComponent(middle)}&sort=at`)).body.items as any[];
  expect(later.every((e) => e.at >= middle)).toBe(true);
  expect(later[0].at).toBe(middle);
  const earlier = (await list(`?to=${encodeURIComponent(middle)}`)).body.items as any[];
  expect(earlier.every((e) => e.at <= middle)).toBe(true);
  expect(earlier.length + later.length).toBeGreaterThanOrEqual(all.length);
});

test("request_id: the x-request-id the response carried, for public rows too", async () => {
  const res = await t.req("POST", "/api/login", { body: { corp: "acme", login: "nobody", password: "wrong-password-123" } });
  const id = res.headers.get("x-request-id");
  expect(id).toBeTruthy();
  const entry = (await list("?action=auth.login&q=nobody")).body.items[0];
  expect(entry.request_id).toBe(id);
  expect((await list(`?request_id=${id}`)).body.items.map((e: any) => e.target)).toEqual(["nobody"]);
});

test("platform.corp without *: the working corporation's entries only; another corp_id finds nothing", async () => {
  const own = await list("", corpAdmin.token);
  expect(own.status).toBe(200);
  expect(own.body.total).toBeGreaterThan(0);
  expect(own.body.items.every((e: any) => e.corp_id === admin.corpId)).toBe(true);
  const other = await list(`?corp_id=${betaId}`, corpAdmin.token);
  expect(other.status).toBe(200);
  expect(other.body.total).toBe(0);
});

test("400 bad filters and instants, 401 without a token, 403 without platform.corp", async () => {
  for (const [q, field] of [
    ["?from=yesterday", "from"],
    ["?to=2026-01-01T00:00:00", "to"],
    ["?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z", "from"],
    ["?outcome=maybe", "outcome"],
    ["?sort=secret", "sort"],
    ["?password=x", "password"],
    ["?limit=501", "limit"],
  ]) {
    const res = await list(q);
    expect({ q, status: res.status }).toEqual({ q, status: 400 });
    expect(res.body.errors.map((e: any) => e.path)).toContain(field);
  }
  expect((await t.req("GET", "/api/audit")).status).toBe(401);
  const clerk = await addUser(t, admin.corpId, { services: ["platform.city"] });
  expect((await list("", clerk.token)).status).toBe(403);
});

test("CSV of the audit log", async () => {
  const res = await t.req("GET", "/api/audit?outcome=failure", { token: admin.token, headers: { accept: "text/csv" } });
  expect(res.status).toBe(200);
  const lines = res.text.trim().split("\r\n");
  expect(lines[0]).toBe("id,at,actor_user_id,actor,corp_id,action,target,outcome,reason,ip,request_id");
  expect(lines).toHaveLength(4);
});
