import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ADMIN, makeApp, type TestApp } from "../../support/helpers";
import { TEST_BACKEND } from "../../support/backend";

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(() => t.close());

const body = { user: ADMIN, corp: { auth_name: "first-isp", company_name: "First ISP", timezone: "America/Sao_Paulo" } };

test("invalid bodies are 400 naming the fields, and start nothing", async () => {
  const res = await t.req("POST", "/api/start", {
    body: { user: { ...ADMIN, password: "short", email: "not-an-email" }, corp: { auth_name: "Bad Name!", company_name: "" } },
  });
  expect(res.status).toBe(400);
  const paths = res.body.errors.map((e: { path: string }) => e.path).sort();
  expect(paths).toEqual(["corp.auth_name", "corp.company_name", "user.email", "user.password"]);
  const tz = await t.req("POST", "/api/start", { body: { ...body, corp: { ...body.corp, timezone: "Mars/Olympus" } } });
  expect(tz.status).toBe(400);
  expect(tz.body.errors[0].path).toBe("timezone");
  expect(t.sql().query("SELECT count(*) AS n FROM users").get()).toEqual({ n: 0 });
  expect(t.sql().query("SELECT count(*) AS n FROM corporations").get()).toEqual({ n: 0 });
});

test("creates the built-in super-admin and the first corporation with its database", async () => {
  const res = await t.req("POST", "/api/start", { body });
  expect(res.status).toBe(200);
  const { user, corp } = res.body;
  expect(user).toMatchObject({ name: ADMIN.name, email: ADMIN.email, login: ADMIN.login, super_admin: true, builtin: true, status: true, two_factor_required: false });
  expect(user.password).toBeUndefined();
  expect(user.password_hash).toBeUndefined();
  expect(user.corps).toEqual({ "first-isp": { id: corp.id, company_name: "First ISP" } });
  expect(corp).toMatchObject({ auth_name: "first-isp", company_name: "First ISP", timezone: "America/Sao_Paulo", status: "ENABLED" });
  expect(corp.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/);
  // Its database file (PostgreSQL: its rows live in the shared tables; nothing to create).
  if (TEST_BACKEND === "sqlite") expect(existsSync(join(t.dir, "corps", `${corp.id}.db`))).toBe(true);
  const enabled = t.sql().query("SELECT count(*) AS n FROM corp_services WHERE corp_id = ?").get(corp.id) as { n: number };
  expect(enabled.n).toBe(16);
  const login = await t.req("POST", "/api/login", { body: { corp: "first-isp", login: ADMIN.login, password: ADMIN.password } });
  expect(login.status).toBe(200);
});

test("a second start is 409", async () => {
  const res = await t.req("POST", "/api/start", { body: { ...body, corp: { auth_name: "another", company_name: "Another" } } });
  expect(res.status).toBe(409);
  expect(res.body.type).toBe("urn:corpadmin:problem:conflict");
});
