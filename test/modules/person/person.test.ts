import { beforeAll, describe, expect, test } from "bun:test";
import { UNKNOWN_ID } from "../../support/helpers";
import { lastSeq, newEvents, registrySuite } from "../../support/registry";
import { scenarios } from "../../support/scenario";

const suite = registrySuite();
let cityId: string;
const { target, admin, other } = suite;
/** Ids of earlier rows, for the rows after them. */
const seen: Record<string, string> = {};

beforeAll(async () => {
  const { f, token } = suite;
  cityId = (await f.t.req("POST", "/api/city", { token, body: { name: "Campinas", state: "SP", country: "BR" } })).body.id;
});

const PERSON_KEYS = ["address", "corporate", "created_at", "display_name", "doc_identity", "email", "id", "name", "phone", "tp_doc_identity", "updated_at"];

describe("GET|POST /api/person; GET|PUT|DELETE /api/person/{id}; POST /api/person/{id}/address; GET /api/person/externalapp/…: persons", () => {
  test("create with an address, show, PUT replaces (omitted → null), address route, delete; events", async () => {
    const { f, token, corpId } = suite;
    const mark = lastSeq(f.t, corpId);
    const body = {
      name: "Maria Silva",
      display_name: "Maria",
      tp_doc_identity: "CPF",
      doc_identity: "123.456.789-00",
      corporate: false,
      email: "maria@example.com",
      phone: "+55 19 99999-0000",
      address: { line1: "Rua A, 10", district: "Centro", postal_code: "13000-000", latitude: -22.9, longitude: -47.06, city_id: cityId },
    };
    const res = await f.t.req("POST", "/api/person", { token, body });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(PERSON_KEYS);
    expect(res.body.address).toEqual({
      line1: "Rua A, 10",
      line2: null,
      district: "Centro",
      postal_code: "13000-000",
      detail: null,
      latitude: -22.9,
      longitude: -47.06,
      city: { id: cityId, name: "Campinas", state: "SP", country: "BR" },
    });
    const id = res.body.id;
    expect((await f.t.req("GET", `/api/person/${id}`, { token })).body).toEqual(res.body);
    const put = await f.t.req("PUT", `/api/person/${id}`, { token, body: { name: "Maria S." } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: "Maria S.", display_name: null, email: null, address: null, corporate: false });
    const addr = await f.t.req("POST", `/api/person/${id}/address`, { token, body: { line1: "Rua B", city_id: cityId } });
    expect(addr.status).toBe(200);
    expect(addr.body.address.line1).toBe("Rua B");
    expect((await f.t.req("DELETE", `/api/person/${id}`, { token })).status).toBe(204);
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => e.type)).toEqual(["PERSON_AFTER_INSERT", "PERSON_AFTER_UPDATE", "PERSON_AFTER_UPDATE", "PERSON_AFTER_DELETE"]);
    expect(ev[0].payload.data).toEqual(res.body);
    expect(ev[2].payload.data).toEqual(addr.body);
    expect(ev.every((e) => e.record_id === id)).toBe(true);
  });

  const refused = { expectEvents: [], expectHistory: [] };
  scenarios(target, [
    { name: "an address without line1 is 400 naming it", method: "POST", url: "/api/person", token: admin, body: () => ({ name: "X", address: { city_id: cityId } }), expectStatus: 400, expectErrorPaths: ["address.line1"], ...refused },
    { name: "a latitude out of range is 400 naming it", method: "POST", url: "/api/person", token: admin, body: () => ({ name: "X", address: { line1: "a", latitude: 91, city_id: cityId } }), expectStatus: 400, expectErrorPaths: ["address.latitude"], ...refused },
    { name: "an unknown city_id is 400 naming it", method: "POST", url: "/api/person", token: admin, body: { name: "X", address: { line1: "a", city_id: UNKNOWN_ID } }, expectStatus: 400, expectErrorPaths: ["address.city_id"], ...refused },
    { name: "no token is 401", method: "GET", url: "/api/person", expectStatus: 401 },
    { name: "no permission is 403", method: "GET", url: "/api/person", token: suite.nobody, expectStatus: 403 },
    { name: "an unknown id is 404", method: "GET", url: `/api/person/${UNKNOWN_ID}`, token: admin, expectStatus: 404 },
    { name: "arrange: a person", method: "POST", url: "/api/person", token: admin, body: { name: "Mine" }, expectStatus: 200, expectEvents: ["PERSON_AFTER_INSERT"], expectHistory: [{ target_type: "person", action: "create" }], check: (res) => (seen.mine = res.body.id) },
    { name: "another corporation: show 404", method: "GET", url: () => `/api/person/${seen.mine}`, token: other, expectStatus: 404 },
    { name: "another corporation: update 404", method: "PUT", url: () => `/api/person/${seen.mine}`, token: other, body: { name: "x" }, expectStatus: 404, ...refused },
    { name: "another corporation: delete 404", method: "DELETE", url: () => `/api/person/${seen.mine}`, token: other, expectStatus: 404, ...refused },
    { name: "another corporation: address 404", method: "POST", url: () => `/api/person/${seen.mine}/address`, token: other, body: () => ({ line1: "x", city_id: cityId }), expectStatus: 404, ...refused },
    { name: "another corporation: external app link 404", method: "POST", url: () => `/api/person/${seen.mine}/externalapp`, token: other, body: { external_app_id: UNKNOWN_ID, identity: "x" }, expectStatus: 404, ...refused },
  ]);

  test("list: q over name/display_name/doc_identity, field filters, paging", async () => {
    const { f, token } = suite;
    await f.t.req("POST", "/api/person", { token, body: { name: "Zeca Lista", doc_identity: "LIST-001", corporate: true } });
    await f.t.req("POST", "/api/person", { token, body: { name: "Yara Lista", display_name: "yarinha" } });
    expect((await f.t.req("GET", "/api/person?q=list-001", { token })).body.items.map((p: any) => p.name)).toEqual(["Zeca Lista"]);
    expect((await f.t.req("GET", "/api/person?q=YARINHA", { token })).body.total).toBe(1);
    expect((await f.t.req("GET", "/api/person?corporate=true", { token })).body.items.map((p: any) => p.name)).toEqual(["Zeca Lista"]);
    const page = await f.t.req("GET", "/api/person?q=lista&limit=1&page=2&sort=name", { token });
    expect(page.body).toMatchObject({ page: 2, limit: 1, total: 2 });
    expect(page.body.items[0].name).toBe("Zeca Lista");
    expect((await f.t.req("GET", "/api/person?address_city_id=" + cityId, { token })).status).toBe(400);
  });

  test("external links, lookups and linked lists, by token and by the app's own key", async () => {
    const { f, token, corpId } = suite;
    const app = (await f.t.req("POST", "/api/externalapp", { token, body: { name: "erp" } })).body;
    const other = (await f.t.req("POST", "/api/externalapp", { token, body: { name: "crm" } })).body;
    const p1 = (await f.t.req("POST", "/api/person", { token, body: { name: "Linked One" } })).body;
    const p2 = (await f.t.req("POST", "/api/person", { token, body: { name: "Linked Two" } })).body;
    await f.t.req("POST", "/api/person", { token, body: { name: "Unlinked" } });
    const mark = lastSeq(f.t, corpId);
    const l1 = await f.t.req("POST", `/api/person/${p1.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "P1" } });
    expect(l1.body).toMatchObject({ record_type: "person", record_id: p1.id, identity: "P1", external_app_name: "erp" });
    await f.t.req("POST", `/api/person/${p2.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "P2" } });
    expect((await f.t.req("POST", `/api/person/${p2.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "P1" } })).status).toBe(409);
    expect(newEvents(f.t, corpId, mark)).toEqual([]);

    const byName = await f.t.req("GET", "/api/person/externalapp/name/erp/identity/P1", { apiKey: app.api_key });
    expect(byName.status).toBe(200);
    expect(byName.body).toMatchObject({ id: p1.id, identity: "P1", name: "Linked One" });
    expect((await f.t.req("GET", `/api/person/externalapp/id/${app.id}/identity/P2`, { token })).body.id).toBe(p2.id);
    expect((await f.t.req("GET", `/api/person/externalapp/id/${app.id}/identity/P3`, { token })).status).toBe(404);
    const list = await f.t.req("GET", `/api/person/externalapp/id/${app.id}`, { apiKey: app.api_key });
    expect(list.status).toBe(200);
    expect(list.body.items.map((p: any) => [p.name, p.identity])).toEqual([
      ["Linked One", "P1"],
      ["Linked Two", "P2"],
    ]);
    expect((await f.t.req("GET", "/api/person/externalapp/name/erp?q=two", { token })).body.items.map((p: any) => p.identity)).toEqual(["P2"]);
    expect((await f.t.req("GET", "/api/person/externalapp/name/ghost", { token })).status).toBe(404);
    expect((await f.t.req("GET", `/api/person/externalapp/id/${UNKNOWN_ID}`, { token })).status).toBe(404);
    expect((await f.t.req("GET", "/api/person/externalapp/name/erp", { apiKey: other.api_key })).status).toBe(403);
    expect((await f.t.req("GET", `/api/person/externalapp/id/${app.id}`, { token: f.other.token })).status).toBe(404);
    expect((await f.t.req("GET", "/api/person/externalapp/name/erp", { token: f.nobody.token })).status).toBe(403);
  });
});

describe("POST /api/person/{id}/externalapp", () => {
  test("a deleted person's links go with it; two persons racing for one identity: one 200, one 409", async () => {
    const { f, token } = suite;
    const app = (await f.t.req("POST", "/api/externalapp", { token, body: { name: "links-race" } })).body;
    const gone = (await f.t.req("POST", "/api/person", { token, body: { name: "Gone" } })).body;
    expect((await f.t.req("POST", `/api/person/${gone.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "G" } })).status).toBe(200);
    expect((await f.t.req("DELETE", `/api/person/${gone.id}`, { token })).status).toBe(204);
    expect((await f.t.req("GET", `/api/person/externalapp/id/${app.id}/identity/G`, { token })).status).toBe(404);
    const heir = (await f.t.req("POST", "/api/person", { token, body: { name: "Heir" } })).body;
    expect((await f.t.req("POST", `/api/person/${heir.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "G" } })).status).toBe(200);

    const a = (await f.t.req("POST", "/api/person", { token, body: { name: "Racer A" } })).body;
    const b = (await f.t.req("POST", "/api/person", { token, body: { name: "Racer B" } })).body;
    const results = await Promise.all(
      [a, b].map((p) => f.t.req("POST", `/api/person/${p.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "R" } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const winner = results.find((r) => r.status === 200)!.body.record_id;
    expect((await f.t.req("GET", `/api/person/externalapp/id/${app.id}/identity/R`, { token })).body.id).toBe(winner);
  });
});
