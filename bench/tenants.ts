// Tenants at scale (issue 21): what corporations cost the compiled binary. For each count (default
// 100 and 1,000), corporations are created through the API, then the server is restarted:
// exec→first 200 of /api/health (median of 3), idle RSS once the first background sweeps are done
// (the process's CPU quiet, read from /proc only: a request would allocate) with its anonymous and
// file-backed parts, the peak and CPU of those sweeps, then RSS after one request in each
// corporation (POST /api/auth/corp + GET /api/city), and the cost per corporation. Run alone with
// `bun bench/tenants.ts [--no-build]` (BENCH_TENANTS=100,1000; BENCH_BINARY=path measures another
// build, e.g. main's, in the same sitting; BENCH_TENANT_DIR=dir keeps the data directory, so a
// second run only restarts on it);
// `bun run bench` calls measureTenants after the paths.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processCpuUs } from "./proc-cpu";

export const TENANT_TARGETS = { idleMb100: 90, idleMb1000: 100, startMs1000: 150 };
const ADMIN = { name: "Bench Admin", email: "bench@example.com", login: "bench", password: "bench-password-1" };
/**
 * Jobs start 250 ms after start-up; the first sweeps visit corporations, then close what they
 * opened. Idle is read at least SETTLE_MS after the start and once the process used less than
 * QUIET_CPU_MS of CPU in each of the last QUIET_SAMPLES samples of SAMPLE_MS (at most MAX_SETTLE_MS).
 */
const SETTLE_MS = Number(process.env.BENCH_TENANT_SETTLE_MS ?? 5000);
const SAMPLE_MS = 250;
const QUIET_CPU_MS = 10;
const QUIET_SAMPLES = 8;
const MAX_SETTLE_MS = 60_000;

export interface TenantFigures {
  corps: number;
  create_rss_mb: number;
  start_ms: number;
  idle_rss_mb: number;
  /** The idle RSS's anonymous part (heap, malloc, SQLite) and file-backed part (the executable). */
  idle_anon_mb: number;
  idle_file_mb: number;
  /** The highest RSS from the start to idle (the first sweeps), their CPU and when they ended. */
  start_peak_rss_mb: number;
  sweeps_cpu_ms: number;
  sweeps_end_ms: number;
  idle_open_dbs: number | null;
  touched_rss_mb: number;
  touched_open_dbs: number | null;
  kb_per_touched_corp: number;
  settled_rss_mb: number;
}

function rssMb(pid: number): number {
  return rssParts(pid).rss;
}

/** RSS, and its anonymous and file-backed parts, in MB. */
function rssParts(pid: number): { rss: number; anon: number; file: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const mb = (field: string) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024);
    return { rss: mb("VmRSS"), anon: mb("RssAnon"), file: mb("RssFile") + mb("RssShmem") };
  } catch {
    return { rss: 0, anon: 0, file: 0 };
  }
}

/**
 * Waits for the start-up sweeps to end (see SETTLE_MS), reading /proc only. `startedAt`: the
 * process's exec (performance.now()); the sweeps' CPU counts from `cpuAtHealthy`.
 */
async function settle(pid: number, startedAt: number, cpuAtHealthy: number): Promise<{ peak: number; cpuMs: number; endMs: number }> {
  let peak = rssMb(pid);
  let quiet = 0;
  let last = processCpuUs(pid);
  let busyUntil = performance.now();
  for (;;) {
    await Bun.sleep(SAMPLE_MS);
    const cpu = processCpuUs(pid);
    peak = Math.max(peak, rssMb(pid));
    if (cpu - last < QUIET_CPU_MS * 1000) quiet++;
    else {
      quiet = 0;
      busyUntil = performance.now();
    }
    last = cpu;
    const elapsed = performance.now() - startedAt;
    if ((elapsed >= SETTLE_MS && quiet >= QUIET_SAMPLES) || elapsed >= MAX_SETTLE_MS) {
      return { peak, cpuMs: Math.round((cpu - cpuAtHealthy) / 1000), endMs: Math.round(busyUntil - startedAt) };
    }
  }
}

