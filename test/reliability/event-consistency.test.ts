// Events fire exactly when a record's representation changes: an upsert that changes nothing
// fires nothing, and a classification's rename or delete updates the products and contracts
// that show its name.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { contractBody } from "../support/contract-body";
import { lastSeq, newEvents, registryApp, tableCounts } from "../support/registry";
import { testSqliteOnly } from "../support/backend";

let f: Awaited<ReturnType<typeof registryApp>>;
let token: string;
let corpId: string;
let app: any;
const byName = (body: unknown) => f.t.req("POST", "/api/contract/create/externalapp/name/erp", { apiKey: app.api_key, body });
const byId = (body: unknown) => f.t.req("POST", `/api/contract/create/externalapp/id/${app.id}`, { token, body });
const getContract = async (id: string) => (await f.t.req("GET", `/api/contract/${id}`, { token })).body;
const getProduct = async (id: string) => (await f.t.req("GET", `/api/product/${id}`, { token })).body;
/** Timestamps have millisecond resolution: let one pass so a bumped updated_at differs. */
const tick = () => Bun.sleep(3);

beforeAll(async () => {
  f = await registryApp();
  token = f.admin.token;
  corpId = f.admin.corpId;
  app = (await f.t.req("POST", "/api/externalapp", { token, body: { name: "erp" } })).body;
});
afterAll(() => f.t.close());

describe("unchanged contract upserts change nothing", () => {
  test("the same body again: no write, same updated_at, no event, the answer of an update", async () => {
    const body = contractBody(1);
    const first = await byName(body);
    expect(first.status).toBe(200);
    const stored = await getContract(first.body.id);
    const counts = tableCounts(f.t, corpId);
    const mark = lastSeq(f.t, corpId);
    await tick();
    for (const send of [byName, byId]) {
      const again = await send(body);
      expect(again.status).toBe(200);
      // An update's answer: no Location, the password masked, the identity added.
      expect(again.headers.get("location")).toBeNull();
      const { identity, ...view } = again.body;
      expect(identity).toBe("contract-1");
      expect(view).toEqual(stored);
    }
    expect(newEvents(f.t, corpId, mark)).toEqual([]);
    expect(tableCounts(f.t, corpId)).toEqual(counts);
    expect((await getContract(first.body.id)).updated_at).toBe(stored.updated_at);
  });

  test("equal after normalization: dates as GET shows them, defaults left out, nulls left out", async () => {
    const body = contractBody(2);
    const first = await byName(body);
    const stored = await getContract(first.body.id);
    const mark = lastSeq(f.t, corpId);
    await tick();
    const { contract_status: _s, end_date: _e, json_billing: _b, ...rest } = body;
    const echoed = {
      ...rest,
      signature_date: stored.signature_date,
      approval_date: stored.approval_date,
      start_date: stored.start_date,
      address: { ...body.address, line2: undefined },
    };
    const again = await byId(echoed);
    expect(again.status).toBe(200);
    expect(again.body.updated_at).toBe(stored.updated_at);
    expect(newEvents(f.t, corpId, mark)).toEqual([]);
  });

  test("config, flags and links set since are kept and do not make it a change", async () => {
    await f.t.req("POST", "/api/classification", { token, body: { name: "vip" } });
    const body = contractBody(3);
    const id = (await byName(body)).body.id;
    await f.t.req("POST", `/api/contract/${id}/config`, { token, body: { max_upload: "10M", password: "secret-1" } });
    await f.t.req("PATCH", `/api/contract/${id}/flags`, { token, body: { add: ["vip"] } });
    const stored = await getContract(id);
    const mark = lastSeq(f.t, corpId);
    await tick();
    const again = await byName(body);
    expect(again.status).toBe(200);
    expect(again.body.flags).toEqual(["vip"]);
    expect(again.body.config).toMatchObject({ max_upload: "10M", password: "********" });
    expect(again.body.updated_at).toBe(stored.updated_at);
    expect(newEvents(f.t, corpId, mark)).toEqual([]);
  });

  test("a changed field: exactly one event, carrying the new view, and a new updated_at", async () => {
    const body = contractBody(4);
    const stored = (await byName(body)).body;
    const mark = lastSeq(f.t, corpId);
    await tick();
    const changed = await byName({ ...body, total_value: 149.9 });
    expect(changed.status).toBe(200);
    expect(changed.body.updated_at > stored.updated_at).toBe(true);
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => [e.type, e.record_id])).toEqual([["CONTRACT_AFTER_UPDATE", stored.id]]);
    expect(ev[0].payload.data).toEqual(await getContract(stored.id));
    expect(ev[0].payload.data.total_value).toBe(149.9);
  });

  test("a changed customer changes the contract's view too: the person's and the contract's event", async () => {
    const body = contractBody(5);
    const stored = (await byName(body)).body;
    const mark = lastSeq(f.t, corpId);
    await tick();
    const renamed = { ...body.customer, name: "Renamed Five" };
    const res = await byName({ ...body, customer: renamed, billing_customer: renamed });
    expect(res.status).toBe(200);
    expect(res.body.updated_at > stored.updated_at).toBe(true);
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => [e.type, e.record_id])).toEqual([
      ["PERSON_AFTER_UPDATE", stored.customer.id],
      ["CONTRACT_AFTER_UPDATE", stored.id],
    ]);
    expect(ev[1].payload.data.customer.name).toBe("Renamed Five");
  });

  // SQLite-only: it counts on the burst reaching the group commit in the order sent, which SQLite's
  // synchronous reads keep; on PostgreSQL each upsert's read first awaits the server, so the changed
  // body may be applied before its unchanged twin, which then changes it back (a second event).
  testSqliteOnly("a burst of identical upserts sharing commits fires nothing; a changed one among them fires once", async () => {
    const bodies = Array.from({ length: 8 }, (_, i) => contractBody(100 + i));
    const created = await Promise.all(bodies.map(byName));
    expect(created.map((r) => r.status)).toEqual(Array(8).fill(200));
    const mark = lastSeq(f.t, corpId);
    await tick();
    const again = await Promise.all([...bodies.map(byName), byName({ ...bodies[3], contract_stage: "UNINSTALLED" })]);
    expect(again.map((r) => r.status)).toEqual(Array(9).fill(200));
    again.slice(0, 8).forEach((r, i) => {
      if (i !== 3) expect(r.body.updated_at).toBe(created[i].body.updated_at);
    });
    expect(newEvents(f.t, corpId, mark).map((e) => [e.type, e.record_id])).toEqual([["CONTRACT_AFTER_UPDATE", created[3].body.id]]);
  });
});

