// Local contract rows: create, alter, address, status transitions, config, items, flags, links.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { UNKNOWN_ID } from "../../support/helpers";
import { lastSeq, newEvents, registryApp } from "../../support/registry";
import { handleOf } from "../../../src/db/sqlite";
import { findContractByUsername } from "../../../src/modules/contract/service";

let f: Awaited<ReturnType<typeof registryApp>>;
let token: string;
let corpId: string;
let cityId: string;
let customerId: string;
let agentId: string;
const req = (...a: Parameters<typeof f.t.req>) => f.t.req(...a);

const input = (over: Record<string, unknown> = {}) => ({
  customer_id: customerId,
  number: `N-${Math.random().toString(36).slice(2, 10)}`,
  start_date: "2025-03-01",
  total_value: 99.9,
  address: { line1: "Rua 1", city_id: cityId },
  ...over,
});

beforeAll(async () => {
  f = await registryApp();
  token = f.admin.token;
  corpId = f.admin.corpId;
  cityId = (await req("POST", "/api/city", { token, body: { name: "Campinas", state: "SP", country: "BR" } })).body.id;
  customerId = (await req("POST", "/api/person", { token, body: { name: "Customer" } })).body.id;
  agentId = (await req("POST", "/api/person", { token, body: { name: "Agent" } })).body.id;
});
afterAll(() => f.t.close());

