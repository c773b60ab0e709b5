// What a contract references, asked by the modules owning it (ctx.usedBy, ctx.classificationHolders):
// a city in a contract's address, a person who is a party, a product on an item cannot be deleted
// (409, nothing changed); a renamed classification shows under its new name on the contract's flags.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { registryApp } from "../../support/registry";

let f: Awaited<ReturnType<typeof registryApp>>;
let token: string;
const req = (...a: Parameters<typeof f.t.req>) => f.t.req(...a);
const post = async (url: string, body: unknown) => {
  const res = await req("POST", url, { token, body });
  expect(res.status).toBe(200);
  return res.body;
};

beforeAll(async () => {
  f = await registryApp();
  token = f.admin.token;
});
afterAll(() => f.t.close());

describe("DELETE of a record a contract references: 409 while it does", () => {
  test("a city named only by a contract's address, a party (customer, agent), a product on an item", async () => {
    const city = await post("/api/city", { name: "Olinda", state: "PE", country: "BR" });
    const customer = await post("/api/person", { name: "Customer" });
    const agent = await post("/api/person", { name: "Agent" });
    const product = await post("/api/product", { identity: "REF-1", name: "Plan", price: 10 });
    const contract = await post("/api/contract", { customer_id: customer.id, agent_id: agent.id, number: "REF-C1", start_date: "2025-03-01", total_value: 1, address: { line1: "Rua 1", city_id: city.id } });
    await post(`/api/contract/${contract.id}/items`, { items: [{ product_id: product.id }] });

    const refused = [
      [`/api/city/${city.id}`, /used by an address/],
      [`/api/person/${customer.id}`, /party of a contract/],
      [`/api/person/${agent.id}`, /party of a contract/],
      [`/api/product/${product.id}`, /used by a contract item/],
    ] as const;
    for (const [url, detail] of refused) {
      const res = await req("DELETE", url, { token });
      expect(res.status, url).toBe(409);
      expect(res.body.detail).toMatch(detail);
      expect((await req("GET", url, { token })).status).toBe(200);
    }
    // Someone the contract does not name goes at once.
    const stranger = await post("/api/person", { name: "Stranger" });
    expect((await req("DELETE", `/api/person/${stranger.id}`, { token })).status).toBe(204);
  });
});

describe("PUT /api/classification/{id}: a rename reaches the contracts flagged with it", () => {
  test("the contract's flags show the new name, with a new updated_at", async () => {
    const city = await post("/api/city", { name: "Recife", state: "PE", country: "BR" });
    const customer = await post("/api/person", { name: "Flagged" });
    const contract = await post("/api/contract", { customer_id: customer.id, number: "REF-C2", start_date: "2025-03-01", total_value: 1, address: { line1: "Rua 2", city_id: city.id } });
    const vip = await post("/api/classification", { name: "vip-ref" });
    await req("PATCH", `/api/contract/${contract.id}/flags`, { token, body: { add: ["vip-ref"] } });
    const before = (await req("GET", `/api/contract/${contract.id}`, { token })).body;
    expect(before.flags).toEqual(["vip-ref"]);
    await Bun.sleep(5);
    expect((await req("PUT", `/api/classification/${vip.id}`, { token, body: { name: "gold-ref" } })).status).toBe(200);
    const after = (await req("GET", `/api/contract/${contract.id}`, { token })).body;
    expect(after.flags).toEqual(["gold-ref"]);
    expect(after.updated_at > before.updated_at).toBe(true);
  });
});
