// Conformance review: the list convention of routes.md (any scalar field of a list's items can be
// sorted and filtered by, with the value as the response shows it) on the registry lists.
import { describe, expect, test } from "bun:test";
import { openApp } from "../support/helpers";
import { operationsOf } from "../support/openapi";
import { pathWith, seedFixtures } from "../support/reliability";

const { t, admin } = await openApp();
const get = (path: string) => t.req("GET", path, { token: admin.token });

// Fields whose values are objects or arbitrary JSON: not scalar, so not sortable.
const NOT_SCALAR = new Set(["original", "billing", "payment_method", "items", "agent", "address"]);
const GROUPS = /^\/api\/(city|externalapp|person|product|contract|classification|webhook|metric|qrcode|isp|history)(\/|$)/;

describe("every registry list", () => {
  test("sorts and filters by each scalar field of its items, and names unknown fields and bad paging", async () => {
    const ops = await operationsOf(t);
    const values = await seedFixtures(t, admin.token, ops, "lc", admin.corpId);
    await t.req("POST", `/api/metric/${values.metric}/value`, { token: admin.token, body: { value: 3 } });
    const failures: string[] = [];
    let lists = 0;
    for (const op of ops.filter((o) => o.method === "GET" && GROUPS.test(o.path))) {
      const path = pathWith(op, values);
      if (!path) continue;
      const res = await get(path);
      if (res.status !== 200 || !res.body || typeof res.body !== "object" || !("page" in res.body)) continue;
      lists++;
      expect(Object.keys(res.body).sort()).toEqual(["items", "limit", "page", "total"]);
      const item = res.body.items[0];
      if (!item) continue;
      for (const [field, value] of Object.entries(item)) {
        if (NOT_SCALAR.has(field) || (value !== null && typeof value === "object")) continue;
        for (const sort of [field, `-${field}`]) {
          const r = await get(`${path}?sort=${sort}`);
          if (r.status !== 200) failures.push(`${op.path}?sort=${sort}: ${r.status} ${r.body?.detail}`);
        }
        if (value === null) continue;
        const r = await get(`${path}?${field}=${encodeURIComponent(String(value))}`);
        if (r.status !== 200) failures.push(`${op.path}?${field}=${value}: ${r.status} ${r.body?.detail}`);
        else if (!r.body.items.some((i: any) => i.id === item.id && JSON.stringify(i) === JSON.stringify(item))) failures.push(`${op.path}?${field}=${value}: the item is not found`);
      }
      for (const [query, field] of [["sort=bogus", "sort"], ["-bogus=1", "-bogus"], ["bogus=1", "bogus"], ["limit=0", "limit"], ["limit=501", "limit"], ["page=0", "page"]]) {
        const r = await get(`${path}?${query}`);
        if (r.status !== 400 || !r.body.errors?.some((e: any) => e.path === field)) failures.push(`${op.path}?${query}: ${r.status} ${r.text.slice(0, 120)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(lists).toBeGreaterThan(20);
  }, 60_000);
});

describe("contract lists", () => {
  test("a date filter matches the form the contract shows (midnight in the corporation's timezone) and the plain date", async () => {
    const city = (await t.req("POST", "/api/city", { token: admin.token, body: { name: "Jundiai", state: "SP", country: "BR" } })).body;
    const person = (await t.req("POST", "/api/person", { token: admin.token, body: { name: "Date Filter" } })).body;
    const contract = (
      await t.req("POST", "/api/contract", {
        token: admin.token,
        body: { customer_id: person.id, number: "DF-1", start_date: "2024-07-09", end_date: "2024-12-31", total_value: 1, address: { line1: "R", city_id: city.id } },
      })
    ).body;
    expect(contract.start_date).toBe("2024-07-09T00:00:00.000-03:00");
    for (const value of [contract.start_date, "2024-07-09"]) {
      const r = await get(`/api/contract?start_date=${encodeURIComponent(value)}`);
      expect(r.status).toBe(200);
      expect(r.body.items.map((c: any) => c.id)).toEqual([contract.id]);
    }
    const bad = await get("/api/contract?end_date=31-12-2024");
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("end_date");
  });

  test("the external application's lists sort and filter by identity", async () => {
    const app = (await t.req("POST", "/api/externalapp", { token: admin.token, body: { name: "sorter" } })).body;
    const city = (await t.req("POST", "/api/city", { token: admin.token, body: { name: "Sorocaba", state: "SP", country: "BR" } })).body;
    const ids: Record<string, string> = {};
    for (const identity of ["b-2", "a-1", "c-3"]) {
      const person = (await t.req("POST", "/api/person", { token: admin.token, body: { name: `Person ${identity}` } })).body;
      await t.req("POST", `/api/person/${person.id}/externalapp`, { token: admin.token, body: { external_app_id: app.id, identity } });
      const contract = (
        await t.req("POST", "/api/contract", {
          token: admin.token,
          body: { customer_id: person.id, number: `ID-${identity}`, start_date: "2025-01-01", total_value: 1, address: { line1: "R", city_id: city.id } },
        })
      ).body;
      await t.req("POST", `/api/contract/${contract.id}/externalapp`, { token: admin.token, body: { external_app_id: app.id, identity } });
      ids[identity] = contract.id;
    }
    for (const area of ["person", "contract"]) {
      for (const by of [`id/${app.id}`, "name/sorter"]) {
        const asc = await get(`/api/${area}/externalapp/${by}?sort=identity`);
        expect(asc.status).toBe(200);
        expect(asc.body.items.map((i: any) => i.identity)).toEqual(["a-1", "b-2", "c-3"]);
        const desc = await get(`/api/${area}/externalapp/${by}?sort=-identity&limit=2`);
        expect(desc.body.items.map((i: any) => i.identity)).toEqual(["c-3", "b-2"]);
        expect(desc.body.total).toBe(3);
        const one = await get(`/api/${area}/externalapp/${by}?identity=b-2`);
        expect(one.body.total).toBe(1);
        expect(one.body.items[0].identity).toBe("b-2");
        if (area === "contract") expect(one.body.items[0].id).toBe(ids["b-2"]);
      }
    }
  });

  test("QR codes sort and filter by url and encoded", async () => {
    const a = (await t.req("POST", "/api/qrcode", { token: admin.token, body: { name: "qa", kind: "dynamic", target: "https://example.com/a", slug: "zz-slug" } })).body;
    const b = (await t.req("POST", "/api/qrcode", { token: admin.token, body: { name: "qb", kind: "static", content: "aa-text" } })).body;
    const byUrl = await get(`/api/qrcode?url=${encodeURIComponent(a.url)}`);
    expect(byUrl.status).toBe(200);
    expect(byUrl.body.items.map((i: any) => i.id)).toEqual([a.id]);
    const byEncoded = await get(`/api/qrcode?encoded=aa-text`);
    expect(byEncoded.body.items.map((i: any) => i.id)).toEqual([b.id]);
    const sorted = await get(`/api/qrcode?sort=-encoded&q=q`);
    expect(sorted.status).toBe(200);
    const order = sorted.body.items.map((i: any) => i.encoded);
    expect(order).toEqual([...order].sort().reverse());
    const csv = await get(`/api/qrcode/export?format=csv&encoded=aa-text`);
    expect(csv.status).toBe(200);
    expect(csv.text.trim().split("\n")).toHaveLength(2);
  });
});

describe("?q", () => {
  test("is case- and accent-insensitive (Brazilian names are often written in capitals, or without accents) and takes wildcards literally", async () => {
    const names = ["JOÃO DA CONCEIÇÃO", "Joana 50% [VIP]_*?", "ÉDEN ÁVILA"];
    const ids: Record<string, string> = {};
    for (const name of names) ids[name] = (await t.req("POST", "/api/person", { token: admin.token, body: { name } })).body.id;
    const found = async (q: string) => (await get(`/api/person?q=${encodeURIComponent(q)}`)).body.items.map((p: any) => p.name);
    expect(await found("joão")).toEqual(["JOÃO DA CONCEIÇÃO"]);
    expect(await found("conceição")).toEqual(["JOÃO DA CONCEIÇÃO"]);
    expect(await found("éden á")).toEqual(["ÉDEN ÁVILA"]);
    expect(await found("ÉDEN")).toEqual(["ÉDEN ÁVILA"]);
    expect(await found("50% [vip]_*?")).toEqual(["Joana 50% [VIP]_*?"]);
    expect(await found("%")).toEqual(["Joana 50% [VIP]_*?"]);
    expect(await found("_")).toEqual(["Joana 50% [VIP]_*?"]);
    expect(await found("*")).toEqual(["Joana 50% [VIP]_*?"]);
    expect(await found("[v")).toEqual(["Joana 50% [VIP]_*?"]);
    expect(await found("joao")).toEqual(["JOÃO DA CONCEIÇÃO"]);
  });
});
