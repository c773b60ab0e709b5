// The interface document's exchange: POST /api/contract/create/externalapp/name/{name}.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { UNKNOWN_ID } from "../../support/helpers";
import { lastSeq, newEvents, registryApp, tableCounts } from "../../support/registry";

let f: Awaited<ReturnType<typeof registryApp>>;
let token: string;
let corpId: string;
let app: any;
const req = (...a: Parameters<typeof f.t.req>) => f.t.req(...a);

const city = (identity: string, name: string, state: string) => ({ identity, name, state, country: "BR" });
const address = (line1: string, c: ReturnType<typeof city>) => ({
  line1,
  line2: "Apto 12",
  district: "Centro",
  postal_code: "13010-000",
  city: c,
  latitude: -22.9056,
  longitude: -47.0608,
  detail: "Portão azul",
});

/** The request shape of the document, every field present. */
function documentBody(overrides: Record<string, unknown> = {}) {
  return {
    identity: "CT-1001",
    customer: {
      identity: "CUS-1",
      name: "Maria da Silva",
      display_name: "Maria",
      tp_doc_identity: "CPF",
      doc_identity: "123.456.789-00",
      corporate: false,
      address: address("Rua das Flores, 100", city("CITY-CPS", "Campinas", "SP")),
    },
    billing_customer: {
      identity: "CUS-2",
      name: "Silva Ltda",
      display_name: "Silva",
      tp_doc_identity: "CNPJ",
      doc_identity: "12.345.678/0001-90",
      corporate: true,
      address: address("Av. Brasil, 2000", city("CITY-SAO", "São Paulo", "SP")),
    },
    agent: {
      identity: "AG-7",
      name: "João Vendedor",
      display_name: "João",
      tp_doc_identity: "CPF",
      doc_identity: "987.654.321-00",
      corporate: false,
      address: null,
    },
    number: "2025/0001",
    signature_date: "2025-01-31",
    approval_date: "2025-02-01",
    start_date: "2025-02-03",
    end_date: null,
    suspension_date: null,
    cancellation_date: null,
    total_value: 129.9,
    contract_status: "ACTIVE",
    contract_stage: "INSTALLED",
    address: address("Rua das Flores, 100", city("CITY-CPS", "Campinas", "SP")),
    json_original: { source: "erp", version: 3 },
    json_billing: { due_day: 10 },
    json_payment_method: "boleto",
    json_items: [{ sku: "FIB-100", qty: 1 }],
    ...overrides,
  };
}

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function expectParty(p: any, sent: any) {
  expect(Object.keys(p).sort()).toEqual(["address", "corporate", "display_name", "doc_identity", "id", "name", "tp_doc_identity"]);
  expect(p.id).toMatch(UUID);
  expect(p).toMatchObject({ name: sent.name, display_name: sent.display_name, tp_doc_identity: sent.tp_doc_identity, doc_identity: sent.doc_identity, corporate: sent.corporate });
  expect(typeof p.corporate).toBe("boolean");
  if (sent.address === null) expect(p.address).toBeNull();
  else expectAddress(p.address, sent.address);
}

function expectAddress(a: any, sent: any) {
  expect(Object.keys(a).sort()).toEqual(["city", "detail", "district", "latitude", "line1", "line2", "longitude", "postal_code"]);
  expect(a).toMatchObject({ line1: sent.line1, line2: sent.line2, district: sent.district, postal_code: sent.postal_code, detail: sent.detail });
  expect(typeof a.latitude).toBe("number");
  expect(a.latitude).toBe(sent.latitude);
  expect(a.longitude).toBe(sent.longitude);
  expect(Object.keys(a.city).sort()).toEqual(["country", "id", "name", "state"]);
  expect(a.city.id).toMatch(UUID);
  expect(a.city).toMatchObject({ name: sent.city.name, state: sent.city.state, country: sent.city.country });
  expect(a.city.identity).toBeUndefined();
}

beforeAll(async () => {
  f = await registryApp();
  token = f.admin.token;
  corpId = f.admin.corpId;
  app = (await req("POST", "/api/externalapp", { token, body: { name: "erp" } })).body;
});
afterAll(() => f.t.close());