describe("classification rename and delete propagate to products and contracts", () => {
  let products: Record<string, any>;
  let contracts: Record<string, any>;
  let fiberId: string;

  beforeAll(async () => {
    fiberId = (await f.t.req("POST", "/api/classification", { token, body: { name: "fiber" } })).body.id;
    await f.t.req("POST", "/api/classification", { token, body: { name: "promo" } });
    await f.t.req("POST", "/api/classification", { token, body: { name: "unused" } });
    products = {};
    for (const [key, names] of [["p1", ["fiber", "promo"]], ["p2", ["promo"]], ["p3", []]] as const) {
      const p = (await f.t.req("POST", "/api/product", { token, body: { identity: `CL-${key}`, name: key } })).body;
      await f.t.req("PUT", `/api/product/${p.id}/classifications`, { token, body: { names } });
      products[key] = p.id;
    }
    contracts = {};
    for (const [key, flags, i] of [["c1", ["fiber"], 201], ["c2", ["fiber", "promo"], 202], ["c3", [], 203]] as const) {
      const c = (await byName(contractBody(i))).body;
      if (flags.length) await f.t.req("PATCH", `/api/contract/${c.id}/flags`, { token, body: { add: flags } });
      contracts[key] = c.id;
    }
  });

  const snapshot = async () => {
    const out: Record<string, any> = {};
    for (const [k, id] of Object.entries(products)) out[k] = await getProduct(id);
    for (const [k, id] of Object.entries(contracts)) out[k] = await getContract(id);
    return out;
  };

  test("a rename: one event per product and contract showing it, with the new name; the others nothing", async () => {
    const before = await snapshot();
    const mark = lastSeq(f.t, corpId);
    await tick();
    const res = await f.t.req("PUT", `/api/classification/${fiberId}`, { token, body: { name: "fibra" } });
    expect(res.status).toBe(200);
    const after = await snapshot();
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => e.record_id).sort()).toEqual([products.p1, contracts.c1, contracts.c2].sort());
    const of = (id: string) => ev.find((e) => e.record_id === id)!;
    expect(of(products.p1).type).toBe("PRODUCT_AFTER_UPDATE");
    expect(of(products.p1).payload.data).toEqual(after.p1);
    expect(after.p1.classifications).toEqual(["fibra", "promo"]);
    for (const c of ["c1", "c2"]) {
      expect(of(contracts[c]).type).toBe("CONTRACT_AFTER_UPDATE");
      expect(of(contracts[c]).payload.data).toEqual(after[c]);
    }
    expect(after.c1.flags).toEqual(["fibra"]);
    expect(after.c2.flags).toEqual(["fibra", "promo"]);
    // Changed records: a new updated_at; the others untouched.
    for (const k of ["p1", "c1", "c2"]) expect(after[k].updated_at > before[k].updated_at).toBe(true);
    for (const k of ["p2", "p3", "c3"]) expect(after[k]).toEqual(before[k]);
  });

  test("an update that keeps the name, or fails, fires nothing", async () => {
    const before = await snapshot();
    const mark = lastSeq(f.t, corpId);
    await tick();
    const same = await f.t.req("PUT", "/api/classification/name/fibra", { token, body: { name: "fibra", description: "Fiber plans", color: "#00ff00" } });
    expect(same.status).toBe(200);
    expect(same.body.color).toBe("#00ff00");
    expect((await f.t.req("PUT", "/api/classification/name/fibra", { token, body: { name: "promo" } })).status).toBe(409);
    expect(newEvents(f.t, corpId, mark)).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  test("a rename by name fires the same way", async () => {
    const mark = lastSeq(f.t, corpId);
    const res = await f.t.req("PUT", "/api/classification/name/fibra", { token, body: { name: "fiber-optic" } });
    expect(res.status).toBe(200);
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => e.record_id).sort()).toEqual([products.p1, contracts.c1, contracts.c2].sort());
    expect(ev.find((e) => e.record_id === products.p1)!.payload.data.classifications).toEqual(["fiber-optic", "promo"]);
    expect(ev.find((e) => e.record_id === contracts.c1)!.payload.data.flags).toEqual(["fiber-optic"]);
  });

  test("a delete by name: one event per product and contract that carried it, without it", async () => {
    const before = await snapshot();
    const mark = lastSeq(f.t, corpId);
    await tick();
    expect((await f.t.req("DELETE", "/api/classification/name/promo", { token })).status).toBe(204);
    const after = await snapshot();
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => [e.type, e.record_id]).sort()).toEqual(
      [
        ["PRODUCT_AFTER_UPDATE", products.p1],
        ["PRODUCT_AFTER_UPDATE", products.p2],
        ["CONTRACT_AFTER_UPDATE", contracts.c2],
      ].sort(),
    );
    for (const e of ev) expect(e.payload.data).toEqual(Object.values(after).find((v) => v.id === e.record_id));
    expect(after.p1.classifications).toEqual(["fiber-optic"]);
    expect(after.p2.classifications).toEqual([]);
    expect(after.c2.flags).toEqual(["fiber-optic"]);
    for (const k of ["p1", "p2", "c2"]) expect(after[k].updated_at > before[k].updated_at).toBe(true);
    for (const k of ["p3", "c1", "c3"]) expect(after[k]).toEqual(before[k]);
  });

  test("a delete by id likewise; a classification nobody carries fires nothing", async () => {
    let mark = lastSeq(f.t, corpId);
    expect((await f.t.req("DELETE", "/api/classification/name/unused", { token })).status).toBe(204);
    expect(newEvents(f.t, corpId, mark)).toEqual([]);
    mark = lastSeq(f.t, corpId);
    expect((await f.t.req("DELETE", `/api/classification/${fiberId}`, { token })).status).toBe(204);
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => [e.type, e.record_id]).sort()).toEqual(
      [
        ["PRODUCT_AFTER_UPDATE", products.p1],
        ["CONTRACT_AFTER_UPDATE", contracts.c1],
        ["CONTRACT_AFTER_UPDATE", contracts.c2],
      ].sort(),
    );
    const after = await snapshot();
    expect(after.p1.classifications).toEqual([]);
    expect([after.c1.flags, after.c2.flags]).toEqual([[], []]);
    expect((await f.t.req("DELETE", `/api/classification/${fiberId}`, { token })).status).toBe(404);
  });
});

