// "CSV on every list" (routes.md, Operator additions): every list route of the OpenAPI document
// answers CSV for ?format=csv and Accept: text/csv, with the JSON items' scalar fields as header.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cities } from "../../src/db/tenant/schema";
import { newId } from "../../src/lib/ids";
import { makeApp, startAndLogin, type TestApp, testSourceOnly } from "../support/helpers";
import { pathWith, seedFixtures, type Values } from "../support/reliability";
import { operationsOf, type Operation } from "../support/openapi";

/** RFC 4180 records (quoted fields may hold commas, quotes and line breaks). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") row.push(field), (field = "");
    else if (ch === "\r" && text[i + 1] === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      i++;
    } else field += ch;
  }
  if (field !== "" || row.length) throw new Error("the CSV does not end with CRLF");
  return rows;
}

/** The value at a dotted header in an item; undefined through a null object. */
function valueAt(item: unknown, header: string): unknown {
  let v = item;
  for (const key of header.split(".")) {
    if (v === null || v === undefined) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** What a JSON value becomes in a CSV field. */
function asField(v: unknown): string {
  if (v === null || v === undefined) return "";
  const text = typeof v === "number" ? JSON.stringify(v) : String(v);
  return typeof v === "string" && /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

let t: TestApp;
let token: string;
let corpId: string;
let listOps: Operation[];
let values: Values;
let doc: any;
/** A schema of the document with its $ref followed. */
const resolve = (s: any): any => (s?.$ref ? resolve(doc.components.schemas[s.$ref.split("/").pop()]) : s);
/** The object schema a property holds (an object, or an object or null): flattened in CSV. */
const typedObject = (s: any): any => {
  s = resolve(s);
  if (s?.properties) return s;
  const variants = (s?.anyOf ?? []).filter((v: any) => v.type !== "null");
  return variants.length === 1 ? typedObject(variants[0]) : null;
};
/**
 * The dotted headers of an item's non-null scalars, through the objects its schema types (not
 * the free-form JSON such as a contract's `original`), arrays left out.
 */
function scalarLeaves(item: Record<string, unknown>, schema: any, prefix = ""): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(item)) {
    if (v === null || Array.isArray(v)) continue;
    if (typeof v !== "object") out.push(prefix + k);
    else {
      const nested = typedObject(schema?.properties?.[k]);
      if (nested) out.push(...scalarLeaves(v as Record<string, unknown>, nested, `${prefix}${k}.`));
    }
  }
  return out;
}

beforeAll(async () => {
  t = await makeApp();
  ({ token, corpId } = await startAndLogin(t));
  const ops = await operationsOf(t);
  doc = (await t.req("GET", "/api/openapi.json")).body;
  // Every GET whose JSON success is a page ({items, page, limit, total}) is a list route.
  listOps = ops.filter((op) => {
    if (op.method !== "GET") return false;
    const p = resolve(doc.paths[op.path].get.responses?.["200"]?.content?.["application/json"]?.schema)?.properties;
    return !!(p?.items && p.page && p.limit && p.total);
  });
  values = await seedFixtures(t, token, ops, "csv", corpId);
  // A name a spreadsheet would run as a formula, and one that needs quoting.
  await t.req("POST", "/api/city", { token, body: { name: "=HYPERLINK(\"x\")", state: "S,P", country: "BR" } });
  // A formula behind a `;`, the list separator of spreadsheets in pt-BR and most European locales.
  await t.req("POST", "/api/city", { token, body: { name: "Sé;=1+1", state: "SP", country: "BR" } });
});

afterAll(() => t.close());

describe("every list route answers CSV", () => {
  test("the document publishes format on every list route, and on no other", async () => {
    const doc = (await t.req("GET", "/api/openapi.json")).body;
    expect(listOps.length).toBeGreaterThan(25);
    for (const [path, methods] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        const hasFormat = (op.parameters ?? []).some((p: any) => p.in === "query" && p.name === "format");
        const isList = method === "get" && listOps.some((o) => o.path === path);
        // The QR export and image rows take a format of their own.
        if (!path.endsWith("/export") && !path.endsWith("/image")) expect({ path, method, hasFormat }).toEqual({ path, method, hasFormat: isList });
      }
    }
  });

  test("header = the JSON items' scalar fields, nested objects dotted; one row per item, same values", async () => {
    let checked = 0;
    let withRows = 0;
    for (const op of listOps) {
      const path = pathWith(op, values);
      if (!path) continue;
      const json = await t.req("GET", path, { token });
      expect({ path, status: json.status }).toEqual({ path, status: 200 });
      for (const variant of [{ url: `${path}${path.includes("?") ? "&" : "?"}format=csv`, headers: {} as Record<string, string> }, { url: path, headers: { accept: "text/csv" } }]) {
        const csv = await t.req("GET", variant.url, { token, headers: variant.headers });
        expect({ path, status: csv.status }).toEqual({ path, status: 200 });
        expect(csv.headers.get("content-type")).toStartWith("text/csv");
        const rows = parseCsv(csv.text);
        const header = rows[0];
        expect(rows.length - 1).toBe(json.body.total);
        const items = json.body.items as Record<string, unknown>[];
        const itemSchema = resolve(resolve(doc.paths[op.path].get.responses["200"].content["application/json"].schema).properties.items.items);
        if (items.length) {
          // Every header field is a scalar of the item (or lies under a null object); every
          // non-null scalar, nested ones by their dotted path, is in the header.
          for (const h of header) {
            const v = valueAt(items[0], h);
            const parts = h.split(".");
            const underNull = parts.slice(1).some((_, i) => valueAt(items[0], parts.slice(0, i + 1).join(".")) === null);
            expect({ path, h, scalar: v === undefined ? underNull : v === null || typeof v !== "object" }).toEqual({ path, h, scalar: true });
          }
          for (const k of scalarLeaves(items[0], itemSchema)) expect({ path, k, inHeader: header.includes(k) }).toEqual({ path, k, inHeader: true });
          // Contract dates are written as dates.
          const cell = (item: unknown, h: string) => {
            const v = valueAt(item, h);
            return "contract_status" in items[0] && /(^|\.)(signature|approval|start|end|suspension|cancellation)_date$/.test(h) && typeof v === "string" ? v.slice(0, 10) : asField(v);
          };
          items.forEach((item, i) => expect({ path, row: rows[i + 1] }).toEqual({ path, row: header.map((h) => cell(item, h)) }));
        }
      }
      checked += 1;
      if (json.body.total > 0) withRows += 1;
    }
    // Most list routes are reached with the fixtures' ids; most of them have rows.
    expect(checked).toBeGreaterThan(25);
    expect(withRows).toBeGreaterThan(20);
  });
});