describe("POST /api/contract/create/externalapp/name/{externalAppName}|id/{externalAppId}; GET /api/contract/externalapp/…: contract upsert from an external application", () => {
  test("the document's exchange, checked field by field and type by type", async () => {
    const body = documentBody();
    const mark = lastSeq(f.t, corpId);
    const res = await req("POST", "/api/contract/create/externalapp/name/erp", { apiKey: app.api_key, body });
    expect(res.status).toBe(200);
    const c = res.body;
    expect(Object.keys(c).sort()).toEqual(
      [
        "address", "agent", "approval_date", "billing", "billing_customer", "cancellation_date", "config", "contract_status", "contract_stage",
        "created_at", "customer", "end_date", "flags", "id", "identity", "items", "network", "number", "original", "payment_method", "signature_date",
        "start_date", "suspension_date", "total_value", "updated_at",
      ].sort(),
    );
    expect(c.id).toMatch(UUID);
    expect(c.identity).toBe("CT-1001");
    expectParty(c.customer, body.customer);
    expectParty(c.billing_customer, body.billing_customer);
    expectParty(c.agent, body.agent);
    expect(new Set([c.customer.id, c.billing_customer.id, c.agent.id]).size).toBe(3);
    expect(c.number).toBe("2025/0001");
    // Dates: midnight in the corporation's timezone (America/Sao_Paulo, -03:00).
    expect(c.signature_date).toBe("2025-01-31T00:00:00.000-03:00");
    expect(c.approval_date).toBe("2025-02-01T00:00:00.000-03:00");
    expect(c.start_date).toBe("2025-02-03T00:00:00.000-03:00");
    for (const d of [c.signature_date, c.approval_date, c.start_date]) expect(d).toMatch(ISO_WITH_OFFSET);
    expect(c.end_date).toBeNull();
    expect(c.cancellation_date).toBeNull();
    expect(c.suspension_date).toBeNull();
    // Divergence 1: the top-level address sent is stored and returned.
    expectAddress(c.address, body.address);
    expect(c.address.city.id).toBe(c.customer.address.city.id);
    expect(c.total_value).toBe(129.9);
    expect(c.contract_status).toBe("ACTIVE");
    expect(c.contract_stage).toBe("INSTALLED");
    expect(c.original).toEqual(body.json_original);
    expect(c.billing).toEqual(body.json_billing);
    expect(c.payment_method).toBe("boleto");
    expect(c.items).toEqual(body.json_items);
    expect(Object.keys(c.config).sort()).toEqual(
      ["ipv4", "ipv6", "max_download", "max_upload", "min_download", "min_upload", "password", "poll_name_ipv6", "pool_name_ipv4", "username", "allowance_gb", "throttle_max_upload", "throttle_max_download"].sort(),
    );
    expect(c.config.username).toBe("2025/0001");
    expect(c.config.password).toMatch(/^[A-Za-z0-9]{12}$/);
    for (const k of ["min_upload", "max_upload", "min_download", "max_download", "pool_name_ipv4", "ipv4", "poll_name_ipv6", "ipv6"]) expect(c.config[k]).toBeNull();
    expect(c.flags).toEqual([]);
    expect(c.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/);

    // Sent identities now resolve to the returned ids.
    expect((await req("GET", "/api/person/externalapp/name/erp/identity/CUS-1", { token })).body.id).toBe(c.customer.id);
    expect((await req("GET", "/api/city/externalapp/name/erp/identity/CITY-SAO", { token })).body.id).toBe(c.billing_customer.address.city.id);
    const shown = await req("GET", `/api/contract/${c.id}`, { token });
    expect(shown.body.config.password).toBe("********");
    const { identity: _i, config: _c1, ...rest } = c;
    const { config: _c2, ...shownRest } = shown.body;
    expect(shownRest).toEqual(rest);

    // Exactly its events: two cities, three persons, the contract; the password never.
    const ev = newEvents(f.t, corpId, mark);
    expect(ev.map((e) => e.type)).toEqual(["CITY_AFTER_INSERT", "PERSON_AFTER_INSERT", "CITY_AFTER_INSERT", "PERSON_AFTER_INSERT", "PERSON_AFTER_INSERT", "CONTRACT_AFTER_INSERT"]);
    const contractEvent = ev[5];
    expect(contractEvent.record_id).toBe(c.id);
    expect(contractEvent.payload.data).toEqual(shown.body);
    // A person's payload is the person as GET shows it, its address's city included.
    for (const e of ev.filter((e) => e.type === "PERSON_AFTER_INSERT")) expect(e.payload.data).toEqual((await req("GET", `/api/person/${e.record_id}`, { token })).body);
    expect(ev.filter((e) => e.type === "PERSON_AFTER_INSERT" && e.payload.data.address?.city).length).toBeGreaterThan(0);
    expect(JSON.stringify(ev)).not.toContain(c.config.password);
  });

  test("the same body twice updates instead of duplicating", async () => {
    const body = documentBody({ identity: "CT-2", number: "2025/0002", customer: { ...documentBody().customer, identity: "CUS-20" } });
    const first = await req("POST", "/api/contract/create/externalapp/name/erp", { token, body });
    expect(first.status).toBe(200);
    const before = tableCounts(f.t, corpId);
    const mark = lastSeq(f.t, corpId);
    const second = await req("POST", `/api/contract/create/externalapp/id/${app.id}`, { token, body });
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.customer.id).toBe(first.body.customer.id);
    expect(second.body.config.password).toBe("********");
    const after = tableCounts(f.t, corpId);
    expect({ ...after, events: 0 }).toEqual({ ...before, events: 0 });
    // Nothing changed, so nothing is written and nothing fires (not even the contract's update).
    expect(newEvents(f.t, corpId, mark).map((e) => e.type)).toEqual([]);
    expect(second.body.updated_at).toBe(first.body.updated_at);
    // A changed customer and city are updated in place, with their events.
    const changed = documentBody({
      identity: "CT-2",
      number: "2025/0002-B",
      customer: { ...body.customer, name: "Maria S. Souza", address: address("Rua Nova, 5", city("CITY-CPS", "Campinas", "São Paulo")) },
      address: address("Rua Nova, 5", city("CITY-CPS", "Campinas", "São Paulo")),
      json_items: null,
    });
    const mark2 = lastSeq(f.t, corpId);
    const third = await req("POST", "/api/contract/create/externalapp/name/erp", { token, body: changed });
    expect(third.status).toBe(200);
    expect(third.body.id).toBe(first.body.id);
    expect(third.body.number).toBe("2025/0002-B");
    expect(third.body.customer).toMatchObject({ id: first.body.customer.id, name: "Maria S. Souza" });
    expect(third.body.customer.address.city).toMatchObject({ id: first.body.customer.address.city.id, state: "São Paulo" });
    expect(third.body.items).toBeNull();
    expect(tableCounts(f.t, corpId).persons).toBe(before.persons);
    const updated = newEvents(f.t, corpId, mark2);
    expect(updated.map((e) => e.type)).toEqual(["CITY_AFTER_UPDATE", "PERSON_AFTER_UPDATE", "CONTRACT_AFTER_UPDATE"]);
    expect(updated[1].payload.data).toEqual((await req("GET", `/api/person/${first.body.customer.id}`, { token })).body);
    expect(updated[1].payload.data.address.city).toMatchObject({ id: first.body.customer.address.city.id, name: "Campinas", state: "São Paulo" });
  });

  test("an existing agent is linked, never overwritten (Divergence 2)", async () => {
    const body = documentBody({ identity: "CT-3", number: "2025/0003", agent: { identity: "AG-7", name: "Someone Else", corporate: true } });
    const mark = lastSeq(f.t, corpId);
    const res = await req("POST", "/api/contract/create/externalapp/name/erp", { token, body });
    expect(res.status).toBe(200);
    expect(res.body.agent).toMatchObject({ name: "João Vendedor", corporate: false });
    expect(newEvents(f.t, corpId, mark).filter((e) => e.type.startsWith("PERSON")).map((e) => e.type)).toEqual([]);
  });

  test("billing_customer left out is the customer; agent null is none", async () => {
    const res = await req("POST", "/api/contract/create/externalapp/name/erp", {
      token,
      body: documentBody({ identity: "CT-4", number: "2025/0004", billing_customer: undefined, agent: null, contract_status: undefined, contract_stage: undefined }),
    });
    expect(res.status).toBe(200);
    expect(res.body.billing_customer.id).toBe(res.body.customer.id);
    expect(res.body.agent).toBeNull();
    expect(res.body.contract_status).toBe("ACTIVE");
    expect(res.body.contract_stage).toBe("PENDING");
  });

  test("one bad nested field: 400 naming it and nothing written anywhere", async () => {
    const before = tableCounts(f.t, corpId);
    const base = documentBody({ identity: "CT-BAD", number: "BAD-1" });
    const cases: [string, unknown][] = [
      ["customer.address.city.state", { ...base, customer: { ...base.customer, address: { ...base.customer.address, city: { identity: "X", name: "X", country: "BR" } } } }],
      ["billing_customer.name", { ...base, billing_customer: { ...base.billing_customer, name: undefined } }],
      ["agent.identity", { ...base, agent: { name: "No Identity" } }],
      ["address.line1", { ...base, address: { ...base.address, line1: undefined } }],
      ["address.latitude", { ...base, address: { ...base.address, latitude: 123 } }],
      ["start_date", { ...base, start_date: "2025-02-30" }],
      ["end_date", { ...base, end_date: "tomorrow" }],
      ["contract_status", { ...base, contract_status: "DONE" }],
      ["total_value", { ...base, total_value: -1 }],
      ["identity", { ...base, identity: undefined }],
    ];
    for (const [path, body] of cases) {
      const res = await req("POST", "/api/contract/create/externalapp/name/erp", { token, body });
      expect(res.status, path).toBe(400);
      expect(res.body.type).toBe("urn:corpadmin:problem:validation");
      expect(res.body.errors.map((e: any) => e.path), path).toContain(path);
    }
    expect(tableCounts(f.t, corpId)).toEqual(before);
  });

  test("a conflict found mid-transaction rolls back everything already written (409 number)", async () => {
    const before = tableCounts(f.t, corpId);
    const body = documentBody({
      identity: "CT-NEW",
      number: "2025/0001",
      customer: { ...documentBody().customer, identity: "CUS-NEW", address: address("x", city("CITY-NEW", "Nova", "MG")) },
    });
    const res = await req("POST", "/api/contract/create/externalapp/name/erp", { token, body });
    expect(res.status).toBe(409);
    expect(tableCounts(f.t, corpId)).toEqual(before);
    expect((await req("GET", "/api/person/externalapp/name/erp/identity/CUS-NEW", { token })).status).toBe(404);
  });

  test("keys: only the named app's active key; 404 unknown app; 403 inactive app; 401 without credential", async () => {
    const other = (await req("POST", "/api/externalapp", { token, body: { name: "crm" } })).body;
    const body = documentBody({ identity: "CT-K", number: "K-1" });
    expect((await req("POST", "/api/contract/create/externalapp/name/erp", { apiKey: other.api_key, body })).status).toBe(403);
    expect((await req("POST", `/api/contract/create/externalapp/id/${app.id}`, { apiKey: other.api_key, body })).status).toBe(403);
    expect((await req("POST", "/api/contract/create/externalapp/name/ghost", { token, body })).status).toBe(404);
    expect((await req("POST", `/api/contract/create/externalapp/id/${UNKNOWN_ID}`, { token, body })).status).toBe(404);
    expect((await req("POST", "/api/contract/create/externalapp/name/erp", { body })).status).toBe(401);
    expect((await req("POST", "/api/contract/create/externalapp/name/erp", { token: f.nobody.token, body })).status).toBe(403);
    await req("PUT", `/api/externalapp/${other.id}`, { token, body: { name: "crm", status: false } });
    const before = tableCounts(f.t, corpId);
    expect((await req("POST", "/api/contract/create/externalapp/name/crm", { apiKey: other.api_key, body })).status).toBe(403);
    expect((await req("POST", "/api/contract/create/externalapp/name/crm", { token, body })).status).toBe(403);
    expect(tableCounts(f.t, corpId)).toEqual(before);
    // The contract lookups accept the key too.
    const byKey = await req("GET", "/api/contract/externalapp/name/erp/identity/CT-1001", { apiKey: app.api_key });
    expect(byKey.status).toBe(200);
    expect(byKey.body.identity).toBe("CT-1001");
    expect(byKey.body.config.password).toBe("********");
    expect((await req("GET", `/api/contract/externalapp/id/${app.id}/identity/CT-1001`, { token })).body.id).toBe(byKey.body.id);
    expect((await req("GET", `/api/contract/externalapp/id/${app.id}/identity/NOPE`, { token })).status).toBe(404);
    const list = await req("GET", `/api/contract/externalapp/id/${app.id}?sort=number`, { apiKey: app.api_key });
    expect(list.status).toBe(200);
    expect(list.body.items.map((c: any) => c.identity)).toEqual(["CT-1001", "CT-2", "CT-3", "CT-4"]);
    expect((await req("GET", "/api/contract/externalapp/name/erp?number=2025/0003", { token })).body.items.map((c: any) => c.identity)).toEqual(["CT-3"]);
    expect((await req("GET", "/api/contract/externalapp/name/erp", { apiKey: other.api_key })).status).toBe(403);
    expect((await req("GET", "/api/contract/externalapp/name/ghost", { token })).status).toBe(404);
    // Not a key row.
    expect((await req("GET", `/api/contract/${byKey.body.id}`, { apiKey: app.api_key })).status).toBe(401);
  });

  test("another corporation sees none of it", async () => {
    const o = f.other.token;
    const body = documentBody();
    expect((await req("POST", "/api/contract/create/externalapp/name/erp", { token: o, body })).status).toBe(404);
    expect((await req("POST", `/api/contract/create/externalapp/id/${app.id}`, { token: o, body })).status).toBe(404);
    expect((await req("GET", "/api/contract/externalapp/name/erp/identity/CT-1001", { token: o })).status).toBe(404);
    expect((await req("GET", `/api/contract/externalapp/id/${app.id}`, { token: o })).status).toBe(404);
    expect((await req("GET", "/api/contract", { token: o })).body.total).toBe(0);
  });

  test("a city adopted under a second identity loses its first one; a later use of the first in the same body finds it unlinked", async () => {
    const jundiai = city("CITY-JD-1", "Jundiaí", "SP");
    const first = await req("POST", "/api/contract/create/externalapp/name/erp", {
      token,
      body: documentBody({ identity: "CT-40", number: "2025/0040", customer: { ...documentBody().customer, identity: "CUS-40", address: address("Rua A, 1", jundiai) }, billing_customer: undefined }),
    });
    expect(first.status).toBe(200);
    const cityId = first.body.customer.address.city.id;
    // The customer's city comes under a new identity with the same names: adopted, and linked to
    // it instead of CITY-JD-1. The contract's address then names CITY-JD-1 with other data: it is
    // no longer linked, so it is a new city; the adopted one is left as it was.
    const second = await req("POST", "/api/contract/create/externalapp/name/erp", {
      token,
      body: documentBody({
        identity: "CT-41",
        number: "2025/0041",
        customer: { ...documentBody().customer, identity: "CUS-41", address: address("Rua B, 2", city("CITY-JD-2", "Jundiaí", "SP")) },
        billing_customer: undefined,
        address: address("Rua C, 3", city("CITY-JD-1", "Jundiaí", "São Paulo")),
      }),
    });
    expect(second.status).toBe(200);
    expect(second.body.customer.address.city).toMatchObject({ id: cityId, state: "SP" });
    expect(second.body.address.city.id).not.toBe(cityId);
    expect(second.body.address.city.state).toBe("São Paulo");
  });
});
