// Two app nodes over one PostgreSQL (cluster mode): a search page kept on a node (its match set
// and its persons' texts, per the corporation's generation: no statement at all) shows a write
// made on the other node once that write's notification arrived, and at once on the writing node.
import { describe, expect, test } from "bun:test";
import type { TestApp } from "../../support/helpers";
import { twoNodes } from "../../support/one-database";
import { DEADLINE_MS } from "../../support/wait";

const { a, b, admin: { token } } = await twoNodes();

type PageBody = { items: { id: string; name: string }[]; total: number };

async function search(t: TestApp, q: string): Promise<PageBody> {
  const res = await t.req("GET", `/api/person?q=${q}&limit=50`, { token });
  expect(res.status).toBe(200);
  return res.body as PageBody;
}

/** Polls `t` until its search shows what `ok` wants; fails after the deadline (a loaded machine's notification can be late). */
async function until(t: TestApp, q: string, ok: (p: PageBody) => boolean): Promise<PageBody> {
  const end = performance.now() + DEADLINE_MS;
  for (;;) {
    const page = await search(t, q);
    if (ok(page)) return page;
    if (performance.now() > end) throw new Error(`the node never showed the change: ${JSON.stringify(page)}`);
    await Bun.sleep(10);
  }
}

describe("GET /api/person?q=: kept pages on two nodes over one PostgreSQL", () => {
  test("a rename, a new person and a delete on one node show on the other, both ways", async () => {
    const first = (await a.req("POST", "/api/person", { token, body: { name: "Nodo Primeiro" } })).body;
    // Both nodes keep the page (asked twice: the second from what the first kept).
    for (const t of [a, b]) for (let k = 0; k < 2; k++) expect((await search(t, "nodo")).items.map((p) => p.name)).toEqual(["Nodo Primeiro"]);

    expect((await a.req("PUT", `/api/person/${first.id}`, { token, body: { name: "Nodo Renomeado" } })).status).toBe(200);
    expect((await search(a, "nodo")).items.map((p) => p.name)).toEqual(["Nodo Renomeado"]);
    await until(b, "nodo", (p) => p.items[0]?.name === "Nodo Renomeado");

    // And the other way round: a new person on B, then a delete on B.
    const second = (await b.req("POST", "/api/person", { token, body: { name: "Nodo Segundo" } })).body;
    expect((await search(b, "nodo")).total).toBe(2);
    const seen = await until(a, "nodo", (p) => p.total === 2);
    expect(seen.items.map((p) => p.id).sort()).toEqual([first.id, second.id].sort());
    expect((await b.req("DELETE", `/api/person/${first.id}`, { token })).status).toBe(204);
    expect((await search(b, "nodo")).items.map((p) => p.id)).toEqual([second.id]);
    expect((await until(a, "nodo", (p) => p.total === 1)).items.map((p) => p.id)).toEqual([second.id]);
  });
});
