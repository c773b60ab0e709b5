// source-only: reads the estimated bytes of authorize's kept decisions in the process (keptRadiusBytes).
// What authorize keeps is for the corporation's current state stamp only: once an accounting
// record's commit moves it (SQLite), the next record's read drops the decisions, never read again.
import { afterAll, beforeAll, expect } from "bun:test";
import { makeApp, startAndLogin, testSourceOnly, type TestApp } from "../../support/helpers";
import { TEST_BACKEND } from "../../support/backend";
import { mikrotikLayout, must } from "../../support/isp";
import { keptRadiusBytes } from "../../../src/modules/isp/radius-service";

let t: TestApp;
let admin: { token: string; corpId: string };
const SECRET = "nas-secret-0001";
const NAS_IP = "192.0.2.10";
const headers = { authorization: `Basic ${Buffer.from(`acme:${SECRET}`).toString("base64")}` };

beforeAll(async () => {
  t = await makeApp();
  admin = await startAndLogin(t);
  const fx = await mikrotikLayout(t, admin.token);
  await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-1", ip: NAS_IP, secret: SECRET, layout_id: fx.layout.id });
});
afterAll(() => t.close());

// PostgreSQL's state stamp is not moved by accounting's log-only writes: the decisions stay true there.
(TEST_BACKEND === "pg" ? testSourceOnly.skip : testSourceOnly)("authorize's decisions are dropped once an accounting record has moved the state stamp", async () => {
  const authorize = async (username: string) =>
    (await t.req("GET", `/api/isp/radius/authorize?${new URLSearchParams({ username, password: "x", nas_ip: NAS_IP })}`, { headers })).status;
  // Unknown users: each refusal is kept.
  for (const user of ["ana", "bia", "caio"]) expect(await authorize(user)).toBe(404);
  expect(keptRadiusBytes(admin.corpId).decisions).toBeGreaterThan(0);
  const record = (session: string) =>
    t.req("POST", "/api/isp/radius/accounting", { headers, body: { "User-Name": "ana", "Acct-Session-Id": session, "NAS-IP-Address": NAS_IP, "Acct-Status-Type": "Start" } });
  // The first record is read under the decisions' stamp; its commit moves it; the second's read sees the new one.
  expect((await record("s-1")).status).toBe(204);
  expect((await record("s-2")).status).toBe(204);
  expect(keptRadiusBytes(admin.corpId)).toEqual({ decisions: 0, lookups: expect.any(Number) });
  // Kept again under the new stamp.
  expect(await authorize("ana")).toBe(404);
  expect(keptRadiusBytes(admin.corpId).decisions).toBeGreaterThan(0);
});
