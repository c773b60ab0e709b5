// Where a person search's CPU goes in cluster mode (issue 35), in-process, step by step: the CPU
// µs per call of the app (process.cpuUsage: the calls and this script's small driver) and of its
// PostgreSQL server's processes, each step ROUNDS calls at 8 in flight over the bench's 8 names:
//   read       a door read whose callback does nothing (the read transaction alone)
//   read+pk    a door read of one person by primary key (the transaction and one statement)
//   service    listPersons (person/service.ts) from a kept match set: the page's rows, their cities, the views
//   request    GET /api/person?q=…&limit=50 through app.handle (routing, the guard, the JSON text;
//              after the warm-up a kept page: no statement, person/kept-views.ts)
//   novel      listPersons over terms never searched before (the bench's "terms never repeated":
//              3–8 character pieces of the persons' names, each sent once): every call a match
//              set's load (db/list.ts pgMatchSet) and the page
// The persons are the bench's: contractBody's customers written straight into the corporation's
// rows, over 5 cities below 100,000 persons (the 10,000 contracts' customers) and one at
// 100,000 (the bench's search corporation); LEAKPROOF declared, ANALYZEd. STATS=1: the server
// loads pg_stat_statements and the request step's statements are listed, calls per request.
//   [STATS=1] [STEPS=read,read+pk,service,request] bun bench/search-profile.ts [persons] [rounds]
import { SQL } from "bun";
import { makeApp, startAndLogin } from "../test/support/helpers";
import { contractBody } from "../test/support/contract-body";
import { searchTerms } from "./search-terms";
import { LEAKPROOF_SQL } from "../src/db/pg/migrate";
import { listPersons } from "../src/modules/person/service";
import { PERSON_VIEWS_JOB, type personViewsJob } from "../src/modules/person/kept-views";
import { benchPostgres, measured, PgStats } from "./pg-stats";

const PERSONS = Number(process.argv[2] ?? 10_000);
const ROUNDS = Number(process.argv[3] ?? 2_000);
const IN_FLIGHT = 8;
const CITIES = PERSONS >= 100_000 ? 1 : 5;
const NAMES = ["silva", "souza", "maria", "joao", "ana", "lima", "costa", "pereira"];
/** STEPS=request,service: only those steps (e.g. under `bun --cpu-prof`). */
const STEPS = process.env.STEPS?.split(",");

// Reads only: the server need not be durable. EXPLAIN here is this script's own (below), not auto_explain.
const explainPage = !!process.env.EXPLAIN;
delete process.env.EXPLAIN;
const started = await benchPostgres("pg", { durable: false });
const pg = started.pg!;
const db = started.db!;
const STATS = started.stats;
const t = await makeApp({ env: { CORPADMIN_DATABASE_URL: db.appUrl } });
const admin = await startAndLogin(t);
const su = new SQL({ url: db.url, max: 1 });
await su.unsafe(LEAKPROOF_SQL);

const cityIds: string[] = [];
for (let c = 0; c < CITIES; c++) {
  const city = contractBody(c).address.city;
  const res = await t.req("POST", "/api/city", { token: admin.token, body: { name: city.name, state: city.state, country: city.country } });
  if (res.status !== 200) throw new Error(`city: ${res.status} ${res.text}`);
  cityIds.push(res.body.id);
}
for (let from = 0; from < PERSONS; from += 2000) {
  const rows = [];
  for (let i = from; i < Math.min(PERSONS, from + 2000); i++) {
    const p = contractBody(i).customer;
    const a = p.address;
    const at = new Date().toISOString();
    rows.push({ corp_id: admin.corpId, id: Bun.randomUUIDv7(), name: p.name, display_name: p.display_name, tp_doc_identity: p.tp_doc_identity, doc_identity: p.doc_identity, address_line1: a.line1, address_line2: a.line2, address_district: a.district, address_postal_code: a.postal_code, address_detail: a.detail, address_latitude: a.latitude, address_longitude: a.longitude, address_city_id: cityIds[i % CITIES], created_at: at, updated_at: at });
  }
  await su`INSERT INTO persons ${su(rows)}`;
}
await su.unsafe("VACUUM");
const statsOf = await PgStats.open(db, STATS);

