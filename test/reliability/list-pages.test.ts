// List pages read rows without Drizzle's builder and keep exact totals per read-connection change
// stamp (src/db/list.ts): a page's bytes are the records' own bytes, and a total follows every
// write, by the API or by another connection.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { registryApp } from "../support/registry";

let f: Awaited<ReturnType<typeof registryApp>>;
let token: string;
let cityId: string;
async function ok(method: string, path: string, body?: unknown) {
  const res = await f.admin.req(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res;
}

beforeAll(async () => {
  f = await registryApp();
  token = f.admin.token;
  cityId = (await ok("POST", "/api/city", { name: "Campinas", state: "SP", country: "BR" })).body.id;
});
afterAll(() => f.t.close());

const address = () => ({ line1: "Rua A, 1", line2: null, district: "Centro", postal_code: "13000-000", detail: null, latitude: -22.9, longitude: -47.06, city_id: cityId });

describe("GET /api/person, /api/qrcode: a page's bytes", () => {
  test("are the page wrapper around each record's own GET body, in order (key order, booleans, nulls, embedded address)", async () => {
    await ok("POST", "/api/person", { name: "Pagina Um", corporate: true, email: "um@example.com", address: address() });
    await ok("POST", "/api/person", { name: "Pagina Dois", display_name: "Dois", tp_doc_identity: "CPF", doc_identity: "1", corporate: false });
    await ok("POST", "/api/person", { name: "Pagina Tres" });
    await ok("POST", "/api/qrcode", { name: "pagina-a", kind: "dynamic", target: "https://example.net/a" });
    const b = (await ok("POST", "/api/qrcode", { name: "pagina-b", kind: "dynamic", target: "https://example.net/b" })).body;
    await ok("PUT", `/api/qrcode/${b.id}/inactive`);
    for (const [list, query] of [["/api/person", "?q=pagina&sort=-name"], ["/api/qrcode", "?q=pagina"], ["/api/person", "?limit=2&page=2"]] as const) {
      const page = await ok("GET", list + query);
      const records = await Promise.all(page.body.items.map(async (i: { id: string }) => (await ok("GET", `${list}/${i.id}`)).text));
      expect(page.body.items.length).toBeGreaterThan(0);
      const { page: p, limit, total } = page.body;
      expect(page.text).toBe(`{"items":[${records.join(",")}],"page":${p},"limit":${limit},"total":${total}}`);
    }
  });
});

describe("GET /api/person: exact totals between and after writes", () => {
  test("a search's and a plain page's total move with every create, rename and delete, and repeat unchanged in between", async () => {
    const total = async (query: string) => (await ok("GET", `/api/person${query}`)).body.total as number;
    const before = { q: await total("?q=zebedeu"), all: await total("") };
    expect(await total("?q=zebedeu")).toBe(before.q);
    const created = (await ok("POST", "/api/person", { name: "Zebedeu Primeiro" })).body;
    expect(await total("?q=zebedeu")).toBe(before.q + 1);
    expect(await total("")).toBe(before.all + 1);
    expect(await total("?q=ebe")).toBeGreaterThanOrEqual(1);
    await ok("PUT", `/api/person/${created.id}`, { name: "Outro Nome" });
    expect(await total("?q=zebedeu")).toBe(before.q);
    expect(await total("?q=outro%20nome")).toBe(1);
    await ok("PUT", `/api/person/${created.id}`, { name: "Zebedeu De Novo" });
    expect(await total("?q=zebedeu")).toBe(before.q + 1);
    await ok("DELETE", `/api/person/${created.id}`);
    expect(await total("?q=zebedeu")).toBe(before.q);
    expect(await total("")).toBe(before.all);
  });

  test("a row written by another connection (another process) moves the total at the next read", async () => {
    const total = async () => (await ok("GET", "/api/person?q=forasteiro")).body.total as number;
    expect(await total()).toBe(0);
    const db = f.t.sqlWrite(f.admin.corpId);
    const at = new Date().toISOString();
    db.run("INSERT INTO persons (id, name, corporate, created_at, updated_at) VALUES (?, 'Forasteiro', 0, ?, ?)", [Bun.randomUUIDv7(), at, at]);
    expect(await total()).toBe(1);
    db.run("DELETE FROM persons WHERE name = 'Forasteiro'");
    expect(await total()).toBe(0);
  });

  test("more distinct searches than the totals kept per connection: each total stays exact", async () => {
    await ok("POST", "/api/person", { name: "Guardado Contado" });
    const first = (await ok("GET", "/api/person?q=guardado")).body.total;
    expect(first).toBe(1);
    for (let i = 0; i < 300; i++) await ok("GET", `/api/person?q=nada${i}`);
    expect((await ok("GET", "/api/person?q=guardado")).body.total).toBe(1);
    expect((await ok("GET", "/api/person?q=nada7")).body.total).toBe(0);
  });
});

describe("GET /api/person?q=: a frequent term's pages through the match set equal SQLite's own plan", () => {
  test("every page, both id orders, a rare term, and after a write; `corporate=false` (all are) takes SQLite's plan", async () => {
    const db = f.t.sqlWrite(f.admin.corpId);
    const at = new Date().toISOString();
    const insert = db.prepare("INSERT INTO persons (id, name, corporate, created_at, updated_at) VALUES (?, ?, 0, ?, ?)");
    db.transaction(() => {
      for (let i = 0; i < 3000; i++) insert.run(Bun.randomUUIDv7(), i % 8 === 3 ? `Andarilho ${i}` : i === 1777 ? `Raro ${i}` : `Outro ${i}`, at, at);
    })();
    await ok("PUT", `/api/person/${(await ok("POST", "/api/person", { name: "Sem Empresa", corporate: true })).body.id}`, { name: "Andarilho Empresa", corporate: false });
    const compare = async (query: string) => {
      const walked = (await ok("GET", `/api/person?${query}`)).body;
      const planned = (await ok("GET", `/api/person?${query}&corporate=false`)).body;
      expect(walked).toEqual(planned);
      return walked;
    };
    const first = await compare("q=andarilho&limit=50");
    expect(first.total).toBe(376);
    for (const page of [2, 5, 8, 9]) expect((await compare(`q=andarilho&limit=50&page=${page}`)).items.length).toBe(page === 8 ? 26 : page === 9 ? 0 : 50);
    await compare("q=andarilho&sort=-id&limit=100&page=2");
    await compare("q=andarilho&sort=id&limit=500");
    expect((await compare("q=raro")).total).toBe(1);
    await ok("POST", "/api/person", { name: "Andarilho Novo" });
    expect((await compare("q=andarilho&sort=-id&limit=3")).items[0].name).toBe("Andarilho Novo");
  });

  test("a sparse term too rare to walk for is paged out of the set's own rowids, as SQLite's plan pages it", async () => {
    const db = f.t.sqlWrite(f.admin.corpId);
    const at = new Date().toISOString();
    const insert = db.prepare("INSERT INTO persons (id, name, corporate, created_at, updated_at) VALUES (?, ?, 0, ?, ?)");
    // 40 among > 3,000 rows: kept as a list of rowids; a page of 300 would walk the whole id index.
    db.transaction(() => {
      for (let i = 0; i < 3000; i++) insert.run(Bun.randomUUIDv7(), i % 75 === 0 ? `Esparso ${i / 75}` : `Enchimento ${i}`, at, at);
    })();
    const compare = async (query: string) => {
      const listed = (await ok("GET", `/api/person?${query}`)).body;
      expect(listed).toEqual((await ok("GET", `/api/person?${query}&corporate=false`)).body);
      return listed;
    };
    expect((await compare("q=esparso&limit=300")).items.length).toBe(40);
    expect((await compare("q=esparso&sort=-id&limit=300")).items[0].name).toBe("Esparso 39");
    expect((await compare("q=esparso&limit=300&page=2")).items).toEqual([]);
    expect((await compare("q=esparso&limit=5&page=3")).items.map((p: { name: string }) => p.name)).toEqual(["Esparso 10", "Esparso 11", "Esparso 12", "Esparso 13", "Esparso 14"]);
  });
});
