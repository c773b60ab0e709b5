// CPU µs per external-app contract upsert, in-process: the app's (process.cpuUsage: the requests
// through app.handle, the upserts and this script's small driver; app_main_cpu_us: its main
// thread's share, without the JIT, GC helper, checkpointer and fsync threads) and, on PostgreSQL, its server's
// processes (durable: fsync and synchronous_commit on); upserts a second at 16 in flight and
// transactions per upsert (pg_stat_database, which backends report up to a second late: a rough
// figure). The load is the bench's: half change a seeded contract, half create one, with a webhook
// subscribed (DISPATCH=1: delivered to a local receiver, whose claims and outcomes are writes of
// the same corporation, and the measurement lasts until the last is received; otherwise not sent:
// the dispatcher is stopped). Compare before/after in one
// sitting, alternating runs (docs/architecture.md, "The external-app upsert on PostgreSQL").
// STATS=1 (PostgreSQL): the server loads pg_stat_statements, and the statements of the measured
// upserts are listed by total time (execution + planning), with calls and rows per upsert.
//   [DISPATCH=1] [STATS=1] [EXPLAIN=dir] [SEED=n] bun bench/upsert-profile.ts [pg|sqlite] [count]
import { makeApp, startAndLogin } from "../test/support/helpers";
import { contractBody } from "../test/support/contract-body";
import { benchPostgres, measured, PgStats, statementLine } from "./pg-stats";

const engine = process.argv[2] ?? "pg";
const COUNT = Number(process.argv[3] ?? 800);
/** Contracts upserted before the measured ones (SEED=10000: as many as `bun run bench` seeds). */
const SEED = Number(process.env.SEED ?? 400);
const IN_FLIGHT = 16;

// EXPLAIN=<dir> (PostgreSQL): auto_explain logs every measured statement's plan with its timings,
// nested ones (the foreign-key checks) included (bench/pg-stats.ts).
const { pg, db, stats: STATS, explain: EXPLAIN } = await benchPostgres(engine);
// The receiver listens on loopback.
const t = await makeApp({ env: { CORPADMIN_EGRESS_ALLOW: "127.0.0.0/8", ...(db ? { CORPADMIN_DATABASE_URL: db.appUrl, CORPADMIN_LEASE_GRACE_MS: "1000" } : {}) } });
const admin = await startAndLogin(t);
await t.req("POST", "/api/externalapp", { token: admin.token, body: { name: "erp" } });
// DISPATCH=1: the deliveries are sent to a local receiver as the bench does (their claims and
// outcomes are writes of the same corporation); otherwise the dispatcher is stopped.
// The measurement then lasts until every delivery of the measured upserts was received: a
// dispatcher lagging behind would otherwise leave its share of the work outside it.
let received = 0;
const receiver = process.env.DISPATCH ? Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => (received++, new Response(null, { status: 204 })) }) : null;
/** Until the receiver has had `n` deliveries (each upsert raises one contract event); false after 30 s. */
async function receivedAll(n: number): Promise<boolean> {
  for (let i = 0; i < 3000 && received < n; i++) await Bun.sleep(10);
  return received >= n;
}
await t.req("POST", "/api/webhook", { token: admin.token, body: { name: "r", target: `http://127.0.0.1:${receiver?.port ?? 9}/hook`, email: "ops@example.com", groups: ["CONTRACT_AFTER_INSERT", "CONTRACT_AFTER_UPDATE"] } });
if (!receiver) await t.ctx.jobs.get("webhook-dispatcher")?.stop();

async function pool<T>(items: T[], n: number, fn: (x: T) => Promise<void>) {
  let i = 0;
  await Promise.all(Array.from({ length: n }, async () => { while (i < items.length) await fn(items[i++]); }));
}
const post = async (b: unknown) => {
  const r = await t.req("POST", "/api/contract/create/externalapp/name/erp", { token: admin.token, body: b });
  if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
};
await pool(Array.from({ length: SEED }, (_, i) => i), IN_FLIGHT, (i) => post(contractBody(i)));

let seq = 0;
const bodies = Array.from({ length: COUNT }, (_, k) => {
  const s = ++seq;
  if (k % 2 === 0) {
    const b = contractBody(k % SEED);
    return { ...b, json_original: { ...b.json_original, revision: s } };
  }
  const b = contractBody(SEED + 100_000 + k);
  const tag = (v: string) => `${v}-${s}`;
  return { ...b, identity: tag(b.identity), number: tag(b.number), customer: { ...b.customer, identity: tag(b.customer.identity) }, billing_customer: { ...b.billing_customer, identity: tag(b.billing_customer.identity) } };
});

// The tables analyzed as autovacuum leaves them within a minute (PgStats.open).
const su = db ? await PgStats.open(db, STATS) : null;
if (EXPLAIN) await su!.explainFromNow();
if (receiver && !(await receivedAll(SEED))) throw new Error(`the seed's deliveries did not all arrive (${received} of ${SEED})`);
const m = await measured(pg, su, async () => {
  await pool(bodies, IN_FLIGHT, post);
  if (receiver && !(await receivedAll(SEED + COUNT))) throw new Error(`the deliveries did not all arrive (${received - SEED} of ${COUNT})`);
});
console.log(JSON.stringify({
  engine, count: COUNT,
  app_cpu_us: Math.round(m.appUs / COUNT),
  app_main_cpu_us: Math.round(m.appMainUs / COUNT),
  pg_cpu_us: Math.round(m.pgUs / COUNT),
  per_s: Math.round(COUNT / (m.wallMs / 1000)),
  xacts_per_upsert: su ? +(m.xacts / COUNT).toFixed(3) : null,
  // The server's CPU by process (sessions, WAL writer, checkpointer, autovacuum; a worker that
  // started and ended within the run is not seen).
  pg_cpu_us_by_process: pg ? Object.fromEntries(Object.entries(m.pgByKindUs).map(([k, us]) => [k, Math.round(us / COUNT)])) : null,
}));
if (STATS) {
  for (const r of await su!.statements(40)) console.log(statementLine(r, "upsert", COUNT));
  for (const line of await su!.hotUpdates()) console.log(line);
}
await su?.close();
await t.close();
receiver?.stop(true);
await pg?.stop();
process.exit(0);