async function waitHealthy(base: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fetch(`${base}/api/health`).then((r) => r.ok, () => false)) return;
    await Bun.sleep(2);
  }
  throw new Error(`${base} did not become healthy`);
}

async function call(base: string, method: string, path: string, body?: unknown, token?: string): Promise<any> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : null;
}

/** Open corporation databases, from /metrics (served to loopback in these runs). */
async function openDbs(base: string): Promise<number | null> {
  const text = await fetch(`${base}/metrics`).then((r) => (r.ok ? r.text() : ""), () => "");
  const m = /^corpadmin_open_corporation_databases(?:\{\})? (\d+)/m.exec(text);
  return m ? Number(m[1]) : null;
}

/**
 * Measures `counts` (ascending) in one data directory, each count adding corporations to the last.
 * `env` must carry CORPADMIN_DATA_DIR and CORPADMIN_PORT; the data directory may already hold the
 * bench's admin and corporation (`bun run bench`), else they are created.
 */
export async function measureTenants(binary: string, env: Record<string, string | undefined>, base: string, counts: number[]): Promise<TenantFigures[]> {
  env = { ...env, CORPADMIN_METRICS_LOOPBACK: "true" };
  const out: TenantFigures[] = [];
  const spawn = () => Bun.spawn([binary, "serve"], { env, stdout: "ignore", stderr: "inherit" });
  for (const count of counts) {
    // Create up to `count` corporations through the API.
    let server = spawn();
    let createRss = 0;
    try {
      await waitHealthy(base);
      const started = await fetch(`${base}/api/start`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ user: ADMIN, corp: { auth_name: "bench", company_name: "Bench ISP" } }) });
      await started.body?.cancel();
      const { access_token } = await call(base, "POST", "/api/login", { corp: "bench", login: ADMIN.login, password: ADMIN.password });
      const { total } = await call(base, "GET", "/api/corp?limit=1", undefined, access_token);
      for (let i = total; i < count; i++) await call(base, "POST", "/api/corp", { auth_name: `bench-corp-${i}`, company_name: `Bench ${i}` }, access_token);
      createRss = rssMb(server.pid);
    } finally {
      server.kill("SIGTERM");
      await server.exited;
    }
    // Start-up: exec→first 200, median of 3; the last start stays up for the rest.
    const starts: number[] = [];
    let t0 = 0;
    let cpuAtHealthy = 0;
    for (let i = 0; i < 3; i++) {
      t0 = performance.now();
      server = spawn();
      await waitHealthy(base);
      starts.push(performance.now() - t0);
      cpuAtHealthy = processCpuUs(server.pid);
      if (i < 2) {
        server.kill("SIGTERM");
        await server.exited;
      }
    }
    starts.sort((a, b) => a - b);
    try {
      const sweeps = await settle(server.pid, t0, cpuAtHealthy);
      const idle = rssParts(server.pid);
      const idleRss = idle.rss;
      const idleOpen = await openDbs(base);
      // One request in each corporation: the super admin switches to it, then reads its cities.
      let { access_token: token } = await call(base, "POST", "/api/login", { corp: "bench", login: ADMIN.login, password: ADMIN.password });
      const corps: { id: string }[] = [];
      for (let page = 1; ; page++) {
        const { items } = await call(base, "GET", `/api/corp?limit=500&page=${page}`, undefined, token);
        corps.push(...items);
        if (items.length < 500) break;
      }
      for (const c of corps) {
        token = (await call(base, "POST", "/api/auth/corp", { corp: c.id }, token)).access_token;
        await call(base, "GET", "/api/city?limit=1", undefined, token);
      }
      const touchedRss = rssMb(server.pid);
      const touchedOpen = await openDbs(base);
      // The idle timeout closes what the requests opened.
      await Bun.sleep(Number(process.env.BENCH_TENANT_IDLE_WAIT_MS ?? 0));
      out.push({
        corps: count,
        create_rss_mb: createRss,
        start_ms: Math.round(starts[1]),
        idle_rss_mb: idleRss,
        idle_anon_mb: idle.anon,
        idle_file_mb: idle.file,
        start_peak_rss_mb: sweeps.peak,
        sweeps_cpu_ms: sweeps.cpuMs,
        sweeps_end_ms: sweeps.endMs,
        idle_open_dbs: idleOpen,
        touched_rss_mb: touchedRss,
        touched_open_dbs: touchedOpen,
        kb_per_touched_corp: Math.round(((touchedRss - idleRss) * 1024) / corps.length),
        settled_rss_mb: rssMb(server.pid),
      });
    } finally {
      server.kill("SIGTERM");
      await server.exited;
    }
  }
  return out;
}

