import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { UNKNOWN_ID } from "../../support/helpers";
import { lastSeq, newEvents, registryApp } from "../../support/registry";

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

describe("GET|POST /api/classification; GET|PUT|DELETE /api/classification/{id}; GET|PUT|DELETE /api/classification/name/{name}: classifications", () => {
  test("CRUD by id and by name, rename by name, 409 name, 400 slash or bad color, no events", async () => {
    const mark = lastSeq(f.t, corpId);
    const c = await req("POST", "/api/classification", { token, body: { name: "fiber", description: "Fiber plans", color: "#00ff00" } });
    expect(c.status).toBe(200);
    expect(c.headers.get("location")).toBe(`/api/classification/${c.body.id}`);
    expect(Object.keys(c.body).sort()).toEqual(["color", "created_at", "description", "id", "name", "updated_at"]);
    expect((await req("GET", "/api/classification/name/fiber", { token })).body.id).toBe(c.body.id);
    expect((await req("GET", `/api/classification/${c.body.id}`, { token })).body.name).toBe("fiber");
    expect((await req("POST", "/api/classification", { token, body: { name: "fiber" } })).status).toBe(409);
    const slash = await req("POST", "/api/classification", { token, body: { name: "a/b" } });
    expect(slash.status).toBe(400);
    expect(slash.body.errors[0].path).toBe("name");
    expect((await req("POST", "/api/classification", { token, body: { name: "x", color: "green" } })).body.errors[0].path).toBe("color");
    const renamed = await req("PUT", "/api/classification/name/fiber", { token, body: { name: "fibra", color: "#123456" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: c.body.id, name: "fibra", description: null, color: "#123456" });
    await req("POST", "/api/classification", { token, body: { name: "radio" } });
    expect((await req("PUT", `/api/classification/${c.body.id}`, { token, body: { name: "radio" } })).status).toBe(409);
    expect((await req("GET", "/api/classification?q=RAD", { token })).body.items.map((x: any) => x.name)).toEqual(["radio"]);
    expect((await req("DELETE", "/api/classification/name/radio", { token })).status).toBe(204);
    expect((await req("GET", "/api/classification/name/radio", { token })).status).toBe(404);
    expect((await req("DELETE", `/api/classification/${c.body.id}`, { token })).status).toBe(204);
    expect((await req("DELETE", `/api/classification/${c.body.id}`, { token })).status).toBe(404);
    expect(newEvents(f.t, corpId, mark)).toEqual([]);
  });

  test("401, 403, other corporation 404", async () => {
    const c = (await req("POST", "/api/classification", { token, body: { name: "mine" } })).body;
    expect((await req("GET", "/api/classification")).status).toBe(401);
    expect((await req("GET", "/api/classification", { token: f.nobody.token })).status).toBe(403);
    const o = f.other.token;
    expect((await req("GET", `/api/classification/${c.id}`, { token: o })).status).toBe(404);
    expect((await req("GET", `/api/classification/name/mine`, { token: o })).status).toBe(404);
    expect((await req("PUT", `/api/classification/${c.id}`, { token: o, body: { name: "z" } })).status).toBe(404);
    expect((await req("DELETE", `/api/classification/name/mine`, { token: o })).status).toBe(404);
  });
});

describe("GET|POST /api/product; GET|PUT|DELETE /api/product/{id}; GET /api/product/identity/{identity}; PUT /api/product/{id}/classifications: products", () => {
  test("create, by identity, update, classifications (replace, 400 unknown), delete; events", async () => {
    await req("POST", "/api/classification", { token, body: { name: "internet" } });
    await req("POST", "/api/classification", { token, body: { name: "promo" } });
    const mark = lastSeq(f.t, corpId);
    const p = await req("POST", "/api/product", { token, body: { identity: "FIB-100", name: "Fibra 100", price: 99.9 } });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ identity: "FIB-100", name: "Fibra 100", description: null, price: 99.9, classifications: [] });
    expect(p.headers.get("location")).toBe(`/api/product/${p.body.id}`);
    expect((await req("GET", "/api/product/identity/FIB-100", { token })).body).toEqual(p.body);
    expect((await req("POST", "/api/product", { token, body: { identity: "FIB-100", name: "dup" } })).status).toBe(409);
    const neg = await req("POST", "/api/product", { token, body: { identity: "N", name: "n", price: -1 } });
    expect(neg.body.errors[0].path).toBe("price");
    const cls = await req("PUT", `/api/product/${p.body.id}/classifications`, { token, body: { names: ["promo", "internet"] } });
    expect(cls.status).toBe(200);
    expect(cls.body.classifications).toEqual(["internet", "promo"]);
    const unknown = await req("PUT", `/api/product/${p.body.id}/classifications`, { token, body: { names: ["internet", "ghost"] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ path: "names.1", message: "unknown classification 'ghost'" }]);
    expect((await req("GET", `/api/product/${p.body.id}`, { token })).body.classifications).toEqual(["internet", "promo"]);
    const upd = await req("PUT", `/api/product/${p.body.id}`, { token, body: { identity: "FIB-200", name: "Fibra 200" } });
    expect(upd.body).toMatchObject({ identity: "FIB-200", price: null, classifications: ["internet", "promo"] });
    await req("DELETE", "/api/classification/name/promo", { token });
    const dropped = (await req("GET", `/api/product/${p.body.id}`, { token })).body;
    expect(dropped.classifications).toEqual(["internet"]);
    expect((await req("DELETE", `/api/product/${p.body.id}`, { token })).status).toBe(204);
    const ev = newEvents(f.t, corpId, mark);
    // Deleting a classification the product carries changes the product: its update event.
    expect(ev.map((e) => e.type)).toEqual(["PRODUCT_AFTER_INSERT", "PRODUCT_AFTER_UPDATE", "PRODUCT_AFTER_UPDATE", "PRODUCT_AFTER_UPDATE", "PRODUCT_AFTER_DELETE"]);
    expect(ev[1].payload.data).toEqual(cls.body);
    expect(ev[2].payload.data).toEqual(upd.body);
    expect(ev[3].payload.data).toEqual(dropped);
  });

  test("list q and filters, 401, 403, 404, other corporation 404", async () => {
    await req("POST", "/api/product", { token, body: { identity: "RAD-10", name: "Radio 10", price: 50 } });
    await req("POST", "/api/product", { token, body: { identity: "TV-1", name: "TV", price: 30 } });
    expect((await req("GET", "/api/product?q=rad", { token })).body.items.map((p: any) => p.identity)).toEqual(["RAD-10"]);
    expect((await req("GET", "/api/product?price=30", { token })).body.items.map((p: any) => p.identity)).toEqual(["TV-1"]);
    expect((await req("GET", "/api/product?sort=-price", { token })).body.items[0].identity).toBe("RAD-10");
    const p = (await req("GET", "/api/product/identity/TV-1", { token })).body;
    expect((await req("GET", "/api/product")).status).toBe(401);
    expect((await req("GET", "/api/product", { token: f.nobody.token })).status).toBe(403);
    expect((await req("GET", `/api/product/${UNKNOWN_ID}`, { token })).status).toBe(404);
    expect((await req("GET", "/api/product/identity/NOPE", { token })).status).toBe(404);
    const o = f.other.token;
    expect((await req("GET", `/api/product/${p.id}`, { token: o })).status).toBe(404);
    expect((await req("GET", "/api/product/identity/TV-1", { token: o })).status).toBe(404);
    expect((await req("PUT", `/api/product/${p.id}`, { token: o, body: { identity: "a", name: "b" } })).status).toBe(404);
    expect((await req("PUT", `/api/product/${p.id}/classifications`, { token: o, body: { names: [] } })).status).toBe(404);
    expect((await req("DELETE", `/api/product/${p.id}`, { token: o })).status).toBe(404);
  });
});
