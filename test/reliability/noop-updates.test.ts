// Update routes that change nothing do nothing (routes.md, Events: one event per record changed):
// the request that stores what is already stored answers as an update does, writes nothing,
// keeps updated_at and fires no event; changing one field still fires exactly one event.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { lastSeq, newEvents, registryApp } from "../support/registry";

let f: Awaited<ReturnType<typeof registryApp>>;
let token: string;
let corpId: string;
type Res = Awaited<ReturnType<typeof f.t.req>>;
const get = async (path: string) => {
  const res = await f.admin.req("GET", path);
  expect(res.status).toBe(200);
  return res.body;
};
/** Timestamps have millisecond resolution: let one pass so a bumped updated_at differs. */
const tick = () => Bun.sleep(3);

beforeAll(async () => {
  f = await registryApp();
  token = f.admin.token;
  corpId = f.admin.corpId;
});
afterAll(() => f.t.close());

interface Case {
  /** The request that sets the state (an update in its own right). */
  first: () => Promise<Res>;
  /** Requests storing what `first` stored, each answered exactly as `first` was. */
  again: (() => Promise<Res>)[];
  /** A request that changes one field. */
  change: () => Promise<Res>;
  /** The record as GET shows it (for updated_at). */
  read: () => Promise<{ updated_at: string }>;
  type: string;
  id: string;
}

async function check(c: Case) {
  const first = await c.first();
  expect(first.status).toBe(200);
  const stored = await c.read();
  const mark = lastSeq(f.t, corpId);
  for (const send of c.again) {
    await tick();
    const res = await send();
    expect(res.status).toBe(first.status);
    expect(res.body).toEqual(first.body);
    expect(res.headers.get("location")).toBeNull();
  }
  expect(newEvents(f.t, corpId, mark)).toEqual([]);
  expect((await c.read()).updated_at).toBe(stored.updated_at);

  await tick();
  const changed = await c.change();
  expect(changed.status).toBe(200);
  const now = await c.read();
  expect(now.updated_at > stored.updated_at).toBe(true);
  const ev = newEvents(f.t, corpId, mark);
  expect(ev.map((e) => [e.type, e.record_id])).toEqual([[c.type, c.id]]);
  expect(ev[0].payload.data).toEqual(now);
}

