// Two app nodes over one PostgreSQL (cluster mode): RADIUS authorize keeps its decisions per
// corporation state stamp (src/modules/isp/radius-service.ts, src/db/pg/generations.ts) and answers
// an unchanged corporation with no transaction; a change made through the other node must reach
// this node's next answers once that write's NOTIFY arrived, and its own node's at once.
import { beforeAll, describe, expect, test } from "bun:test";
import { testSourceOnly, type TestApp } from "../../support/helpers";
import { contractWith, mikrotikLayout, must } from "../../support/isp";
import { twoNodes } from "../../support/one-database";
import { waitFor } from "../../support/wait";

const { a, b, admin: { token, corpId } } = await twoNodes();
let fx: Awaited<ReturnType<typeof mikrotikLayout>>;
let nas: any;
let maria: Awaited<ReturnType<typeof contractWith>>;
const SECRET = "nas-secret-0001";
const NAS_IP = "192.0.2.10";
const basic = `Basic ${Buffer.from(`acme:${SECRET}`).toString("base64")}`;
const q = { username: "maria", password: "maria-pass", nas_ip: NAS_IP };
const authorize = (t: TestApp, query: Record<string, string> = q) => t.req("GET", `/api/isp/radius/authorize?${new URLSearchParams(query)}`, { headers: { authorization: basic } });

beforeAll(async () => {
  fx = await mikrotikLayout(a, token);
  nas = await must(a, token, "POST", "/api/isp/nas", { name: "bng", ip: NAS_IP, secret: SECRET, layout_id: fx.layout.id });
  maria = await contractWith(a, token, { username: "maria", password: "maria-pass", max_upload: "10M", max_download: "100M", pool_name_ipv4: "pppoe-v4" });
});

/** Authorizes through `t` until the answer's status is `status` (the other node's NOTIFY may take a moment). */
async function until(t: TestApp, status: number, query: Record<string, string> = q, check: (body: any) => boolean = () => true) {
  return await waitFor(`authorize answering ${status}`, async () => {
    const res = await authorize(t, query);
    return res.status === status && check(res.body) ? res : null;
  });
}

describe("GET /api/isp/radius/authorize on two nodes over one PostgreSQL", () => {
  test("a change through node B reaches node A's next authorize; node B's own at once", async () => {
    // Node A keeps the decision (asked twice: the second comes from what it kept).
    for (let i = 0; i < 2; i++) expect((await authorize(a)).body["reply:Mikrotik-Rate-Limit"].value).toBe("10M/100M");
    expect((await authorize(b)).status).toBe(200);

    // The contract made inactive through B: B refuses at once, A once B's NOTIFY arrived.
    await must(b, token, "PUT", `/api/contract/${maria.contract.id}/inactive`);
    expect((await authorize(b)).status).toBe(401);
    expect((await until(a, 401)).body.detail).toContain("not active");
    await must(b, token, "PUT", `/api/contract/${maria.contract.id}/active`);
    expect((await authorize(b)).status).toBe(200);
    await until(a, 200);

    // An attribute taken off the layout through B.
    expect((await authorize(a)).body["reply:Framed-Pool"]).toBeDefined();
    await must(b, token, "DELETE", `/api/isp/layout/${fx.layout.id}/attribute/${fx.pool.id}`);
    expect((await authorize(b)).body["reply:Framed-Pool"]).toBeUndefined();
    await until(a, 200, q, (body) => body["reply:Framed-Pool"] === undefined);

    // The NAS made inactive through B, then active again.
    await must(b, token, "PUT", `/api/isp/nas/${nas.id}/inactive`);
    expect((await authorize(b)).status).toBe(401);
    expect((await until(a, 401)).body.detail).toContain("NAS");
    await must(b, token, "PUT", `/api/isp/nas/${nas.id}/active`);
    await until(a, 200);

    // A new contract through B: A's kept "unknown user" gives way to it.
    expect((await authorize(a, { username: "joana", password: "joana-pass", nas_ip: NAS_IP })).status).toBe(404);
    await contractWith(b, token, { username: "joana", password: "joana-pass", max_upload: "1M", max_download: "2M" });
    await until(a, 200, { username: "joana", password: "joana-pass", nas_ip: NAS_IP });

    // A wrong password is still refused from a kept decision.
    expect((await authorize(a, { ...q, password: "wrong" })).status).toBe(401);
  });

  testSourceOnly("an unchanged corporation is answered with no transaction (in-process: counts the door's reads)", async () => {
    const door = a.ctx.store.tenant(corpId) as unknown as { read: (...args: unknown[]) => unknown };
    const read = door.read;
    let reads = 0;
    door.read = (...args: unknown[]) => (reads++, read.apply(door, args));
    try {
      await until(a, 200);
      // Enough to pass a second's attempt budget: the attempt log's commits keep the decisions.
      let answered = 0;
      for (let i = 0; i < 300; i++) if ((await authorize(a)).status === 200) answered++;
      expect(answered).toBe(300);
      // The first may read (the attempt log or another job may have written meanwhile); not each.
      console.log(`authorize: ${reads} reads for 300 answers`);
      expect(reads).toBeLessThan(10);
    } finally {
      door.read = read;
    }
  });
});
