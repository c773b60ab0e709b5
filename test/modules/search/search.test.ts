// Search (routes.md, "Network operations additions"): every list's ?q finds rows holding every
// word, in any order and field, folding case and accents; digits find documents; a contract is
// found by its config addresses and its online sessions' IP and MAC; GET /api/search across kinds.
import { beforeAll, describe, expect, test } from "bun:test";
import { addUser, openApp, type User } from "../../support/helpers";
import { contractWith, must } from "../../support/isp";

const { t, admin } = await openApp();
const SECRET = "nas-secret-0001";
const basic = `Basic ${Buffer.from(`acme:${SECRET}`).toString("base64")}`;
const acct = async (attrs: Record<string, string>) => {
  const res = await t.req("POST", "/api/isp/radius/accounting", { body: attrs, headers: { authorization: basic } });
  expect(res.status).toBe(204);
};
let joao: any;
let withIp: any;
let online: any;

beforeAll(async () => {
  const ok = (method: string, path: string, body?: unknown) => must(t, admin.token, method, path, body);
  joao = await ok("POST", "/api/person", { name: "João da Silva", doc_identity: "100.007.919-89" });
  await ok("POST", "/api/person", { name: "Joana Silveira", doc_identity: "12.345.678/0001-90" });
  await ok("POST", "/api/person", { name: "Maria Silva", doc_identity: "222.333.444-55" });
  await ok("POST", "/api/isp/nas", { name: "bng-centro", ip: "192.0.2.10", secret: SECRET });
  withIp = (await contractWith(t, admin.token, { username: "fixo-ip", ipv4: "203.0.113.77", ipv6: "2001:db8:77::/64" })).contract;
  online = (await contractWith(t, admin.token, { username: "pppoe-online" })).contract;
  await acct({ "User-Name": "pppoe-online", "Acct-Session-Id": "s-1", "NAS-IP-Address": "192.0.2.10", "Framed-IP-Address": "100.64.9.41", "Calling-Station-Id": "AA:BB:CC:0D:0E:0F", "Acct-Status-Type": "Start" });
});

const get = (path: string, token = admin.token) => t.req("GET", path, { token });
async function names(path: string, field = "name"): Promise<string[]> {
  const res = await get(path);
  expect(res.status).toBe(200);
  return res.body.items.map((i: any) => i[field]).sort();
}

describe("?q of every list", () => {
  test("several words find rows holding every word, in any order, folding case and accents", async () => {
    expect(await names("/api/person?q=joao%20silva")).toEqual(["João da Silva"]);
    expect(await names("/api/person?q=SILVA%20Jo%C3%A3o")).toEqual(["João da Silva"]);
    expect(await names("/api/person?q=silva%20da")).toEqual(["João da Silva"]);
    expect(await names("/api/person?q=silv%20jo")).toEqual(["Joana Silveira", "João da Silva"]);
    expect(await names("/api/person?q=joao%20souza")).toEqual([]);
    // A list without a search index (NAS) folds them too.
    expect(await names("/api/isp/nas?q=CENTRO%20bng")).toEqual(["bng-centro"]);
  });

  test("a q of digits and punctuation finds documents by their digits", async () => {
    expect(await names("/api/person?q=10000791989")).toEqual(["João da Silva"]);
    expect(await names("/api/person?q=100007919-89")).toEqual(["João da Silva"]);
    expect(await names("/api/person?q=100.007.919-89")).toEqual(["João da Silva"]);
    expect(await names("/api/person?q=12345678000190")).toEqual(["Joana Silveira"]);
    expect(await names("/api/person?q=0791989")).toEqual(["João da Silva"]);
    // Under six digits a number is text only (it would match a large share of all documents).
    expect(await names("/api/person?q=79")).toEqual([]);
    // The contract list finds contracts by their customer's document digits too.
    const c = await contractWith(t, admin.token, { username: "doc-search" });
    const digits = c.customer.doc_identity.replace(/[^0-9]/g, "");
    expect(await names(`/api/contract?q=${digits}%20${encodeURIComponent(c.contract.number)}`, "number")).toEqual([c.contract.number]);
  });

  test("a contract is found by its config IPv4 and IPv6, and by its online session's framed IP and MAC", async () => {
    expect(await names("/api/contract?q=203.0.113.77", "number")).toEqual([withIp.number]);
    expect(await names("/api/contract?q=2001:db8:77", "number")).toEqual([withIp.number]);
    expect(await names("/api/contract?q=100.64.9.41", "number")).toEqual([online.number]);
    expect(await names("/api/contract?q=aa:bb:cc:0d", "number")).toEqual([online.number]);
    expect(await names("/api/contract?q=aabbcc0d0e0f", "number")).toEqual([online.number]);
    // Short words scan, with the same addresses.
    expect(await names("/api/contract?q=41%20100.64.9", "number")).toEqual([online.number]);
    // Once the session stops, its address no longer finds the contract.
    await acct({ "User-Name": "pppoe-online", "Acct-Session-Id": "s-1", "NAS-IP-Address": "192.0.2.10", "Framed-IP-Address": "100.64.9.41", "Acct-Status-Type": "Stop" });
    expect(await names("/api/contract?q=100.64.9.41", "number")).toEqual([]);
    expect(await names("/api/contract?q=aa:bb:cc:0d", "number")).toEqual([]);
    await acct({ "User-Name": "pppoe-online", "Acct-Session-Id": "s-2", "NAS-IP-Address": "192.0.2.10", "Framed-IP-Address": "100.64.9.41", "Calling-Station-Id": "AA:BB:CC:0D:0E:0F", "Acct-Status-Type": "Start" });
  });
});