async function city(name: string) {
  const res = await f.admin.req("POST", "/api/city", { name, state: "SP", country: "BR" });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

async function person(name: string) {
  const res = await f.admin.req("POST", "/api/person", { name });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

describe("city", () => {
  test("PUT /api/city/{id}", async () => {
    const id = await city("Noop City");
    const body = { name: "Noop City", state: "SP", country: "BR" };
    await check({
      first: () => f.admin.req("PUT", `/api/city/${id}`, body),
      again: [() => f.admin.req("PUT", `/api/city/${id}`, body), () => f.admin.req("PUT", `/api/city/${id}`, { ...body, extra: "ignored" })],
      change: () => f.admin.req("PUT", `/api/city/${id}`, { ...body, state: "RJ" }),
      read: () => get(`/api/city/${id}`),
      type: "CITY_AFTER_UPDATE",
      id,
    });
  });
});

describe("person", () => {
  test("PUT /api/person/{id}: left-out fields are the nulls and defaults stored", async () => {
    const cityId = await city("Person Town");
    const id = await person("P One");
    const address = { line1: "Rua 1", district: "Centro", city_id: cityId, latitude: -22.5 };
    const full = { name: "P One", display_name: "One", corporate: false, email: null, phone: null, address };
    await check({
      first: () => f.admin.req("PUT", `/api/person/${id}`, full),
      again: [
        () => f.admin.req("PUT", `/api/person/${id}`, full),
        // corporate left out is false; email, phone null; the address's left-out fields null.
        () => f.admin.req("PUT", `/api/person/${id}`, { name: "P One", display_name: "One", address: { ...address, line2: null, detail: null } }),
      ],
      change: () => f.admin.req("PUT", `/api/person/${id}`, { ...full, corporate: true }),
      read: () => get(`/api/person/${id}`),
      type: "PERSON_AFTER_UPDATE",
      id,
    });
  });

  test("POST /api/person/{id}/address", async () => {
    const cityId = await city("Address Town");
    const id = await person("P Two");
    const address = { line1: "Rua 2", postal_code: "01000-000", city_id: cityId };
    await check({
      first: () => f.admin.req("POST", `/api/person/${id}/address`, address),
      again: [() => f.admin.req("POST", `/api/person/${id}/address`, { ...address, line2: null, latitude: null })],
      change: () => f.admin.req("POST", `/api/person/${id}/address`, { ...address, line1: "Rua 3" }),
      read: () => get(`/api/person/${id}`),
      type: "PERSON_AFTER_UPDATE",
      id,
    });
  });
});

describe("product", () => {
  test("PUT /api/product/{id}", async () => {
    const created = await f.admin.req("POST", "/api/product", { identity: "NOOP-1", name: "Fiber", price: 99.9 });
    const id = created.body.id;
    const body = { identity: "NOOP-1", name: "Fiber", price: 99.9 };
    await check({
      first: () => f.admin.req("PUT", `/api/product/${id}`, body),
      again: [() => f.admin.req("PUT", `/api/product/${id}`, body), () => f.admin.req("PUT", `/api/product/${id}`, { ...body, description: null })],
      change: () => f.admin.req("PUT", `/api/product/${id}`, { ...body, price: 109.9 }),
      read: () => get(`/api/product/${id}`),
      type: "PRODUCT_AFTER_UPDATE",
      id,
    });
  });
});

describe("contract", () => {
  let cityId: string;
  let customerId: string;
  let productId: string;
  const contractInput = (number: string) => ({
    customer_id: customerId,
    number,
    signature_date: "2025-01-10",
    start_date: "2025-01-15",
    total_value: 99.9,
    contract_stage: "INSTALLED",
    json_original: { source: "local", nested: { a: [1, 2] } },
    address: { line1: "Rua C", city_id: cityId },
  });
  const newContract = async (number: string) => {
    const res = await f.admin.req("POST", "/api/contract", contractInput(number));
    expect(res.status).toBe(200);
    return res.body.id as string;
  };

  beforeAll(async () => {
    cityId = await city("Contract Town");
    customerId = await person("Contract Customer");
    productId = (await f.admin.req("POST", "/api/product", { identity: "NOOP-ITEM", name: "Item", price: 10 })).body.id;
  });

  test("PUT /api/contract/{id}: dates as GET shows them, defaults and the billing customer left out", async () => {
    const id = await newContract("NOOP-C1");
    const body = contractInput("NOOP-C1");
    await check({
      first: () => f.admin.req("PUT", `/api/contract/${id}`, body),
      again: [
        () => f.admin.req("PUT", `/api/contract/${id}`, body),
        async () => {
          const view = await get(`/api/contract/${id}`);
          return f.admin.req("PUT", `/api/contract/${id}`, {
            ...body,
            signature_date: view.signature_date,
            start_date: view.start_date,
            billing_customer_id: customerId,
            contract_status: "ACTIVE",
            end_date: null,
            json_billing: null,
            address: { ...body.address, line2: null },
          });
        },
      ],
      change: () => f.admin.req("PUT", `/api/contract/${id}`, { ...body, json_original: { source: "local", nested: { a: [1, 3] } } }),
      read: () => get(`/api/contract/${id}`),
      type: "CONTRACT_AFTER_UPDATE",
      id,
    });
  });

  test("POST /api/contract/{id}/address", async () => {
    const id = await newContract("NOOP-C2");
    const address = { line1: "Rua D", detail: "fundos", city_id: cityId };
    await check({
      first: () => f.admin.req("POST", `/api/contract/${id}/address`, address),
      again: [() => f.admin.req("POST", `/api/contract/${id}/address`, { ...address, district: null })],
      change: () => f.admin.req("POST", `/api/contract/${id}/address`, { ...address, detail: "frente" }),
      read: () => get(`/api/contract/${id}`),
      type: "CONTRACT_AFTER_UPDATE",
      id,
    });
  });

  test("POST /api/contract/{id}/config: the password and username left out are kept", async () => {
    const id = await newContract("NOOP-C3");
    const config = { username: "noop-c3", password: "secret-3", max_upload: "10M", max_download: "50M" };
    await check({
      first: () => f.admin.req("POST", `/api/contract/${id}/config`, config),
      // The same password again is answered in clear, as by the request that set it.
      again: [() => f.admin.req("POST", `/api/contract/${id}/config`, config)],
      change: () => f.admin.req("POST", `/api/contract/${id}/config`, { ...config, max_upload: "20M" }),
      read: () => get(`/api/contract/${id}`),
      type: "CONTRACT_AFTER_UPDATE",
      id,
    });
    const stored = await get(`/api/contract/${id}`);
    const mark = lastSeq(f.t, corpId);
    await tick();
    const res = await f.admin.req("POST", `/api/contract/${id}/config`, { max_upload: "20M", max_download: "50M", password: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(stored);
    expect(newEvents(f.t, corpId, mark)).toEqual([]);
  });

  test("POST /api/contract/{id}/items: the same list keeps its items", async () => {
    const id = await newContract("NOOP-C4");
    const items = { items: [{ product_id: productId, quantity: 2 }, { product_id: productId, description: "Extra", unit_price: 5 }] };
    await check({
      first: () => f.admin.req("POST", `/api/contract/${id}/items`, items),
      again: [
        () => f.admin.req("POST", `/api/contract/${id}/items`, items),
        // Defaults spelled out: the product's name and price, quantity 1.
        () =>
          f.admin.req("POST", `/api/contract/${id}/items`, {
            items: [
              { product_id: productId, quantity: 2, description: "Item", unit_price: 10 },
              { product_id: productId, description: "Extra", unit_price: 5, quantity: 1 },
            ],
          }),
      ],
      // The same items in another order are another list.
      change: () => f.admin.req("POST", `/api/contract/${id}/items`, { items: [...items.items].reverse() }),
      read: () => get(`/api/contract/${id}`),
      type: "CONTRACT_AFTER_UPDATE",
      id,
    });
  });

  test("PUT /api/contract/{id}/active and /inactive on a contract already so", async () => {
    const id = await newContract("NOOP-C5");
    await check({
      first: () => f.admin.req("PUT", `/api/contract/${id}/active`),
      again: [() => f.admin.req("PUT", `/api/contract/${id}/active`)],
      change: () => f.admin.req("PUT", `/api/contract/${id}/inactive`),
      read: () => get(`/api/contract/${id}`),
      type: "CONTRACT_AFTER_UPDATE",
      id,
    });
    await check({
      first: () => f.admin.req("PUT", `/api/contract/${id}/inactive`),
      again: [() => f.admin.req("PUT", `/api/contract/${id}/inactive`)],
      change: () => f.admin.req("PUT", `/api/contract/${id}/active`),
      read: () => get(`/api/contract/${id}`),
      type: "CONTRACT_AFTER_UPDATE",
      id,
    });
  });
});

describe("external app", () => {
  test("PUT /api/externalapp/{id}: status left out is true", async () => {
    const app = (await f.admin.req("POST", "/api/externalapp", { name: "noop-app", description: "ERP" })).body;
    const body = { name: "noop-app", description: "ERP", status: true };
    await check({
      first: () => f.admin.req("PUT", `/api/externalapp/${app.id}`, body),
      again: [() => f.admin.req("PUT", `/api/externalapp/${app.id}`, { name: "noop-app", description: "ERP" })],
      change: () => f.admin.req("PUT", `/api/externalapp/${app.id}`, { ...body, status: false }),
      read: () => get(`/api/externalapp/${app.id}`),
      type: "EXTERNALAPP_AFTER_UPDATE",
      id: app.id,
    });
  });

  test("key rotation always changes the app", async () => {
    const app = (await f.admin.req("POST", "/api/externalapp", { name: "noop-rotate" })).body;
    const mark = lastSeq(f.t, corpId);
    for (let i = 0; i < 2; i++) expect((await f.admin.req("POST", `/api/externalapp/${app.id}/key`)).status).toBe(200);
    expect(newEvents(f.t, corpId, mark).map((e) => e.type)).toEqual(["EXTERNALAPP_AFTER_UPDATE", "EXTERNALAPP_AFTER_UPDATE"]);
  });
});

describe("metric", () => {
  const body = { name: "noop-metric", data_type: "Float", periodicity: "5m", start_date: "2025-01-01T00:00:00Z", daily_start_time: "00:00" };

  test("PUT /api/metric/{id}: instants compared canonical, defaults left out", async () => {
    const id = (await f.admin.req("POST", "/api/metric", body)).body.id;
    await check({
      first: () => f.admin.req("PUT", `/api/metric/${id}`, body),
      again: [
        () => f.admin.req("PUT", `/api/metric/${id}`, body),
        () => f.admin.req("PUT", `/api/metric/${id}`, { ...body, start_date: "2024-12-31T21:00:00.000-03:00", daily_start_time: undefined, end_date: null, endpoint: null }),
      ],
      change: () => f.admin.req("PUT", `/api/metric/${id}`, { ...body, periodicity: "10m" }),
      read: () => get(`/api/metric/${id}`),
      type: "METRIC_AFTER_UPDATE",
      id,
    });
  });

  test("PUT /api/metric/name/{name}", async () => {
    const named = { ...body, name: "noop-by-name" };
    const id = (await f.admin.req("POST", "/api/metric", named)).body.id;
    await check({
      first: () => f.admin.req("PUT", `/api/metric/name/noop-by-name`, named),
      again: [() => f.admin.req("PUT", `/api/metric/name/noop-by-name`, named)],
      change: () => f.admin.req("PUT", `/api/metric/name/noop-by-name`, { ...named, name: "noop-renamed" }),
      read: () => get(`/api/metric/${id}`),
      type: "METRIC_AFTER_UPDATE",
      id,
    });
  });
});

describe("QR code", () => {
  test("PUT /api/qrcode/{id}", async () => {
    const made = (await f.admin.req("POST", "/api/qrcode", { name: "Noop QR", kind: "dynamic", target: "https://example.com/a" })).body;
    const body = { name: "Noop QR", kind: "dynamic", target: "https://example.com/a", slug: made.slug };
    await check({
      first: () => f.admin.req("PUT", `/api/qrcode/${made.id}`, body),
      again: [
        () => f.admin.req("PUT", `/api/qrcode/${made.id}`, body),
        () => f.admin.req("PUT", `/api/qrcode/${made.id}`, { name: "Noop QR", kind: "dynamic", target: "https://example.com/a", campaign_id: null }),
      ],
      change: () => f.admin.req("PUT", `/api/qrcode/${made.id}`, { ...body, target: "https://example.com/b" }),
      read: () => get(`/api/qrcode/${made.id}`),
      type: "QRCODE_AFTER_UPDATE",
      id: made.id,
    });
  });

  test("PUT /api/qrcode/{id}/active and /inactive", async () => {
    const made = (await f.admin.req("POST", "/api/qrcode", { name: "Noop toggle", kind: "static", content: "hello" })).body;
    await check({
      first: () => f.admin.req("PUT", `/api/qrcode/${made.id}/inactive`),
      again: [() => f.admin.req("PUT", `/api/qrcode/${made.id}/inactive`)],
      change: () => f.admin.req("PUT", `/api/qrcode/${made.id}/active`),
      read: () => get(`/api/qrcode/${made.id}`),
      type: "QRCODE_AFTER_UPDATE",
      id: made.id,
    });
  });
});
