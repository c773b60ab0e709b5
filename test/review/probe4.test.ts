import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeApp, startAndLogin, type TestApp } from "../helpers";
import { contractBody } from "../fixtures/contract-body";

let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
beforeAll(async () => { t = await makeApp(); admin = await startAndLogin(t); });
afterAll(() => t.close());
function events(): any[] { return (t.ctx.tenants.get(admin.corpId) as any).$client.query("SELECT type, record_id, payload FROM events ORDER BY rowid").all().map((r: any) => ({ ...r, payload: JSON.parse(r.payload) })); }
let mark = 0;
function newEvents() { const e = events(); const out = e.slice(mark); mark = e.length; return out; }
const req = (m: string, p: string, body?: unknown) => t.req(m, p, { token: admin.token, body });
const F: string[] = [];
const norm = (o: any) => JSON.stringify(o, Object.keys(o ?? {}).sort());
async function expectEvents(label: string, types: string[], getPath?: string) {
  const ev = newEvents();
  if (ev.map((e) => e.type).join() !== types.join()) F.push(`${label}: ${ev.map((e) => e.type)} expected ${types}`);
  if (getPath && ev.length) {
    const g = (await req("GET", getPath)).body;
    const d = ev[ev.length - 1].payload.data;
    if (JSON.stringify(Object.entries(d).sort()) !== JSON.stringify(Object.entries(g).sort())) F.push(`${label}: payload ${JSON.stringify(d).slice(0, 300)} vs GET ${JSON.stringify(g).slice(0, 300)}`);
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/.test(ev[ev.length - 1].payload.timestamp)) F.push(label + " ts");
  }
}