/** The table and the targets, met or missed. */
export function printTenants(rows: TenantFigures[]): void {
  console.log("\n| corporations | RSS creating them MB | exec→first 200 ms | start-up sweeps: CPU ms, ended at ms, peak RSS MB | idle RSS MB (open dbs) | idle anonymous + files MB | RSS after one request each MB (open dbs) | KB per touched corporation |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of rows) console.log(`| ${r.corps} | ${r.create_rss_mb} | ${r.start_ms} | ${r.sweeps_cpu_ms}, ${r.sweeps_end_ms}, ${r.start_peak_rss_mb} | ${r.idle_rss_mb} (${r.idle_open_dbs ?? "?"}) | ${r.idle_anon_mb} + ${r.idle_file_mb} | ${r.touched_rss_mb} (${r.touched_open_dbs ?? "?"}) | ${r.kb_per_touched_corp} |`);
  const at = (n: number) => rows.find((r) => r.corps === n);
  const verdict = (what: string, value: number | undefined, max: number, unit: string) =>
    value === undefined ? null : console.log(`target ${what} ≤ ${max} ${unit}: ${value} ${unit} — ${value <= max ? "met" : "MISSED"}`);
  verdict("idle RSS with 100 corporations", at(100)?.idle_rss_mb, TENANT_TARGETS.idleMb100, "MB");
  verdict("idle RSS with 1,000 corporations", at(1000)?.idle_rss_mb, TENANT_TARGETS.idleMb1000, "MB");
  verdict("exec→first 200 with 1,000 corporations", at(1000)?.start_ms, TENANT_TARGETS.startMs1000, "ms");
}

if (import.meta.main) {
  const root = join(import.meta.dir, "..");
  const binary = process.env.BENCH_BINARY ?? join(root, "dist", "corpadmin");
  if (!process.env.BENCH_BINARY && !process.argv.includes("--no-build")) {
    const build = Bun.spawnSync(["bun", "build.ts"], { cwd: root, stdout: "inherit", stderr: "inherit" });
    if (build.exitCode !== 0) throw new Error("build failed");
  }
  // BENCH_TENANT_DIR: a data directory to fill and keep (start-up measured again on it later).
  const keep = process.env.BENCH_TENANT_DIR;
  const dataDir = keep ?? mkdtempSync(join(tmpdir(), "corpadmin-tenants-"));
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  const base = `http://127.0.0.1:${port}`;
  const env = { ...process.env, CORPADMIN_DATA_DIR: dataDir, CORPADMIN_PORT: String(port), CORPADMIN_HOST: "127.0.0.1", CORPADMIN_LOG_LEVEL: "warn", CORPADMIN_PUBLIC_URL: base, CORPADMIN_AUTH_RATE_LIMIT: "1000000" };
  const counts = (process.env.BENCH_TENANTS ?? "100,1000").split(",").map(Number);
  try {
    const rows = await measureTenants(binary, env, base, counts);
    printTenants(rows);
  } finally {
    if (!keep) rmSync(dataDir, { recursive: true, force: true });
  }
}