describe("GET /api/search", () => {
  test("finds persons and contracts first, then the other kinds", async () => {
    await must(t, admin.token, "POST", "/api/city", { name: "Silvânia", state: "GO", country: "BR" });
    await must(t, admin.token, "POST", "/api/product", { identity: "SILVA-100", name: "Plano Silva 100" });
    const res = await get("/api/search?q=silva");
    expect(res.status).toBe(200);
    const kinds = res.body.items.map((h: any) => h.kind);
    expect(kinds).toEqual(["person", "person", "city", "product"]);
    expect(res.body.items[0]).toEqual({ kind: "person", id: joao.id, title: "João da Silva", subtitle: "100.007.919-89" });
    const byIp = await get("/api/search?q=100.64.9.41");
    expect(byIp.body.items.map((h: any) => [h.kind, h.title])).toEqual([["contract", online.number], ["session", "pppoe-online"]]);
    const byDigits = await get("/api/search?q=10000791989");
    expect(byDigits.body.items[0]).toMatchObject({ kind: "person", title: "João da Silva" });
    expect((await get("/api/search?q=silva&limit=1")).body.items.map((h: any) => h.kind)).toEqual(["person"]);
  });

  test("gives only the kinds whose list the caller may read", async () => {
    const clerk = await addUser(t, admin.corpId, { services: ["platform.city"] });
    const res = await get("/api/search?q=silva", clerk.token);
    expect(res.status).toBe(200);
    expect(res.body.items.map((h: any) => h.kind)).toEqual(["city"]);
    const one = await addUser(t, admin.corpId, { actions: ["localhost:80/api/contract/GET"] });
    expect((await get("/api/search?q=100.64.9.41", one.token)).body.items.map((h: any) => h.kind)).toEqual(["contract"]);
    const none = await addUser(t, admin.corpId);
    expect((await get("/api/search?q=silva", none.token)).body.items).toEqual([]);
    expect((await t.req("GET", "/api/search?q=silva")).status).toBe(401);
  });

  test("validates q and limit: 400 naming the field", async () => {
    for (const [query, field] of [["", "q"], ["q=s", "q"], [`q=${"a".repeat(101)}`, "q"], ["q=silva&limit=0", "limit"], ["q=silva&limit=51", "limit"], ["q=silva&limit=x", "limit"]] as const) {
      const res = await get(`/api/search?${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(JSON.stringify(res.body.errors ?? res.body)).toContain(field);
    }
    expect((await get(`/api/search?q=${"a".repeat(100)}&limit=50`)).status).toBe(200);
  });

  test("is in the OpenAPI document with its schemas", async () => {
    const doc = (await t.req("GET", "/api/openapi.json")).body;
    const op = doc.paths["/api/search"].get;
    expect(op.parameters.map((p: any) => p.name).sort()).toEqual(["limit", "q"]);
    const schema = JSON.stringify(op.responses["200"]);
    for (const word of ["kind", "title", "subtitle", "qrcode"]) expect(schema).toContain(word);
  });
});
