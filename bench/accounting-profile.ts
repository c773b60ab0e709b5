// CPU µs per RADIUS accounting record, in-process, as bench/upsert-profile.ts does for the upsert:
// the app's (process.cpuUsage: the requests through app.handle and this script's small driver)
// and, on PostgreSQL, its server's processes (durable); records a second at 64 in flight and
// transactions per record. The load is the bench's row "POST /api/isp/radius/accounting (usage
// rollups)": each record a new session's Interim-Update of an hour, for one of SEED contracts
// whose month already has usage (one seeded session each), so every record writes itself, its
// session, one or two days' and a month's usage rows. Compare before/after in one sitting,
// alternating runs (docs/architecture.md, "RADIUS accounting on PostgreSQL").
// STATS=1 (PostgreSQL): the server loads pg_stat_statements, and the statements of the measured
// records are listed by total time (execution + planning), with calls and rows per record; the
// server's CPU is also given per kind of process. EXPLAIN=1: auto_explain's plans (above).
//   [STATS=1] [EXPLAIN=1 [EXPLAIN_LOG=dir]] [SEED=n] bun bench/accounting-profile.ts [pg|sqlite] [count]
import { startPostgres } from "../test/support/postgres";
import { makeApp, startAndLogin } from "../test/support/helpers";
import { contractBody } from "../test/support/contract-body";
import { SQL } from "bun";
import { readdirSync, readFileSync } from "node:fs";
import { childrenCpuUs } from "./proc-cpu";

const engine = process.argv[2] ?? "pg";
const COUNT = Number(process.argv[3] ?? 4000);
const SEED = Number(process.env.SEED ?? 500);
const IN_FLIGHT = 64;

const STATS = engine === "pg" && !!process.env.STATS;
// EXPLAIN=1 (PostgreSQL): auto_explain logs the plans of the measured records' statements (a
// sample), with their actual rows, buffers and triggers, into EXPLAIN_LOG (a directory).
const EXPLAIN = engine === "pg" && !!process.env.EXPLAIN;
const explainLog = process.env.EXPLAIN_LOG ?? "/tmp/accounting-explain";
const preload = [...(STATS ? ["pg_stat_statements"] : []), ...(EXPLAIN ? ["auto_explain"] : [])];
const pg =
  engine === "pg"
    ? await startPostgres({
        durable: true,
        settings: {
          ...(preload.length ? { shared_preload_libraries: preload.join(",") } : {}),
          ...(STATS ? { "pg_stat_statements.track_planning": "on", "pg_stat_statements.track": "all" } : {}),
          ...(EXPLAIN
            ? { "auto_explain.log_min_duration": "-1", "auto_explain.log_analyze": "on", "auto_explain.log_buffers": "on", "auto_explain.log_nested_statements": "on", "auto_explain.log_triggers": "on", "auto_explain.sample_rate": "0.1", logging_collector: "on", log_directory: explainLog }
            : {}),
        },
      })
    : null;
const db = pg ? await pg.createDatabase("bench") : null;
const t = await makeApp({ env: db ? { CORPADMIN_DATABASE_URL: db.appUrl, CORPADMIN_LEASE_GRACE_MS: "1000" } : {} });
const admin = await startAndLogin(t);
const ok = async (method: string, path: string, body: unknown) => {
  const r = await t.req(method, path, { token: admin.token, body });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r.body;
};
async function pool<T>(items: T[], n: number, fn: (x: T) => Promise<void>) {
  let i = 0;
  await Promise.all(Array.from({ length: n }, async () => { while (i < items.length) await fn(items[i++]); }));
}

