// CPU µs per RADIUS accounting record, in-process, as bench/upsert-profile.ts does for the upsert:
// the app's (process.cpuUsage: the requests through app.handle and this script's small driver)
// and, on PostgreSQL, its server's processes (durable); records a second at 64 in flight and
// transactions per record. The load is the bench's row "POST /api/isp/radius/accounting (usage
// rollups)": each record a new session's Interim-Update of an hour, for one of SEED contracts
// whose month already has usage (one seeded session each), so every record writes itself, its
// session, one or two days' and a month's usage rows. Compare before/after in one sitting,
// alternating runs (docs/architecture.md, "RADIUS accounting on PostgreSQL").
// STATS=1 (PostgreSQL): the server loads pg_stat_statements, and the statements of the measured
// records are listed by total time (execution + planning), with calls and rows per record.
//   [STATS=1] [SEED=n] bun bench/accounting-profile.ts [pg|sqlite] [count]
import { makeApp, startAndLogin } from "../test/support/helpers";
import { contractBody } from "../test/support/contract-body";
import { childrenCpuUs } from "./proc-cpu";
import { benchPostgres, PgStats, statementLine } from "./pg-stats";

const engine = process.argv[2] ?? "pg";
const COUNT = Number(process.argv[3] ?? 4000);
const SEED = Number(process.env.SEED ?? 500);
const IN_FLIGHT = 64;

const { pg, db, stats: STATS } = await benchPostgres(engine);
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
const xacts = async () => (su ? await su.xacts() : 0);
Bun.gc(true);
const x0 = await xacts();
const pg0 = pg ? childrenCpuUs(pg.pid) : 0;
const c0 = process.cpuUsage();
const w0 = performance.now();
await pool(bodies, IN_FLIGHT, post);
const wall = performance.now() - w0;
const c1 = process.cpuUsage(c0);
const pg1 = pg ? childrenCpuUs(pg.pid) : 0;
const x1 = await xacts();
let statements: number | null = null;
const lines: string[] = [];
if (STATS) {
  const rows = await su!.statements(10_000);
  statements = rows.reduce((n, r) => n + r.calls, 0) / COUNT;
  for (const r of rows.slice(0, 30)) lines.push(statementLine(r, "record", COUNT, 3));
}
console.log(JSON.stringify({
  engine, count: COUNT,
  app_cpu_us: Math.round((c1.user + c1.system) / COUNT),
  pg_cpu_us: Math.round((pg1 - pg0) / COUNT),
  per_s: Math.round(COUNT / (wall / 1000)),
  xacts_per_record: su ? +((x1 - x0 - 1) / COUNT).toFixed(3) : null,
  statements_per_record: statements === null ? null : +statements.toFixed(2),
  load: (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" "),
}));
for (const l of lines) console.log(l);
await su?.close();
await t.close();
await pg?.stop();
process.exit(0);
