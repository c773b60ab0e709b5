// source-only: runs `bun src/main.ts copy-to-postgres` over a site built in-process and reads PostgreSQL through its doors.
// An embedded site moved into PostgreSQL (issue 19 item 5): every table of the platform and of each
// corporation arrives whole (read back through the PostgreSQL doors and compared with the SQLite
// files), a second copy without --replace is refused, and a value changed in PostgreSQL makes the
// verification fail.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import { renameSync } from "node:fs";
import { join } from "node:path";
import { PgDoors } from "../../src/core/pg/door";
import { migratePg } from "../../src/db/pg/migrate";
import { services } from "../../src/db/pg/platform";
import { copySite, PLATFORM_TABLES, TENANT_TABLES } from "../../src/db/pg/copy";
import { contractBody } from "../support/contract-body";
import { b64, pngLogo } from "../support/qrcode";
import { addCorp, addUser, adminIn, makeApp, startAndLogin, type TestApp } from "../support/helpers";
import { startPostgres, type TestPostgres } from "../support/postgres";

const MAIN = join(import.meta.dir, "../../src/main.ts");

let pg: TestPostgres;
let t: TestApp;
let dir: string;
const corps: { id: string; name: string }[] = [];

function copy(...args: string[]) {
  const p = Bun.spawnSync(["bun", MAIN, "copy-to-postgres", "--data-dir", dir, "--database-url", pg.appUrl, ...args], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, CORPADMIN_DATABASE_URL: "" },
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

/** A corporation's content, made through the HTTP API as its built-in admin. */
async function fill(corpId: string, n: number) {
  const as = (method: string, path: string, body?: unknown) => adminIn(t, corpId, method, path, body);
  await as("POST", "/api/city", { name: `Town ${n}`, state: "SP", country: "BR" });
  await as("POST", "/api/person", { name: `Person ${n}`, display_name: `P${n}`, corporate: n % 2 === 0 });
  await as("POST", "/api/externalapp", { name: "erp" });
  const product = (await as("POST", "/api/product", { identity: `FIBER-${n}`, name: "Fiber", price: 99.9 })).body.id as string;
  for (let i = 0; i < 3; i++) {
    const c = (await as("POST", "/api/contract/create/externalapp/name/erp", contractBody(n * 10 + i))).body;
    await as("POST", `/api/contract/${c.id}/items`, { items: [{ product_id: product, quantity: 2.5, unit_price: 10.1 }, { product_id: product }] });
  }
  const int = (await as("POST", "/api/metric", { name: "users", data_type: "Int", periodicity: "1m", start_date: "2020-01-01T00:00:00Z" })).body.id;
  const text = (await as("POST", "/api/metric", { name: "state", data_type: "Text", periodicity: "1m", start_date: "2020-01-01T00:00:00Z" })).body.id;
  for (let i = 0; i < 5; i++) {
    await as("POST", `/api/metric/${int}/value`, { value: i * n, at: `2025-03-01T12:0${i}:00Z` });
    await as("POST", `/api/metric/${text}/value`, { value: `up ${i}`, at: `2025-03-01T12:0${i}:00Z` });
  }
  const logo = (await as("POST", "/api/qrcode/logo", { name: "Brand", content_type: "image/png", data: b64(pngLogo()) })).body.id as string;
  const code = (await as("POST", "/api/qrcode", { name: `code ${n}`, kind: "dynamic", target: `https://example.net/${n}`, logo_id: logo })).body;
  for (let i = 0; i < 3; i++) expect((await t.req("GET", `/q/${code.slug}`)).status).toBe(302);
  await as("POST", "/api/webhook", { name: "hook", target: "https://hooks.example.net/x", email: "ops@example.net", groups: ["CONTRACT_AFTER_INSERT"] });
}

beforeAll(async () => {
  pg = await startPostgres();
  t = await makeApp();
  dir = t.dir;
  const admin = await startAndLogin(t);
  corps.push({ id: admin.corpId, name: "acme" });
  corps.push({ id: await addCorp(t, "beta"), name: "beta" });
  // Menus whose rows reference rows stored after them: "child" under "root", then "root" moved under
  // a menu created last.
  const menu = async (body: unknown) => (await adminIn(t, admin.corpId, "POST", "/api/menu", body)).body.id as string;
  const root = await menu({ name: "root" });
  await menu({ name: "child", parent_id: root });
  await menu({ id: root, name: "root", parent_id: await menu({ name: "top" }) });
  for (const [i, c] of corps.entries()) {
    await fill(c.id, i + 1);
    await addUser(t, c.id, { services: ["platform.city"] });
  }
  // More metric values than a page of the read-back (2,000 rows), arranged in the file as a
  // long-lived site has them.
  const { id: metricId } = t.sql(corps[1].id).query("SELECT id FROM metrics WHERE name = 'users'").get() as { id: string };
  const w = t.sqlWrite(corps[1].id);
  w.transaction(() => {
    const insert = w.query("INSERT INTO metric_values (metric_id, at, at_ms, value) VALUES (?1, ?2, ?3, ?4)");
    for (let i = 0; i < 2500; i++) insert.run(metricId, new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(), Date.UTC(2024, 0, 1) + i * 60_000, i % 7 === 0 ? i / 4 : i);
  })();
}, 120_000);

afterAll(async () => {
  await t?.close();
  await pg?.stop();
});

/** The PostgreSQL types of a table's columns that read back unlike SQLite's values. */
interface Kinds {
  tenant: boolean;
  bools: Set<string>;
  json: Set<string>;
  ints: Set<string>;
  bytea: Set<string>;
}

/** A SQLite file's rows of a table, as sorted canonical JSON lines. */
function sqliteRows(file: string, table: string, kinds: Kinds): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.query(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[]).map((r) => canon(r, kinds, true)).sort();
  } finally {
    db.close();
  }
}

