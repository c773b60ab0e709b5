// Compression (issue 29 defect 6): bytes on the wire and the server's CPU per load, with and
// without Accept-Encoding, for the console's first load (its page, then the scripts and the
// stylesheet the page names), the OpenAPI document and a list of 200 contracts. The console and
// the document are compressed once by the build; the list as it is sent (src/lib/compression.ts).
// `bun run bench` calls measureCompression on its embedded server (10,000 contracts); alone,
// `bun bench/compression.ts [--no-build]` starts the binary over 200 contracts of its own.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { contractBody } from "../test/support/contract-body";
import { COMPRESS_MIN_BYTES, compressBytes, type Coding } from "../src/lib/compression";

const SECONDS = Number(process.env.BENCH_COMPRESSION_SECONDS ?? 5);
const CODINGS = [
  { coding: "identity", header: null },
  { coding: "gzip", header: "gzip" },
  { coding: "br", header: "gzip, deflate, br" },
] as const;

export interface CompressionRow {
  item: string;
  coding: string;
  /** Bytes of the whole load on the wire (every file of it). */
  bytes: number;
  /** The server's CPU per load (µs): per request, times the load's requests. */
  cpu_us: number | null;
  /** For answers compressed as they are sent: the compression alone, in this process, same bytes and settings (µs). */
  compress_us: number | null;
  loads_per_s: number;
  errors: number;
}

function cpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10_000;
}

