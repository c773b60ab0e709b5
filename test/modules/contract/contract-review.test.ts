// Conformance review of the contract rows: what an ERP integrator relies on beyond the module's own tests.
import { beforeAll, describe, expect, test } from "bun:test";
import { openApp } from "../../support/helpers";
import { contractBody } from "../../support/contract-body";

const { t, admin } = await openApp();
let app: { id: string; api_key: string };
beforeAll(async () => {
  app = (await t.req("POST", "/api/externalapp", { token: admin.token, body: { name: "erp" } })).body;
});

describe("POST /api/contract/create/externalapp/name/{externalAppName}|id/{externalAppId}: contract upsert from an external application", () => {
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

describe("POST /api/contract; POST /api/contract/{id}/config: optional fields sent as null (routes.md Notation: `?` is absent or null)", () => {
  async function contract(number: string) {
    const city = (await t.req("POST", "/api/city", { token: admin.token, body: { name: `City ${number}`, state: "SP", country: "BR" } })).body;
    const person = (await t.req("POST", "/api/person", { token: admin.token, body: { name: `Person ${number}` } })).body;
    const res = await t.req("POST", "/api/contract", {
      token: admin.token,
      body: { customer_id: person.id, number, start_date: "2025-01-01", total_value: 1, address: { line1: "R", city_id: city.id } },
    });
    expect(res.status).toBe(200);
    return res.body;
  }

  test("POST /api/contract/{id}/config with password null keeps the password, as when left out", async () => {
    const c = await contract("CFG-NULL");
    const set = await t.req("POST", `/api/contract/${c.id}/config`, { token: admin.token, body: { username: "cfg-null", password: "first-pass" } });
    expect(set.body.config.password).toBe("first-pass");
    const res = await t.req("POST", `/api/contract/${c.id}/config`, { token: admin.token, body: { username: "cfg-null", password: null, max_upload: "10M" } });
    expect(res.status).toBe(200);
    expect(res.body.config.password).toBe("********");
    expect(res.body.config.max_upload).toBe("10M");
    // The stored password is unchanged: RADIUS still sees it.
    const { findContractByUsername } = await import("../../../src/modules/contract");
    const { drizzle } = await import("drizzle-orm/bun-sqlite");
    const { handleOf } = await import("../../../src/db/sqlite");
    expect((await findContractByUsername(handleOf(drizzle(t.sql(admin.corpId))), "cfg-null"))!.config.password).toBe("first-pass");
  });

  test("PATCH /api/contract/{id}/flags with add or remove null treats it as empty", async () => {
    const c = await contract("FLG-NULL");
    await t.req("POST", "/api/classification", { token: admin.token, body: { name: "null-flag" } });
    const add = await t.req("PATCH", `/api/contract/${c.id}/flags`, { token: admin.token, body: { add: ["null-flag"], remove: null } });
    expect(add.status).toBe(200);
    expect(add.body.flags).toEqual(["null-flag"]);
    const remove = await t.req("PATCH", `/api/contract/${c.id}/flags`, { token: admin.token, body: { add: null, remove: ["null-flag"] } });
    expect(remove.status).toBe(200);
    expect(remove.body.flags).toEqual([]);
  });
});
