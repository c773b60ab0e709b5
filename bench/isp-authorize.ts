// Benchmark (not a test): the FreeRADIUS rlm_rest rows through real HTTP, as rlm_rest calls them.
//   bun bench/isp-authorize.ts [rate=1000] [seconds=10] [accounting rate=0]
//     GET /api/isp/radius/authorize at a fixed request rate. Target (issue 21): p99 ≤ 2 ms at
//     1,000 requests/s. Open-loop: requests are sent on schedule whatever the answers, so
//     queueing shows in the latency.
//     Each run first measures a raw Bun.serve answering the same bytes with the same client, in
//     the same sitting: the latency the machine itself adds (other processes, the client), which
//     the path's figures include too. With an accounting rate, a second client posts that many
//     accounting records a second (each a durable write) to the same server meanwhile, as NASes
//     do: authorize's latency while the server commits.
//   bun bench/isp-authorize.ts accounting [concurrency=64] [seconds=10]
//     POST /api/isp/radius/accounting, closed-loop with `concurrency` requests in flight (NAS and
//     FreeRADIUS threads), each a Start, Interim-Update or Stop of its own sessions: every record
//     a real, durable write. Prints records/s and latency.
import { listen } from "../src/cli/serve";
import { makeApp, startAndLogin } from "../test/support/helpers";
import { contractWith, mikrotikLayout, must } from "../test/support/isp";

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(2);

/** The authorize load generator, run as its own process so it does not share the server's event loop. */
async function authorizeLoad(url: string, authorization: string, rate: number, seconds: number) {
  const headers = { authorization };
  for (let i = 0; i < 200; i++) await fetch(url, { headers }).then((r) => r.arrayBuffer());
  const total = Math.round(rate * seconds);
  const latencies: number[] = [];
  let failures = 0;
  const start = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await Bun.sleep(wait);
    // A request sent before its due time (the sleep is coarse) is timed from when it was sent.
    const from = Math.min(due, performance.now());
    inflight.push(
      fetch(url, { headers }).then(async (r) => {
        await r.arrayBuffer();
        if (r.status !== 200) failures++;
        latencies.push(performance.now() - from);
      }),
    );
  }
  await Promise.all(inflight);
  latencies.sort((a, b) => a - b);
  const achieved = total / ((performance.now() - start) / 1000);
  console.log(JSON.stringify({ rate, seconds, requests: total, achieved_rps: Math.round(achieved), failures, p50_ms: pct(latencies, 50), p90_ms: pct(latencies, 90), p99_ms: pct(latencies, 99), max_ms: pct(latencies, 100) }));
}

/** Accounting records at a fixed rate (open loop) for `seconds`: the writes beside an authorize run. */
async function accountingAtRate(url: string, authorization: string, rate: number, seconds: number) {
  const headers = { authorization, "content-type": "application/json" };
  const start = performance.now();
  const total = Math.round(rate * seconds);
  const inflight: Promise<unknown>[] = [];
  let failures = 0;
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 1) await Bun.sleep(wait);
    const base = { "User-Name": "bench", "Acct-Session-Id": `side-${process.pid}-${i >> 2}`, "NAS-IP-Address": "192.0.2.10", "Framed-IP-Address": "100.64.0.9" };
    const body = i % 4 === 0 ? { ...base, "Acct-Status-Type": "Start" } : { ...base, "Acct-Status-Type": "Interim-Update", "Acct-Session-Time": (i % 4) * 300, "Acct-Input-Octets": i, "Acct-Output-Octets": i * 9 };
    inflight.push(fetch(url, { method: "POST", headers, body: JSON.stringify(body) }).then(async (r) => { await r.arrayBuffer(); if (r.status !== 204) failures++; }));
  }
  await Promise.all(inflight);
  console.log(JSON.stringify({ accounting_rate: rate, records: total, failures }));
}

