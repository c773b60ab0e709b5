// Benchmark (not a test): the traffic usage reads, in process (app.handle, no socket).
//   bun bench/isp-usage.ts [contracts=10000] [requests=200]
//   Seeds `contracts` contracts through the external-app upsert, then one RADIUS session each
//   through the accounting route (a Start on the 1st of the month, a Stop 30 days later with
//   counters: 30 daily rows per contract), and times, one request at a time:
//   GET /api/isp/usage for that month (issue 33: p99 ≤ 50 ms over 10,000 contracts) and
//   GET /api/contract/{id}/usage over 400 days; then the list's other asks (part of a month, ?q,
//   a sort by label, CSV), a tenth as many requests each.
import { contractBody } from "../test/support/contract-body";
import { makeApp, startAndLogin } from "../test/support/helpers";
import { must } from "../test/support/isp";

const CONTRACTS = Number(process.argv[2] ?? 10_000);
const REQUESTS = Number(process.argv[3] ?? 200);
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(2);

async function pool<T, R>(items: T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const k = next++;
      out[k] = await fn(items[k]);
    }
  }));
  return out;
}

const t = await makeApp();
try {
  const admin = await startAndLogin(t);
  await must(t, admin.token, "POST", "/api/externalapp", { name: "erp" });
  await must(t, admin.token, "POST", "/api/isp/nas", { name: "bench-nas", ip: "192.0.2.10", secret: "bench-secret-1" });
  let t0 = performance.now();
  const created = await pool(Array.from({ length: CONTRACTS }, (_, i) => i), 16, async (i) => {
    const res = await t.req("POST", "/api/contract/create/externalapp/name/erp", { token: admin.token, body: contractBody(i) });
    if (res.status !== 200) throw new Error(`upsert ${res.status} ${res.text}`);
    return { id: res.body.id as string, username: res.body.config.username as string };
  });
  console.log(`seeded ${created.length} contracts in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const authorization = `Basic ${Buffer.from("acme:bench-secret-1").toString("base64")}`;
  const start = Date.parse("2026-03-01T12:00:00Z") / 1000;
  const acct = async (body: Record<string, unknown>) => {
    const res = await t.req("POST", "/api/isp/radius/accounting", { body, headers: { authorization } });
    if (res.status !== 204) throw new Error(`accounting ${res.status} ${res.text}`);
  };
  t0 = performance.now();
  await pool(created, 64, async (c) => {
    const base = { "User-Name": c.username, "Acct-Session-Id": `s-${c.id}`, "NAS-IP-Address": "192.0.2.10" };
    await acct({ ...base, "Acct-Status-Type": "Start", "Event-Timestamp": start });
    await acct({ ...base, "Acct-Status-Type": "Stop", "Event-Timestamp": start + 30 * 86_400, "Acct-Session-Time": 30 * 86_400, "Acct-Input-Octets": 123_456_789, "Acct-Input-Gigawords": 3, "Acct-Output-Octets": 987_654 });
  });
  console.log(`accounting: ${created.length * 2} records in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const time = async (label: string, path: (k: number) => string, requests = REQUESTS) => {
    const ms: number[] = [];
    for (let k = 0; k < requests; k++) {
      const s = performance.now();
      const res = await t.req("GET", path(k), { token: admin.token });
      ms.push(performance.now() - s);
      if (res.status !== 200) throw new Error(`${label}: ${res.status} ${res.text}`);
    }
    ms.sort((a, b) => a - b);
    console.log(JSON.stringify({ path: label, requests, p50_ms: pct(ms, 50), p99_ms: pct(ms, 99), max_ms: ms.at(-1)!.toFixed(2) }));
  };
  const few = Math.max(10, Math.floor(REQUESTS / 10));
  const month = "from=2026-03-01&to=2026-03-31";
  await time(`GET /api/isp/usage (${CONTRACTS} contracts, a month)`, (k) => `/api/isp/usage?${month}&page=${1 + (k % 5)}`);
  await time("GET /api/contract/{id}/usage (400 days)", (k) => `/api/contract/${created[k % created.length].id}/usage?from=2025-02-01&to=2026-03-07`);
  // The other asks of the list: a range of days inside the month, ?q (one contract; an eighth of
  // them), a sort by label, and the whole month as CSV (every row, labelled).
  await time(`GET /api/isp/usage (${CONTRACTS} contracts, 21 days of a month)`, (k) => `/api/isp/usage?from=2026-03-05&to=2026-03-25&page=${1 + (k % 5)}`, few);
  await time(`GET /api/isp/usage?q=<number> (${CONTRACTS} contracts, a month)`, (k) => `/api/isp/usage?${month}&q=C-${(k * 7919) % CONTRACTS}`, few);
  await time(`GET /api/isp/usage?q=silva (${CONTRACTS} contracts, a month)`, () => `/api/isp/usage?${month}&q=silva`, few);
  await time(`GET /api/isp/usage?sort=customer_name (${CONTRACTS} contracts, a month)`, (k) => `/api/isp/usage?${month}&sort=customer_name&page=${1 + (k % 5)}`, few);
  await time(`GET /api/isp/usage?format=csv (${CONTRACTS} contracts, a month)`, () => `/api/isp/usage?${month}&format=csv`, few);
} finally {
  await t.close();
}
process.exit(0);
