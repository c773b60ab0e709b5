// ?q on the contract lists finds a contract by its number, its PPPoE username and its customer's
// name, display name and document (issue 21): substring, case- and accent-insensitive, the same
// rows and totals as a scan of those columns, kept in step with renames and username changes.
import { beforeAll, describe, expect, test } from "bun:test";
import { contractBody } from "../../support/contract-body";
import { openApp } from "../../support/helpers";

const { t, admin } = await openApp();
let cityId: string;
beforeAll(async () => {
  cityId = (await ok("POST", "/api/city", { name: "Campinas", state: "SP", country: "BR" })).id;
});

const req = (method: string, path: string, body?: unknown, token = admin.token) => t.req(method, path, { token, body });
async function ok(method: string, path: string, body?: unknown, token = admin.token) {
  const res = await req(method, path, body, token);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.body;
}
/** The numbers of the contracts ?q finds (one page of 500), sorted. */
async function found(q: string, list = "/api/contract", token = admin.token): Promise<string[]> {
  const res = await req("GET", `${list}?q=${encodeURIComponent(q)}&limit=500`, undefined, token);
  expect(res.status, res.text).toBe(200);
  expect(res.body.total).toBe(res.body.items.length);
  return res.body.items.map((c: any) => c.number).sort();
}

const person = (name: string, more: Record<string, unknown> = {}, token = admin.token) => ok("POST", "/api/person", { name, ...more }, token);
const contract = (number: string, customerId: string, token = admin.token, city = cityId) =>
  ok("POST", "/api/contract", { customer_id: customerId, number, start_date: "2025-03-01", total_value: 10, address: { line1: "Rua 1", city_id: city } }, token);