/** The accounting load generator: `concurrency` loops, each walking its own sessions through Start, Interim-Update and Stop. */
async function accountingLoad(url: string, authorization: string, concurrency: number, seconds: number) {
  const headers = { authorization, "content-type": "application/json" };
  const latencies: number[] = [];
  let failures = 0;
  let session = 0;
  const send = async (body: Record<string, unknown>) => {
    const t0 = performance.now();
    const r = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
    await r.arrayBuffer();
    if (r.status !== 204) failures++;
    latencies.push(performance.now() - t0);
  };
  const loop = async (end: number) => {
    while (performance.now() < end) {
      const sid = `bench-${process.pid}-${++session}`;
      const base = { "User-Name": "bench", "Acct-Session-Id": sid, "NAS-IP-Address": "192.0.2.10", "Framed-IP-Address": "100.64.0.9" };
      await send({ ...base, "Acct-Status-Type": "Start" });
      for (let i = 1; i <= 3 && performance.now() < end; i++) {
        await send({ ...base, "Acct-Status-Type": "Interim-Update", "Acct-Session-Time": i * 300, "Acct-Input-Octets": i * 1000, "Acct-Output-Octets": i * 9000 });
      }
      await send({ ...base, "Acct-Status-Type": "Stop", "Acct-Session-Time": 1000, "Acct-Terminate-Cause": "User-Request" });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => loop(performance.now() + 1000)));
  latencies.length = 0;
  failures = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, () => loop(start + seconds * 1000)));
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  console.log(JSON.stringify({ concurrency, seconds, records: latencies.length, records_per_s: Math.round(latencies.length / elapsed), failures, p50_ms: pct(latencies, 50), p99_ms: pct(latencies, 99), max_ms: pct(latencies, 100) }));
}

if (process.argv[2] === "--client") {
  const [, , , mode, url, authorization, a, b] = process.argv;
  if (mode === "accounting") await accountingLoad(url, authorization, Number(a), Number(b));
  else if (mode === "accounting-rate") await accountingAtRate(url, authorization, Number(a), Number(b));
  else await authorizeLoad(url, authorization, Number(a), Number(b));
  process.exit(0);
}

const mode = process.argv[2] === "accounting" ? "accounting" : "authorize";
const args = mode === "accounting" ? process.argv.slice(3) : process.argv.slice(2);
const first = Number(args[0] ?? (mode === "accounting" ? 64 : 1000));
const seconds = Number(args[1] ?? 10);
const sideRate = mode === "authorize" ? Number(args[2] ?? 0) : 0;
const t = await makeApp();
try {
  const admin = await startAndLogin(t);
  const fx = await mikrotikLayout(t, admin.token);
  await must(t, admin.token, "POST", "/api/isp/nas", { name: "bench-nas", ip: "192.0.2.10", secret: "bench-secret-1", layout_id: fx.layout.id });
  await contractWith(t, admin.token, { username: "bench", password: "bench-pass", max_upload: "10M", max_download: "100M", pool_name_ipv4: "pppoe-v4" });
  // As the server listens: with its edge routes (src/lib/edge.ts) in front of Elysia.
  listen(t, 0, "127.0.0.1");
  const origin = `http://127.0.0.1:${t.app.server!.port}`;
  const url = mode === "accounting" ? `${origin}/api/isp/radius/accounting` : `${origin}/api/isp/radius/authorize?username=bench&password=bench-pass&nas_ip=192.0.2.10`;
  const authorization = `Basic ${Buffer.from("acme:bench-secret-1").toString("base64")}`;
  const run = async (target: string, side = false) => {
    // The side writes start a second before the measured run (its own warm-up) and end after it.
    const writes = side && sideRate ? Bun.spawn(["bun", import.meta.path, "--client", "accounting-rate", `${origin}/api/isp/radius/accounting`, authorization, String(sideRate), String(seconds + 3)], { stdout: "pipe", stderr: "inherit" }) : null;
    if (writes) await Bun.sleep(1000);
    const client = Bun.spawn(["bun", import.meta.path, "--client", mode, target, authorization, String(first), String(seconds)], { stdout: "pipe", stderr: "inherit" });
    const out = (await new Response(client.stdout).text()).trim();
    await client.exited;
    if (writes) return `${out} with ${(await new Response(writes.stdout).text()).trim()}`;
    return out;
  };
  if (mode === "authorize") {
    // The same reply bytes from a bare Bun.serve: the floor of what this machine and client measure.
    const reply = await (await fetch(url, { headers: { authorization } })).text();
    const raw = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(reply, { headers: { "content-type": "application/json" } }) });
    try {
      console.log(`raw Bun.serve ${await run(`http://127.0.0.1:${raw.port}${new URL(url).pathname}${new URL(url).search}`)}`);
    } finally {
      raw.stop(true);
    }
  }
  console.log(`${mode} ${await run(url, true)}`);
} finally {
  await t.app.stop();
  await t.close();
}
