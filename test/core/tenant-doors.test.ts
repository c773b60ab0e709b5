// source-only: drives the idle clock of the corporation databases (ctx.tenants) and the jobs in-process.
// Corporation databases are closed when idle and after a background sweep that opened them; the
// work behind them (deliveries, collected metrics, requests in flight, a corporation's deletion)
// must not notice.
// SQLite only (not in test/pg-backend.txt): the idle closing of corporation files (PostgreSQL opens nothing per corporation).
import { afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { MetricScheduler } from "../../src/modules/metric/jobs";
import type { WebhookDispatcher } from "../../src/modules/webhook/jobs";
import { Housekeeping } from "../../src/modules/retention/housekeeping";
import { createWebhook } from "../../src/modules/webhook/service";
import { addCorp, makeApp, startAndLogin, type TestApp } from "../support/helpers";
import { sqliteTenants } from "../support/backend";
import { emit, FAST, LOOPBACK_ALLOWED, manualClock, receiver } from "../support/webhooks";
import { waitFor } from "../support/wait";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(options: Record<string, unknown> = {}) {
  // The idle clock is ticked by hand (closeIdle); its own timer would tick every 10 minutes.
  const t = await makeApp({ env: LOOPBACK_ALLOWED, options: { tenantIdleMs: 1_200_000, ...options } });
  cleanups.push(() => t.close());
  const admin = await startAndLogin(t);
  return { t, admin };
}

/** Two ticks of the idle clock with no request between them: every idle door closes. */
const idleFor = (t: TestApp) => {
  sqliteTenants(t.ctx).closeIdle();
  sqliteTenants(t.ctx).closeIdle();
};

describe("GET /api/city: a corporation database closed while idle", () => {
  test("reopens for the next request, also through a door taken before it closed", async () => {
    const { t, admin } = await setup();
    const created = await t.req("POST", "/api/city", { token: admin.token, body: { name: "Curitiba", state: "PR", country: "BR" } });
    expect(created.status).toBe(200);
    const held = t.ctx.store.tenant(admin.corpId);
    idleFor(t);
    expect(t.ctx.tenants.isOpen(admin.corpId)).toBe(false);
    const list = await t.req("GET", "/api/city", { token: admin.token });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    idleFor(t);
    expect(await held.read((db) => db.$client.query("SELECT count(*) AS n FROM cities").get())).toEqual({ n: 1 });
    await held.write((tx) => tx.$client.query("UPDATE cities SET name = 'Londrina'").run());
    expect((await t.req("GET", "/api/city", { token: admin.token })).body.items[0].name).toBe("Londrina");
  });

  test("a door in use by a request stays open; one with an operation in flight is never closed", async () => {
    const { t, admin } = await setup();
    sqliteTenants(t.ctx).closeIdle();
    expect((await t.req("GET", "/api/city", { token: admin.token })).status).toBe(200);
    sqliteTenants(t.ctx).closeIdle();
    // Taken during the last tick: kept.
    expect(t.ctx.tenants.isOpen(admin.corpId)).toBe(true);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const write = t.ctx.store.tenant(admin.corpId).write(async (tx) => {
      await gate;
      await tx.$client.query("INSERT INTO notes (id, user_id, title, content, created_at, updated_at) VALUES ('n1', ?1, 't', 'c', '2026-01-01', '2026-01-01')").run(admin.userId);
    });
    for (let i = 0; i < 4; i++) sqliteTenants(t.ctx).closeIdle();
    expect(t.ctx.tenants.isOpen(admin.corpId)).toBe(true);
    release();
    await write;
    sqliteTenants(t.ctx).closeIdle();
    expect(t.ctx.tenants.isOpen(admin.corpId)).toBe(false);
    expect(t.sql(admin.corpId).query("SELECT count(*) AS n FROM notes").get()).toEqual({ n: 1 });
  });
});

describe("POST /api/corp: background sweeps leave no database open", () => {
  test("a new corporation's database is closed once created; housekeeping over every corporation closes what it opened", async () => {
    const { t, admin } = await setup();
    const others = [await addCorp(t, "beta"), await addCorp(t, "gamma")];
    for (const id of others) expect(t.ctx.tenants.isOpen(id)).toBe(false);
    expect((await t.req("GET", "/api/city", { token: admin.token })).status).toBe(200);
    const report = await new Housekeeping(t.ctx).runOnce();
    expect(report.databases.map((d) => d.database).sort()).toEqual(["acme", "beta", "gamma", "platform"]);
    expect(report.databases.filter((d) => d.error)).toEqual([]);
    for (const id of others) expect(t.ctx.tenants.isOpen(id)).toBe(false);
    // The one requests use stays open.
    expect(t.ctx.tenants.isOpen(admin.corpId)).toBe(true);
  });

  test("the webhook dispatcher's minutely sweep opens no idle corporation; its full sweep visits those with webhooks and closes what it opened", async () => {
    const { t, admin } = await setup();
    const beta = await addCorp(t, "beta");
    const gamma = await addCorp(t, "gamma");
    for (const id of [admin.corpId, beta])
      await createWebhook(t.ctx.store.tenant(id), t.ctx.store.platform, { name: "w", target: "http://127.0.0.1:9/hook", email: "ops@example.net", groups: [] });
    idleFor(t);
    const dispatcher = t.ctx.jobs.get<WebhookDispatcher>("webhook-dispatcher")!;
    const opened: string[] = [];
    const door = sqliteTenants(t.ctx).door.bind(sqliteTenants(t.ctx));
    sqliteTenants(t.ctx).door = (id: string, request?: boolean) => (opened.push(id), door(id, request));
    await dispatcher.sweep(false);
    await Bun.sleep(50);
    expect(opened).toEqual([]);
    await dispatcher.sweep(true);
    await waitFor("both visited", () => opened.includes(admin.corpId) && opened.includes(beta));
    // Each visit closes what it opened once its pass is over (on a loaded machine, a while after).
    await waitFor("the visited databases closed", () => t.ctx.tenants.openCount() === 0);
    // gamma has no webhook: nothing to deliver, not opened.
    expect(opened).not.toContain(gamma);
  });
});

describe("POST /api/webhook: deliveries of a corporation whose database was closed", () => {
  test("a retry due after the close goes out, and an event found only by the periodic sweep too", async () => {
    const clock = manualClock();
    // The full sweep (every corporation, hourly by default) every 200 ms here.
    const { t, admin } = await setup({ now: clock.now, dispatchTuning: { ...FAST, fullSweepMs: 200 } });
    let answers = 0;
    const a = receiver(() => new Response(answers++ === 0 ? "down" : "ok", { status: answers === 1 ? 500 : 200 }));
    cleanups.push(() => a.stop());
    const hook = await t.req("POST", "/api/webhook", { token: admin.token, body: { name: "r", target: a.url(), email: "ops@example.net", groups: ["CITY_AFTER_INSERT"], log_enabled: true } });
    expect(hook.status).toBe(200);
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "x" });
    await waitFor("the first attempt to be recorded", () => t.sql(admin.corpId).query("SELECT 1 FROM webhook_deliveries WHERE attempts = 1").get());
    // A commit is visible before its write ends (the write waits for its fsync): a door with a
    // write in flight is not closed.
    await waitFor("the attempt's write to end", () => sqliteTenants(t.ctx).door(admin.corpId, false).idle);
    idleFor(t);
    expect(t.ctx.tenants.isOpen(admin.corpId)).toBe(false);
    clock.advance(30_000);
    await waitFor("the retry", () => a.requests.length === 2);
    await waitFor("the delivery done", () => t.sql(admin.corpId).query("SELECT 1 FROM webhook_deliveries WHERE status = 'succeeded'").get());
    // An event committed with no wake-up, its database closed: the full sweep finds it.
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { quiet: true }, false);
    // A checkpoint started by the write (its thread) also keeps the door open until it ends.
    await waitFor("the write and its checkpoint to end", () => sqliteTenants(t.ctx).door(admin.corpId, false).idle);
    idleFor(t);
    expect(t.ctx.tenants.isOpen(admin.corpId)).toBe(false);
    await waitFor("the swept delivery", () => a.requests.length === 3);
    expect(JSON.parse(a.requests[2].body).data.quiet).toBe(true);
    // The sweep's visits close what they opened.
    await waitFor("the sweep's door closed", () => !t.ctx.tenants.isOpen(admin.corpId));
  });
});

