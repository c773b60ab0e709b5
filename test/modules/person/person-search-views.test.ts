// GET /api/person's pages are built from the persons' JSON texts kept per change stamp
// (person/kept-views.ts; in cluster mode a kept page needs no statement at all): a change of a
// person, of its city or of the person through a contract upsert shows in the very next search
// page, whichever engine; a kept page is the same bytes as each person's own GET.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { contractBody } from "../../support/contract-body";
import { makeApp, startAndLogin, testSourceOnly, type Admin, type TestApp } from "../../support/helpers";
import { PersonViews } from "../../../src/modules/person/kept-views";

let t: TestApp;
let admin: Admin;
let token: string;

beforeAll(async () => {
  t = await makeApp();
  admin = await startAndLogin(t);
  token = admin.token;
  expect((await t.req("POST", "/api/externalapp", { token, body: { name: "erp" } })).status).toBe(200);
  // Customers "Maria Silva 0", "Joao Silva 1", ... over five cities.
  for (let i = 0; i < 8; i++) expect((await t.req("POST", "/api/contract/create/externalapp/name/erp", { token, body: contractBody(i) })).status).toBe(200);
});
afterAll(() => t.close());

type PersonBody = { id: string; name: string; address: { city: { id: string; name: string } | null } | null };
type PageBody = { items: PersonBody[]; total: number; page: number; limit: number };

async function search(q: string): Promise<{ body: PageBody; text: string }> {
  const res = await t.req("GET", `/api/person?q=${encodeURIComponent(q)}&limit=50`, { token });
  expect(res.status).toBe(200);
  return { body: res.body as PageBody, text: res.text };
}

/** The page twice (the second from what the first kept), each item as its own GET shows it. */
async function keptPage(q: string): Promise<PageBody> {
  const first = await search(q);
  const second = await search(q);
  expect(second.text).toBe(first.text);
  for (const item of first.body.items) expect(item).toEqual((await t.req("GET", `/api/person/${item.id}`, { token })).body);
  return first.body;
}

describe("GET /api/person?q=: kept views follow every change", () => {
  test("a rename, a city's rename and a contract upsert's new customer name show in the next page", async () => {
    const before = await keptPage("silva");
    expect(before.total).toBe(8);
    const person = before.items[0]!;

    // The person renamed, still matched.
    const current = (await t.req("GET", `/api/person/${person.id}`, { token })).body;
    expect((await t.req("PUT", `/api/person/${person.id}`, { token, body: { name: "Renamed Silva", display_name: current.display_name, address: null } })).status).toBe(200);
    const renamed = await keptPage("silva");
    expect(renamed.items.find((p) => p.id === person.id)!.name).toBe("Renamed Silva");
    expect(renamed.items.find((p) => p.id === person.id)!.address).toBeNull();

    // A city renamed: every person of it shows the new name.
    const other = renamed.items.find((p) => p.address?.city)!;
    const cityId = other.address!.city!.id;
    const city = (await t.req("GET", `/api/city/${cityId}`, { token })).body;
    expect((await t.req("PUT", `/api/city/${cityId}`, { token, body: { name: "Cidade Nova", state: city.state, country: city.country } })).status).toBe(200);
    const moved = await keptPage("silva");
    const ofCity = moved.items.filter((p) => p.address?.city?.id === cityId);
    expect(ofCity.length).toBeGreaterThan(0);
    for (const p of ofCity) expect(p.address!.city!.name).toBe("Cidade Nova");

    // The contract upsert renames its customer.
    const body = contractBody(3);
    const customer = { ...body.customer, name: "Upserted Silva 3" };
    expect((await t.req("POST", "/api/contract/create/externalapp/name/erp", { token, body: { ...body, customer, billing_customer: customer } })).status).toBe(200);
    const upserted = await keptPage("silva");
    expect(upserted.items.map((p) => p.name)).toContain("Upserted Silva 3");
    expect(upserted.items.map((p) => p.name)).not.toContain(contractBody(3).customer.name);

    // Out of the match, and back.
    expect((await t.req("PUT", `/api/person/${person.id}`, { token, body: { name: "Someone Else" } })).status).toBe(200);
    expect((await keptPage("silva")).total).toBe(7);
    expect((await keptPage("someone")).items.map((p) => p.id)).toEqual([person.id]);
  });

  test("pages, orders and limits of one search each answer their own persons, with the same total", async () => {
    const all = (await keptPage("a")).items.map((p) => p.id);
    expect(all.length).toBeGreaterThan(4);
    for (const twice of [1, 2]) {
      const res = await t.req("GET", "/api/person?q=a&limit=2&page=2", { token });
      expect([twice, res.status]).toEqual([twice, 200]);
      expect(res.body.items.map((p: PersonBody) => p.id)).toEqual(all.slice(2, 4));
      expect(res.body.total).toBe(all.length);
    }
    const desc = await t.req("GET", "/api/person?q=a&limit=50&sort=-id", { token });
    expect(desc.body.items.map((p: PersonBody) => p.id)).toEqual([...all].reverse());
    // A page past the end: no items, the same total.
    const past = await t.req("GET", "/api/person?q=a&limit=50&page=9", { token });
    expect(past.body).toEqual({ items: [], page: 9, limit: 50, total: all.length });
  });
});

describe("kept person views: bounds", () => {
  testSourceOnly("a text of another stamp is a miss; one not read for 10 s is swept; the oldest go first past the bound", () => {
    let now = 0;
    const views = new PersonViews(() => now);
    views.set(1, "a", '{"id":"a"}');
    expect(views.get(1, "a")).toBe('{"id":"a"}');
    expect(views.get(2, "a")).toBeUndefined();
    now = 5_000;
    views.set(1, "b", '{"id":"b"}');
    now = 11_000;
    expect(views.sweep()).toBe(true);
    expect(views.get(1, "a")).toBeUndefined();
    expect(views.get(1, "b")).toBe('{"id":"b"}');
    // 1 M characters at most: four texts of 256 k characters push the oldest out.
    const big = "x".repeat(256 * 1024);
    for (const id of ["c", "d", "e", "f"]) views.set(1, id, big);
    expect(views.get(1, "b")).toBeUndefined();
    expect(views.get(1, "c")).toBe(big);
    expect(views.size.chars).toBeLessThanOrEqual(1024 * 1024);
    views.clear();
    expect(views.size).toEqual({ views: 0, chars: 0 });
  });
});
