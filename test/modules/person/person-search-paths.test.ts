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

describe("GET /api/person?q=: words too short for a trigram", () => {
  // On PostgreSQL such a word is compared with the person's columns joined by a line break (one
  // fold a row, db/list.ts joinedText): what one column holds is found, never a match across two.
  test("found in any one column, accents and case folded, never across two columns; page and total as every person's text says", async () => {
    const created = [
      { name: "Kyva Ok", display_name: "Wy Ok", doc_identity: "KY-1" },
      { name: "Ykã", display_name: null, doc_identity: null },
      { name: "Kãw Yo", display_name: "Wy", doc_identity: "w 9" },
      { name: "Oky", display_name: "wo", doc_identity: "ykw" },
      { name: "Hélö Qx", display_name: "xq", doc_identity: "1x" },
    ];
    for (const body of created) expect((await f.t.req("POST", "/api/person", { token, body: { ...body, tp_doc_identity: body.doc_identity ? "CPF" : undefined } })).status).toBe(200);
    type Row = { id: string; name: string; display_name: string | null; doc_identity: string | null };
    const everyone = (await page("limit=200")).items as unknown as Row[];
    const fold = (s: string | null) => (s ?? "").normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
    const holds = (r: Row, word: string) => [r.name, r.display_name, r.doc_identity].some((c) => c !== null && fold(c).includes(fold(word)));
    // "yw" (oky|wo), "xx" (qx|xq), "ow" (yo|wy) and "kw" (ok|wy) span two columns: found only where one column holds them.
    for (const q of ["yw", "kw", "ky", "ÃW", "kã", "y w", "wy ok", "ok w", "yo", "ow", "xx", "1x", "xq", "qx", "lo", "ö", "a k", "w 9", "%", "_", "\\"]) {
      const expected = everyone.filter((r) => q.split(" ").every((w) => holds(r, w))).map((r) => r.id).sort();
      const got = await page(`q=${encodeURIComponent(q)}&limit=200`);
      expect({ q, total: got.total, ids: got.items.map((i) => i.id) }).toEqual({ q, total: expected.length, ids: expected });
      expect(await samePaths(q)).toBe(expected.length);
    }
    // The joins the test is about: the first column's end and the next one's start.
    expect((await page("q=yw")).total).toBe(0);
    expect((await page("q=xx")).total).toBe(0);
    expect((await page("q=kw")).total).toBe(1);
  });
});

describe("another corporation's persons are never found", () => {
  test("the same names in two corporations, searched side by side on every path: each sees its own persons only", async () => {
    const otherToken = f.other.token;
    const mine = new Set<string>();
    const theirs = new Set<string>();
    for (let i = 0; i < 24; i++) {
      const name = `${FIRST[i % FIRST.length]} ${LAST[i % LAST.length]} Vizinho ${i}`;
      const a = await f.t.req("POST", "/api/person", { token, body: { name } });
      const b = await f.t.req("POST", "/api/person", { token: otherToken, body: { name } });
      expect([a.status, b.status]).toEqual([200, 200]);
      mine.add(a.body.id);
      theirs.add(b.body.id);
    }
    const all = (await page("q=vizinho&limit=100")).items.map((p) => p.id);
    // Many requests of both corporations at once: the reads share the pool's connections, one after
    // another on each (a read's COMMIT is not waited for before the next read's BEGIN goes out).
    const queries = ["q=vizinho", "q=silva%20vizinho", "q=joao", "q=a", "q=vizinho&sort=-id", "q=vizinho&corporate=false", "q=vizinho&limit=3&page=2", "q=viz&limit=100"];
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, round) =>
        queries.flatMap((q) =>
          [token, otherToken].map(async (who) => {
            const res = await f.t.req("GET", `/api/person?${q}`, { token: who });
            expect(res.status).toBe(200);
            return { who, round, ids: (res.body as PageBody).items.map((p) => p.id), total: (res.body as PageBody).total };
          }),
        ),
      ).flat(),
    );
    for (const r of results) {
      const other = r.who === token ? theirs : mine;
      expect(r.ids.filter((id) => other.has(id))).toEqual([]);
    }
    expect(all.filter((id) => mine.has(id))).toHaveLength(24);
    expect(all.filter((id) => theirs.has(id))).toHaveLength(0);
    expect((await f.t.req("GET", "/api/person?q=vizinho&limit=100", { token: otherToken })).body.items.map((p: { id: string }) => p.id).sort()).toEqual([...theirs].sort());
  });
});

describe("a page's cities, kept between writes", () => {
  test("a city renamed is seen by the next page; a person moved to another city too", async () => {
    const city = async (name: string) => (await f.t.req("POST", "/api/city", { token, body: { name, state: "SP", country: "BR" } })).body;
    const [one, two] = [await city("Cidade Um"), await city("Cidade Dois")];
    const address = (cityId: string) => ({ line1: "Rua A, 1", line2: null, district: "Centro", postal_code: "13000-000", detail: null, latitude: null, longitude: null, city_id: cityId });
    const person = (await f.t.req("POST", "/api/person", { token, body: { name: "Morador Kept", address: address(one.id) } })).body;
    const cityOnPage = async () => (await page("q=morador%20kept")).items.map((p) => (p as unknown as { address: { city: { name: string } } }).address.city.name);
    expect(await cityOnPage()).toEqual(["Cidade Um"]);
    expect(await cityOnPage()).toEqual(["Cidade Um"]);
    expect((await f.t.req("PUT", `/api/city/${one.id}`, { token, body: { name: "Cidade Um Renomeada", state: "SP", country: "BR" } })).status).toBe(200);
    expect(await cityOnPage()).toEqual(["Cidade Um Renomeada"]);
    expect((await f.t.req("POST", `/api/person/${person.id}/address`, { token, body: address(two.id) })).status).toBe(200);
    expect(await cityOnPage()).toEqual(["Cidade Dois"]);
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
