// source-only: calls the module's service and its slug cache in-process.
// The parts of the QRCode module that no route shows on its own: the slug cache's guard against
// keeping an answer read before a change, and the retention prune of scans.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pruneQrAccesses } from "../../../src/modules/qrcode/analytics-service";
import { SlugCache } from "../../../src/modules/qrcode/slug-cache";
import { inProcessOnly, makeApp, startAndLogin, type TestApp } from "../../support/helpers";
import { waitFor } from "../../support/wait";

let clock = Date.parse("2025-03-10T12:00:00Z");
let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;

beforeAll(async () => {
  t = await makeApp({ options: inProcessOnly({ now: () => clock }) });
  admin = await startAndLogin(t);
});
afterAll(() => t.close());

async function dynamic(name: string) {
  const res = await t.req("POST", "/api/qrcode", { token: admin.token, body: { name, kind: "dynamic", target: `https://example.com/${name}` } });
  expect(res.status).toBe(200);
  return res.body as { id: string; slug: string };
}

describe("qrcode/slug-cache: SlugCache", () => {
  test("a slug forgotten while it was being loaded is not kept with the answer read before", async () => {
    const code = await dynamic("cache-race");
    const cache = new SlugCache(t.ctx);
    const loading = cache.load(code.slug);
    cache.forget(code.slug); // as a change committing meanwhile does (afterCommit)
    expect(await loading).toMatchObject({ codeId: code.id, target: "https://example.com/cache-race", active: true });
    expect(cache.peek(code.slug)).toBeUndefined();
    await cache.load(code.slug);
    expect(cache.peek(code.slug)).toMatchObject({ codeId: code.id });
  });

  test("unknown slugs are remembered as unknown", async () => {
    const cache = new SlugCache(t.ctx);
    expect(await cache.load("noSuchSlug")).toBeNull();
    expect(cache.peek("noSuchSlug")).toBeNull();
  });
});

describe("qrcode/analytics-service: pruneQrAccesses", () => {
  test("deletes the scans made before the cutoff, at most `limit` a call, and nothing else", async () => {
    const code = await dynamic("prune");
    const scan = () => t.req("GET", `/q/${code.slug}`, { headers: { "user-agent": "Mozilla/5.0 prune" } });
    clock = Date.parse("2025-03-01T12:00:00Z");
    for (let i = 0; i < 3; i++) expect((await scan()).status).toBe(302);
    clock = Date.parse("2025-03-09T12:00:00Z");
    for (let i = 0; i < 2; i++) expect((await scan()).status).toBe(302);
    await waitFor("the scans written", async () => (await t.req("GET", `/api/qrcode/${code.id}`, { token: admin.token })).body.scans >= 5);
    const door = t.ctx.store.tenant(admin.corpId);
    const prune = () => door.write((tx) => pruneQrAccesses(tx, "2025-03-05T00:00:00.000+00:00", 2));
    expect(await prune()).toBe(2);
    expect(await prune()).toBe(1);
    expect(await prune()).toBe(0);
    const left = await t.req("GET", `/api/qrcode/${code.id}/accesses?from=2025-01-01&to=2025-12-31`, { token: admin.token });
    expect(left.body.items.map((a: { at: string }) => a.at)).toEqual(["2025-03-09T12:00:00.000+00:00", "2025-03-09T12:00:00.000+00:00"]);
  });
});