/** GETs the paths in turn for SECONDS with wrk; returns requests and non-2xx answers. */
async function wrk(base: string, paths: string[], headers: Record<string, string>): Promise<{ requests: number; errors: number; seconds: number }> {
  const dir = mkdtempSync(join(tmpdir(), "corpadmin-wrk-compression-"));
  const file = join(dir, "script.lua");
  const h = Object.entries(headers).map(([k, v]) => `[${JSON.stringify(k)}]=${JSON.stringify(v)}`).join(",");
  writeFileSync(
    file,
    `local paths = {${paths.map((p) => JSON.stringify(p)).join(",")}}
local headers = {${h}}
local i = 0
function request()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1], headers)
end
function done(summary, latency, requests)
  io.write(string.format("REQUESTS %d\\nERRORS %d\\n", summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.timeout))
end
`,
  );
  try {
    const p = Bun.spawn(["wrk", "-t2", "-c8", `-d${SECONDS}s`, "--timeout", "10s", "-s", file, base], { stdout: "pipe", stderr: "pipe" });
    const out = await new Response(p.stdout).text();
    await p.exited;
    const num = (k: string) => Number(new RegExp(`${k} (\\d+)`).exec(out)?.[1] ?? NaN);
    return { requests: num("REQUESTS"), errors: num("ERRORS"), seconds: SECONDS };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bytes of one GET as sent (not decoded). */
async function wireBody(url: string, headers: Record<string, string>): Promise<Uint8Array> {
  const res = await fetch(url, { headers, decompress: false } as RequestInit);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** Median µs of compressing `bytes` as the server does. */
function compressTime(bytes: Uint8Array, coding: Coding): number {
  const runs: number[] = [];
  for (let i = 0; i < 21; i++) {
    const t = performance.now();
    compressBytes(bytes, coding);
    runs.push((performance.now() - t) * 1000);
  }
  return Math.round(runs.sort((a, b) => a - b)[10]);
}

/**
 * Where the threshold stands (COMPRESS_MIN_BYTES): what compressing one contract and a page of 25
 * would cost and save, measured on the service's own answers.
 */
export async function thresholdFigures(base: string, auth: Record<string, string>): Promise<string[]> {
  const page = await wireBody(`${base}/api/contract?limit=25`, auth);
  const id = JSON.parse(new TextDecoder().decode(page)).items[0].id;
  const one = await wireBody(`${base}/api/contract/${id}`, auth);
  const lines = [`threshold: answers of ${COMPRESS_MIN_BYTES} bytes and more are compressed`];
  for (const [what, bytes] of [["one contract", one], ["25 contracts", page]] as const) {
    const parts = (["br", "gzip"] as const).map((c) => `${c} ${compressBytes(bytes, c).length} bytes in ${compressTime(bytes, c)} µs`);
    lines.push(`  ${what}: ${bytes.length} bytes; ${parts.join(", ")}${bytes.length < COMPRESS_MIN_BYTES ? " (sent as it is)" : ""}`);
  }
  return lines;
}

export async function measureCompression(base: string, pid: number, auth: Record<string, string>): Promise<CompressionRow[]> {
  const page = await (await fetch(`${base}/console`)).text();
  // The first load: the page, and the scripts and stylesheets it names (chunks loaded later, such
  // as the charts', are not part of it).
  const assets = [...page.matchAll(/(?:src|href)="(\/console\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]);
  const items = [
    { item: `console first load (page + ${assets.length} files)`, paths: ["/console", ...assets], headers: {} as Record<string, string> },
    { item: "GET /api/openapi.json", paths: ["/api/openapi.json"], headers: {} },
    { item: "GET /api/contract?limit=200", paths: ["/api/contract?limit=200"], headers: auth },
  ];
  const rows: CompressionRow[] = [];
  for (const { item, paths, headers } of items) {
    for (const { coding, header } of CODINGS) {
      const h = header ? { ...headers, "accept-encoding": header } : headers;
      let bytes = 0;
      let compressUs: number | null = null;
      for (const p of paths) {
        const body = await wireBody(base + p, h);
        bytes += body.length;
        // The list is compressed as it is sent: time that alone on its identity bytes.
        if (p.startsWith("/api/contract") && coding !== "identity") compressUs = compressTime(await wireBody(base + p, headers), coding);
      }
      const cpu0 = cpuUs(pid);
      const r = await wrk(base, paths, h);
      const cpu = cpuUs(pid) - cpu0;
      const row: CompressionRow = {
        item,
        coding,
        bytes,
        cpu_us: r.requests > 0 ? Math.round((cpu / r.requests) * paths.length) : null,
        compress_us: compressUs,
        loads_per_s: Math.round(r.requests / paths.length / r.seconds),
        errors: r.errors,
      };
      rows.push(row);
      console.log(`compression: ${item}, ${coding}: ${bytes} bytes, CPU ${row.cpu_us} µs per load, ${row.loads_per_s} loads/s, errors ${row.errors}`);
    }
  }
  return rows;
}

export function printCompression(rows: CompressionRow[], threshold: string[] = []): void {
  if (!rows.length) return;
  console.log("\nCompression (bytes on the wire and the server's CPU per load; Accept-Encoding none, gzip, or gzip+br):");
  console.log("\n| what | coding | bytes | KiB | server CPU µs per load | of which compressing (µs, measured apart) | loads/s | errors |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of rows) console.log(`| ${r.item} | ${r.coding} | ${r.bytes} | ${(r.bytes / 1024).toFixed(1)} | ${r.cpu_us} | ${r.compress_us ?? (r.coding === "identity" ? "" : "0: built in")} | ${r.loads_per_s} | ${r.errors} |`);
  for (const line of threshold) console.log(line);
}

if (import.meta.main) {
  const root = join(import.meta.dir, "..");
  if (!process.argv.includes("--no-build")) {
    const build = Bun.spawnSync(["bun", "build.ts"], { cwd: root, stdout: "inherit", stderr: "inherit" });
    if (build.exitCode !== 0) process.exit(1);
  }
  const dataDir = mkdtempSync(join(tmpdir(), "corpadmin-bench-compression-"));
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  const base = `http://127.0.0.1:${port}`;
  const server = Bun.spawn([join(root, "dist/corpadmin"), "serve"], {
    env: { ...process.env, CORPADMIN_DATA_DIR: dataDir, CORPADMIN_PORT: String(port), CORPADMIN_HOST: "127.0.0.1", CORPADMIN_LOG_LEVEL: "warn", CORPADMIN_AUTH_RATE_LIMIT: "1000000" },
    stdout: "ignore",
    stderr: "inherit",
  });
  try {
    for (let i = 0; i < 500 && !(await fetch(`${base}/api/health`).then((r) => r.ok, () => false)); i++) await Bun.sleep(20);
    const json = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(base + path, { method, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<any>;
    };
    const admin = { name: "Bench Admin", email: "bench@example.com", login: "bench", password: "bench-password-1" };
    await json("POST", "/api/start", { user: admin, corp: { auth_name: "bench", company_name: "Bench ISP", timezone: "America/Sao_Paulo" } });
    const login = await json("POST", "/api/login", { corp: "bench", login: admin.login, password: admin.password });
    const auth = { authorization: `Bearer ${login.access_token}` };
    await json("POST", "/api/externalapp", { name: "erp" }, auth);
    for (let i = 0; i < 200; i++) await json("POST", "/api/contract/create/externalapp/name/erp", contractBody(i), auth);
    printCompression(await measureCompression(base, server.pid, auth), await thresholdFigures(base, auth));
  } finally {
    server.kill("SIGTERM");
    await server.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}
