// Conformance review of the contract rows: what an ERP integrator relies on beyond the module's own tests.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, startAndLogin, type TestApp } from "../helpers";
import { contractBody } from "../fixtures/contract-body";

let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
let app: { id: string; api_key: string };
beforeAll(async () => {
  t = await makeApp();
  admin = await startAndLogin(t);
  app = (await t.req("POST", "/api/externalapp", { token: admin.token, body: { name: "erp" } })).body;
});
afterAll(() => t.close());

describe("contract upsert from an external application", () => {
  test("a creating upsert sends Location like every create; an updating one does not", async () => {
    const created = await t.req("POST", "/api/contract/create/externalapp/name/erp", { apiKey: app.api_key, body: contractBody(1) });
    expect(created.status).toBe(200);
    expect(created.headers.get("location")).toBe(`/api/contract/${created.body.id}`);
    const updated = await t.req("POST", `/api/contract/create/externalapp/id/${app.id}`, { apiKey: app.api_key, body: { ...contractBody(1), total_value: 5 } });
    expect(updated.status).toBe(200);
    expect(updated.body.id).toBe(created.body.id);
    expect(updated.headers.get("location")).toBeNull();
  });
});
