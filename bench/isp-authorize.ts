// Benchmark (not a test): GET /api/isp/radius/authorize through real HTTP at a fixed request rate,
// as FreeRADIUS's rlm_rest would call it. Target (issue 8): p99 under 5 ms at 1,000 requests/s.
//   bun bench/isp-authorize.ts [rate=1000] [seconds=10]
// Open-loop: requests are sent on schedule whatever the answers, so queueing shows in the latency.
import { makeApp, startAndLogin } from "../test/support/helpers";
import { contractWith, mikrotikLayout, must } from "../test/support/isp";

/** The load generator, run as its own process so it does not share the server's event loop. */
async function load(url: string, authorization: string, rate: number, seconds: number) {
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
    inflight.push(
      fetch(url, { headers }).then(async (r) => {
        await r.arrayBuffer();
        if (r.status !== 200) failures++;
        latencies.push(performance.now() - due);
      }),
    );
  }
  await Promise.all(inflight);
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(2);
  const achieved = total / ((performance.now() - start) / 1000);
  console.log(JSON.stringify({ rate, seconds, requests: total, achieved_rps: Math.round(achieved), failures, p50_ms: pct(50), p90_ms: pct(90), p99_ms: pct(99), max_ms: pct(100) }));
}

if (process.argv[2] === "--client") {
  await load(process.argv[3], process.argv[4], Number(process.argv[5]), Number(process.argv[6]));
  process.exit(0);
}

const rate = Number(process.argv[2] ?? 1000);
const seconds = Number(process.argv[3] ?? 10);
const t = await makeApp();
try {
  const admin = await startAndLogin(t);
  const fx = await mikrotikLayout(t, admin.token);
  await must(t, admin.token, "POST", "/api/isp/nas", { name: "bench-nas", ip: "192.0.2.10", secret: "bench-secret-1", layout_id: fx.layout.id });
  await contractWith(t, admin.token, { username: "bench", password: "bench-pass", max_upload: "10M", max_download: "100M", pool_name_ipv4: "pppoe-v4" });
  t.app.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${t.app.server!.port}/api/isp/radius/authorize?username=bench&password=bench-pass&nas_ip=192.0.2.10`;
  const authorization = `Basic ${Buffer.from("acme:bench-secret-1").toString("base64")}`;
  const client = Bun.spawn(["bun", import.meta.path, "--client", url, authorization, String(rate), String(seconds)], { stdout: "inherit", stderr: "inherit" });
  await client.exited;
} finally {
  await t.app.stop();
  await t.close();
}