test("events", async () => {
  newEvents();
  const city = (await req("POST", "/api/city", { name: "A", state: "SP", country: "BR" })).body;
  await expectEvents("city create", ["CITY_AFTER_INSERT"], `/api/city/${city.id}`);
  await req("PUT", `/api/city/${city.id}`, { name: "B", state: "SP", country: "BR" });
  await expectEvents("city update", ["CITY_AFTER_UPDATE"], `/api/city/${city.id}`);
  const app = (await req("POST", "/api/externalapp", { name: "erp" })).body;
  await expectEvents("app create", ["EXTERNALAPP_AFTER_INSERT"], `/api/externalapp/${app.id}`);
  await req("POST", `/api/externalapp/${app.id}/key`);
  await expectEvents("app key", ["EXTERNALAPP_AFTER_UPDATE"], `/api/externalapp/${app.id}`);
  await req("PUT", `/api/externalapp/${app.id}`, { name: "erp2", description: "d" });
  await expectEvents("app put", ["EXTERNALAPP_AFTER_UPDATE"], `/api/externalapp/${app.id}`);
  const p = (await req("POST", "/api/person", { name: "P" })).body;
  await expectEvents("person create", ["PERSON_AFTER_INSERT"], `/api/person/${p.id}`);
  await req("POST", `/api/person/${p.id}/address`, { line1: "R", city_id: city.id });
  await expectEvents("person address", ["PERSON_AFTER_UPDATE"], `/api/person/${p.id}`);
  await req("POST", `/api/person/${p.id}/externalapp`, { external_app_id: app.id, identity: "x" });
  await expectEvents("person link", []);
  const prod = (await req("POST", "/api/product", { identity: "P1", name: "n", price: 1 })).body;
  await expectEvents("product create", ["PRODUCT_AFTER_INSERT"], `/api/product/${prod.id}`);
  await req("POST", "/api/classification", { name: "vip" });
  await expectEvents("classification create", []);
  await req("PUT", `/api/product/${prod.id}/classifications`, { names: ["vip"] });
  await expectEvents("product cls", ["PRODUCT_AFTER_UPDATE"], `/api/product/${prod.id}`);
  const ct = (await req("POST", "/api/contract", { customer_id: p.id, number: "N", start_date: "2025-01-01", total_value: 1, address: { line1: "R", city_id: city.id } })).body;
  await expectEvents("contract create", ["CONTRACT_AFTER_INSERT"], `/api/contract/${ct.id}`);
  await req("POST", `/api/contract/${ct.id}/config`, { username: "u", password: "pass1234", max_upload: "10M" });
  await expectEvents("contract config", ["CONTRACT_AFTER_UPDATE"], `/api/contract/${ct.id}`);
  await req("POST", `/api/contract/${ct.id}/items`, { items: [{ product_id: prod.id }] });
  await expectEvents("contract items", ["CONTRACT_AFTER_UPDATE"], `/api/contract/${ct.id}`);
  await req("PATCH", `/api/contract/${ct.id}/flags`, { add: ["vip"] });
  await expectEvents("contract flags", ["CONTRACT_AFTER_UPDATE"], `/api/contract/${ct.id}`);
  await req("PATCH", `/api/contract/${ct.id}/flags`, { add: ["vip"] });
  await expectEvents("contract flags noop", []);
  await req("PUT", `/api/contract/${ct.id}/inactive`);
  await expectEvents("contract inactive", ["CONTRACT_AFTER_UPDATE"], `/api/contract/${ct.id}`);
  await req("PUT", `/api/contract/${ct.id}/inactive`);
  await expectEvents("contract inactive again", []);
  await req("POST", `/api/contract/${ct.id}/address`, { line1: "Z", city_id: city.id });
  await expectEvents("contract address", ["CONTRACT_AFTER_UPDATE"], `/api/contract/${ct.id}`);
  const r409 = await req("PUT", `/api/contract/${ct.id}`, { customer_id: "01900000-0000-7000-8000-000000000000", number: "N", start_date: "2025-01-01", total_value: 1, address: { line1: "R", city_id: city.id } });
  await expectEvents("contract bad put " + r409.status, []);
  await req("DELETE", `/api/classification/name/vip`);
  await expectEvents("classification delete", []);
  const fl = (await req("GET", `/api/contract/${ct.id}`)).body.flags;
  if (fl.length) F.push("flags not cascaded");
  const m = (await req("POST", "/api/metric", { name: "m", data_type: "Int", periodicity: "1m", start_date: "2025-01-01T00:00:00Z" })).body;
  await expectEvents("metric create", ["METRIC_AFTER_INSERT"], `/api/metric/${m.id}`);
  await req("PUT", `/api/metric/name/m`, { name: "m2", data_type: "Int", periodicity: "1m", start_date: "2025-01-01T00:00:00Z" });
  await expectEvents("metric put by name", ["METRIC_AFTER_UPDATE"], `/api/metric/${m.id}`);
  const w = (await req("POST", "/api/webhook", { name: "w", target: "https://example.com", email: "a@b.co" })).body;
  await req("POST", `/api/webhook/${w.id}/group/CITY_AFTER_INSERT`);
  await expectEvents("webhook", []);
  await req("DELETE", `/api/person/${p.id}`);
  await expectEvents("person delete 409", []);
  await req("DELETE", `/api/city/${city.id}`);
  await expectEvents("city delete 409", []);
  await req("DELETE", `/api/product/${prod.id}`);
  await expectEvents("product delete 409", []);
  await req("POST", `/api/contract/${ct.id}/items`, { items: [] });
  newEvents();
  const before = (await req("GET", `/api/product/${prod.id}`)).body;
  await req("DELETE", `/api/product/${prod.id}`);
  const ev = newEvents();
  if (ev.length !== 1 || JSON.stringify(ev[0].payload.data) !== JSON.stringify(before)) F.push("product delete payload");
  const up = await t.req("POST", "/api/contract/create/externalapp/name/erp2", { token: admin.token, body: contractBody(3) });
  const ev2 = newEvents();
  for (const e of ev2) {
    const path = e.type.startsWith("CITY") ? "city" : e.type.startsWith("PERSON") ? "person" : "contract";
    const g = (await req("GET", `/api/${path}/${e.record_id}`)).body;
    if (JSON.stringify(Object.entries(e.payload.data).sort()) !== JSON.stringify(Object.entries(g).sort())) F.push(`upsert ${e.type} payload`);
  }
  console.log(F.join("\n"));
  expect(F).toEqual([]);
});