await ok("POST", "/api/externalapp", { name: "erp" });
const usernames: string[] = [];
await pool(Array.from({ length: SEED }, (_, i) => i), 16, async (i) => {
  const c = await ok("POST", "/api/contract/create/externalapp/name/erp", contractBody(i));
  usernames.push(c.config.username);
});
const attr = await ok("POST", "/api/isp/radius-attribute", { name: "Mikrotik-Rate-Limit", type: "string" });
const layout = await ok("POST", "/api/isp/layout", { name: "mikrotik" });
await ok("POST", `/api/isp/layout/${layout.id}/attribute`, { attribute_id: attr.id, operator: ":=", value: "{{contract.config.max_upload}}/{{contract.config.max_download}}" });
await ok("POST", "/api/isp/nas", { name: "nas-1", ip: "127.0.0.1", secret: "nas-secret-1", layout_id: layout.id });
const headers = { authorization: `Basic ${Buffer.from("acme:nas-secret-1").toString("base64")}` };

// The bench's records (bench/run.ts): an hour-long Interim-Update at some hour of March 2026.
const record = (username: string, k: number, session: string) => {
  const at = Date.parse("2026-03-01T12:00:00Z") / 1000 + (k % 30) * 86_400 + (k % 24) * 3600;
  return { "User-Name": username, "Acct-Session-Id": session, "NAS-IP-Address": "127.0.0.1", "Acct-Status-Type": "Interim-Update", "Event-Timestamp": at, "Acct-Session-Time": 3600, "Acct-Input-Octets": 1_000_000 + k, "Acct-Output-Octets": 50_000 + k };
};
const month = (username: string, k: number) => ({ ...record(username, k, `seed-${k}`), "Event-Timestamp": Date.parse("2026-03-31T20:00:00Z") / 1000, "Acct-Session-Time": 30 * 86_400 + 8 * 3600 });
const post = async (body: unknown) => {
  const r = await t.req("POST", "/api/isp/radius/accounting", { body, headers });
  if (r.status !== 204) throw new Error(`accounting ${r.status} ${r.text}`);
};
await pool(usernames.map((u, k) => ({ u, k })), 16, ({ u, k }) => post(month(u, k)));
// Warm-up (prepared statements, caches), then the measured records.
await pool(Array.from({ length: 500 }, (_, k) => k), IN_FLIGHT, (k) => post(record(usernames[k % SEED], k * 7, `warm-${k}`)));
const bodies = Array.from({ length: COUNT }, (_, k) => record(usernames[k % SEED], k * 7, `bench-${k}`));