/** One row as JSON with sorted keys: booleans as booleans, blobs as hex, JSON parsed, bigints as numbers. */
function canon(row: Record<string, unknown>, k: Kinds, sqlite: boolean): string {
  const out: Record<string, unknown> = {};
  for (const col of Object.keys(row).sort()) {
    if (k.tenant && col === "corp_id") continue;
    let v = row[col];
    if (v === null) {
      // null on both sides
    } else if (v instanceof Uint8Array) v = Buffer.from(v).toString("hex");
    else if (k.bools.has(col)) v = v === true || v === 1;
    else if (k.json.has(col) && !sqlite && typeof v === "string") v = JSON.parse(v);
    // A number or text in SQLite's untyped BLOB column, stored in bytea as its JSON's bytes.
    else if (k.bytea.has(col) && sqlite) v = Buffer.from(JSON.stringify(v)).toString("hex");
    else if (k.ints.has(col)) v = Number(v);
    out[col] = v;
  }
  return JSON.stringify(out);
}

describe("corpadmin copy-to-postgres", () => {
  test("a running service's files are refused", () => {
    // The app of this test process holds them open; the command runs in another process.
    const r = copy();
    expect(r.code).toBe(1);
    expect(r.err).toContain("stop the service first");
  });

  test("copies the platform and every corporation, verified; the rows read back through the doors equal the files'", async () => {
    await t.close(false); // the service stopped
    const r = copy();
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("every row count and checksum equal");
    expect(r.out).not.toContain("DIFFERS");

    const client = new SQL({ url: pg.appUrl, max: 2 });
    const doors = new PgDoors(client);
    try {
      const types = new Map<string, string>();
      for (const row of (await client`SELECT table_name || '.' || column_name AS k, data_type FROM information_schema.columns WHERE table_schema = current_schema()`) as { k: string; data_type: string }[])
        types.set(row.k, row.data_type);
      const kinds = (table: string, tenant: boolean): Kinds => {
        const k: Kinds = { tenant, bools: new Set(), json: new Set(), ints: new Set(), bytea: new Set() };
        for (const [key, type] of types) {
          const [tb, col] = key.split(".");
          if (tb !== table) continue;
          if (type === "boolean") k.bools.add(col);
          if (type === "jsonb") k.json.add(col);
          if (type === "bigint") k.ints.add(col);
          if (type === "bytea") k.bytea.add(col);
        }
        return k;
      };
      /**
       * A query through a door's handle: Drizzle's PostgreSQL database on this branch (values as
       * Bun.sql reads them: jsonb as its JSON text), or the modules' SQLite-dialect handle once the
       * doors hand it (values as SQLite reads them).
       */
      const query = (door: { read: PgDoors["platform"]["read"] }, q: string) =>
        door.read(async (tx) => {
          const h = tx as unknown as { execute?: (q: unknown) => Promise<Iterable<unknown>>; $client?: { query(q: string): { all(): Promise<unknown[]> } } };
          if (h.execute) return { jsonText: true, rows: [...(await h.execute(sql.raw(q)))] as Record<string, unknown>[] };
          return { jsonText: false, rows: (await h.$client!.query(q).all()) as Record<string, unknown>[] };
        });
      const pgRows = async (door: { read: PgDoors["platform"]["read"] }, table: string, k: Kinds) => {
        const { jsonText, rows } = await query(door, `SELECT * FROM "${table}"`);
        return rows.map((r) => canon(r, jsonText ? k : { ...k, json: new Set() }, false)).sort();
      };
      let compared = 0;
      for (const table of PLATFORM_TABLES) {
        const k = kinds(table.name, false);
        const want = sqliteRows(join(dir, "platform.db"), table.name, k);
        expect({ table: table.name, rows: await pgRows(doors.platform, table.name, k) }).toEqual({ table: table.name, rows: want });
        compared += want.length;
      }
      for (const c of corps) {
        for (const table of TENANT_TABLES) {
          const k = kinds(table.name, true);
          const want = sqliteRows(join(dir, "corps", `${c.id}.db`), table.name, k);
          const got = await pgRows(doors.tenant(c.id), table.name, k);
          expect({ corp: c.name, table: table.name, rows: got }).toEqual({ corp: c.name, table: table.name, rows: want });
          compared += want.length;
        }
        // What the site was built with arrived: contracts with items, metric values, QR codes, webhooks.
        const { rows } = await query(
          doors.tenant(c.id),
          "SELECT (SELECT count(*) FROM contracts) AS contracts, (SELECT count(*) FROM contract_items) AS items, (SELECT count(*) FROM metric_values) AS vals, (SELECT count(*) FROM qr_codes) AS qr, (SELECT count(*) FROM webhooks) AS hooks",
        );
        const counts = Object.fromEntries(Object.entries(rows[0]).map(([key, n]) => [key, Number(n)]));
        expect(counts).toEqual({ contracts: 3, items: 6, vals: c.name === "beta" ? 2510 : 10, qr: 1, hooks: 1 });
        expect(sqliteRows(join(dir, "corps", `${c.id}.db`), "qr_logos", kinds("qr_logos", true))).toHaveLength(1);
      }
      expect(compared).toBeGreaterThan(100);
      expect(sqliteRows(join(dir, "platform.db"), "menus", kinds("menus", false))).toHaveLength(3);
      // The identity sequences continue past every corporation's copied maximum.
      const su = new SQL(pg.url);
      try {
        for (const table of ["events", "metric_values"]) {
          const [s] = await su.unsafe(`SELECT (SELECT max(seq) FROM ${table})::int AS max,
            (SELECT last_value FROM pg_sequences WHERE sequencename = split_part(pg_get_serial_sequence('${table}', 'seq'), '.', 2))::int AS last`);
          expect(s.max).toBeGreaterThan(0);
          expect(s.last).toBe(s.max);
        }
      } finally {
        await su.close();
      }
    } finally {
      await client.close();
    }
  }, 120_000);

  test("a second copy without --replace is refused and changes nothing; --verify-only agrees", () => {
    const again = copy();
    expect(again.code).toBe(1);
    expect(again.err).toContain("already holds data");
    expect(again.err).toContain("--replace");
    const verify = copy("--verify-only");
    expect(verify.code).toBe(0);
    expect(verify.out).toContain("every row count and checksum equal");
  }, 60_000);

  test("the copy itself checks again, under the platform's writer lock, that no corporation or user arrived meanwhile", async () => {
    const client = new SQL({ url: pg.appUrl, max: 2 });
    try {
      const site = { platform: join(dir, "platform.db"), corporations: [] };
      await expect(copySite(client, site, { log: () => {}, replace: false })).rejects.toThrow("holds corporations or users");
    } finally {
      await client.close();
    }
    expect(copy("--verify-only").code).toBe(0);
  }, 60_000);

  test("a value changed in PostgreSQL fails the verification, naming the table; --replace copies again", async () => {
    const su = new SQL(pg.url);
    try {
      await su`UPDATE contract_items SET quantity = quantity + 0.001 WHERE corp_id = ${corps[1].id} AND id = (SELECT min(id) FROM contract_items WHERE corp_id = ${corps[1].id})`;
    } finally {
      await su.close();
    }
    const verify = copy("--verify-only");
    expect(verify.code).toBe(1);
    const line = verify.out.split("\n").find((l) => l.includes("DIFFERS"));
    expect(line).toContain("beta");
    expect(line).toContain("contract_items");
    expect(verify.out.split("\n").filter((l) => l.includes("DIFFERS"))).toHaveLength(1);

    const replaced = copy("--replace");
    expect(replaced.code).toBe(0);
    expect(replaced.out).toContain("--replace: deleting every row");
    expect(copy("--verify-only").code).toBe(0);
  }, 120_000);

  test("a jsonb metric_values.value (cluster mode's mapping of SQLite's untyped column) keeps numbers as numbers and text as text", async () => {
    const db = await pg.createDatabase("jsonb_values");
    const app = new SQL(db.appUrl);
    const su = new SQL(db.url);
    try {
      await migratePg(app);
      // jsonb already where the PostgreSQL schema maps the column so; bytea before.
      const [{ type }] = await app`SELECT data_type AS type FROM information_schema.columns WHERE table_name = 'metric_values' AND column_name = 'value'`;
      if (type === "bytea") await app.unsafe("ALTER TABLE metric_values ALTER COLUMN value TYPE jsonb USING convert_from(value, 'UTF8')::jsonb");
      const p = Bun.spawnSync(["bun", MAIN, "copy-to-postgres", "--data-dir", dir, "--database-url", db.appUrl], { stdout: "pipe", stderr: "pipe" });
      expect(p.stderr.toString()).toBe("");
      expect(p.exitCode).toBe(0);
      const values = (await su`SELECT value FROM metric_values WHERE corp_id = ${corps[0].id} ORDER BY at_ms, metric_id`).map((r: { value: unknown }) => r.value);
      expect(values.filter((v: unknown) => typeof v === "number").sort()).toEqual([0, 1, 2, 3, 4]);
      expect(values.filter((v: unknown) => typeof v === "string").sort()).toEqual(["up 0", "up 1", "up 2", "up 3", "up 4"]);
    } finally {
      await app.close();
      await su.close();
    }
  }, 60_000);

  test("a corporation whose copy fails mid-way is rolled back whole: none of its rows stay, the command exits 1", async () => {
    const db = await pg.createDatabase("refusing_target");
    const app = new SQL(db.appUrl);
    const su = new SQL(db.url);
    try {
      await migratePg(app);
      // webhooks come after cities, persons, contracts, metrics... in foreign-key order.
      await app.unsafe("ALTER TABLE webhooks ADD CONSTRAINT refuse_all CHECK (false)");
      const p = Bun.spawnSync(["bun", MAIN, "copy-to-postgres", "--data-dir", dir, "--database-url", db.appUrl], { stdout: "pipe", stderr: "pipe" });
      expect(p.exitCode).toBe(1);
      expect(p.stderr.toString()).toContain("acme: ");
      expect(p.stderr.toString()).toContain("rolled back");
      const [left] = await su`SELECT (SELECT count(*) FROM cities)::int AS cities, (SELECT count(*) FROM contracts)::int AS contracts,
        (SELECT count(*) FROM metric_values)::int AS vals, (SELECT count(*) FROM corporations)::int AS corps`;
      expect(left).toEqual({ cities: 0, contracts: 0, vals: 0, corps: 2 });
    } finally {
      await app.close();
      await su.close();
    }
  }, 60_000);

  test("a database holding only the built-in rows a started node seeds (no corporation, no user) is filled without --replace", async () => {
    const db = await pg.createDatabase("seeded_target");
    const app = new SQL(db.appUrl);
    try {
      await migratePg(app);
      // The site has a service of the same identifier: the seeded row is replaced, not kept beside it.
      await drizzle({ client: app }).insert(services).values({ identifier: "platform.city", name: "City", builtin: true });
      const p = Bun.spawnSync(["bun", MAIN, "copy-to-postgres", "--data-dir", dir, "--database-url", db.appUrl], { stdout: "pipe", stderr: "pipe" });
      expect(p.stderr.toString()).toBe("");
      expect(p.exitCode).toBe(0);
      expect(p.stdout.toString()).toContain("holds only built-in rows (services 1)");
      expect(p.stdout.toString()).toContain("every row count and checksum equal");
    } finally {
      await app.close();
    }
  }, 60_000);

  test("a corporation's file missing from the data directory is refused before anything is written", () => {
    const file = join(dir, "corps", `${corps[1].id}.db`);
    renameSync(file, `${file}.away`);
    try {
      const r = copy("--replace");
      expect(r.code).toBe(1);
      expect(r.err).toContain("missing (beta: ");
    } finally {
      renameSync(`${file}.away`, file);
    }
    expect(copy("--verify-only").code).toBe(0);
  }, 60_000);

  test("Infinity stored by an older version arrives: a float column's ±Infinity as itself, a metric value's as the largest double the API answers for it", async () => {
    const file = join(dir, "corps", `${corps[0].id}.db`);
    const w = new Database(file);
    let metricId: string;
    try {
      ({ id: metricId } = w.query("SELECT id FROM metrics WHERE name = 'users'").get() as { id: string });
      w.exec(`UPDATE metric_values SET value = 9e999 WHERE metric_id = '${metricId}' AND at_ms = ${Date.UTC(2025, 2, 1, 12, 1)};
        UPDATE metric_values SET value = -9e999 WHERE metric_id = '${metricId}' AND at_ms = ${Date.UTC(2025, 2, 1, 12, 2)};
        UPDATE contracts SET total_value = 9e999, address_latitude = -9e999`);
    } finally {
      w.close();
    }
    const db = await pg.createDatabase("infinite_values");
    const su = new SQL(db.url);
    try {
      const p = Bun.spawnSync(["bun", MAIN, "copy-to-postgres", "--data-dir", dir, "--database-url", db.appUrl], { stdout: "pipe", stderr: "pipe" });
      expect(p.stderr.toString()).toBe("");
      expect(p.exitCode).toBe(0);
      expect(p.stdout.toString()).toContain("every row count and checksum equal");
      const values = await su`SELECT value::text AS json FROM metric_values WHERE corp_id = ${corps[0].id} AND metric_id = ${metricId} ORDER BY at_ms`;
      expect(values.map((r: { json: string }) => JSON.parse(r.json))).toEqual([0, Number.MAX_VALUE, -Number.MAX_VALUE, 3, 4]);
      const contracts = await su`SELECT total_value, address_latitude FROM contracts WHERE corp_id = ${corps[0].id}`;
      expect(contracts.map((r: { total_value: number; address_latitude: number }) => [r.total_value, r.address_latitude])).toEqual(Array(3).fill([Infinity, -Infinity]));
    } finally {
      await su.close();
    }
  }, 60_000);
});
