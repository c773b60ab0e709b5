// Products (routes.md, Registry: Product) and the classifications they carry.
import { describe, expect, test } from "bun:test";
import { UNKNOWN_ID } from "../../support/helpers";
import { lastSeq, newEvents, registrySuite } from "../../support/registry";
import { scenarios } from "../../support/scenario";

const suite = registrySuite();
const { target, admin, other } = suite;
/** Ids of earlier rows, for the rows after them. */
const seen: Record<string, string> = {};
const refused = { expectEvents: [], expectHistory: [] };

describe("GET|POST /api/product; GET|PUT|DELETE /api/product/{id}; GET /api/product/identity/{identity}; PUT /api/product/{id}/classifications: products", () => {
  test("create, by identity, update, classifications (replace, 400 unknown), delete; events", async () => {
    const { f, token, corpId } = suite;
    await f.t.req("POST", "/api/classification", { token, body: { name: "internet" } });
    await f.t.req("POST", "/api/classification", { token, body: { name: "promo" } });
    const mark = lastSeq(f.t, corpId);
    const p = await f.t.req("POST", "/api/product", { token, body: { identity: "FIB-100", name: "Fibra 100", price: 99.9 } });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ identity: "FIB-100", name: "Fibra 100", description: null, price: 99.9, classifications: [] });
    expect(p.headers.get("location")).toBe(`/api/product/${p.body.id}`);
    expect((await f.t.req("GET", "/api/product/identity/FIB-100", { token })).body).toEqual(p.body);
    expect((await f.t.req("POST", "/api/product", { token, body: { identity: "FIB-100", name: "dup" } })).status).toBe(409);
    const neg = await f.t.req("POST", "/api/product", { token, body: { identity: "N", name: "n", price: -1 } });
    expect(neg.body.errors[0].path).toBe("price");
    const cls = await f.t.req("PUT", `/api/product/${p.body.id}/classifications`, { token, body: { names: ["promo", "internet"] } });
    expect(cls.status).toBe(200);
    expect(cls.body.classifications).toEqual(["internet", "promo"]);
    const unknown = await f.t.req("PUT", `/api/product/${p.body.id}/classifications`, { token, body: { names: ["internet", "ghost"] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ path: "names.1", message: "unknown classification 'ghost'" }]);
    expect((await f.t.req("GET", `/api/product/${p.body.id}`, { token })).body.classifications).toEqual(["internet", "promo"]);
    const upd = await f.t.req("PUT", `/api/product/${p.body.id}`, { token, body: { identity: "FIB-200", name: "Fibra 200" } });
    expect(upd.body).toMatchObject({ identity: "FIB-200", price: null, classifications: ["internet", "promo"] });
    await f.t.req("DELETE", "/api/classification/name/promo", { token });
    const dropped = (await f.t.req("GET", `/api/product/${p.body.id}`, { token })).body;
    expect(dropped.classifications).toEqual(["internet"]);
    expect((await f.t.req("DELETE", `/api/product/${p.body.id}`, { token })).status).toBe(204);
    const ev = newEvents(f.t, corpId, mark);
    // Deleting a classification the product carries changes the product: its update event.
    expect(ev.map((e) => e.type)).toEqual(["PRODUCT_AFTER_INSERT", "PRODUCT_AFTER_UPDATE", "PRODUCT_AFTER_UPDATE", "PRODUCT_AFTER_UPDATE", "PRODUCT_AFTER_DELETE"]);
    expect(ev[1].payload.data).toEqual(cls.body);
    expect(ev[2].payload.data).toEqual(upd.body);
    expect(ev[3].payload.data).toEqual(dropped);
  });

  scenarios(target, [
    { name: "arrange: a product", method: "POST", url: "/api/product", token: admin, body: { identity: "RAD-10", name: "Radio 10", price: 50 }, expectStatus: 200, expectEvents: ["PRODUCT_AFTER_INSERT"], expectHistory: [{ target_type: "product", action: "create" }] },
    { name: "arrange: another product", method: "POST", url: "/api/product", token: admin, body: { identity: "TV-1", name: "TV", price: 30 }, expectStatus: 200, check: (res) => (seen.tv = res.body.id) },
    { name: "list with q", method: "GET", url: "/api/product?q=rad", token: admin, expectStatus: 200, expectBody: { items: [{ identity: "RAD-10" }] } },
    { name: "list with a filter", method: "GET", url: "/api/product?price=30", token: admin, expectStatus: 200, expectBody: { items: [{ identity: "TV-1" }] } },
    { name: "list sorted", method: "GET", url: "/api/product?sort=-price", token: admin, expectStatus: 200, check: (res) => expect(res.body.items[0].identity).toBe("RAD-10") },
    { name: "no token is 401", method: "GET", url: "/api/product", expectStatus: 401 },
    { name: "no permission is 403", method: "GET", url: "/api/product", token: suite.nobody, expectStatus: 403 },
    { name: "an unknown id is 404", method: "GET", url: `/api/product/${UNKNOWN_ID}`, token: admin, expectStatus: 404 },
    { name: "an unknown identity is 404", method: "GET", url: "/api/product/identity/NOPE", token: admin, expectStatus: 404 },
    { name: "another corporation: show 404", method: "GET", url: () => `/api/product/${seen.tv}`, token: other, expectStatus: 404 },
    { name: "another corporation: by identity 404", method: "GET", url: "/api/product/identity/TV-1", token: other, expectStatus: 404 },
    { name: "another corporation: update 404", method: "PUT", url: () => `/api/product/${seen.tv}`, token: other, body: { identity: "a", name: "b" }, expectStatus: 404, ...refused },
    { name: "another corporation: classifications 404", method: "PUT", url: () => `/api/product/${seen.tv}/classifications`, token: other, body: { names: [] }, expectStatus: 404, ...refused },
    { name: "another corporation: delete 404", method: "DELETE", url: () => `/api/product/${seen.tv}`, token: other, expectStatus: 404, ...refused },
  ]);
});