describe("POST /api/metric: collection in a corporation whose database was closed", () => {
  test("values are still collected; the collection does not keep the database open", async () => {
    const endpoint = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json(42) });
    cleanups.push(() => endpoint.stop(true));
    const { t, admin } = await setup();
    const created = await t.req("POST", "/api/metric", {
      token: admin.token,
      body: { name: "uplink", data_type: "Int", periodicity: "1s", start_date: new Date(Date.now() - 3_600_000).toISOString(), endpoint: `http://127.0.0.1:${endpoint.port}/v` },
    });
    expect(created.status).toBe(200);
    expect(t.ctx.jobs.get<MetricScheduler>("metric-scheduler")!.nextTick(admin.corpId, created.body.id)).not.toBeNull();
    const count = () => (t.sql(admin.corpId).query("SELECT count(*) AS n FROM metric_values").get() as { n: number }).n;
    idleFor(t);
    expect(t.ctx.tenants.isOpen(admin.corpId)).toBe(false);
    await waitFor("a value collected after the close", () => count() >= 1);
    const n = count();
    await waitFor("the value's write to end", () => sqliteTenants(t.ctx).door(admin.corpId, false).idle);
    idleFor(t);
    await waitFor("another value", () => count() > n);
    // Collections take the door without keeping it: the next tick closes it.
    await waitFor("the door closed between collections", () => {
      sqliteTenants(t.ctx).closeIdle();
      return !t.ctx.tenants.isOpen(admin.corpId);
    });
  }, 60_000);
});

