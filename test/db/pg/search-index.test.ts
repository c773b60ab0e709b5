// Cluster mode's person search and pg_trgm (issue 35): where the extension exists and the app's
// role may create it, the migrator makes the trigram GIN indexes, and ?q uses them once a
// superuser declared the condition's functions LEAKPROOF (row-level security); where the role may
// not create it, nothing fails, the same searches answer the same persons by a scan, and
// `GET /api/system/doctor` says which (check "search-index").
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { FOLD_FUNCTION, FOLD_LANGUAGE, LEAKPROOF_SQL, TRIGRAM_INDEXES } from "../../../src/db/pg/migrate";
import { ADMIN, logIn, makeApp, startAndLogin, type TestApp } from "../../support/helpers";
import { throwawayPostgres } from "../../support/postgres";
import { waitFor } from "../../support/wait";

const pg = await throwawayPostgres();

const PERSONS = [
  { name: "João da Silva", doc_identity: "123.456.789-01" },
  { name: "MARIA SOUZA", display_name: "Mária" },
  { name: "Ana Lima", display_name: "Aninha Silvã" },
  { name: "Pedro Costa", doc_identity: "987.654.321-00" },
];

/** The persons each ?q finds (by name), the same with and without the indexes. */
const SEARCHES: [string, string[]][] = [
  ["silva", ["Ana Lima", "João da Silva"]],
  ["JOAO", ["João da Silva"]],
  ["mária souza", ["MARIA SOUZA"]],
  ["li", ["Ana Lima"]],
  ["654.321", ["Pedro Costa"]],
  ["nobody", []],
];

/** 20,000 more persons none of the searches finds, copies of one with other ids and names, as a superuser. */
async function fill(su: SQL) {
  await su.unsafe(`INSERT INTO persons SELECT (jsonb_populate_record(p, jsonb_build_object('id', gen_random_uuid()::text, 'name', 'Person ' || g, 'display_name', null, 'doc_identity', null))).*
    FROM persons p, generate_series(1, 20000) g WHERE p.id = (SELECT min(id) FROM persons); ANALYZE persons`);
}

async function searchesAnswer(t: TestApp, token: string, su: SQL) {
  for (const p of PERSONS) expect((await t.req("POST", "/api/person", { token, body: p })).status).toBe(200);
  await fill(su);
  for (const [q, names] of SEARCHES) {
    const res = await t.req("GET", `/api/person?q=${encodeURIComponent(q)}`, { token });
    expect(res.status).toBe(200);
    expect({ q, names: (res.body.items as { name: string }[]).map((p) => p.name).sort() }).toEqual({ q, names });
    expect(res.body.total).toBe(names.length);
  }
}

async function doctorCheck(t: TestApp, token: string) {
  const res = await t.req("GET", "/api/system/doctor", { token });
  expect(res.status).toBe(200);
  return (res.body.checks as { name: string; status: string; detail: string; fix: string | null }[]).find((c) => c.name === "search-index")!;
}

/** An app over the server's database `name` (made, then `prepare`d as its superuser), with that superuser's connection and the admin's token. */
function appOver(name: string, prepare?: (su: SQL) => Promise<unknown>) {
  const db = {} as { t: TestApp; su: SQL; token: string; appUrl: string };
  beforeAll(async () => {
    const { url, appUrl } = await pg.createDatabase(name);
    db.appUrl = appUrl;
    db.su = pg.connect(url, 1);
    await prepare?.(db.su);
    db.t = await makeApp({ env: { CORPADMIN_DATABASE_URL: appUrl } });
    db.token = (await startAndLogin(db.t)).token;
  }, 60_000);
  afterAll(() => db.t?.close());
  return db;
}

