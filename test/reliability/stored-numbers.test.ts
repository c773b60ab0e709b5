// Numbers stored by older versions, before the bounds of README "Request limits" (`1e400` parsed
// to Infinity and was kept; a price of 1e308 times a quantity overflows): every read of the
// record still answers 200 with JSON numbers, the out-of-range ones at the largest double.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { must } from "../support/isp";
import { registryApp } from "../support/registry";

let f: Awaited<ReturnType<typeof registryApp>>;
let token: string;
let corpId: string;
let productId: string;
let contractId: string;
let personId: string;

/** A row written behind the app's back, as an older version left it. */
const legacy = (sql: string) => f.t.sqlWrite(corpId).exec(sql);

async function ok(path: string) {
  const res = await f.t.req("GET", path, { token });
  expect([path, res.status]).toEqual([path, 200]);
  return res.body;
}

beforeAll(async () => {
  f = await registryApp();
  token = f.admin.token;
  corpId = f.admin.corpId;
  const city = await must(f.t, token, "POST", "/api/city", { name: "Legacy City", state: "SP", country: "BR" });
  const address = { line1: "Rua 1", city_id: city.id, latitude: 1, longitude: 2 };
  const person = await must(f.t, token, "POST", "/api/person", { name: "Legacy Person", address });
  const contract = await must(f.t, token, "POST", "/api/contract", { customer_id: person.id, number: "LEGACY-1", start_date: "2025-01-01", total_value: 10, address });
  const product = await must(f.t, token, "POST", "/api/product", { identity: "LEGACY", name: "Legacy", price: 1 });
  await must(f.t, token, "POST", `/api/contract/${contract.id}/items`, { items: [{ product_id: product.id, quantity: 10 }] });
  [productId, contractId, personId] = [product.id, contract.id, person.id];
});
afterAll(() => f.t.close());

describe("GET /api/product; GET /api/product/{id}; GET /api/contract; GET /api/contract/{id}; GET /api/contract/{id}/items; GET /api/person/{id}; GET /api/metric/{id}/history: numbers stored by older versions", () => {
  test("Infinity in a price, a contract value, an item's price and an address: 200, the largest double", async () => {
    legacy(`UPDATE products SET price = 9e999;
      UPDATE contracts SET total_value = 9e999, address_latitude = -9e999;
      UPDATE contract_items SET unit_price = 9e999;
      UPDATE persons SET address_longitude = 9e999`);
    const max = Number.MAX_VALUE;
    expect((await ok(`/api/product/${productId}`)).price).toBe(max);
    expect((await ok("/api/product")).items[0].price).toBe(max);
    expect((await ok("/api/product?sort=-price")).items[0].price).toBe(max);
    const contract = await ok(`/api/contract/${contractId}`);
    expect([contract.total_value, contract.address.latitude, contract.customer.address.longitude]).toEqual([max, -max, max]);
    expect((await ok("/api/contract")).items[0].total_value).toBe(max);
    expect((await ok(`/api/person/${personId}`)).address.longitude).toBe(max);
    const item = (await ok(`/api/contract/${contractId}/items`)).items[0];
    expect([item.unit_price, item.total]).toEqual([max, max]);
  });

  test("a price of 1e308 times a quantity of 10 overflows: the item's total is the largest double", async () => {
    legacy("UPDATE contract_items SET unit_price = 1e308, quantity = 10");
    const item = (await ok(`/api/contract/${contractId}/items`)).items[0];
    expect([item.unit_price, item.total]).toEqual([1e308, Number.MAX_VALUE]);
  });

  test("GET /api/metric/{id}/history: an infinite value, listed and in a bucket's min, max, avg and sum", async () => {
    const metric = await must(f.t, token, "POST", "/api/metric", { name: "legacy", data_type: "Float", periodicity: "1h", start_date: "2025-01-01T00:00:00Z" });
    await must(f.t, token, "POST", `/api/metric/${metric.id}/value`, { value: 1.5 });
    legacy(`UPDATE metric_values SET value = 9e999 WHERE metric_id = '${metric.id}'`);
    const max = Number.MAX_VALUE;
    expect((await ok(`/api/metric/${metric.id}/history`)).items[0].value).toBe(max);
    const bucket = (await ok(`/api/metric/${metric.id}/history?bucket=1h`)).items[0];
    expect([bucket.count, bucket.min, bucket.max, bucket.avg, bucket.sum]).toEqual([1, max, max, max, max]);
  });

  test("POST /api/contract/{id}/items: a product's stored price beyond the bounds is not copied into an item (400 asks for unit_price)", async () => {
    legacy(`UPDATE products SET price = 1e308 WHERE id = '${productId}'`);
    const before = await ok(`/api/contract/${contractId}/items`);
    const res = await f.t.req("POST", `/api/contract/${contractId}/items`, { token, body: { items: [{ product_id: productId, quantity: 2 }] } });
    expect([res.status, res.body.errors?.map((e: { path: string }) => e.path)]).toEqual([400, ["items.0.unit_price"]]);
    expect(await ok(`/api/contract/${contractId}/items`)).toEqual(before);
    const priced = await f.t.req("POST", `/api/contract/${contractId}/items`, { token, body: { items: [{ product_id: productId, quantity: 2, unit_price: 10 }] } });
    expect([priced.status, priced.body.items[0].total]).toEqual([200, 20]);
  });

  test("the record can be corrected through the API", async () => {
    const product = await f.t.req("PUT", `/api/product/${productId}`, { token, body: { identity: "LEGACY", name: "Legacy", price: 5 } });
    expect([product.status, product.body.price]).toEqual([200, 5]);
  });
});
