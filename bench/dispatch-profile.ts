// Webhook dispatch cost, in-process (issue 35): `count` contract events are queued with the
// dispatcher stopped, then a fresh dispatcher delivers them to a local receiver; printed:
// deliveries a second, CPU µs per delivery of the app (process.cpuUsage) and of PostgreSQL's
// processes, transactions per delivery (pg_stat_database, reported up to a second late: rough).
// STATS=1 (PostgreSQL): the server loads pg_stat_statements and the statements of the drain are
// listed by total time, with calls per delivery. Compare before/after alternating, one sitting.
//   [STATS=1] bun bench/dispatch-profile.ts [pg|sqlite] [count]
import { makeApp, startAndLogin } from "../test/support/helpers";
import { contractBody } from "../test/support/contract-body";
import { benchPostgres, loadAverage, measured, PgStats, statementLine } from "./pg-stats";
import { WebhookDispatcher } from "../src/modules/webhook/jobs";

const engine = process.argv[2] ?? "pg";
const COUNT = Number(process.argv[3] ?? 2000);
const { pg, db, stats: STATS } = await benchPostgres(engine);
// The receiver listens on loopback.
const t = await makeApp({ env: { CORPADMIN_EGRESS_ALLOW: "127.0.0.0/8", ...(db ? { CORPADMIN_DATABASE_URL: db.appUrl, CORPADMIN_LEASE_GRACE_MS: "1000" } : {}) } });
const admin = await startAndLogin(t);
await t.req("POST", "/api/externalapp", { token: admin.token, body: { name: "erp" } });
let received = 0;
let done: () => void = () => {};
const drained = new Promise<void>((res) => (done = res));
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: async (req) => {
    await req.arrayBuffer();
    if (++received === COUNT) done();
    return new Response(null, { status: 204 });
  },
});
await t.ctx.jobs.get("webhook-dispatcher")?.stop();
await t.req("POST", "/api/webhook", { token: admin.token, body: { name: "r", target: `http://127.0.0.1:${receiver.port}/hook`, email: "ops@example.com", groups: ["CONTRACT_AFTER_INSERT"] } });

async function pool<T>(items: T[], n: number, fn: (x: T) => Promise<void>) {
  let i = 0;
  await Promise.all(Array.from({ length: n }, async () => { while (i < items.length) await fn(items[i++]); }));
}
console.error("queueing events");
await pool(Array.from({ length: COUNT }, (_, i) => i), 16, async (i) => {
  const r = await t.req("POST", "/api/contract/create/externalapp/name/erp", { token: admin.token, body: contractBody(i) });
  if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
});

const su = db ? await PgStats.open(db, STATS) : null;
console.error("draining");
const dispatcher = new WebhookDispatcher(t.ctx);
const m = await measured(
  pg,
  su,
  async () => {
    dispatcher.start();
    await drained;
  },
  // The dispatcher stopped, and a second for the server's statistics to arrive.
  { after: async () => { await dispatcher.stop(); await Bun.sleep(1000); } },
);
console.log(JSON.stringify({
  engine, count: COUNT,
  per_s: Math.round(COUNT / (m.wallMs / 1000)),
  app_cpu_us: Math.round(m.appUs / COUNT),
  pg_cpu_us: Math.round(m.pgUs / COUNT),
  xacts_per_delivery: su ? +(m.xacts / COUNT).toFixed(3) : null,
  load: await loadAverage(),
}));
if (STATS) {
  const rows = await su!.statements(25, 200);
  console.log(`statements per delivery (top 25): ${(rows.reduce((s, r) => s + r.calls, 0) / COUNT).toFixed(2)}`);
  for (const r of rows) console.log(statementLine(r, "delivery", COUNT));
}
await su?.close();
await t.close();
receiver.stop(true);
await pg?.stop();
process.exit(0);
