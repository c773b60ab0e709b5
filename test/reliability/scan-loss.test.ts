// source-only: starts and kills its own service process; the binary pass would only repeat it.
// The README's bound on QR scans lost by a crash, measured: `bun src/main.ts serve` takes scans
// (each with its own referer, so each can be found) beside a write load on the same corporation
// (contract upserts that fire webhooks, metric values), and is kill -9'd several times. A scan
// answered more than SCAN_LOSS_BOUND_MS before a kill must be stored, except where (README) an
// overloaded CPU or disk holds a commit up: allowed at a quarter of the kills, never past 1 s.
// Before the flush deadline counted from the oldest waiting scan, a third of the kills broke the
// bound and a sixth lost more than 1 s. SCAN_LOSS_KILLS=20 runs a longer measurement.
// SQLite only (not in test/pg-backend.txt): kill -9 of a service over its own files and the scan writer thread.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { contractBody } from "../support/contract-body";
import { ADMIN, tempDir } from "../support/helpers";
import { serviceProcess } from "../support/service-process";

/** README: "a crash loses at most the scans answered in the last 250 ms". */
const SCAN_LOSS_BOUND_MS = 250;
const KILLS = Number(process.env.SCAN_LOSS_KILLS ?? 8);

const root = join(import.meta.dir, "../..");
const dir = tempDir("corpadmin-scanloss-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));


test(`kill -9 under load loses no scan answered more than ${SCAN_LOSS_BOUND_MS} ms before it`, async () => {
  const { start, call } = serviceProcess(["bun", join(root, "src/main.ts")], join(dir, "data"), "the service");
  const receiver = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(null, { status: 204 }) });

  let proc = await start();
  try {
    expect((await call("POST", "/api/start", null, { user: ADMIN, corp: { auth_name: "scans", company_name: "Scans ISP" } })).status).toBe(200);
    const token = (await call("POST", "/api/login", null, { corp: "scans", login: ADMIN.login, password: ADMIN.password })).body.access_token as string;
    expect((await call("POST", "/api/externalapp", token, { name: "erp" })).status).toBe(200);
    const hook = { name: "receiver", target: `http://127.0.0.1:${receiver.port}/hook`, email: "ops@example.com", groups: ["CONTRACT_AFTER_INSERT", "CONTRACT_AFTER_UPDATE"] };
    expect((await call("POST", "/api/webhook", token, hook)).status).toBe(200);
    const metric = await call("POST", "/api/metric", token, { name: "load", endpoint: null, data_type: "Int", periodicity: "1h", start_date: "2025-01-01T00:00:00Z", end_date: null, daily_start_time: "00:00", daily_end_time: "00:00" });
    const qr = await call("POST", "/api/qrcode", token, { name: "flyer", kind: "dynamic", target: "https://example.com/flyer" });
    expect(qr.status).toBe(200);

    const answered = new Map<string, [sent: number, answered: number]>(); // referer → its request's times (performance.now)
    let seq = 0;
    let running = true;
    const worker = async (w: number) => {
      while (running) {
        const n = seq++;
        try {
          if (w < 6) {
            const ref = `https://ref.example/${n}`;
            const sent = performance.now();
            const r = await call("GET", `/q/${qr.body.slug}`, null, undefined, { "user-agent": "Mozilla/5.0 Firefox/128.0", referer: ref });
            if (r.status === 302) answered.set(ref, [sent, performance.now()]);
          } else if (w === 6) await call("POST", "/api/contract/create/externalapp/name/erp", token, contractBody(n));
          else await call("POST", `/api/metric/${metric.body.id}/value`, token, { value: n });
        } catch {
          await Bun.sleep(10); // down between a kill and its restart
        }
      }
    };
    const workers = Array.from({ length: 8 }, (_, w) => worker(w));
    const kills: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      await Bun.sleep(500 + Math.random() * 700);
      kills.push(performance.now());
      proc.kill("SIGKILL");
      await proc.exited;
      proc = await start();
    }
    running = false;
    await Promise.all(workers);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);

    const stored = new Set<string>();
    for (const f of readdirSync(join(dir, "data", "corps")).filter((f) => f.endsWith(".db"))) {
      const db = new Database(join(dir, "data", "corps", f), { readonly: true });
      for (const r of db.query("SELECT referer FROM qr_accesses").all() as { referer: string }[]) stored.add(r.referer);
      db.close();
    }
    // Per kill: the oldest lost scan, as the time between its answer and the kill. A scan is lost
    // by the first kill after its request was sent (an answer read just after the kill was
    // recorded before it, age 0).
    const worst = kills.map(() => 0);
    let lost = 0;
    for (const [ref, [sent, at]] of answered) {
      if (stored.has(ref)) continue;
      lost++;
      const k = kills.findIndex((t) => t >= sent);
      if (k >= 0) worst[k] = Math.max(worst[k], kills[k] - at);
      else worst.push(Infinity); // lost without a kill after it
    }
    console.log(`scan loss: ${KILLS} kills, ${answered.size} scans answered, ${lost} lost; oldest lost per kill (ms): ${worst.map((w) => Math.round(w)).join(", ")}`);
    expect(answered.size).toBeGreaterThan(200);
    expect(worst.filter((w) => w > SCAN_LOSS_BOUND_MS).length).toBeLessThanOrEqual(Math.floor(KILLS / 4));
    expect(worst.filter((w) => w > 1_000)).toEqual([]);
  } finally {
    proc.kill("SIGKILL");
    receiver.stop(true);
  }
}, 300_000);
