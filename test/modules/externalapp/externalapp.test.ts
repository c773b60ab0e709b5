// External apps, their keys and the links of records to them (routes.md, Registry: ExternalApp).
import { describe, expect, test } from "bun:test";
import { UNKNOWN_ID } from "../../support/helpers";
import { lastSeq, newEvents, registrySuite } from "../../support/registry";
import { scenarios } from "../../support/scenario";

const suite = registrySuite();
const { target, admin, other } = suite;
/** Ids of earlier rows, for the rows after them. */
const seen: Record<string, string> = {};

describe("GET|POST /api/externalapp; GET|PUT|DELETE /api/externalapp/{id}; POST /api/externalapp/{id}/key; POST /api/city/{id}/externalapp; GET /api/city/externalapp/…: external apps, keys and links", () => {
  test("another corporation can neither link a city to an app nor look it up, nor see the app", async () => {
    const { f, token } = suite;
    const c = await f.t.req("POST", "/api/city", { token, body: { name: "Natal", state: "RN", country: "BR" } });
    const o = f.other.token;
    const app = (await f.t.req("POST", "/api/externalapp", { token, body: { name: "iso" } })).body;
    await f.t.req("POST", `/api/city/${c.body.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "N-1" } });
    expect((await f.t.req("POST", `/api/city/${c.body.id}/externalapp`, { token: o, body: { external_app_id: app.id, identity: "N-2" } })).status).toBe(404);
    expect((await f.t.req("GET", "/api/city/externalapp/name/iso/identity/N-1", { token: o })).status).toBe(404);
    expect((await f.t.req("GET", `/api/city/externalapp/id/${app.id}/identity/N-1`, { token: o })).status).toBe(404);
    expect((await f.t.req("GET", `/api/externalapp/${app.id}`, { token: o })).status).toBe(404);
    expect((await f.t.req("PUT", `/api/externalapp/${app.id}`, { token: o, body: { name: "iso" } })).status).toBe(404);
    expect((await f.t.req("GET", "/api/city/externalapp/name/iso/identity/N-1", { token })).status).toBe(200);
    expect((await f.t.req("GET", `/api/city/${c.body.id}`, { token })).status).toBe(200);
  });

  test("create shows the key once; show and list never do; the key works on key rows only", async () => {
    const { f, token, corpId } = suite;
    const mark = lastSeq(f.t, corpId);
    const res = await f.t.req("POST", "/api/externalapp", { token, body: { name: "erp", description: "ERP" } });
    expect(res.status).toBe(200);
    const app = res.body;
    expect(app.api_key).toMatch(new RegExp(`^${corpId}\\.${app.id}\\.[A-Za-z0-9]{40}$`));
    expect(app.key_prefix).toBe(app.api_key.split(".")[2].slice(0, 8));
    expect(app.status).toBe(true);
    const shown = await f.t.req("GET", `/api/externalapp/${app.id}`, { token });
    expect(shown.body.api_key).toBeUndefined();
    expect(shown.text).not.toContain(app.api_key.split(".")[2]);
    const list = await f.t.req("GET", "/api/externalapp", { token });
    expect(list.text).not.toContain(app.api_key.split(".")[2]);
    expect(list.text).not.toContain("key_hash");
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => e.type)).toEqual(["EXTERNALAPP_AFTER_INSERT"]);
    expect(JSON.stringify(ev)).not.toContain(app.api_key.split(".")[2]);
    expect(ev[0].payload.data).toEqual(shown.body);

    const city = await f.t.req("POST", "/api/city", { token, body: { name: "Belém", state: "PA", country: "BR" } });
    const link = await f.t.req("POST", `/api/city/${city.body.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "C-1" } });
    expect(link.status).toBe(200);
    expect(link.body).toMatchObject({ external_app_id: app.id, identity: "C-1", external_app_name: "erp", record_type: "city", record_id: city.body.id });
    const byKey = await f.t.req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { apiKey: app.api_key });
    expect(byKey.status).toBe(200);
    expect(byKey.body).toMatchObject({ id: city.body.id, identity: "C-1", name: "Belém" });
    expect((await f.t.req("GET", `/api/city/externalapp/id/${app.id}/identity/C-1`, { apiKey: app.api_key })).status).toBe(200);
    expect((await f.t.req("GET", `/api/city/externalapp/id/${app.id}/identity/C-1`, { token })).status).toBe(200);
    expect((await f.t.req("GET", `/api/city/externalapp/id/${app.id}/identity/nope`, { token })).status).toBe(404);
    expect((await f.t.req("GET", `/api/city/externalapp/name/ghost/identity/C-1`, { token })).status).toBe(404);
    // not a key row: the key is no credential there
    expect((await f.t.req("GET", `/api/city/${city.body.id}`, { apiKey: app.api_key })).status).toBe(401);
    expect((await f.t.req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { apiKey: app.api_key.slice(0, -1) + (app.api_key.endsWith("x") ? "y" : "x") })).status).toBe(401);

    // another app's key on a route naming this app: 403
    const other = (await f.t.req("POST", "/api/externalapp", { token, body: { name: "crm" } })).body;
    expect((await f.t.req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { apiKey: other.api_key })).status).toBe(403);

    // rotation: the old key stops at once, the new one works
    const rotated = await f.t.req("POST", `/api/externalapp/${app.id}/key`, { token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.api_key).not.toBe(app.api_key);
    expect((await f.t.req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { apiKey: app.api_key })).status).toBe(401);
    expect((await f.t.req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { apiKey: rotated.body.api_key })).status).toBe(200);

    // inactive app: 403
    expect((await f.t.req("PUT", `/api/externalapp/${app.id}`, { token, body: { name: "erp", status: false } })).body.status).toBe(false);
    expect((await f.t.req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { apiKey: rotated.body.api_key })).status).toBe(403);

    // deletion takes the links and the key
    expect((await f.t.req("DELETE", `/api/externalapp/${app.id}`, { token })).status).toBe(204);
    expect((await f.t.req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { token })).status).toBe(404);
    expect((await f.t.req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { apiKey: rotated.body.api_key })).status).toBe(401);
  });

  test("a key of one corporation is not accepted for another's app path", async () => {
    const { f, token, corpId } = suite;
    const app = (await f.t.req("POST", "/api/externalapp", { token, body: { name: "billing" } })).body;
    const forged = app.api_key.replace(corpId, f.otherCorpId);
    expect((await f.t.req("GET", `/api/city/externalapp/name/billing/identity/x`, { apiKey: forged })).status).toBe(401);
  });

  const refused = { expectEvents: [], expectHistory: [] };
  scenarios(target, [
    { name: "arrange: an app", method: "POST", url: "/api/externalapp", token: admin, body: { name: "dup" }, expectStatus: 200, expectEvents: ["EXTERNALAPP_AFTER_INSERT"], expectHistory: [{ target_type: "externalapp", action: "create" }] },
    { name: "a taken name is 409", method: "POST", url: "/api/externalapp", token: admin, body: { name: "dup" }, expectStatus: 409, ...refused },
    { name: "a bad name is 400 naming it", method: "POST", url: "/api/externalapp", token: admin, body: { name: "bad name!" }, expectStatus: 400, expectErrorPaths: ["name"], ...refused },
    { name: "arrange: another app", method: "POST", url: "/api/externalapp", token: admin, body: { name: "mine" }, expectStatus: 200, check: (res) => (seen.mine = res.body.id) },
    { name: "another corporation's app: show 404", method: "GET", url: () => `/api/externalapp/${seen.mine}`, token: other, expectStatus: 404 },
    { name: "another corporation's app: new key 404", method: "POST", url: () => `/api/externalapp/${seen.mine}/key`, token: other, expectStatus: 404, ...refused },
    { name: "another corporation's app: delete 404", method: "DELETE", url: () => `/api/externalapp/${seen.mine}`, token: other, expectStatus: 404, ...refused },
    { name: "an unknown id is 404", method: "GET", url: `/api/externalapp/${UNKNOWN_ID}`, token: admin, expectStatus: 404 },
    { name: "no permission is 403", method: "GET", url: "/api/externalapp", token: suite.nobody, expectStatus: 403 },
    { name: "no token is 401", method: "POST", url: "/api/externalapp", body: { name: "x" }, expectStatus: 401, ...refused },
  ]);

  test("linking: an identity held by another city is 409, linking again replaces, unknown app 400", async () => {
    const { f, token, corpId } = suite;
    const app = (await f.t.req("POST", "/api/externalapp", { token, body: { name: "links" } })).body;
    const a = (await f.t.req("POST", "/api/city", { token, body: { name: "A", state: "S", country: "C" } })).body;
    const b = (await f.t.req("POST", "/api/city", { token, body: { name: "B", state: "S", country: "C" } })).body;
    const mark = lastSeq(f.t, corpId);
    expect((await f.t.req("POST", `/api/city/${a.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "1" } })).status).toBe(200);
    expect((await f.t.req("POST", `/api/city/${a.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "1" } })).status).toBe(200);
    expect((await f.t.req("POST", `/api/city/${b.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "1" } })).status).toBe(409);
    expect((await f.t.req("POST", `/api/city/${a.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "2" } })).body.identity).toBe("2");
    expect((await f.t.req("GET", `/api/city/externalapp/name/links/identity/1`, { token })).status).toBe(404);
    const bad = await f.t.req("POST", `/api/city/${a.id}/externalapp`, { token, body: { external_app_id: UNKNOWN_ID, identity: "1" } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("external_app_id");
    expect(newEvents(f.t, corpId, mark)).toEqual([]);
  });
});