const su = db ? new SQL({ url: db.url, max: 1 }) : null;
await su?.unsafe("ANALYZE");
const xacts = async () => (su ? Number((await su.unsafe("SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = 'bench'"))[0].n) : 0);
if (STATS) {
  await su!.unsafe("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  await su!.unsafe("CREATE EXTENSION IF NOT EXISTS pg_walinspect");
  await su!.unsafe("SELECT pg_stat_statements_reset()");
}
// The server's CPU per process (each backend, the LISTEN connection, the WAL writer, autovacuum...),
// so that the PostgreSQL side's µs per record say which process spent them.
const serverProcesses = () => {
  const out = new Map<number, { name: string; us: number }>();
  if (!pg) return out;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(f[1]) !== pg.pid) continue;
      const name = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ").trim();
      out.set(Number(entry), { name, us: (Number(f[11]) + Number(f[12])) * 10_000 });
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
};
if (EXPLAIN) {
  // From the measured records on only.
  await su!.unsafe("ALTER SYSTEM SET auto_explain.log_min_duration = 0");
  await su!.unsafe("SELECT pg_reload_conf()");
  await Bun.sleep(200);
}
// WAL written per record (pg_stat_wal: records, full-page images, bytes): what durability costs.
const wal = async () => (su ? (await su.unsafe("SELECT wal_records::int8 AS records, wal_fpi::int8 AS fpi, wal_bytes::int8 AS bytes FROM pg_stat_wal"))[0] : null);
const wal0 = await wal();
// STATS=1: the WAL records of the measured records by kind (pg_walinspect), between these LSNs.
const lsn0 = STATS ? (await su!.unsafe("SELECT pg_current_wal_insert_lsn()::text AS l"))[0].l : null;
Bun.gc(true);
const x0 = await xacts();
const procs0 = serverProcesses();
const pg0 = pg ? childrenCpuUs(pg.pid) : 0;
const c0 = process.cpuUsage();
const w0 = performance.now();
await pool(bodies, IN_FLIGHT, post);
const wall = performance.now() - w0;
const c1 = process.cpuUsage(c0);
const pg1 = pg ? childrenCpuUs(pg.pid) : 0;
const procs1 = serverProcesses();
const x1 = await xacts();
const wal1 = await wal();
const lsn1 = STATS ? (await su!.unsafe("SELECT pg_current_wal_insert_lsn()::text AS l"))[0].l : null;
// Per kind of server process: a backend's kind is its command line's first words (its address and
// state dropped), the LISTEN connection (the app's change feed) told apart by its query.
const listeners = su ? new Set((await su.unsafe("SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN%'")).map((r: { pid: number }) => Number(r.pid))) : new Set<number>();
const byKind = new Map<string, number>();
for (const [pid, p] of procs1) {
  const kind = listeners.has(pid) ? "LISTEN backend (change feed)" : /^postgres: \S+ \S+ \d/.test(p.name) ? "query backends" : p.name.replace(/^postgres: /, "").replace(/ bench$/, "");
  byKind.set(kind, (byKind.get(kind) ?? 0) + p.us - (procs0.get(pid)?.us ?? 0));
}
let statements: number | null = null;
const lines: string[] = [];
if (STATS) {
  const rows = await su!.unsafe(`SELECT calls, rows, total_exec_time AS exec, total_plan_time AS plan, plans, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS q
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'bench') AND query NOT LIKE '%pg_stat_%' ORDER BY total_exec_time + total_plan_time DESC`);
  statements = rows.reduce((n: number, r: { calls: number }) => n + Number(r.calls), 0) / COUNT;
  for (const r of rows.slice(0, 30))
    lines.push(`${((r.exec + r.plan) * 1000 / COUNT).toFixed(0).padStart(5)} µs/record  exec ${(r.exec * 1000 / Number(r.calls)).toFixed(0).padStart(5)} plan ${(r.plan * 1000 / Math.max(1, Number(r.calls))).toFixed(0).padStart(4)} µs/call  calls/record ${(Number(r.calls) / COUNT).toFixed(3)} plans ${r.plans} rows/call ${(Number(r.rows) / Number(r.calls)).toFixed(1)}  ${r.q}`);
}
console.log(JSON.stringify({
  engine, count: COUNT,
  app_cpu_us: Math.round((c1.user + c1.system) / COUNT),
  pg_cpu_us: Math.round((pg1 - pg0) / COUNT),
  per_s: Math.round(COUNT / (wall / 1000)),
  xacts_per_record: su ? +((x1 - x0 - 1) / COUNT).toFixed(3) : null,
  ...(wal0 && wal1
    ? { wal_records_per_record: +((Number(wal1.records) - Number(wal0.records)) / COUNT).toFixed(1), wal_fpi_per_record: +((Number(wal1.fpi) - Number(wal0.fpi)) / COUNT).toFixed(2), wal_bytes_per_record: Math.round((Number(wal1.bytes) - Number(wal0.bytes)) / COUNT) }
    : {}),
  statements_per_record: statements === null ? null : +statements.toFixed(2),
  load: (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" "),
}));
if (EXPLAIN) console.log(`auto_explain's plans: ${explainLog}`);
if (pg) console.log(`server CPU µs per record by process: ${[...byKind].filter(([, us]) => us > 0).sort((a, b) => b[1] - a[1]).map(([k, us]) => `${k} ${Math.round(us / COUNT)}`).join(", ")}`);
if (STATS) {
  const kinds = await su!.unsafe(`SELECT "resource_manager/record_type" AS kind, count, record_size FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) WHERE count > 0 ORDER BY count DESC LIMIT 14`, [lsn0, lsn1]);
  console.log(`WAL records per record by kind: ${kinds.map((k: { kind: string; count: number }) => `${k.kind} ${(Number(k.count) / COUNT).toFixed(2)}`).join(", ")}`);
}
for (const l of lines) console.log(l);
await su?.close();
await t.close();
await pg?.stop();
process.exit(0);
