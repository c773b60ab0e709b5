// Money fields (routes.md: price, total_value, unit_price, each a number ≥ 0) are amounts in
// cents: 0..1e12 with at most 2 decimals (README "Request limits"). Anything else is 400 naming
// the field, nothing stored; the published schema says so.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { contractBody } from "../support/contract-body";
import { must } from "../support/isp";
import type { Res } from "../support/helpers";
import { registryApp } from "../support/registry";

let f: Awaited<ReturnType<typeof registryApp>>;
let token: string;
let apiKey: string;
let productId: string;
let contractId: string;
let contractBase: Record<string, unknown>;
let upserts = 0;

const ACCEPTED = [0, 0.07, 0.1, 99.9, 129.99, 1e12, 999_999_999_999.99];
const REFUSED = [0.001, 1.005, 0.1 + 0.2, 19.999, -0.01, 1e12 + 0.01, 1e13];

beforeAll(async () => {
  f = await registryApp();
  token = f.admin.token;
  const city = await must(f.t, token, "POST", "/api/city", { name: "Money City", state: "SP", country: "BR" });
  const person = await must(f.t, token, "POST", "/api/person", { name: "Money Person" });
  contractBase = { customer_id: person.id, number: "MONEY-1", start_date: "2025-01-01", address: { line1: "Rua 1", city_id: city.id } };
  contractId = (await must(f.t, token, "POST", "/api/contract", { ...contractBase, total_value: 1 })).id;
  productId = (await must(f.t, token, "POST", "/api/product", { identity: "MONEY", name: "Money" })).id;
  apiKey = (await must(f.t, token, "POST", "/api/externalapp", { name: "erp" })).api_key;
});
afterAll(() => f.t.close());

/** Each money field: the request that sends `v` in it, and where the 400 names it. */
const FIELDS: { field: string; path: string; send: (v: number) => Promise<Res> }[] = [
  { field: "price", path: "price", send: (price) => f.t.req("POST", "/api/product", { token, body: { identity: `P-${price}`, name: "P", price } }) },
  { field: "price", path: "price", send: (price) => f.t.req("PUT", `/api/product/${productId}`, { token, body: { identity: "MONEY", name: "Money", price } }) },
  { field: "total_value", path: "total_value", send: (total_value) => f.t.req("PUT", `/api/contract/${contractId}`, { token, body: { ...contractBase, total_value } }) },
  {
    field: "total_value",
    path: "total_value",
    send: (total_value) => f.t.req("POST", "/api/contract", { token, body: { ...contractBase, number: `MONEY-${total_value}`, total_value } }),
  },
  {
    field: "unit_price",
    path: "items.0.unit_price",
    send: (unit_price) => f.t.req("POST", `/api/contract/${contractId}/items`, { token, body: { items: [{ product_id: productId, unit_price }] } }),
  },
  {
    field: "total_value",
    path: "total_value",
    send: (total_value) => f.t.req("POST", "/api/contract/create/externalapp/name/erp", { apiKey, body: { ...contractBody(++upserts), total_value } }),
  },
];

describe("POST /api/product; PUT /api/product/{id}; POST /api/contract; PUT /api/contract/{id}; POST /api/contract/{id}/items; POST /api/contract/create/externalapp/name/{externalAppName}: money fields", () => {
  test("0..1e12 with at most 2 decimals is stored as sent", async () => {
    for (const { field, path, send } of FIELDS) {
      for (const v of ACCEPTED) {
        const res = await send(v);
        const stored = path.startsWith("items.") ? res.body.items?.[0]?.[field] : res.body[field];
        expect([path, v, res.status, stored]).toEqual([path, v, 200, v]);
      }
    }
  });

  test("more than 2 decimals, below 0 or above 1e12: 400 naming the field, nothing stored", async () => {
    for (const { path, send } of FIELDS) {
      for (const v of REFUSED) {
        const res = await send(v);
        expect([path, v, res.status]).toEqual([path, v, 400]);
        expect([path, v, res.body.errors.map((e: { path: string }) => e.path)]).toEqual([path, v, [path]]);
        expect(res.body.errors[0].message).toBe("must be a number from 0 to 1000000000000 with at most 2 decimals");
      }
    }
    expect((await f.t.req("GET", `/api/product/${productId}`, { token })).body.price).toBe(999_999_999_999.99);
  });

  test("the published schemas say it", async () => {
    const doc = (await f.t.req("GET", "/api/openapi.json")).body;
    const s = doc.components.schemas;
    for (const money of [s.ProductInput.properties.price.anyOf[0], s.ContractInput.properties.total_value, s.ContractItemInput.properties.unit_price.anyOf[0]]) {
      expect(money).toMatchObject({ type: "number", minimum: 0, maximum: 1e12, multipleOf: 0.01 });
    }
  });
});