const door = t.ctx.store.tenant(admin.corpId);
const oneId = (await su.unsafe("SELECT id FROM persons LIMIT 1"))[0].id as string;

async function step(name: string, call: (k: number) => Promise<unknown>, stats = false) {
  if (STEPS && !STEPS.includes(name)) return;
  // Warm-up: every name's match set loaded, the statements prepared on every connection.
  for (let k = 0; k < 200; k++) await call(k);
  if (stats) await statsOf.reset();
  let next = 0;
  const m = await measured(pg, null, () => Promise.all(Array.from({ length: IN_FLIGHT }, async () => { while (next < ROUNDS) await call(next++); })));
  console.log(`${name.padEnd(8)} app ${String(Math.round(m.appUs / ROUNDS)).padStart(5)} µs  PostgreSQL ${String(Math.round(m.pgUs / ROUNDS)).padStart(5)} µs  ${Math.round(ROUNDS / (m.wallMs / 1000))}/s`);
  if (stats) {
    const rows = (await statsOf.statements(undefined, Number(process.env.QUERY_CHARS ?? 110))).sort((a, b) => b.calls - a.calls).slice(0, 12);
    for (const r of rows) console.log(`   ${(r.calls / ROUNDS).toFixed(2)} calls/request  exec ${((r.exec * 1000) / r.calls).toFixed(0).padStart(4)} µs/call  ${r.query}`);
  }
}

console.log(`${PERSONS} persons over ${CITIES} cities, ${ROUNDS} calls a step, ${IN_FLIGHT} in flight`);
if (explainPage) {
  // The page's statement as the app runs it (a generic plan of 64 parameters, 50 ids), as the app's role under row-level security.
  const app = new SQL({ url: db.appUrl, max: 1 });
  const ids = (await su.unsafe("SELECT id FROM persons WHERE name ILIKE '%silva%' ORDER BY id LIMIT 50")).map((r: { id: string }) => `'${r.id}'`);
  while (ids.length < 64) ids.push("NULL");
  await app.begin(async (tx) => {
    await tx.unsafe(`SELECT set_config('corpadmin.corp_id', '${admin.corpId}', true)`);
    await tx.unsafe("SET LOCAL plan_cache_mode = force_generic_plan");
    await tx.unsafe(`PREPARE page(${Array(64).fill("text").join(",")}) AS SELECT * FROM persons WHERE id IN (${Array.from({ length: 64 }, (_, i) => `$${i + 1}`).join(", ")}) ORDER BY id ASC`);
    for (let k = 0; k < 3; k++) await tx.unsafe(`EXECUTE page(${ids.join(", ")})`);
    for (const r of await tx.unsafe(`EXPLAIN (ANALYZE, BUFFERS) EXECUTE page(${ids.join(", ")})`)) console.log(`   ${r["QUERY PLAN"]}`);
    await tx.unsafe("DEALLOCATE page");
  });
  await app.close();
}
const page = async (k: number) => {
  const res = await t.req("GET", `/api/person?q=${NAMES[k % NAMES.length]}&limit=50`, { token: admin.token });
  if (res.status !== 200 || res.body.items.length !== 50) throw new Error(`search: ${res.status} ${res.text.slice(0, 200)}`);
};
await step("read", () => door.read(async () => null));
await step("read+pk", () => door.read((tx) => tx.$client.query("SELECT id FROM persons WHERE id = ?1").get(oneId)));
await step("service", (k) => listPersons(door, { q: NAMES[k % NAMES.length], limit: 50 }));
await step("request", page, STATS);
// Terms no call repeats (bench/search-terms.ts, as the bench's "terms never repeated" rows).
const novel = searchTerms(PERSONS);
let novelAt = 0;
await step("novel", () => listPersons(door, { q: novel[novelAt++ % novel.length]!, limit: 50 }), STATS);
// What the app keeps of the persons' views (person/kept-views.ts) after the steps: their memory.
const kept = t.ctx.jobs.get<ReturnType<typeof personViewsJob>>(PERSON_VIEWS_JOB)?.views.size;
if (kept) console.log(`kept person views: ${kept.views}, ${(kept.chars / 1e6).toFixed(2)} M characters`);
await statsOf.close();
await su.close();
await t.close();
await pg.stop();
process.exit(0);