describe("GET /api/contract: ?q by customer, document and PPPoE username", () => {
  test("finds by the customer's name with and without accents, and by display name", async () => {
    const joao = await person("João da Conceição", { display_name: "Mercearia Açaí" });
    const other = await person("Pedro Alves");
    await contract("S-100", joao.id);
    await contract("S-101", joao.id);
    await contract("S-102", other.id);
    for (const q of ["joao", "JOÃO", "Joao da", "conceicao", "CONCEIÇÃO"]) expect({ q, found: await found(q) }).toEqual({ q, found: ["S-100", "S-101"] });
    expect(await found("acai")).toEqual(["S-100", "S-101"]);
    expect(await found("pedro alv")).toEqual(["S-102"]);
    // The number still finds as before.
    expect(await found("S-10")).toEqual(["S-100", "S-101", "S-102"]);
  });

  test("finds by the customer's document", async () => {
    const p = await person("Documento Teste", { tp_doc_identity: "CPF", doc_identity: "123.456.789-00" });
    await contract("D-1", p.id);
    expect(await found("456.789")).toEqual(["D-1"]);
    expect(await found("789-00")).toEqual(["D-1"]);
  });

  test("finds by PPPoE username, and follows a username change", async () => {
    const p = await person("Usuario Pppoe");
    const c = await contract("U-1", p.id);
    // The default username is the number.
    expect(c.config.username).toBe("U-1");
    expect(await found("U-1")).toEqual(["U-1"]);
    await ok("POST", `/api/contract/${c.id}/config`, { username: "fibra.alfa@isp" });
    expect(await found("alfa@i")).toEqual(["U-1"]);
    expect(await found("FIBRA.ALFA")).toEqual(["U-1"]);
    await ok("POST", `/api/contract/${c.id}/config`, { username: "radio.beta@isp" });
    expect(await found("alfa@i")).toEqual([]);
    expect(await found("beta@i")).toEqual(["U-1"]);
    // Back to the number: found by it once, not twice.
    await ok("POST", `/api/contract/${c.id}/config`, { username: "U-1" });
    expect(await found("beta@i")).toEqual([]);
    expect(await found("U-1")).toEqual(["U-1"]);
    // A new number keeps the username findable, and the old number is no longer found.
    await ok("PUT", `/api/contract/${c.id}`, { customer_id: p.id, number: "U-2", start_date: "2025-03-01", total_value: 10, address: { line1: "Rua 1", city_id: cityId } });
    expect(await found("U-1")).toEqual(["U-2"]);
    expect(await found("U-2")).toEqual(["U-2"]);
    await ok("POST", `/api/contract/${c.id}/config`, { username: "U-2" });
    expect(await found("U-1")).toEqual([]);
  });

  test("follows a customer's rename and a contract's change of customer", async () => {
    const p = await person("Graviola Souza");
    const q = await person("Pitomba Lima");
    const c = await contract("R-1", p.id);
    expect(await found("graviola")).toEqual(["R-1"]);
    await ok("PUT", `/api/person/${p.id}`, { name: "Jabuticaba Souza" });
    expect(await found("graviola")).toEqual([]);
    expect(await found("jabutica")).toEqual(["R-1"]);
    await ok("PUT", `/api/contract/${c.id}`, { customer_id: q.id, number: "R-1", start_date: "2025-03-01", total_value: 10, address: { line1: "Rua 1", city_id: cityId } });
    expect(await found("jabutica")).toEqual([]);
    expect(await found("pitomba")).toEqual(["R-1"]);
  });

  test("follows the external-app upsert: a new customer, its rename, a username", async () => {
    await ok("POST", "/api/externalapp", { name: "erp" });
    const body = contractBody(7001);
    const named = (name: string, doc: string) => ({ ...body.customer, name, display_name: null, doc_identity: doc });
    const c = await ok("POST", "/api/contract/create/externalapp/name/erp", { ...body, number: "E-7001", customer: named("Cliente Araçá", "555.111"), billing_customer: named("Cliente Araçá", "555.111") });
    expect(await found("araca")).toEqual(["E-7001"]);
    expect(await found("555.1")).toEqual(["E-7001"]);
    await ok("POST", "/api/contract/create/externalapp/name/erp", { ...body, number: "E-7001", customer: named("Cliente Buriti", "666.222"), billing_customer: named("Cliente Buriti", "666.222") });
    expect(await found("araca")).toEqual([]);
    expect(await found("555.1")).toEqual([]);
    expect(await found("buriti")).toEqual(["E-7001"]);
    await ok("POST", `/api/contract/${c.contract?.id ?? c.id}/config`, { username: "erp-7001-pppoe" });
    expect(await found("7001-ppp")).toEqual(["E-7001"]);
    // The app's own list searches the same way.
    expect(await found("buriti", "/api/contract/externalapp/name/erp")).toEqual(["E-7001"]);
    expect(await found("7001-ppp", "/api/contract/externalapp/name/erp")).toEqual(["E-7001"]);
  });

  test("short queries scan the same columns; % and _ are literal; FTS syntax is text", async () => {
    const p = await person("Zé Ué", { doc_identity: "9_9%9" });
    const c = await contract("Z-1", p.id);
    await ok("POST", `/api/contract/${c.id}/config`, { username: "q_%x" });
    expect(await found("zé")).toEqual(["Z-1"]);
    expect(await found("UÉ")).toEqual(["Z-1"]);
    expect(await found("_%")).toEqual(["Z-1"]);
    expect(await found("9_9%")).toEqual(["Z-1"]);
    expect(await found("q_%x")).toEqual(["Z-1"]);
    expect(await found("q_%y")).toEqual([]);
    for (const q of ['"', 'a"b', "NEAR(", "username:x", "\u0000abc"]) expect((await req("GET", `/api/contract?q=${encodeURIComponent(q)}`)).status).toBe(200);
  });
});

