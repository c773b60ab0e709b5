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
// server's CPU is also given per kind of process, and with STATS=1 the WAL of the measured records
// by kind (pg_walinspect). EXPLAIN=<dir>: auto_explain's plans of a tenth of the measured records'
// statements (bench/pg-stats.ts).
//   [STATS=1] [EXPLAIN=dir] [SEED=n] bun bench/accounting-profile.ts [pg|sqlite] [count]
import { makeApp, startAndLogin } from "../test/support/helpers";
import { contractBody } from "../test/support/contract-body";
import { benchPostgres, loadAverage, measured, PgStats, statementLine } from "./pg-stats";

const engine = process.argv[2] ?? "pg";
const COUNT = Number(process.argv[3] ?? 4000);
const SEED = Number(process.env.SEED ?? 500);
const IN_FLIGHT = 64;

const { pg, db, stats: STATS, explain: EXPLAIN } = await benchPostgres(engine, { explainSample: 0.1 });
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

const su = db ? await PgStats.open(db, STATS) : null;
const listeners = su ? await su.listenerPids() : new Set<number>();
if (EXPLAIN) await su!.explainFromNow();
const wal0 = await su?.wal();
const m = await measured(pg, su, () => pool(bodies, IN_FLIGHT, post), { listeners });
const wal1 = await su?.wal();
const rows = su ? await su.statements() : [];
const statements = STATS ? rows.reduce((n, r) => n + r.calls, 0) / COUNT : null;
console.log(JSON.stringify({
  engine, count: COUNT,
  app_cpu_us: Math.round(m.appUs / COUNT),
  pg_cpu_us: Math.round(m.pgUs / COUNT),
  per_s: Math.round(COUNT / (m.wallMs / 1000)),
  xacts_per_record: su ? +(m.xacts / COUNT).toFixed(3) : null,
  ...(wal0 && wal1
    ? { wal_records_per_record: +((wal1.records - wal0.records) / COUNT).toFixed(1), wal_fpi_per_record: +((wal1.fpi - wal0.fpi) / COUNT).toFixed(2), wal_bytes_per_record: Math.round((wal1.bytes - wal0.bytes) / COUNT) }
    : {}),
  statements_per_record: statements === null ? null : +statements.toFixed(2),
  load: await loadAverage(),
}));
if (EXPLAIN) console.log(`auto_explain's plans: ${EXPLAIN.dir}`);
if (pg) {
  const byKind = Object.entries(m.pgByKindUs).sort((a, b) => b[1] - a[1]);
  console.log(`server CPU µs per record by process: ${byKind.map(([k, us]) => `${k} ${Math.round(us / COUNT)}`).join(", ")}`);
}
if (su && wal0 && wal1 && STATS) console.log(`WAL records per record by kind: ${(await su.walKinds(wal0, wal1)).map((k) => `${k.kind} ${(k.count / COUNT).toFixed(2)}`).join(", ")}`);
for (const r of rows.slice(0, 30)) console.log(statementLine(r, "record", COUNT, 3));
await su?.close();
await t.close();
await pg?.stop();
process.exit(0);