describe("GET|POST /api/contract; GET|PUT /api/contract/{id}; POST /api/contract/{id}/config|address|externalapp; GET|POST /api/contract/{id}/items; PUT /api/contract/{id}/active|inactive: local contract rows", () => {
  test("create: defaults, generated config shown once, dates as midnight, events", async () => {
    const mark = lastSeq(f.t, corpId);
    const res = await req("POST", "/api/contract", { token, body: input({ number: "C-1", agent_id: agentId, end_date: "2026-03-01T10:00:00-03:00", json_items: [1, 2] }) });
    expect(res.status).toBe(200);
    expect(res.headers.get("location")).toBe(`/api/contract/${res.body.id}`);
    const c = res.body;
    expect(c.customer.id).toBe(customerId);
    expect(c.billing_customer.id).toBe(customerId);
    expect(c.agent.id).toBe(agentId);
    expect(c.contract_status).toBe("ACTIVE");
    expect(c.contract_stage).toBe("PENDING");
    expect(c.start_date).toBe("2025-03-01T00:00:00.000-03:00");
    expect(c.end_date).toBe("2026-03-01T00:00:00.000-03:00");
    expect(c.items).toEqual([1, 2]);
    expect(c.original).toBeNull();
    expect(c.address.city.id).toBe(cityId);
    expect(c.config.username).toBe("C-1");
    expect(c.config.password).toMatch(/^[A-Za-z0-9]{12}$/);
    const shown = await req("GET", `/api/contract/${c.id}`, { token });
    expect(shown.body.config.password).toBe("********");
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => e.type)).toEqual(["CONTRACT_AFTER_INSERT"]);
    expect(ev[0].payload.data).toEqual(shown.body);
    expect(JSON.stringify(ev)).not.toContain(c.config.password);
    // RADIUS lookup by username, with the stored password.
    const found = await findContractByUsername(handleOf(drizzle(f.t.sql(corpId))), "C-1");
    expect(found).toMatchObject({ contract: { id: c.id, contract_status: "ACTIVE" }, config: { username: "C-1", password: c.config.password } });
    expect(await findContractByUsername(handleOf(drizzle(f.t.sql(corpId))), "nobody")).toBeNull();
  });

  test("username defaults to the id when the number is taken as a username", async () => {
    const a = (await req("POST", "/api/contract", { token, body: input() })).body;
    await req("POST", `/api/contract/${a.id}/config`, { token, body: { username: "C-TAKEN" } });
    const b = (await req("POST", "/api/contract", { token, body: input({ number: "C-TAKEN" }) })).body;
    expect(b.config.username).toBe(b.id);
  });

  test("create/alter 400s name the field; 409 number; nothing written on failure", async () => {
    const mark = lastSeq(f.t, corpId);
    const bad = await req("POST", "/api/contract", { token, body: input({ customer_id: UNKNOWN_ID, agent_id: UNKNOWN_ID, address: { line1: "x", city_id: UNKNOWN_ID } }) });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: any) => e.path).sort()).toEqual(["address.city_id", "agent_id", "customer_id"]);
    expect((await req("POST", "/api/contract", { token, body: input({ start_date: "2025-13-01" }) })).body.errors[0].path).toBe("start_date");
    expect((await req("POST", "/api/contract", { token, body: input({ start_date: undefined }) })).body.errors[0].path).toBe("start_date");
    expect((await req("POST", "/api/contract", { token, body: input({ number: "C-1" }) })).status).toBe(409);
    const c = (await req("POST", "/api/contract", { token, body: input({ number: "C-2" }) })).body;
    expect((await req("PUT", `/api/contract/${c.id}`, { token, body: input({ number: "C-1" }) })).status).toBe(409);
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => e.type)).toEqual(["CONTRACT_AFTER_INSERT"]);
  });

  test("alter replaces every field and keeps config, items, flags", async () => {
    await req("POST", "/api/classification", { token, body: { name: "vip" } });
    const product = (await req("POST", "/api/product", { token, body: { identity: "P-1", name: "Plan", price: 10 } })).body;
    const c = (await req("POST", "/api/contract", { token, body: input({ agent_id: agentId, json_original: { a: 1 } }) })).body;
    await req("PATCH", `/api/contract/${c.id}/flags`, { token, body: { add: ["vip"] } });
    await req("POST", `/api/contract/${c.id}/items`, { token, body: { items: [{ product_id: product.id }] } });
    const mark = lastSeq(f.t, corpId);
    const put = await req("PUT", `/api/contract/${c.id}`, { token, body: input({ number: c.number, contract_stage: "INSTALLED", total_value: 5 }) });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ agent: null, original: null, contract_stage: "INSTALLED", total_value: 5, flags: ["vip"] });
    expect(put.body.config.username).toBe(c.config.username);
    expect(put.body.config.password).toBe("********");
    expect((await req("GET", `/api/contract/${c.id}/items`, { token })).body.items).toHaveLength(1);
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => e.type)).toEqual(["CONTRACT_AFTER_UPDATE"]);
    expect(ev[0].payload.data).toEqual(put.body);
  });

  test("address route", async () => {
    const c = (await req("POST", "/api/contract", { token, body: input() })).body;
    const res = await req("POST", `/api/contract/${c.id}/address`, { token, body: { line1: "Av. 2", line2: "fundos", city_id: cityId } });
    expect(res.status).toBe(200);
    expect(res.body.address).toMatchObject({ line1: "Av. 2", line2: "fundos" });
    const bad = await req("POST", `/api/contract/${c.id}/address`, { token, body: { line1: "Av. 2", city_id: UNKNOWN_ID } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("city_id");
  });

  test("active/inactive transitions, 409 from CANCELLED, one event per real change", async () => {
    const c = (await req("POST", "/api/contract", { token, body: input({ contract_status: "SUSPENDED" }) })).body;
    const mark = lastSeq(f.t, corpId);
    expect((await req("PUT", `/api/contract/${c.id}/active`, { token })).body.contract_status).toBe("ACTIVE");
    expect((await req("PUT", `/api/contract/${c.id}/active`, { token })).body.contract_status).toBe("ACTIVE");
    expect((await req("PUT", `/api/contract/${c.id}/inactive`, { token })).body.contract_status).toBe("INACTIVE");
    expect(newEvents(f.t, corpId, mark).map((e) => [e.type, e.payload.data.contract_status])).toEqual([
      ["CONTRACT_AFTER_UPDATE", "ACTIVE"],
      ["CONTRACT_AFTER_UPDATE", "INACTIVE"],
    ]);
    const cancelled = (await req("POST", "/api/contract", { token, body: input({ contract_status: "CANCELLED" }) })).body;
    const mark2 = lastSeq(f.t, corpId);
    expect((await req("PUT", `/api/contract/${cancelled.id}/active`, { token })).status).toBe(409);
    expect((await req("PUT", `/api/contract/${cancelled.id}/inactive`, { token })).status).toBe(409);
    expect(newEvents(f.t, corpId, mark2)).toEqual([]);
  });

  test("config: password in clear only when set here, username unique, rates and addresses checked", async () => {
    const a = (await req("POST", "/api/contract", { token, body: input() })).body;
    const b = (await req("POST", "/api/contract", { token, body: input() })).body;
    const mark = lastSeq(f.t, corpId);
    const set = await req("POST", `/api/contract/${a.id}/config`, {
      token,
      body: { username: "alice", password: "s3cret-pass", min_upload: "10M", max_upload: "1.5G", min_download: "512k", max_download: "100M", pool_name_ipv4: "pool4", ipv4: "10.0.0.7", poll_name_ipv6: "pool6", ipv6: "2001:db8::/64" },
    });
    expect(set.status).toBe(200);
    expect(set.body.config).toEqual({
      username: "alice",
      password: "s3cret-pass",
      min_upload: "10M",
      max_upload: "1.5G",
      min_download: "512k",
      max_download: "100M",
      pool_name_ipv4: "pool4",
      ipv4: "10.0.0.7",
      poll_name_ipv6: "pool6",
      ipv6: "2001:db8::/64",
      allowance_gb: null,
      throttle_max_upload: null,
      throttle_max_download: null,
    });
    // Only the fields sent change (issue 29): the others keep their values.
    const again = await req("POST", `/api/contract/${a.id}/config`, { token, body: { max_upload: "20M" } });
    expect(again.body.config).toEqual({ username: "alice", password: "********", min_upload: "10M", max_upload: "20M", min_download: "512k", max_download: "100M", pool_name_ipv4: "pool4", ipv4: "10.0.0.7", poll_name_ipv6: "pool6", ipv6: "2001:db8::/64", allowance_gb: null, throttle_max_upload: null, throttle_max_download: null });
    expect((await findContractByUsername(handleOf(drizzle(f.t.sql(corpId))), "alice"))!.config.password).toBe("s3cret-pass");
    expect((await req("GET", `/api/contract/${a.id}`, { token })).body.config.password).toBe("********");
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => e.type)).toEqual(["CONTRACT_AFTER_UPDATE", "CONTRACT_AFTER_UPDATE"]);
    expect(JSON.stringify(ev)).not.toContain("s3cret-pass");
    expect(ev[0].payload.data.config.password).toBe("********");

    // null clears a field; username and password are never cleared; an empty body changes nothing.
    const cleared = await req("POST", `/api/contract/${a.id}/config`, { token, body: { min_upload: null, ipv6: null, password: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.config).toMatchObject({ username: "alice", password: "********", min_upload: null, max_upload: "20M", ipv6: null, ipv4: "10.0.0.7" });
    expect((await findContractByUsername(handleOf(drizzle(f.t.sql(corpId))), "alice"))!.config.password).toBe("s3cret-pass");
    const mark1 = lastSeq(f.t, corpId);
    expect((await req("POST", `/api/contract/${a.id}/config`, { token, body: {} })).body.config).toEqual(cleared.body.config);
    expect(newEvents(f.t, corpId, mark1)).toEqual([]);
    // A min sent alone is checked against the stored max.
    const over = await req("POST", `/api/contract/${a.id}/config`, { token, body: { min_download: "1G" } });
    expect(over.status).toBe(400);
    expect(over.body.errors.map((e: any) => e.path)).toEqual(["min_download"]);
    expect((await req("GET", `/api/contract/${a.id}`, { token })).body.config.min_download).toBe("512k");

    const mark2 = lastSeq(f.t, corpId);
    expect((await req("POST", `/api/contract/${b.id}/config`, { token, body: { username: "alice" } })).status).toBe(409);
    const cases: [string, Record<string, unknown>][] = [
      ["min_upload", { min_upload: "2G", max_upload: "1G" }],
      ["max_download", { max_download: "10X" }],
      ["ipv4", { ipv4: "10.0.0.256" }],
      ["ipv6", { ipv6: "10.0.0.1" }],
      ["password", { password: "abc" }],
    ];
    for (const [path, body] of cases) {
      const res = await req("POST", `/api/contract/${b.id}/config`, { token, body });
      expect(res.status, path).toBe(400);
      expect(res.body.errors.map((e: any) => e.path), path).toContain(path);
    }
    expect(newEvents(f.t, corpId, mark2)).toEqual([]);
  });

  test("items: defaults from the product, replace the set, 400 unknown product naming items.N.product_id", async () => {
    const p1 = (await req("POST", "/api/product", { token, body: { identity: "I-1", name: "Fiber 300", price: 120 } })).body;
    const p2 = (await req("POST", "/api/product", { token, body: { identity: "I-2", name: "Router" } })).body;
    const c = (await req("POST", "/api/contract", { token, body: input() })).body;
    expect((await req("GET", `/api/contract/${c.id}/items`, { token })).body).toEqual({ items: [] });
    const mark = lastSeq(f.t, corpId);
    const res = await req("POST", `/api/contract/${c.id}/items`, { token, body: { items: [{ product_id: p1.id }, { product_id: p2.id, description: "Wi-Fi router", quantity: 2, unit_price: 15.5 }] } });
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: any) => [i.product_id, i.description, i.quantity, i.unit_price, i.total])).toEqual([
      [p1.id, "Fiber 300", 1, 120, 120],
      [p2.id, "Wi-Fi router", 2, 15.5, 31],
    ]);
    expect((await req("GET", `/api/contract/${c.id}/items`, { token })).body).toEqual(res.body);
    const bad = await req("POST", `/api/contract/${c.id}/items`, { token, body: { items: [{ product_id: p1.id }, { product_id: UNKNOWN_ID }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("items.1.product_id");
    expect((await req("POST", `/api/contract/${c.id}/items`, { token, body: { items: [{ product_id: p1.id, quantity: 0 }] } })).body.errors[0].path).toBe("items.0.quantity");
    expect((await req("DELETE", `/api/product/${p1.id}`, { token })).status).toBe(409);
    const replaced = await req("POST", `/api/contract/${c.id}/items`, { token, body: { items: [] } });
    expect(replaced.body.items).toEqual([]);
    expect(newEvents(f.t, corpId, mark).map((e) => e.type)).toEqual(["CONTRACT_AFTER_UPDATE", "CONTRACT_AFTER_UPDATE"]);
  });

  test("flags: add/remove, 400 unknown or in both lists, absent removal ignored", async () => {
    await req("POST", "/api/classification", { token, body: { name: "fiber" } });
    await req("POST", "/api/classification", { token, body: { name: "promo" } });
    const c = (await req("POST", "/api/contract", { token, body: input() })).body;
    const other = (await req("POST", "/api/contract", { token, body: input() })).body;
    await req("PATCH", `/api/contract/${other.id}/flags`, { token, body: { add: ["promo"] } });
    const mark = lastSeq(f.t, corpId);
    expect((await req("PATCH", `/api/contract/${c.id}/flags`, { token, body: { add: ["promo", "fiber"] } })).body).toEqual({ flags: ["fiber", "promo"] });
    expect((await req("PATCH", `/api/contract/${c.id}/flags`, { token, body: { remove: ["promo"] } })).body).toEqual({ flags: ["fiber"] });
    expect((await req("PATCH", `/api/contract/${c.id}/flags`, { token, body: { remove: ["promo"] } })).body).toEqual({ flags: ["fiber"] });
    expect((await req("GET", `/api/contract/${other.id}`, { token })).body.flags).toEqual(["promo"]);
    const unknown = await req("PATCH", `/api/contract/${c.id}/flags`, { token, body: { add: ["ghost"] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].path).toBe("add.0");
    const both = await req("PATCH", `/api/contract/${c.id}/flags`, { token, body: { add: ["promo"], remove: ["fiber", "promo"] } });
    expect(both.status).toBe(400);
    expect(both.body.errors[0].path).toBe("remove.1");
    expect(newEvents(f.t, corpId, mark).map((e) => [e.type, e.payload.data.flags])).toEqual([
      ["CONTRACT_AFTER_UPDATE", ["fiber", "promo"]],
      ["CONTRACT_AFTER_UPDATE", ["fiber"]],
    ]);
    await req("DELETE", "/api/classification/name/fiber", { token });
    expect((await req("GET", `/api/contract/${c.id}`, { token })).body.flags).toEqual([]);
  });

  test("link to an external app (409 identity of another contract); list with ?customer_id; person delete 409", async () => {
    const app = (await req("POST", "/api/externalapp", { token, body: { name: "erp" } })).body;
    const other = (await req("POST", "/api/person", { token, body: { name: "Other Customer" } })).body;
    const a = (await req("POST", "/api/contract", { token, body: input({ customer_id: other.id }) })).body;
    const b = (await req("POST", "/api/contract", { token, body: input() })).body;
    const mark = lastSeq(f.t, corpId);
    const link = await req("POST", `/api/contract/${a.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "X-1" } });
    expect(link.body).toMatchObject({ record_type: "contract", record_id: a.id, identity: "X-1", external_app_name: "erp" });
    expect((await req("POST", `/api/contract/${b.id}/externalapp`, { token, body: { external_app_id: app.id, identity: "X-1" } })).status).toBe(409);
    expect(newEvents(f.t, corpId, mark)).toEqual([]);
    expect((await req("GET", "/api/contract/externalapp/name/erp/identity/X-1", { token })).body.id).toBe(a.id);
    const list = await req("GET", `/api/contract?customer_id=${other.id}`, { token });
    expect(list.body.items.map((c: any) => c.id)).toEqual([a.id]);
    expect((await req("GET", "/api/contract?json_items=1", { token })).status).toBe(400);
    expect((await req("DELETE", `/api/person/${other.id}`, { token })).status).toBe(409);
  });

  test("401, 403, 404 and another corporation's contract is 404 on every contract route", async () => {
    const c = (await req("POST", "/api/contract", { token, body: input() })).body;
    expect((await req("GET", "/api/contract")).status).toBe(401);
    expect((await req("GET", "/api/contract", { token: f.nobody.token })).status).toBe(403);
    expect((await req("GET", `/api/contract/${UNKNOWN_ID}`, { token })).status).toBe(404);
    const o = f.other.token;
    const routes: [string, string, unknown?][] = [
      ["GET", `/api/contract/${c.id}`],
      ["PUT", `/api/contract/${c.id}`, input()],
      ["POST", `/api/contract/${c.id}/externalapp`, { external_app_id: UNKNOWN_ID, identity: "x" }],
      ["POST", `/api/contract/${c.id}/address`, { line1: "x", city_id: cityId }],
      ["PUT", `/api/contract/${c.id}/active`],
      ["PUT", `/api/contract/${c.id}/inactive`],
      ["POST", `/api/contract/${c.id}/config`, { username: "zzz" }],
      ["GET", `/api/contract/${c.id}/items`],
      ["POST", `/api/contract/${c.id}/items`, { items: [] }],
      ["PATCH", `/api/contract/${c.id}/flags`, { add: [] }],
    ];
    for (const [method, path, body] of routes) expect((await req(method, path, { token: o, body })).status, `${method} ${path}`).toBe(404);
  });
});
