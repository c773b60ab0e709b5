// Two app nodes over one PostgreSQL (cluster mode): the contract GET's kept text follows the
// corporation's change stamp there (src/db/pg/generations.ts), which moves right after a write
// ends on the node that made it, and on every other node when that write's NOTIFY arrives.
import { beforeAll, describe, expect, test } from "bun:test";
import { contractBody } from "../../support/contract-body";
import { testSourceOnly, type TestApp } from "../../support/helpers";
import { twoNodes } from "../../support/one-database";
import { DEADLINE_MS } from "../../support/wait";

const { a, b, admin: { token, corpId } } = await twoNodes();

beforeAll(async () => {
  expect((await a.req("POST", "/api/externalapp", { token, body: { name: "erp" } })).status).toBe(200);
});

async function view(t: TestApp, id: string) {
  const res = await t.req("GET", `/api/contract/${id}`, { token });
  expect(res.status).toBe(200);
  return res.body;
}

/** Polls `t` until the contract shows what `ok` wants; fails after 15 s (a loaded machine's notification can be late). */
async function until(t: TestApp, id: string, ok: (v: any) => boolean): Promise<void> {
  const end = performance.now() + DEADLINE_MS;
  for (;;) {
    if (ok(await view(t, id))) return;
    if (performance.now() > end) throw new Error(`node never showed the change: ${JSON.stringify((await view(t, id)).flags)}`);
    await Bun.sleep(10);
  }
}

describe("GET /api/contract/{id}: kept texts on two nodes over one PostgreSQL", () => {
  test("a write is seen at once by its node's next read, and by the other node once its notification arrived", async () => {
    const c = (await a.req("POST", "/api/contract/create/externalapp/name/erp", { token, body: contractBody(3) })).body;
    // Both nodes keep the text.
    expect((await view(a, c.id)).flags).toEqual([]);
    expect(await view(b, c.id)).toEqual(await view(b, c.id));
    expect((await view(b, c.id)).flags).toEqual([]);

    for (const name of ["gold", "silver"]) expect((await a.req("POST", "/api/classification", { token, body: { name } })).status).toBe(200);
    expect((await a.req("PATCH", `/api/contract/${c.id}/flags`, { token, body: { add: ["gold"] } })).status).toBe(200);
    expect((await view(a, c.id)).flags).toEqual(["gold"]);
    await until(b, c.id, (v) => v.flags.length === 1);
    expect((await view(b, c.id)).flags).toEqual(["gold"]);

    // And the other way round.
    expect((await b.req("PATCH", `/api/contract/${c.id}/flags`, { token, body: { add: ["silver"] } })).status).toBe(200);
    expect((await view(b, c.id)).flags).toEqual(["gold", "silver"]);
    await until(a, c.id, (v) => v.flags.length === 2);
    expect((await view(a, c.id)).flags).toEqual(["gold", "silver"]);
  });

  testSourceOnly("a write without events moves the other node's stamp too; a rolled-back one moves nothing there", async () => {
    const c = (await a.req("POST", "/api/contract/create/externalapp/name/erp", { token, body: contractBody(4) })).body;
    // The upsert's event wakes B's webhook dispatcher, whose own writes move B's stamp: let it settle.
    await Bun.sleep(300);
    const before = (await view(b, c.id)).customer.name;
    expect((await view(b, c.id)).customer.name).toBe(before);
    await a.ctx.store.tenant(corpId).write((tx) => tx.$client.query("UPDATE persons SET name = 'Renamed 4' WHERE id = ?1").run(c.customer.id));
    expect((await view(a, c.id)).customer.name).toBe("Renamed 4");
    await until(b, c.id, (v) => v.customer.name === "Renamed 4");
    expect(before).not.toBe("Renamed 4");

    await expect(
      a.ctx.store.tenant(corpId).write(async (tx) => {
        await tx.$client.query("UPDATE persons SET name = 'Rolled back 4' WHERE id = ?1").run(c.customer.id);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect((await view(a, c.id)).customer.name).toBe("Renamed 4");
    expect((await view(b, c.id)).customer.name).toBe("Renamed 4");
  });
});
