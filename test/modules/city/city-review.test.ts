// Conformance review of the city rows: a city used by any address is a 409 on delete.
import { describe, expect, test } from "bun:test";
import { openApp } from "../../support/helpers";

const { t, admin } = await openApp();

describe("DELETE /api/city/{id}", () => {
  test("a city used by a point of presence's address is 409, nothing deleted and no event", async () => {
    const city = (await t.req("POST", "/api/city", { token: admin.token, body: { name: "Valinhos", state: "SP", country: "BR" } })).body;
    const pop = await t.req("POST", "/api/isp/pop", { token: admin.token, body: { name: "pop-valinhos", address: { line1: "Rua 1", city_id: city.id } } });
    expect(pop.status).toBe(200);
    const db = t.sql(admin.corpId);
    const events = () => (db.query("SELECT count(*) AS n FROM events").get() as { n: number }).n;
    const before = events();
    const res = await t.req("DELETE", `/api/city/${city.id}`, { token: admin.token });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe("urn:corpadmin:problem:conflict");
    expect(res.body.detail).toMatch(/used by an address/);
    expect((await t.req("GET", `/api/city/${city.id}`, { token: admin.token })).status).toBe(200);
    expect(events()).toBe(before);
    // Once the POP's address moves away the city can go.
    await t.req("PUT", `/api/isp/pop/${pop.body.id}`, { token: admin.token, body: { name: "pop-valinhos" } });
    expect((await t.req("DELETE", `/api/city/${city.id}`, { token: admin.token })).status).toBe(204);
  });
});
