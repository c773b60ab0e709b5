// CPU µs per external-app contract upsert, in-process: the app's (process.cpuUsage: the requests
// through app.handle, the upserts and this script's small driver; app_main_cpu_us: its main
// thread's share, without the JIT, GC helper, checkpointer and fsync threads) and, on PostgreSQL, its server's
// processes (durable: fsync and synchronous_commit on); upserts a second at 16 in flight and
// transactions per upsert (pg_stat_database, which backends report up to a second late: a rough
// figure). The load is the bench's: half change a seeded contract, half create one, with a webhook
// subscribed (DISPATCH=1: delivered to a local receiver, whose claims and outcomes are writes of
// the same corporation; otherwise not sent: the dispatcher is stopped). Compare before/after in one
// sitting, alternating runs (docs/architecture.md, "The external-app upsert on PostgreSQL").
// STATS=1 (PostgreSQL): the server loads pg_stat_statements, and the statements of the measured
// upserts are listed by total time (execution + planning), with calls and rows per upsert.
//   [DISPATCH=1] [STATS=1] [EXPLAIN=dir] [SEED=n] bun bench/upsert-profile.ts [pg|sqlite] [count]
import { startPostgres } from "../test/support/postgres";
import { makeApp, startAndLogin } from "../test/support/helpers";
import { contractBody } from "../test/support/contract-body";
import { SQL } from "bun";
import { childrenCpuByKindUs, childrenCpuUs } from "./proc-cpu";

const engine = process.argv[2] ?? "pg";
const COUNT = Number(process.argv[3] ?? 800);
/** Contracts upserted before the measured ones (SEED=10000: as many as `bun run bench` seeds). */
const SEED = Number(process.env.SEED ?? 400);
const IN_FLIGHT = 16;

const STATS = engine === "pg" && !!process.env.STATS;
// EXPLAIN=<dir> (PostgreSQL): auto_explain logs every statement's plan with its timings, nested
// ones (the foreign-key checks) included, into the server's log files in <dir> (slow: its
// timings add to every statement; for where a statement's time goes, not for rates).
const EXPLAIN = engine === "pg" ? process.env.EXPLAIN : undefined;
const preload = [...(STATS ? ["pg_stat_statements"] : []), ...(EXPLAIN ? ["auto_explain"] : [])];
const pg =
  engine === "pg"
    ? await startPostgres({
        durable: true,
        settings: {
          ...(preload.length ? { shared_preload_libraries: preload.join(",") } : {}),
          ...(STATS ? { "pg_stat_statements.track_planning": "on", "pg_stat_statements.track": "all" } : {}),
          ...(EXPLAIN
            ? { logging_collector: "on", log_directory: EXPLAIN, "auto_explain.log_min_duration": "0", "auto_explain.log_analyze": "on", "auto_explain.log_nested_statements": "on", "auto_explain.log_triggers": "on", "auto_explain.log_level": "warning" }
            : {}),
        },
      })
    : null;
const db = pg ? await pg.createDatabase("bench") : null;
const t = await makeApp({ env: db ? { CORPADMIN_DATABASE_URL: db.appUrl, CORPADMIN_LEASE_GRACE_MS: "1000" } : {} });
const admin = await startAndLogin(t);
await t.req("POST", "/api/externalapp", { token: admin.token, body: { name: "erp" } });
// DISPATCH=1: the deliveries are sent to a local receiver as the bench does (their claims and
// outcomes are writes of the same corporation); otherwise the dispatcher is stopped.
const receiver = process.env.DISPATCH ? Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(null, { status: 204 }) }) : null;
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

const su = db ? new SQL({ url: db.url, max: 1 }) : null;
// The tables as autovacuum leaves them within a minute: analyzed. Without statistics every index
// leading with corp_id looks alike on a small table, the generic plans of the pool's prepared
// statements pick among them at random (a contract by number scanned through contracts_city), and
// the profile would measure the first minute of a new database rather than the steady state. An
// ANALYZE invalidates the cached plans.
await su?.unsafe("ANALYZE");
const xacts = async () => (su ? Number((await su.unsafe("SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = 'bench'"))[0].n) : 0);
if (STATS) {
  await su!.unsafe("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  await su!.unsafe("SELECT pg_stat_statements_reset()");
}
Bun.gc(true);
const x0 = await xacts();
const pg0 = pg ? childrenCpuUs(pg.pid) : 0;
const kinds0 = pg ? childrenCpuByKindUs(pg.pid) : {};
const c0 = process.cpuUsage();
const m0 = process.threadCpuUsage();
const w0 = performance.now();
await pool(bodies, IN_FLIGHT, post);
const wall = performance.now() - w0;
const c1 = process.cpuUsage(c0);
const m1 = process.threadCpuUsage(m0);
const pg1 = pg ? childrenCpuUs(pg.pid) : 0;
const kinds1 = pg ? childrenCpuByKindUs(pg.pid) : {};
const x1 = await xacts();
console.log(JSON.stringify({
  engine, count: COUNT,
  app_cpu_us: Math.round((c1.user + c1.system) / COUNT),
  app_main_cpu_us: Math.round((m1.user + m1.system) / COUNT),
  pg_cpu_us: Math.round((pg1 - pg0) / COUNT),
  per_s: Math.round(COUNT / (wall / 1000)),
  xacts_per_upsert: su ? +((x1 - x0 - 1) / COUNT).toFixed(3) : null,
  // The server's CPU by process (sessions, WAL writer, checkpointer, autovacuum; a worker that
  // started and ended within the run is not seen).
  pg_cpu_us_by_process: pg ? Object.fromEntries(Object.entries(kinds1).map(([k, v]) => [k, Math.round((v - (kinds0[k] ?? 0)) / COUNT)]).filter(([, v]) => v !== 0)) : null,
}));
if (STATS) {
  const rows = await su!.unsafe(`SELECT calls, rows, total_exec_time AS exec, total_plan_time AS plan, plans, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS q
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'bench') ORDER BY total_exec_time + total_plan_time DESC LIMIT 40`);
  for (const r of rows)
    console.log(`${((r.exec + r.plan) * 1000 / COUNT).toFixed(0).padStart(5)} µs/upsert  exec ${(r.exec * 1000 / Number(r.calls)).toFixed(0).padStart(5)} plan ${(r.plan * 1000 / Math.max(1, Number(r.calls))).toFixed(0).padStart(4)} µs/call  calls/upsert ${(Number(r.calls) / COUNT).toFixed(2)} plans ${r.plans} rows/call ${(Number(r.rows) / Number(r.calls)).toFixed(1)}  ${r.q}`);
}
if (STATS) {
  // Whether updates stay on their page (HOT: no index entry written), since the server started.
  for (const r of await su!.unsafe("SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE n_tup_upd > 0 ORDER BY n_tup_upd DESC LIMIT 8"))
    console.log(`${r.relname}: ${r.n_tup_ins} inserted, ${r.n_tup_upd} updated, ${r.n_tup_hot_upd} of them HOT`);
}
await su?.close();
await t.close();
receiver?.stop(true);
await pg?.stop();
process.exit(0);