describe("DELETE /api/corp/{id}: operations in flight on its database", () => {
  test("finish before the database is closed and moved", async () => {
    const { t, admin } = await setup();
    const victim = await addCorp(t, "victim");
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const door = t.ctx.store.tenant(victim);
    const reading = door.read(async (db) => {
      await gate;
      return db.$client.query("SELECT count(*) AS n FROM cities").get();
    });
    const writing = door.write(async (tx) => {
      await gate;
      await tx.$client.query("INSERT INTO notes (id, user_id, title, content, created_at, updated_at) VALUES ('n1', ?1, 't', 'c', '2026-01-01', '2026-01-01')").run(admin.userId);
    });
    let deleted = false;
    const deleting = t.req("DELETE", `/api/corp/${victim}`, { token: admin.token }).then((r) => {
      deleted = true;
      return r;
    });
    await Bun.sleep(50);
    expect(deleted).toBe(false);
    release();
    expect(await reading).toEqual({ n: 0 });
    await writing;
    expect((await deleting).status).toBe(204);
    expect(t.ctx.tenants.isOpen(victim)).toBe(false);
    expect((await t.req("GET", `/api/corp/${victim}`, { token: admin.token })).status).toBe(404);
    expect(() => t.ctx.store.tenant(victim)).toThrow();
    // A request still holding the door after the deletion gets a 404 problem, not a 500.
    expect(await door.read((db) => db.$client.query("SELECT 1").get()).then(() => null, (e: { status?: number }) => e.status)).toBe(404);
    // The write committed into the database that was moved aside.
    const [moved] = readdirSync(join(t.dir, "deleted")).filter((f) => f.startsWith(`${victim}-`) && f.endsWith(".db"));
    const copy = new Database(join(t.dir, "deleted", moved), { readonly: true });
    expect(copy.query("SELECT id FROM notes").all()).toEqual([{ id: "n1" }]);
    copy.close();
  });
});
