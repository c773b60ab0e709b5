// CPU µs per metric value, in-process, as bench/accounting-profile.ts does for accounting: the
// app's (process.cpuUsage: the requests through app.handle and this script's small driver) and,
// on PostgreSQL, its server's processes (durable: fsync and synchronous_commit on); values a
// second at 32 in flight (the bench row's connections), transactions and statements per value.
// The load is the bench's row "POST /api/metric/{id}/value": `{"value": 42}` to one Int metric.
// Compare before/after in one sitting, alternating (docs/architecture.md, "Metric values on
// PostgreSQL").
// STATS=1 (PostgreSQL): the server loads pg_stat_statements (track = all: the foreign-key checks
// show), and the statements of the measured values are listed by total time (execution +
// planning), with calls and rows per value.
//   [STATS=1] [IN_FLIGHT=n] bun bench/metric-profile.ts [pg|sqlite] [count]
import { makeApp, startAndLogin } from "../test/support/helpers";
import { benchPostgres, loadAverage, measured, PgStats, statementLine } from "./pg-stats";

const engine = process.argv[2] ?? "pg";
const COUNT = Number(process.argv[3] ?? 8000);
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 32);

const { pg, db, stats: STATS } = await benchPostgres(engine);
const t = await makeApp({ env: db ? { CORPADMIN_DATABASE_URL: db.appUrl, CORPADMIN_LEASE_GRACE_MS: "1000" } : {} });
const admin = await startAndLogin(t);
const created = await t.req("POST", "/api/metric", {
  token: admin.token,
  body: { name: "bench-load", endpoint: null, data_type: "Int", periodicity: "1h", start_date: "2026-01-01T00:00:00-03:00", end_date: null, daily_start_time: "00:00", daily_end_time: "00:00" },
});
if (created.status !== 200) throw new Error(`POST /api/metric: ${created.status} ${created.text}`);
const path = `/api/metric/${created.body.id}/value`;
const post = async () => {
  const r = await t.req("POST", path, { token: admin.token, body: { value: 42 } });
  if (r.status !== 200) throw new Error(`value ${r.status} ${r.text}`);
};
async function pool(n: number, inFlight: number, fn: () => Promise<void>) {
  let i = 0;
  await Promise.all(Array.from({ length: inFlight }, async () => { while (i++ < n) await fn(); }));
}

// Warm-up (prepared statements, caches, the JIT), then the measured values.
await pool(1000, IN_FLIGHT, post);
const su = db ? await PgStats.open(db, STATS) : null;
const m = await measured(pg, su, () => pool(COUNT, IN_FLIGHT, post));
const rows = su ? await su.statements() : [];
const statements = STATS ? rows.reduce((n, r) => n + r.calls, 0) / COUNT : null;
const stored = su ? Number((await su.rows("SELECT count(*) AS n FROM metric_values"))[0].n) : null;
console.log(JSON.stringify({
  engine, count: COUNT, in_flight: IN_FLIGHT,
  app_cpu_us: Math.round(m.appUs / COUNT),
  pg_cpu_us: Math.round(m.pgUs / COUNT),
  per_s: Math.round(COUNT / (m.wallMs / 1000)),
  xacts_per_value: su ? +(m.xacts / COUNT).toFixed(3) : null,
  statements_per_value: statements === null ? null : +statements.toFixed(2),
  stored,
  load: await loadAverage(),
}));
for (const r of rows.slice(0, 20)) console.log(statementLine(r, "value", COUNT, 3));
await su?.close();
await t.close();
await pg?.stop();
process.exit(0);
