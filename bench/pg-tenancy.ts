// `bun bench/pg-tenancy.ts` (issue 19, item 2): measures the two ways of keeping corporations on
// PostgreSQL at N corporations (PG_TENANCY_CORPS, default 5,000):
//   schema: one schema per corporation (the tables as they are, chosen by search_path);
//   shared: one set of tables, corp_id leading every key, forced row-level security.
// For each: time to create every tenant, a release migration (one column + one index on
// contracts), catalog size, a tenant primary-key read through Bun.sql in a transaction with
// SET LOCAL (what a request would do), a per-corporation dump, and an isolation check.
//
// It initdb's a throwaway cluster in a temp dir with fsync=off (and synchronous_commit=off,
// full_page_writes=off, wal_level=minimal): catalog and migration timings are therefore CPU and
// catalog work, not disk flushes. The server runs under `nice -n 19` on a free loopback port and is
// stopped by its PID at the end or on error; the temp dir is removed. As root, the server runs as
// the `postgres` OS user (initdb refuses root). Results: printed, and bench/results/pg-tenancy.json.
import { SQL } from "bun";
import { chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { getTableConfig } from "drizzle-orm/sqlite-core";
import { setPriority, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { CORP_SETTING, platformFile, tenantFile, tenantStatements, tenantTables, type Layout } from "../scripts/pg-schema";

const N = Number(process.env.PG_TENANCY_CORPS ?? 5_000);
const READS = Number(process.env.PG_TENANCY_READS ?? 20_000);
/** Contracts seeded per corporation (and one person they belong to). */
const CONTRACTS = Number(process.env.PG_TENANCY_CONTRACTS ?? 20);
const BIN = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";
const APP_ROLE = "corpadmin";

try {
  setPriority(19);
} catch {
  // not fatal: the server is niced separately
}

const asRoot = userInfo().uid === 0;
/** Commands run as the postgres OS user when we are root, always under nice 19; exec chains keep the PID. */
const cmd = (argv: string[]): string[] => [
  ...(asRoot ? ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"] : []),
  "nice",
  "-n",
  "19",
  ...argv,
];

function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

function run(argv: string[], stdin?: string): string {
  const r = Bun.spawnSync(cmd(argv), { stdout: "pipe", stderr: "pipe", stdin: stdin === undefined ? "ignore" : Buffer.from(stdin) });
  if (r.exitCode !== 0) throw new Error(`${argv.join(" ")} failed (${r.exitCode}): ${r.stderr.toString()}`);
  return r.stdout.toString();
}

const uuid = (s: string): string => {
  const h = new Bun.CryptoHasher("md5").update(s).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};
/** Same ids as the SQL seeding: md5(text)::uuid. */
const corpId = (n: number) => uuid(`corp${n}`);
const contractId = (n: number, i: number) => uuid(`contract${n}/${i}`);
const schemaOf = (n: number) => `corp_${n}`;

const now = () => performance.now();
const secs = (ms: number) => Math.round(ms / 10) / 100;
function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
const us = (ms: number) => Math.round(ms * 1000);

type Result = {
  layout: Layout;
  create_s: number;
  seed_s: number;
  migrate_s: number;
  pg_class: number;
  pg_attribute: number;
  catalog_mb: number;
  db_mb: number;
  read_p50_us: number;
  read_p99_us: number;
  bare_read_p50_us: number;
  backend_cache_mb: number;
  dump_one_s: number;
  dump_one_how: string;
  isolation: string[];
};

class Server {
  proc?: ReturnType<typeof Bun.spawn>;
  readonly dir = mkdtempSync(join(tmpdir(), "corpadmin-pg-tenancy-"));
  readonly data = join(this.dir, "data");
  readonly port = freePort();

  async start(): Promise<void> {
    if (asRoot) {
      const id = (flag: string) => Number(Bun.spawnSync(["id", flag, "postgres"]).stdout.toString());
      chownSync(this.dir, id("-u"), id("-g"));
    }
    run([`${BIN}/initdb`, "-D", this.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
    const settings: Record<string, string> = {
      listen_addresses: "127.0.0.1",
      port: String(this.port),
      unix_socket_directories: this.dir,
      fsync: "off",
      synchronous_commit: "off",
      full_page_writes: "off",
      wal_level: "minimal",
      max_wal_senders: "0",
      max_wal_size: "8GB",
      checkpoint_timeout: "30min",
      shared_buffers: "256MB",
      // pg_dump takes a lock per table it dumps: the whole schema layout is ~N×33 tables.
      max_locks_per_transaction: "4096",
      max_connections: "20",
      log_min_messages: "warning",
    };
    const args = Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]);
    this.proc = Bun.spawn(cmd([`${BIN}/postgres`, "-D", this.data, ...args]), { stdout: "ignore", stderr: "pipe" });
    for (let i = 0; i < 300; i++) {
      const r = Bun.spawnSync([`${BIN}/pg_isready`, "-q", "-h", "127.0.0.1", "-p", String(this.port)]);
      if (r.exitCode === 0) return;
      if (this.proc.exitCode !== null) throw new Error(`postgres exited: ${await new Response(this.proc.stderr as ReadableStream).text()}`);
      await Bun.sleep(100);
    }
    throw new Error("postgres did not start in 30 s");
  }

  sql(database: string, username: string, max = 1): SQL {
    return new SQL({ hostname: "127.0.0.1", port: this.port, database, username, max, idleTimeout: 0 });
  }

  async stop(): Promise<void> {
    const p = this.proc;
    if (p && p.exitCode === null) {
      p.kill("SIGINT"); // fast shutdown
      const done = await Promise.race([p.exited.then(() => true), Bun.sleep(20_000).then(() => false)]);
      if (!done) {
        p.kill("SIGKILL");
        await p.exited;
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function measureReads(sql: SQL, layout: Layout): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  // Same sequence for both layouts: tenant and contract picked by a fixed pseudo-random walk.
  let x = 12345;
  const rnd = (m: number) => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x % m;
  };
  for (let r = 0; r < READS; r++) {
    const n = 1 + rnd(N);
    const id = contractId(n, 1 + rnd(CONTRACTS));
    const t0 = now();
    const rows = await sql.begin(async (tx) => {
      // set_config(name, value, true) is SET LOCAL with the value bound as a parameter.
      if (layout === "schema") await tx`SELECT set_config('search_path', ${schemaOf(n)}, true)`;
      else await tx`SELECT set_config(${CORP_SETTING}, ${corpId(n)}, true)`;
      return await tx`SELECT * FROM contracts WHERE id = ${id}`;
    });
    times.push(now() - t0);
    if (rows.length !== 1) throw new Error(`${layout}: read of corp ${n} contract ${id} returned ${rows.length} rows`);
  }
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

async function bareReads(sql: SQL, layout: Layout): Promise<number> {
  const times: number[] = [];
  const ids = Array.from({ length: CONTRACTS }, (_, i) => contractId(1, i + 1));
  const read = (id: string) => (layout === "schema" ? sql`SELECT * FROM corp_1.contracts WHERE id = ${id}` : sql`SELECT * FROM contracts WHERE id = ${id}`);
  if (layout === "shared") await sql`SELECT set_config(${CORP_SETTING}, ${corpId(1)}, false)`;
  for (let r = 0; r < 5_000; r++) {
    const t0 = now();
    await read(ids[r % ids.length]);
    times.push(now() - t0);
  }
  times.sort((a, b) => a - b);
  return quantile(times, 0.5);
}

async function catalog(sql: SQL): Promise<{ pg_class: number; pg_attribute: number; catalog_mb: number; db_mb: number }> {
  const [r] = await sql`SELECT (SELECT count(*) FROM pg_class)::int AS pg_class, (SELECT count(*) FROM pg_attribute)::int AS pg_attribute,
    (SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = 'pg_catalog' AND c.relkind = 'r')::float8 AS catalog_bytes,
    pg_database_size(current_database())::float8 AS db_bytes`;
  return { pg_class: r.pg_class, pg_attribute: r.pg_attribute, catalog_mb: Math.round(r.catalog_bytes / 1e5) / 10, db_mb: Math.round(r.db_bytes / 1e5) / 10 };
}

/** Seeding runs as the superuser: it is not what is measured, and RLS would only slow it. */
const personSql = (table: string, corp: string, n: string) =>
  `INSERT INTO ${table} (${corp ? "corp_id, " : ""}id, name, created_at, updated_at)
     SELECT ${corp ? `${corp}, ` : ""}md5('person' || ${n})::uuid::text, 'Person ' || ${n}, now()::text, now()::text`;
const contractSql = (table: string, corp: string, n: string) =>
  `INSERT INTO ${table} (${corp ? "corp_id, " : ""}id, customer_id, billing_customer_id, number, start_date, total_value, contract_status, contract_stage, created_at, updated_at)
     SELECT ${corp ? `${corp}, ` : ""}md5('contract' || ${n} || '/' || i)::uuid::text, md5('person' || ${n})::uuid::text, md5('person' || ${n})::uuid::text,
       'C-' || i, '2026-01-01', 100, 'active', 'installed', now()::text, now()::text`;

async function benchLayout(server: Server, layout: Layout): Promise<Result> {
  const db = `tenancy_${layout}`;
  const admin = server.sql("postgres", "postgres");
  await admin.unsafe(`CREATE DATABASE ${db} OWNER ${APP_ROLE}`);
  await admin.close();
  // The app connects as a role that owns the tables but is neither superuser nor BYPASSRLS:
  // FORCE ROW LEVEL SECURITY is what holds it to the policy.
  const app = server.sql(db, APP_ROLE);
  const su = server.sql(db, "postgres");
  const ddl = tenantStatements(layout).join("\n");
  const tables = tenantTables().length;

  console.log(`\n[${layout}] creating ${N} corporations…`);
  let t0 = now();
  if (layout === "schema") {
    for (let n = 1; n <= N; n++) {
      // One transaction per tenant, as a provisioning step would do it.
      await app.unsafe(`BEGIN; CREATE SCHEMA ${schemaOf(n)}; SET LOCAL search_path TO ${schemaOf(n)};\n${ddl}\nCOMMIT;`);
      if (n % 500 === 0) console.log(`  ${n} schemas, ${secs(now() - t0)} s`);
    }
  } else {
    await app.unsafe(`BEGIN;\n${ddl}\nCOMMIT;`);
    // A new corporation in the shared layout is only its id in the platform's corporations table.
    await app.unsafe(`CREATE TABLE corporations (id text PRIMARY KEY); INSERT INTO corporations SELECT md5('corp' || n)::uuid::text FROM generate_series(1, ${N}) n;`);
  }
  const create = now() - t0;

  t0 = now();
  if (layout === "schema") {
    const q = (text: string) => text.replaceAll("'", "''");
    await su.unsafe(`DO $$ BEGIN FOR n IN 1..${N} LOOP
      EXECUTE format('${q(personSql("corp_%s.persons", "", "%s"))}', n, n, n);
      EXECUTE format('${q(contractSql("corp_%s.contracts", "", "%s"))} FROM generate_series(1, ${CONTRACTS}) AS i', n, n, n, n);
      EXECUTE format('ANALYZE corp_%s.persons, corp_%s.contracts', n, n);
    END LOOP; END $$`);
  } else {
    const corp = "md5('corp' || n)::uuid::text";
    await su.unsafe(`${personSql("persons", corp, "n")} FROM generate_series(1, ${N}) AS n`);
    await su.unsafe(`${contractSql("contracts", corp, "n")} FROM generate_series(1, ${N}) AS n, generate_series(1, ${CONTRACTS}) AS i`);
    await su.unsafe("ANALYZE persons, contracts");
  }
  const seed = now() - t0;
  console.log(`  created in ${secs(create)} s (${tables} tables per tenant), seeded ${CONTRACTS} contracts each in ${secs(seed)} s`);

  console.log(`[${layout}] release migration (ADD COLUMN + CREATE INDEX on contracts)…`);
  t0 = now();
  if (layout === "schema") {
    for (let n = 1; n <= N; n++) {
      const s = schemaOf(n);
      await app.unsafe(`BEGIN; ALTER TABLE ${s}.contracts ADD COLUMN release_note text; CREATE INDEX contracts_release_note ON ${s}.contracts (release_note); COMMIT;`);
    }
  } else {
    await app.unsafe(`BEGIN; ALTER TABLE contracts ADD COLUMN release_note text; CREATE INDEX contracts_release_note ON contracts (corp_id, release_note); COMMIT;`);
  }
  const migrate = now() - t0;
  console.log(`  ${secs(migrate)} s`);

  const cat = await catalog(su);
  console.log(`[${layout}] pg_class ${cat.pg_class}, pg_attribute ${cat.pg_attribute}, catalog ${cat.catalog_mb} MB, database ${cat.db_mb} MB`);

  console.log(`[${layout}] ${READS} primary-key reads in a transaction with SET LOCAL…`);
  const reader = server.sql(db, APP_ROLE);
  const reads = await measureReads(reader, layout);
  // Cache memory of the one backend that served every read (relcache/catcache grow per relation touched).
  const [mem] = await reader`SELECT sum(total_bytes)::float8 AS bytes FROM pg_backend_memory_contexts`;
  await reader.close();
  const bareConn = server.sql(db, APP_ROLE);
  const bare = await bareReads(bareConn, layout);
  await bareConn.close();
  console.log(`  p50 ${us(reads.p50)} µs, p99 ${us(reads.p99)} µs (bare read, no transaction: ${us(bare)} µs); backend memory ${Math.round(mem.bytes / 1e5) / 10} MB`);

  // Backing up one corporation with the engine's tools.
  t0 = now();
  let dumpHow: string;
  const out = join(server.dir, `${layout}-one.dump`);
  if (layout === "schema") {
    run([`${BIN}/pg_dump`, "-h", "127.0.0.1", "-p", String(server.port), "-U", APP_ROLE, "-Fc", "-n", schemaOf(1), "-f", out, db]);
    dumpHow = "pg_dump -Fc -n corp_1";
  } else {
    // pg_dump cannot filter rows: one COPY per table under the corporation's RLS setting.
    const names = tenantTables().map((t) => getTableConfig(t).name);
    const script = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL ${CORP_SETTING} = '${corpId(1)}';\n${names.map((t) => `COPY ${t} TO STDOUT;`).join("\n")}\nCOMMIT;`;
    const f = join(server.dir, "copy.sql");
    writeFileSync(f, script);
    run(["/usr/bin/psql", "-X", "-q", "-h", "127.0.0.1", "-p", String(server.port), "-U", APP_ROLE, "-d", db, "-f", f, "-o", out]);
    dumpHow = `COPY of ${names.length} tables under RLS (psql)`;
  }
  const dumpOne = now() - t0;
  console.log(`[${layout}] one corporation dumped in ${secs(dumpOne)} s (${dumpHow}, ${statSync(out).size} bytes)`);

  const isolation = layout === "shared" ? await isolationShared(server, db) : await isolationSchema(app);
  for (const line of isolation) console.log(`  isolation: ${line}`);

  await app.close();
  await su.close();
  return {
    layout,
    create_s: secs(create),
    seed_s: secs(seed),
    migrate_s: secs(migrate),
    ...cat,
    read_p50_us: us(reads.p50),
    read_p99_us: us(reads.p99),
    bare_read_p50_us: us(bare),
    backend_cache_mb: Math.round(mem.bytes / 1e5) / 10,
    dump_one_s: secs(dumpOne),
    dump_one_how: dumpHow,
    isolation,
  };
}

class Rollback extends Error {}

/** Runs fn in a transaction as corporation A and always rolls it back; returns fn's value or the error text. */
async function asCorp<T>(sql: SQL, corp: string, fn: (tx: SQL) => Promise<T>): Promise<T | string> {
  let value: T | undefined;
  try {
    await sql.begin(async (tx) => {
      await tx`SELECT set_config(${CORP_SETTING}, ${corp}, true)`;
      value = await fn(tx as unknown as SQL);
      throw new Rollback();
    });
  } catch (e) {
    if (!(e instanceof Rollback)) return `refused: ${(e as Error).message}`;
  }
  return value as T;
}

async function isolationShared(server: Server, db: string): Promise<string[]> {
  const out: string[] = [];
  const check = (ok: boolean, what: string) => {
    out.push(`${ok ? "ok  " : "FAIL"} ${what}`);
    if (!ok) process.exitCode = 1;
  };
  const A = corpId(1);
  const B = corpId(2);
  const bContract = contractId(2, 1);
  const aContract = contractId(1, 1);

  const fresh = server.sql(db, APP_ROLE);
  try {
    await fresh`SELECT count(*) FROM contracts`;
    check(false, "no corporation set: SELECT should fail");
  } catch (e) {
    check(true, `no corporation set on a fresh connection: SELECT refused (${(e as Error).message})`);
  }
  await fresh.close();

  const sql = server.sql(db, APP_ROLE);
  const sel = await asCorp(sql, A, (tx) => tx`SELECT * FROM contracts WHERE id = ${bContract}`);
  check(Array.isArray(sel) && sel.length === 0, `as A, SELECT B's contract by id: ${Array.isArray(sel) ? sel.length : sel} rows`);
  const all = await asCorp(sql, A, (tx) => tx`SELECT count(DISTINCT corp_id)::int AS corps, count(*)::int AS n FROM contracts`);
  check(Array.isArray(all) && all[0].corps === 1 && all[0].n === CONTRACTS, `as A, SELECT every contract: ${Array.isArray(all) ? `${all[0].n} rows of ${all[0].corps} corporation` : all}`);
  const upd = await asCorp(sql, A, async (tx) => (await tx`UPDATE contracts SET contract_status = 'hijacked' WHERE id = ${bContract}`).count);
  check(upd === 0, `as A, UPDATE B's contract: ${upd} rows affected`);
  const del = await asCorp(sql, A, async (tx) => (await tx`DELETE FROM contracts WHERE id = ${bContract}`).count);
  check(del === 0, `as A, DELETE B's contract: ${del} rows affected`);
  const ins = await asCorp(
    sql,
    A,
    (tx) => tx`INSERT INTO persons (corp_id, id, name, created_at, updated_at) VALUES (${B}, ${crypto.randomUUID()}, 'intruder', '', '')`,
  );
  check(typeof ins === "string" && ins.includes("row-level security"), `as A, INSERT a person with corp_id B: ${typeof ins === "string" ? ins : "accepted"}`);
  const move = await asCorp(sql, A, (tx) => tx`UPDATE contracts SET corp_id = ${B} WHERE id = ${aContract}`);
  check(typeof move === "string" && move.includes("row-level security"), `as A, move A's contract to B: ${typeof move === "string" ? move : "accepted"}`);
  const dflt = await asCorp(sql, A, async (tx) => {
    const [r] = await tx`INSERT INTO persons (id, name, created_at, updated_at) VALUES (${crypto.randomUUID()}, 'no corp_id given', '', '') RETURNING corp_id`;
    return r.corp_id as string;
  });
  check(dflt === A, `as A, INSERT without corp_id: stored under ${dflt === A ? "A" : dflt}`);
  const fk = await asCorp(
    sql,
    A,
    (tx) => tx`INSERT INTO contracts (id, customer_id, billing_customer_id, number, start_date, total_value, contract_status, contract_stage, created_at, updated_at)
      VALUES (${crypto.randomUUID()}, ${uuid("person2")}, ${uuid("person2")}, 'X-1', '2026-01-01', 1, 'a', 'b', '', '')`,
  );
  check(typeof fk === "string" && fk.includes("foreign key"), `as A, a contract whose customer is B's person: ${typeof fk === "string" ? fk : "accepted"}`);
  // After a SET LOCAL ends, the session keeps the setting defined but empty: nothing matches.
  const [after] = await sql`SELECT count(*)::int AS n FROM contracts`;
  check(after.n === 0, `same connection after the transaction ended: SELECT sees ${after.n} rows`);
  const [flags] = await sql`SELECT count(*) FILTER (WHERE relrowsecurity AND relforcerowsecurity)::int AS forced, count(*)::int AS n
    FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace AND relname <> 'corporations'`;
  check(flags.forced === flags.n, `${flags.forced} of ${flags.n} tenant tables have forced row-level security`);
  await sql.close();
  return out;
}

async function isolationSchema(app: SQL): Promise<string[]> {
  // Isolation is the search_path: a query naming another schema is not stopped (same role).
  const rows = await app.begin(async (tx) => {
    await tx`SELECT set_config('search_path', ${schemaOf(1)}, true)`;
    return await tx.unsafe(`SELECT count(*)::int AS n FROM ${schemaOf(2)}.contracts`);
  });
  return [`as corp_1 (search_path), SELECT FROM corp_2.contracts: ${rows[0].n} rows visible (by convention only, unless one role per corporation)`];
}

async function main(): Promise<void> {
  const server = new Server();
  const stop = async () => {
    await server.stop();
  };
  process.on("SIGINT", () => void stop().then(() => process.exit(130)));
  process.on("SIGTERM", () => void stop().then(() => process.exit(143)));
  const results: Result[] = [];
  const started = now();
  try {
    await server.start();
    console.log(`PostgreSQL 15 on 127.0.0.1:${server.port} (pid ${server.proc!.pid}, nice 19, fsync=off), ${N} corporations, ${CONTRACTS} contracts each`);
    const su = server.sql("postgres", "postgres");
    await su.unsafe(`CREATE ROLE ${APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS; GRANT pg_read_all_stats TO ${APP_ROLE};`);
    // The generated files as psql runs them: the platform, and the tenant tables in both layouts.
    await su.unsafe(`CREATE DATABASE ddl_check OWNER ${APP_ROLE}`);
    await su.close();
    const psql = (vars: string[], text: string) =>
      run(["/usr/bin/psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", ...vars, "-h", "127.0.0.1", "-p", String(server.port), "-U", APP_ROLE, "-d", "ddl_check"], text);
    psql([], platformFile());
    psql(["-v", "schema=corp_check"], tenantFile("schema"));
    psql([], tenantFile("shared"));
    console.log("generated platform.sql and tenant.sql (both layouts) apply cleanly");
    for (const layout of (process.env.PG_TENANCY_LAYOUTS ?? "shared,schema").split(",") as Layout[]) results.push(await benchLayout(server, layout));
  } finally {
    await stop();
  }

  console.log(`\n${N} corporations, ${CONTRACTS} contracts each; ${READS} reads; total ${secs(now() - started)} s`);
  const rows: [string, (r: Result) => string | number][] = [
    ["create every tenant (s)", (r) => r.create_s],
    ["release migration (s)", (r) => r.migrate_s],
    ["pg_class rows", (r) => r.pg_class],
    ["pg_attribute rows", (r) => r.pg_attribute],
    ["system catalog (MB)", (r) => r.catalog_mb],
    ["database size (MB)", (r) => r.db_mb],
    ["PK read in tx, p50 (µs)", (r) => r.read_p50_us],
    ["PK read in tx, p99 (µs)", (r) => r.read_p99_us],
    ["bare PK read, p50 (µs)", (r) => r.bare_read_p50_us],
    ["reader backend memory (MB)", (r) => r.backend_cache_mb],
    ["dump one corporation (s)", (r) => r.dump_one_s],
  ];
  console.log(`| measure | ${results.map((r) => r.layout).join(" | ")} |`);
  console.log(`| --- | ${results.map(() => "---").join(" | ")} |`);
  for (const [label, f] of rows) console.log(`| ${label} | ${results.map(f).join(" | ")} |`);
  const dir = join(import.meta.dir, "results");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "pg-tenancy.json"), JSON.stringify({ corporations: N, contracts: CONTRACTS, reads: READS, results }, null, 2));
}

await main();