describe("product classifications set to the set it has", () => {
  test("in another order or with repeats: nothing written, no event; a different set fires once", async () => {
    await f.t.req("POST", "/api/classification", { token, body: { name: "tv" } });
    await f.t.req("POST", "/api/classification", { token, body: { name: "phone" } });
    const p = (await f.t.req("POST", "/api/product", { token, body: { identity: "SAME-1", name: "Combo" } })).body;
    const set = await f.t.req("PUT", `/api/product/${p.id}/classifications`, { token, body: { names: ["tv", "phone"] } });
    const mark = lastSeq(f.t, corpId);
    await tick();
    const same = await f.t.req("PUT", `/api/product/${p.id}/classifications`, { token, body: { names: ["phone", "tv", "phone"] } });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(set.body);
    expect(newEvents(f.t, corpId, mark)).toEqual([]);
    const changed = await f.t.req("PUT", `/api/product/${p.id}/classifications`, { token, body: { names: ["tv"] } });
    expect(changed.body.classifications).toEqual(["tv"]);
    expect(changed.body.updated_at > set.body.updated_at).toBe(true);
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => [e.type, e.record_id])).toEqual([["PRODUCT_AFTER_UPDATE", p.id]]);
    expect(ev[0].payload.data).toEqual(changed.body);
  });
});