describe("pg_trgm available to the app's role", () => {
  const db = appOver("with_trgm");

  test("the migrator creates pg_trgm and the trigram indexes; doctor asks a superuser for LEAKPROOF, then says ok", async () => {
    const [ext] = await db.su`SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'pg_trgm'`;
    expect(ext.n).toBe(1);
    const idx = await db.su`SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE tablename = 'persons' AND indexdef LIKE '%gin_trgm_ops%' ORDER BY 1`;
    expect(idx.map((r: { name: string }) => r.name)).toEqual(TRIGRAM_INDEXES.map((i) => i.name).sort());
    // Row-level security keeps the role's searches off the indexes until a superuser declares
    // the condition's functions LEAKPROOF: the check says so, and what to run.
    const before = await doctorCheck(db.t, db.token);
    expect(before).toMatchObject({ status: "warn", detail: expect.stringContaining("row-level security") });
    expect(before.fix).toContain(LEAKPROOF_SQL);
    await db.su.unsafe(LEAKPROOF_SQL);
    expect(await doctorCheck(db.t, db.token)).toMatchObject({ status: "ok", fix: null, detail: expect.stringContaining("pg_trgm is installed") });
  });

  test("GET /api/person?q= answers through the indexes", async () => {
    const scans = async () => Number((await db.su`SELECT coalesce(sum(idx_scan), 0)::int AS n FROM pg_stat_user_indexes WHERE indexrelname LIKE 'persons_%_trgm'`)[0].n);
    const before = await scans();
    await searchesAnswer(db.t, db.token, db.su);
    // The statistics reach the view within a second or so of the searches' transactions.
    await waitFor("the trigram indexes to be scanned", async () => (await scans()) > before);
  });
});

describe("pg_trgm not permitted to the app's role", () => {
  // A DBA made what the app needs and took CREATE on the database from its role: the app may
  // create tables in its schema, but no extension.
  const db = appOver("without_trgm", (su) => su.unsafe("CREATE EXTENSION unaccent; CREATE SCHEMA drizzle AUTHORIZATION corpadmin; REVOKE CREATE ON DATABASE without_trgm FROM corpadmin"));

  test("the app starts without the indexes; doctor warns and says how to have them", async () => {
    const [ext] = await db.su`SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'pg_trgm'`;
    expect(ext.n).toBe(0);
    const [idx] = await db.su`SELECT count(*)::int AS n FROM pg_indexes WHERE indexdef LIKE '%gin_trgm_ops%'`;
    expect(idx.n).toBe(0);
    const check = await doctorCheck(db.t, db.token);
    expect(check).toMatchObject({ status: "warn", detail: expect.stringContaining("not installed") });
    expect(check.fix).toContain("CREATE EXTENSION pg_trgm");
  });

  test("GET /api/person?q= answers the same persons by a scan", async () => {
    await searchesAnswer(db.t, db.token, db.su);
  });
});

describe("an installation whose fold is the SQL function of before", () => {
  const db = appOver("fold_of_before");
  const OLD_FOLD = `CREATE OR REPLACE FUNCTION ${FOLD_FUNCTION}(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT public.unaccent('public.unaccent'::regdictionary, $1) $$`;
  const fold = async () => (await db.su`SELECT l.lanname AS language, p.proleakproof AS leakproof FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.proname = ${FOLD_FUNCTION}`)[0];
  const files = async () => (await db.su`SELECT relname, relfilenode FROM pg_class WHERE relname LIKE 'persons_%_trgm' ORDER BY 1`).map((r: { relname: string; relfilenode: number }) => `${r.relname} ${r.relfilenode}`);
  async function restart() {
    await db.t.close();
    db.t = await makeApp({ env: { CORPADMIN_DATABASE_URL: db.appUrl } });
    db.token = await logIn(db.t, "acme", ADMIN.login, ADMIN.password);
  }

  test("the next start replaces it with PL/pgSQL, the trigram indexes kept as they are (same results: no rebuild); searches answer the same", async () => {
    expect(await fold()).toEqual({ language: FOLD_LANGUAGE, leakproof: false });
    await db.su.unsafe(OLD_FOLD);
    expect((await fold()).language).toBe("sql");
    const before = await files();
    expect(before).toHaveLength(TRIGRAM_INDEXES.length);
    await restart();
    expect(await fold()).toEqual({ language: FOLD_LANGUAGE, leakproof: false });
    expect(await files()).toEqual(before);
    await searchesAnswer(db.t, db.token, db.su);
  }, 60_000);

  test("one a superuser declared LEAKPROOF is left as it is (the role may not declare it again)", async () => {
    await db.su.unsafe(`${OLD_FOLD}; ${LEAKPROOF_SQL}`);
    await restart();
    expect(await fold()).toEqual({ language: "sql", leakproof: true });
  }, 60_000);
});
