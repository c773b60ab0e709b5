import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sourceOnly, UNKNOWN_ID } from "../../support/helpers";
import { lastSeq, newEvents, registryApp } from "../../support/registry";
import { waitFor } from "../../support/wait";

let f: Awaited<ReturnType<typeof registryApp>>;
let token: string;
let corpId: string;
const req = (...a: Parameters<typeof f.t.req>) => f.t.req(...a);

beforeAll(async () => {
  f = await registryApp();
  token = f.admin.token;
  corpId = f.admin.corpId;
});
afterAll(() => f.t.close());

describe("GET|POST /api/city; GET|PUT|DELETE /api/city/{id}; POST /api/city/{id}/externalapp; GET /api/city/externalapp/…: cities", () => {
  test("create, show, list with q/filters/sort, update, delete, with exactly their events", async () => {
    const mark = lastSeq(f.t, corpId);
    const res = await req("POST", "/api/city", { token, body: { name: "Campinas", state: "SP", country: "BR" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("location")).toBe(`/api/city/${res.body.id}`);
    expect(Object.keys(res.body).sort()).toEqual(["country", "created_at", "id", "name", "state", "updated_at"]);
    const id = res.body.id;
    await req("POST", "/api/city", { token, body: { name: "Curitiba", state: "PR", country: "BR" } });
    expect((await req("GET", `/api/city/${id}`, { token })).body.name).toBe("Campinas");
    const list = await req("GET", "/api/city?q=camp", { token });
    expect(list.body.items.map((c: any) => c.name)).toEqual(["Campinas"]);
    expect((await req("GET", "/api/city?state=PR", { token })).body.total).toBe(1);
    expect((await req("GET", "/api/city?sort=-name", { token })).body.items[0].name).toBe("Curitiba");
    expect((await req("GET", "/api/city?nope=1", { token })).status).toBe(400);
    const upd = await req("PUT", `/api/city/${id}`, { token, body: { name: "Campinas", state: "São Paulo", country: "BR" } });
    expect(upd.status).toBe(200);
    expect(upd.body.state).toBe("São Paulo");
    expect((await req("DELETE", `/api/city/${id}`, { token })).status).toBe(204);
    expect((await req("GET", `/api/city/${id}`, { token })).status).toBe(404);
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => e.type)).toEqual(["CITY_AFTER_INSERT", "CITY_AFTER_INSERT", "CITY_AFTER_UPDATE", "CITY_AFTER_DELETE"]);
    expect(ev[0].payload.data).toEqual(res.body);
    expect(ev[2].payload.data).toEqual(upd.body);
    expect(ev[3].payload.data).toEqual(upd.body);
    expect(ev[3].payload.type).toBe("CITY_AFTER_DELETE");
  });

  test("409 on a taken (name, state, country), 400 naming a missing field, 401, 403, 404", async () => {
    await req("POST", "/api/city", { token, body: { name: "Recife", state: "PE", country: "BR" } });
    const mark = lastSeq(f.t, corpId);
    expect((await req("POST", "/api/city", { token, body: { name: "Recife", state: "PE", country: "BR" } })).status).toBe(409);
    const bad = await req("POST", "/api/city", { token, body: { name: "X", country: "BR" } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: any) => e.path)).toContain("state");
    expect((await req("GET", "/api/city")).status).toBe(401);
    expect((await req("GET", "/api/city", { token: f.nobody.token })).status).toBe(403);
    expect((await req("GET", `/api/city/${UNKNOWN_ID}`, { token })).status).toBe(404);
    expect((await req("GET", `/api/city/not-a-uuid`, { token })).status).toBe(404);
    expect(newEvents(f.t, corpId, mark)).toEqual([]);
  });

  test("a city of another corporation is 404 on every city route", async () => {
    const c = await req("POST", "/api/city", { token, body: { name: "Natal", state: "RN", country: "BR" } });
    const o = f.other.token;
    expect((await req("GET", `/api/city/${c.body.id}`, { token: o })).status).toBe(404);
    expect((await req("PUT", `/api/city/${c.body.id}`, { token: o, body: { name: "a", state: "b", country: "c" } })).status).toBe(404);
    expect((await req("DELETE", `/api/city/${c.body.id}`, { token: o })).status).toBe(404);
    expect((await req("GET", "/api/city", { token: o })).body.total).toBe(0);
    const app = (await req("POST", "/api/externalapp", { token, body: { name: "iso" } })).body;
    await req("POST", `/api/city/${c.body.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "N-1" } });
    expect((await req("POST", `/api/city/${c.body.id}/externalapp`, { token: o, body: { external_app_id: app.id, identity: "N-2" } })).status).toBe(404);
    expect((await req("GET", "/api/city/externalapp/name/iso/identity/N-1", { token: o })).status).toBe(404);
    expect((await req("GET", `/api/city/externalapp/id/${app.id}/identity/N-1`, { token: o })).status).toBe(404);
    expect((await req("GET", `/api/externalapp/${app.id}`, { token: o })).status).toBe(404);
    expect((await req("PUT", `/api/externalapp/${app.id}`, { token: o, body: { name: "iso" } })).status).toBe(404);
    expect((await req("GET", "/api/city/externalapp/name/iso/identity/N-1", { token })).status).toBe(200);
    expect((await req("GET", `/api/city/${c.body.id}`, { token })).status).toBe(200);
  });

  test("delete of a city used by an address is 409", async () => {
    const c = await req("POST", "/api/city", { token, body: { name: "Olinda", state: "PE", country: "BR" } });
    await req("POST", "/api/person", { token, body: { name: "Ana", address: { line1: "Rua 1", city_id: c.body.id } } });
    const del = await req("DELETE", `/api/city/${c.body.id}`, { token });
    expect(del.status).toBe(409);
  });
});

describe("GET|POST /api/externalapp; GET|PUT|DELETE /api/externalapp/{id}; POST /api/externalapp/{id}/key: external apps and keys", () => {
  test("create shows the key once; show and list never do; the key works on key rows only", async () => {
    const mark = lastSeq(f.t, corpId);
    const res = await req("POST", "/api/externalapp", { token, body: { name: "erp", description: "ERP" } });
    expect(res.status).toBe(200);
    const app = res.body;
    expect(app.api_key).toMatch(new RegExp(`^${corpId}\\.${app.id}\\.[A-Za-z0-9]{40}$`));
    expect(app.key_prefix).toBe(app.api_key.split(".")[2].slice(0, 8));
    expect(app.status).toBe(true);
    const shown = await req("GET", `/api/externalapp/${app.id}`, { token });
    expect(shown.body.api_key).toBeUndefined();
    expect(shown.text).not.toContain(app.api_key.split(".")[2]);
    const list = await req("GET", "/api/externalapp", { token });
    expect(list.text).not.toContain(app.api_key.split(".")[2]);
    expect(list.text).not.toContain("key_hash");
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => e.type)).toEqual(["EXTERNALAPP_AFTER_INSERT"]);
    expect(JSON.stringify(ev)).not.toContain(app.api_key.split(".")[2]);
    expect(ev[0].payload.data).toEqual(shown.body);

    const city = await req("POST", "/api/city", { token, body: { name: "Belém", state: "PA", country: "BR" } });
    const link = await req("POST", `/api/city/${city.body.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "C-1" } });
    expect(link.status).toBe(200);
    expect(link.body).toMatchObject({ external_app_id: app.id, identity: "C-1", external_app_name: "erp", record_type: "city", record_id: city.body.id });
    const byKey = await req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { apiKey: app.api_key });
    expect(byKey.status).toBe(200);
    expect(byKey.body).toMatchObject({ id: city.body.id, identity: "C-1", name: "Belém" });
    expect((await req("GET", `/api/city/externalapp/id/${app.id}/identity/C-1`, { apiKey: app.api_key })).status).toBe(200);
    expect((await req("GET", `/api/city/externalapp/id/${app.id}/identity/C-1`, { token })).status).toBe(200);
    expect((await req("GET", `/api/city/externalapp/id/${app.id}/identity/nope`, { token })).status).toBe(404);
    expect((await req("GET", `/api/city/externalapp/name/ghost/identity/C-1`, { token })).status).toBe(404);
    // not a key row: the key is no credential there
    expect((await req("GET", `/api/city/${city.body.id}`, { apiKey: app.api_key })).status).toBe(401);
    expect((await req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { apiKey: app.api_key.slice(0, -1) + (app.api_key.endsWith("x") ? "y" : "x") })).status).toBe(401);

    // another app's key on a route naming this app: 403
    const other = (await req("POST", "/api/externalapp", { token, body: { name: "crm" } })).body;
    expect((await req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { apiKey: other.api_key })).status).toBe(403);

    // rotation: the old key stops at once, the new one works
    const rotated = await req("POST", `/api/externalapp/${app.id}/key`, { token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.api_key).not.toBe(app.api_key);
    expect((await req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { apiKey: app.api_key })).status).toBe(401);
    expect((await req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { apiKey: rotated.body.api_key })).status).toBe(200);

    // inactive app: 403
    expect((await req("PUT", `/api/externalapp/${app.id}`, { token, body: { name: "erp", status: false } })).body.status).toBe(false);
    expect((await req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { apiKey: rotated.body.api_key })).status).toBe(403);

    // deletion takes the links and the key
    expect((await req("DELETE", `/api/externalapp/${app.id}`, { token })).status).toBe(204);
    expect((await req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { token })).status).toBe(404);
    expect((await req("GET", `/api/city/externalapp/name/erp/identity/C-1`, { apiKey: rotated.body.api_key })).status).toBe(401);
  });

  test("a key of one corporation is not accepted for another's app path", async () => {
    const app = (await req("POST", "/api/externalapp", { token, body: { name: "billing" } })).body;
    const forged = app.api_key.replace(corpId, f.otherCorpId);
    expect((await req("GET", `/api/city/externalapp/name/billing/identity/x`, { apiKey: forged })).status).toBe(401);
  });

  test("409 name, 400 bad name, 404 unknown and other corporation, 403 without permission", async () => {
    await req("POST", "/api/externalapp", { token, body: { name: "dup" } });
    expect((await req("POST", "/api/externalapp", { token, body: { name: "dup" } })).status).toBe(409);
    const bad = await req("POST", "/api/externalapp", { token, body: { name: "bad name!" } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("name");
    const app = (await req("POST", "/api/externalapp", { token, body: { name: "mine" } })).body;
    expect((await req("GET", `/api/externalapp/${app.id}`, { token: f.other.token })).status).toBe(404);
    expect((await req("POST", `/api/externalapp/${app.id}/key`, { token: f.other.token })).status).toBe(404);
    expect((await req("DELETE", `/api/externalapp/${app.id}`, { token: f.other.token })).status).toBe(404);
    expect((await req("GET", `/api/externalapp/${UNKNOWN_ID}`, { token })).status).toBe(404);
    expect((await req("GET", "/api/externalapp", { token: f.nobody.token })).status).toBe(403);
    expect((await req("POST", "/api/externalapp", { body: { name: "x" } })).status).toBe(401);
  });

  test("linking: an identity held by another city is 409, linking again replaces, unknown app 400", async () => {
    const app = (await req("POST", "/api/externalapp", { token, body: { name: "links" } })).body;
    const a = (await req("POST", "/api/city", { token, body: { name: "A", state: "S", country: "C" } })).body;
    const b = (await req("POST", "/api/city", { token, body: { name: "B", state: "S", country: "C" } })).body;
    const mark = lastSeq(f.t, corpId);
    expect((await req("POST", `/api/city/${a.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "1" } })).status).toBe(200);
    expect((await req("POST", `/api/city/${a.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "1" } })).status).toBe(200);
    expect((await req("POST", `/api/city/${b.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "1" } })).status).toBe(409);
    expect((await req("POST", `/api/city/${a.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "2" } })).body.identity).toBe("2");
    expect((await req("GET", `/api/city/externalapp/name/links/identity/1`, { token })).status).toBe(404);
    const bad = await req("POST", `/api/city/${a.id}/externalapp`, { token, body: { external_app_id: UNKNOWN_ID, identity: "1" } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("external_app_id");
    expect(newEvents(f.t, corpId, mark)).toEqual([]);
  });
});

