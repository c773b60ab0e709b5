// A missing required enumerated field is refused, never filled in (Elysia's UnionEnum would fill
// it with its first member; src/lib/schemas.ts `Enum` refuses it).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeApp, startAndLogin, type TestApp } from "../../support/helpers";

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await makeApp();
  token = (await startAndLogin(t)).token;
});
afterAll(() => t.close());

test.each([
  ["/api/qrcode", { name: "no kind", content: "hello" }, "kind"],
  ["/api/isp/radius-attribute", { name: "Mikrotik-Rate-Limit" }, "type"],
  ["/api/qrcode", { name: "bad kind", kind: "moving", content: "hello" }, "kind"],
])("POST %s without a valid enumerated field is 400 naming it", async (path, body, field) => {
  const res = await t.req("POST", path, { token, body });
  expect(res.status).toBe(400);
  expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
});