describe("GET /api/contract: ?q totals and pages equal a scan of every word in number, username and customer", () => {
  const NAMES = ["Maria Silva", "JOAO Souza", "ana lima", "Pedro Costa", "Paula Silva", "Lucas Pereira"];
  let token: string;
  let corpId: string;
  beforeAll(async () => {
    // Its own corporation: the rows of the tests above stay out of the comparison.
    const corp = await ok("POST", "/api/corp", { auth_name: "search-set", company_name: "Search Set" });
    corpId = corp.id;
    token = (await t.req("POST", "/api/login", { body: { corp: "search-set", login: "admin", password: "admin-password-1" } })).body.access_token;
    const city = (await ok("POST", "/api/city", { name: "Natal", state: "RN", country: "BR" }, token)).id;
    const people: string[] = [];
    for (let i = 0; i < NAMES.length * 2; i++) {
      const name = `${NAMES[i % NAMES.length]} ${i}`;
      people.push((await person(name, { display_name: i % 3 ? name.toLowerCase() : null, doc_identity: i % 4 ? String(700_000 + i * 13) : null }, token)).id);
    }
    for (let i = 0; i < 90; i++) {
      // Numbers that share text with names ("SILVA-…") and usernames: a contract found through
      // several columns counts once.
      const c = await contract(i % 7 ? `N-${1000 + i}` : `SILVA-${i}`, people[i % people.length], token, city);
      if (i % 5 === 0) await ok("POST", `/api/contract/${c.id}/config`, { username: `pppoe.${i % 2 ? "silva" : "lima"}.${i}` }, token);
    }
  });

  /** Every word of q in one of the columns, or (digits and punctuation) in the customer's document digits. */
  function scan(q: string, order: string, status: string | undefined, limit: number, offset: number) {
    const db = t.sql(corpId);
    const params: string[] = [];
    const conds = [...new Set(q.split(/\s+/).filter((w) => w))].map((w) => {
      params.push(`%${w.replace(/[\\%_]/g, "\\$&")}%`);
      const n = params.length;
      const cols = ["c.number", "cc.username", "p.name", "p.display_name", "p.doc_identity"].map((c) => `${c} LIKE ?${n} ESCAPE '\\'`);
      if (/^[^A-Za-z\s]+$/.test(w) && w.replace(/[^0-9]/g, "").length >= 6) {
        params.push(`%${w.replace(/[^0-9]/g, "")}%`);
        cols.push(`replace(replace(replace(replace(p.doc_identity, '.', ''), '-', ''), '/', ''), ' ', '') LIKE ?${params.length}`);
      }
      return `(${cols.join(" OR ")})`;
    });
    if (status) conds.push(`c.contract_status = '${status}'`);
    const where = conds.length ? `WHERE ${conds.join(" AND ")}` : "";
    const from = "contracts c JOIN contract_configs cc ON cc.contract_id = c.id JOIN persons p ON p.id = c.customer_id";
    const total = (db.query(`SELECT count(*) AS n FROM ${from} ${where}`).get(...params) as { n: number }).n;
    const ids = db.query(`SELECT c.id FROM ${from} ${where} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`).all(...params).map((r: any) => r.id);
    return { total, ids };
  }

  test("same rows, order, paging and total, alone, with a filter and with a sort", async () => {
    await ok("PUT", `/api/contract/${(await ok("GET", "/api/contract?limit=1", undefined, token)).items[0].id}/inactive`, undefined, token);
    const queries = ["silva", "SILVA", "lima", "ilva 1", "1 silva", "pppoe", "pppoe.lima", "7000", "7000 ana", "N-10", "a", "si", "xyz", "oao s", "silva n-10"];
    const sorts: [string | undefined, string][] = [[undefined, "c.id"], ["-id", "c.id DESC"], ["number", "c.number, c.id"]];
    const pages: [number, number][] = [[1, 50], [2, 7], [1, 1]];
    for (const q of queries) {
      for (const [sort, order] of sorts) {
        for (const [page, limit] of pages) {
          for (const status of [undefined, "INACTIVE"]) {
            const qs = new URLSearchParams({ q, page: String(page), limit: String(limit) });
            if (sort) qs.set("sort", sort);
            if (status) qs.set("contract_status", status);
            const res = await t.req("GET", `/api/contract?${qs}`, { token });
            expect(res.status).toBe(200);
            const want = scan(q, order, status, limit, (page - 1) * limit);
            expect({ q: qs.toString(), total: res.body.total, ids: res.body.items.map((c: any) => c.id) }).toEqual({ q: qs.toString(), ...want });
          }
        }
      }
    }
    // A common query matches many contracts, through several columns at once.
    expect(scan("silva", "c.id", undefined, 500, 0).total).toBeGreaterThan(20);
    expect(scan("pppoe.lima", "c.id", undefined, 500, 0).total).toBeGreaterThan(3);
  });
});