// In-process: listens to the app's event bus.
sourceOnly("POST /api/city; DELETE /api/city/{id}: dispatcher wake-up", () => {
  test("committed(corpId) follows each mutation that wrote events, and no failed request", async () => {
    const woken: string[] = [];
    const off = f.t.ctx.events.subscribe((id) => woken.push(id));
    // One wake-up per evented write on both engines: on PostgreSQL the change feed skips the
    // NOTIFYs of this node's own commits, which its door already announced (docs/architecture.md,
    // "Change feed").
    const wakes = async (n: number) => {
      await waitFor(`${n} wake-ups`, () => woken.length >= n);
      // One too many (a failed request's, or the feed's echo of this node's commit) would come
      // with the others: a moment for it to show.
      await Bun.sleep(300);
      expect(woken).toEqual(Array.from({ length: n }, () => corpId));
    };
    try {
      const c = await req("POST", "/api/city", { token, body: { name: "Wake", state: "W", country: "W" } });
      await wakes(1);
      expect((await req("POST", "/api/city", { token, body: { name: "Wake", state: "W", country: "W" } })).status).toBe(409);
      expect((await req("DELETE", `/api/city/${UNKNOWN_ID}`, { token })).status).toBe(404);
      await wakes(1);
      await req("DELETE", `/api/city/${c.body.id}`, { token });
      await wakes(2);
    } finally {
      off();
    }
  });
});