describe("CSV export of one list", () => {
  test("a contract: its customer, CPF and PPPoE user in dotted columns, dates as dates, the password masked", async () => {
    const json = await t.req("GET", "/api/contract?limit=1", { token });
    const contract = json.body.items[0];
    expect(contract.start_date).toMatch(/^2025-01-01T00:00:00/);
    const rows = parseCsv((await t.req("GET", "/api/contract?format=csv", { token })).text);
    const [header, row] = rows;
    const at = (h: string) => row[header.indexOf(h)];
    for (const h of ["number", "customer.name", "customer.doc_identity", "billing_customer.name", "config.username", "config.password", "address.line1", "address.city.name", "start_date"]) {
      expect({ h, present: header.includes(h) }).toEqual({ h, present: true });
    }
    expect(at("customer.name")).toBe(contract.customer.name);
    expect(at("config.username")).toBe(contract.config.username);
    expect(at("address.city.name")).toBe(contract.address.city.name);
    expect(at("start_date")).toBe("2025-01-01");
    expect(at("signature_date")).toBe("");
    // Never the password in clear: the masked value the JSON read shows.
    expect(at("config.password")).toBe("********");
    // Arrays and free-form JSON are left out.
    expect(header.some((h) => h === "flags" || h.startsWith("flags.") || h.startsWith("original"))).toBe(false);
    // An agent that is null: its columns are empty.
    expect(contract.agent).toBeNull();
    expect(header.filter((h) => h.startsWith("agent.")).every((h) => at(h) === "")).toBe(true);
    expect(header.filter((h) => h.startsWith("agent.")).length).toBeGreaterThan(1);
  });

  test("formula guard and RFC 4180 quoting", async () => {
    const res = await t.req("GET", "/api/city?format=csv&country=BR&sort=name", { token });
    expect(res.text).toContain(`"'=HYPERLINK(""x"")","S,P",BR`);
    // Quoted, so a `;`-separated reading keeps it one text cell.
    expect(res.text).toContain(`,"Sé;=1+1",SP,BR`);
  });

  test("filters and sort apply; page and limit do not; format is not a filter", async () => {
    const json = await t.req("GET", "/api/city?sort=-name&q=city", { token });
    const csv = parseCsv((await t.req("GET", "/api/city?sort=-name&q=city&page=7&limit=1&format=csv", { token })).text);
    expect(csv.slice(1).map((r) => r[0])).toEqual(json.body.items.map((c: any) => c.id));
  });

  // Seeds its rows straight into the corporation database (100,000 through the API is minutes).
  testSourceOnly("every page: more rows than one page of the handler", async () => {
    const now = new Date().toISOString();
    await t.ctx.store.tenant(corpId).write(async (db) => {
      for (let i = 0; i < 11_234; i++) await db.insert(cities).values({ id: newId(), name: `Bulk ${String(i).padStart(5, "0")}`, state: "MG", country: "BR", created_at: now, updated_at: now }).run();
    });
    const res = await t.req("GET", "/api/city?state=MG&sort=name", { token, headers: { accept: "text/csv;q=0.9, application/json;q=0.5" } });
    const rows = parseCsv(res.text);
    // Three pages of the handler's, in one sorted run.
    expect(rows.length).toBe(11_235);
    expect(rows.slice(1).map((r) => r[1])).toEqual(Array.from({ length: 11_234 }, (_, i) => `Bulk ${String(i).padStart(5, "0")}`));
    expect(new Set(rows.map((r) => r[0])).size).toBe(11_235);
  });

  test("JSON unless CSV is asked for", async () => {
    for (const headers of [{} as Record<string, string>, { accept: "application/json" }, { accept: "application/json, text/csv;q=0.5" }, { accept: "*/*" }]) {
      const res = await t.req("GET", "/api/city?limit=1", { token, headers });
      expect(res.headers.get("content-type")).toStartWith("application/json");
    }
    const json = await t.req("GET", "/api/city?limit=1&format=json", { token, headers: { accept: "text/csv" } });
    expect(json.body.limit).toBe(1);
  });

  test("400 for an unknown format or filter, 401 without a token, 403 without permission", async () => {
    const bad = await t.req("GET", "/api/city?format=xlsx", { token });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("format");
    const filter = await t.req("GET", "/api/city?format=csv&nope=1", { token });
    expect(filter.status).toBe(400);
    expect(filter.body.errors[0].path).toBe("nope");
    expect((await t.req("GET", "/api/city?format=xlsx")).status).toBe(401);
    expect((await t.req("GET", "/api/city?format=csv")).status).toBe(401);
    const { addUser } = await import("../support/helpers");
    const other = await addUser(t, corpId, { services: ["platform.person"] });
    expect((await t.req("GET", "/api/city?format=csv", { token: other.token })).status).toBe(403);
  });

  // Seeds its rows straight into the corporation database (100,000 through the API is minutes).
  testSourceOnly("over 100,000 rows: 400 asking for a narrower filter", async () => {
    const now = new Date().toISOString();
    await t.ctx.store.tenant(corpId).write(async (db) => {
      const insert = db.$client.query("INSERT INTO cities (id, name, state, country, created_at, updated_at) VALUES (?1, ?2, 'RJ', 'BR', ?3, ?3)");
      for (let i = 0; i < 100_001; i++) await insert.run(newId(), `Many ${i}`, now);
    });
    const res = await t.req("GET", "/api/city?format=csv&state=RJ", { token });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("format");
    expect(res.body.detail).toContain("narrow");
    // Narrowed, it answers.
    const narrow = await t.req("GET", "/api/city?format=csv&state=RJ&q=Many%2099999", { token });
    expect(narrow.status).toBe(200);
    expect(parseCsv(narrow.text).length).toBe(2);
  });
});
