// A ?q with nothing else (no filter, sorted by id or -id) is answered from the match set: SQLite's
// of rowids over its FTS5 index, cluster mode's of ids per corporation generation (db/list.ts
// pgMatchSet). The same ?q with a filter every person passes (`corporate=false`) is answered by
// the SQL plan (a count and a page). Both must give the same persons, in the same order, with the
// same total, on every page and after writes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { registryApp } from "../../support/registry";

let f: Awaited<ReturnType<typeof registryApp>>;
let token: string;

const FIRST = ["João", "MARIA", "Ana", "Pedro", "Conceição", "lucas"];
const LAST = ["Silva", "SOUZA", "Lima", "Pereira", "Silvã", "Costa d'Ávila"];

beforeAll(async () => {
  f = await registryApp();
  token = f.admin.token;
  for (let i = 0; i < 36; i++) {
    const name = `${FIRST[i % FIRST.length]} ${LAST[Math.floor(i / FIRST.length)]} ${i}`;
    const body = { name, display_name: i % 4 === 0 ? `Apelido ${LAST[i % LAST.length]}` : null, tp_doc_identity: "CPF", doc_identity: `${100 + i}.456.789-${String(i).padStart(2, "0")}` };
    expect((await f.t.req("POST", "/api/person", { token, body })).status).toBe(200);
  }
});
afterAll(() => f.t.close());

type PageBody = { items: { id: string; name: string }[]; total: number; page: number; limit: number };

async function page(query: string): Promise<PageBody> {
  const res = await f.t.req("GET", `/api/person?${query}`, { token });
  expect(res.status).toBe(200);
  return res.body as PageBody;
}

/** Every page of `q` (limit 4) both ways, sorted by id and by -id: the same ids, order and totals. */
async function samePaths(q: string): Promise<number> {
  let total = -1;
  for (const sort of ["id", "-id"]) {
    for (let p = 1; ; p++) {
      const base = `q=${encodeURIComponent(q)}&limit=4&page=${p}&sort=${sort}`;
      const plain = await page(base);
      const planned = await page(`${base}&corporate=false`);
      expect({ q, sort, p, total: plain.total, ids: plain.items.map((i) => i.id) }).toEqual({ q, sort, p, total: planned.total, ids: planned.items.map((i) => i.id) });
      total = plain.total;
      if (plain.items.length < 4) break;
    }
  }
  return total;
}

describe("GET /api/person?q=: the match set and the SQL plan answer alike", () => {
  test("common and rare words, accents and case folded, several words, documents, nothing", async () => {
    const totals: Record<string, number> = {};
    for (const q of ["silva", "SILVA", "joao", "conceicao", "ávila", "souza maria", "li", "a", "apelido", "456.789", "10345678903", "pedro 3", "nobody", "%", "_"]) {
      totals[q] = await samePaths(q);
    }
    // Silva and Silvã (folded), in names and in display names.
    expect(totals.silva).toBe(14);
    expect(totals.SILVA).toBe(totals.silva);
    expect(totals.joao).toBe(6);
    expect(totals.conceicao).toBe(6);
    expect(totals["souza maria"]).toBe(1);
    expect(totals["10345678903"]).toBe(1);
    expect(totals.nobody).toBe(0);
    expect(totals["%"]).toBe(0);
  });

  test("a write is seen by the next search: a rename into and out of the match, a new person, a delete", async () => {
    expect(await samePaths("zebedeu")).toBe(0);
    const { items } = await page("q=lucas&limit=1");
    const renamed = items[0]!;
    const current = (await f.t.req("GET", `/api/person/${renamed.id}`, { token })).body;
    expect((await f.t.req("PUT", `/api/person/${renamed.id}`, { token, body: { ...current, name: "Zebedeu Lucas" } })).status).toBe(200);
    expect((await page("q=zebedeu")).items.map((i) => i.id)).toEqual([renamed.id]);
    expect(await samePaths("zebedeu")).toBe(1);
    const created = (await f.t.req("POST", "/api/person", { token, body: { name: "Zébédeu Novo" } })).body;
    expect(await samePaths("zebedeu")).toBe(2);
    expect((await f.t.req("DELETE", `/api/person/${created.id}`, { token })).status).toBe(204);
    expect((await page("q=zebedeu")).total).toBe(1);
    expect((await f.t.req("PUT", `/api/person/${renamed.id}`, { token, body: current })).status).toBe(200);
    expect(await samePaths("zebedeu")).toBe(0);
  });
});

describe("a CSV export of a search (pages of 5,000)", () => {
  test("more matches than one statement reads (512): the same lines as the SQL plan's, in id order", async () => {
    for (let i = 0; i < 530; i++) expect((await f.t.req("POST", "/api/person", { token, body: { name: `Lote ${String(i).padStart(3, "0")}` } })).status).toBe(200);
    const csv = async (query: string) => {
      const res = await f.t.req("GET", `/api/person?${query}`, { token });
      expect(res.status).toBe(200);
      return res.text;
    };
    const plain = await csv("q=lote&format=csv");
    expect(plain.trim().split("\n").length).toBe(531);
    expect(plain).toBe(await csv("q=lote&corporate=false&format=csv"));
    expect(await csv("q=lote&sort=-id&format=csv")).toBe(await csv("q=lote&sort=-id&corporate=false&format=csv"));
  }, 120_000);
});
