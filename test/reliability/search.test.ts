// ?q through the FTS5 trigram indexes of persons, contracts, cities, products and QR codes
// (migrations/tenant/0010_search_fts.sql; docs/architecture.md, "Search"): substring as before,
// case- and accent-insensitive, the same rows, order and totals as the old LIKE scan on ASCII text.
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "bun:test";
import { contractBody } from "../support/contract-body";
import { makeApp, startAndLogin, openApp } from "../support/helpers";
import { testSqliteOnly } from "../support/backend";

const { t, admin } = await openApp();

async function ok(method: string, path: string, body?: unknown) {
  const res = await admin.req(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.body;
}
/** The `field` of every item ?q finds (one page of 500). */
async function found(list: string, q: string, field = "name"): Promise<string[]> {
  const res = await admin.req("GET", `${list}?q=${encodeURIComponent(q)}&limit=500`);
  expect(res.status).toBe(200);
  return res.body.items.map((i: any) => i[field]).sort();
}

describe("SQLite inside Bun", () => {
  test("has FTS5 with the trigram tokenizer and remove_diacritics (what the search indexes use)", () => {
    const db = new Database(":memory:");
    try {
      db.run("CREATE VIRTUAL TABLE f USING fts5(a, content='', contentless_delete=1, tokenize='trigram remove_diacritics 2')");
      db.run("INSERT INTO f(rowid, a) VALUES (1, 'JOÃO DA CONCEIÇÃO'), (2, 'joana')");
      const match = (q: string) => db.query("SELECT rowid AS r FROM f WHERE f MATCH ?").all(q).map((r: any) => r.r);
      expect(match('"joao"')).toEqual([1]);
      expect(match('"Conceicao"')).toEqual([1]);
      expect(match('"jo"')).toEqual([]); // under three characters a trigram index matches nothing
      db.run("DELETE FROM f WHERE rowid = 1");
      expect(match('"joao"')).toEqual([]);
    } finally {
      db.close();
    }
  });

  test("keeps the rowids of a table with a text primary key through VACUUM INTO (backups), which the indexes are keyed by", () => {
    const dir = mkdtempSync(join(tmpdir(), "corpadmin-rowids-"));
    const db = new Database(":memory:");
    try {
      db.run("CREATE TABLE p (id TEXT PRIMARY KEY, name TEXT)");
      for (let i = 0; i < 500; i++) db.run("INSERT INTO p VALUES (?, ?)", [crypto.randomUUID(), `n${i}`]);
      db.run("DELETE FROM p WHERE name LIKE 'n1%'");
      db.run("INSERT INTO p VALUES ('late', 'late')");
      const rowids = (d: Database) => d.query("SELECT rowid AS r, id FROM p ORDER BY id").all();
      db.run(`VACUUM INTO '${join(dir, "copy.db")}'`);
      const copy = new Database(join(dir, "copy.db"));
      expect(rowids(copy)).toEqual(rowids(db));
      copy.close();
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("GET /api/person: ?q over name, display_name and doc_identity", () => {
  test("is accent- and case-insensitive both ways", async () => {
    for (const name of ["João da Conceição", "JOAO PEDRO", "maria joão", "Joana Souza"]) await ok("POST", "/api/person", { name });
    const joaos = ["JOAO PEDRO", "João da Conceição", "maria joão"];
    expect(await found("/api/person", "Joao")).toEqual(joaos);
    expect(await found("/api/person", "JOÃO")).toEqual(joaos);
    expect(await found("/api/person", "joão")).toEqual(joaos);
    expect(await found("/api/person", "conceicao")).toEqual(["João da Conceição"]);
    expect(await found("/api/person", "CONCEIÇÃO")).toEqual(["João da Conceição"]);
    // Two words: both, anywhere in the row.
    expect(await found("/api/person", "ão d")).toEqual(["JOAO PEDRO", "João da Conceição"]);
  });

  test("queries under three characters still search (by scan, case- and accent-insensitive too)", async () => {
    await ok("POST", "/api/person", { name: "Zé Zuza" });
    expect(await found("/api/person", "zé")).toEqual(["Zé Zuza"]);
    expect(await found("/api/person", "ZE")).toEqual(["Zé Zuza"]);
    expect(await found("/api/person", "ZU")).toEqual(["Zé Zuza"]);
    expect(await found("/api/person", "Ç")).toEqual(["João da Conceição"]);
  });

  test("takes % and _ literally at any length", async () => {
    for (const name of ["Promo 50%_off", "Promo 50 off", "Promo 5000ff"]) await ok("POST", "/api/person", { name });
    expect(await found("/api/person", "50%")).toEqual(["Promo 50%_off"]);
    expect(await found("/api/person", "%_o")).toEqual(["Promo 50%_off"]);
    expect(await found("/api/person", "_of")).toEqual(["Promo 50%_off"]);
    expect(await found("/api/person", "_")).toEqual(["Promo 50%_off"]);
    expect(await found("/api/person", '"50')).toEqual([]);
  });

  test("reads FTS5 query syntax as plain text, and odd input is no error", async () => {
    for (const name of ['name:abc OR "x"', "NEAR(abc def)", "abc*"]) await ok("POST", "/api/person", { name });
    expect(await found("/api/person", "name:abc")).toEqual(['name:abc OR "x"']);
    expect(await found("/api/person", 'OR "x"')).toEqual(['name:abc OR "x"']);
    expect(await found("/api/person", "NEAR(")).toEqual(["NEAR(abc def)"]);
    expect(await found("/api/person", "abc*")).toEqual(["abc*"]);
    const odd = ['"', '""""', 'a"b', "\u0000ab", "^abc", "-abc", "abc:", "{name}:abc", "💡💡💡"].map(encodeURIComponent);
    // Bytes that are not UTF-8: a surrogate's encoding, a stray byte.
    for (const q of [...odd, "%ED%A0%80abc", "%FFabc"]) {
      const res = await admin.req("GET", `/api/person?q=${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 200 });
    }
  });

  test("follows creates, updates and deletes", async () => {
    const p = await ok("POST", "/api/person", { name: "Xavier Quixadá", doc_identity: "777.888.999-00" });
    expect(await found("/api/person", "quixada")).toEqual(["Xavier Quixadá"]);
    expect(await found("/api/person", "888.9")).toEqual(["Xavier Quixadá"]);
    await ok("PUT", `/api/person/${p.id}`, { name: "Xavier Pacatuba", doc_identity: "111.222.333-44" });
    expect(await found("/api/person", "quixada")).toEqual([]);
    expect(await found("/api/person", "888.9")).toEqual([]);
    expect(await found("/api/person", "pacatu")).toEqual(["Xavier Pacatuba"]);
    expect(await found("/api/person", "222.3")).toEqual(["Xavier Pacatuba"]);
    await ok("DELETE", `/api/person/${p.id}`);
    expect(await found("/api/person", "pacatu")).toEqual([]);
  });
});

describe("GET /api/person: ?q results equal a LIKE scan of every word on a seeded ASCII set", () => {
  const FIRST = ["Maria", "JOAO", "ana", "Pedro", "Paula", "LUCAS", "Julia", "Marcos"];
  const LAST = ["Silva", "SOUZA", "lima", "Costa", "Pereira", "Oliveira", "Santos", "Almeida"];
  let scanCorp: string;
  let token: string;
  beforeAll(async () => {
    // Its own corporation, so that the rows of the tests above stay out of the comparison.
    const corp = await ok("POST", "/api/corp", { auth_name: "scan-set", company_name: "Scan Set" });
    scanCorp = corp.id;
    const login = await t.req("POST", "/api/login", { body: { corp: "scan-set", login: "admin", password: "admin-password-1" } });
    token = login.body.access_token;
    for (let i = 0; i < 240; i++) {
      const name = `${FIRST[i % 8]} ${LAST[(i >> 3) % 8]} ${i}`;
      const body = { name, display_name: i % 3 ? name.toLowerCase() : null, doc_identity: i % 4 ? String(100_000 + i * 7) : null, corporate: i % 5 === 0 };
      const res = await t.req("POST", "/api/person", { token, body });
      expect(res.status).toBe(200);
    }
  });

  /**
   * What a LIKE scan answers, read from the file; ORDER BY as the list writes it: every word of q
   * in one of the three columns, or (a word of digits and punctuation) in the document's digits.
   */
  function scan(q: string, order: string, corporate: boolean | undefined, limit: number, offset: number) {
    const db = t.sql(scanCorp);
    const words = [...new Set(q.split(/\s+/).filter((w) => w))];
    const params: string[] = [];
    const conds = words.map((w) => {
      params.push(`%${w.replace(/[\\%_]/g, "\\$&")}%`);
      const n = params.length;
      const cols = ["name", "display_name", "doc_identity"].map((c) => `${c} LIKE ?${n} ESCAPE '\\'`);
      if (/^[^A-Za-z\s]+$/.test(w) && w.replace(/[^0-9]/g, "").length >= 6) {
        params.push(`%${w.replace(/[^0-9]/g, "")}%`);
        cols.push(`replace(replace(replace(replace(doc_identity, '.', ''), '-', ''), '/', ''), ' ', '') LIKE ?${params.length}`);
      }
      return `(${cols.join(" OR ")})`;
    });
    if (corporate !== undefined) conds.push(`corporate = ${corporate ? 1 : 0}`);
    const where = conds.length ? `WHERE ${conds.join(" AND ")}` : "";
    const total = (db.query(`SELECT count(*) AS n FROM persons ${where}`).get(...params) as { n: number }).n;
    const ids = db.query(`SELECT id FROM persons ${where} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`).all(...params).map((r: any) => r.id);
    return { total, ids };
  }

  test("same rows, order, paging and total, alone and with a filter and a sort", async () => {
    const queries = ["silva", "SILVA", "ilva 13", "a s", "ouza 2", "1000", "100", "na", "a", "joao lima", "lima joao", "xyz", "   ", "maria silva 0", "1.0.0-0", "10.0", "silva 100", "100.01-4", "1001.05 a"];
    const sorts: [string | undefined, string][] = [[undefined, "id"], ["-id", "id DESC"], ["name", "name, id"], ["-doc_identity", "doc_identity DESC, id"]];
    const pages: [number, number][] = [[1, 50], [2, 7], [3, 100], [1, 1]];
    let compared = 0;
    for (const q of queries) {
      for (const [sort, order] of sorts) {
        for (const [page, limit] of pages) {
          for (const corporate of [undefined, true]) {
            const qs = new URLSearchParams({ q, page: String(page), limit: String(limit) });
            if (sort) qs.set("sort", sort);
            if (corporate !== undefined) qs.set("corporate", String(corporate));
            const res = await t.req("GET", `/api/person?${qs}`, { token });
            expect(res.status).toBe(200);
            const want = scan(q, order, corporate, limit, (page - 1) * limit);
            expect({ q: qs.toString(), total: res.body.total, ids: res.body.items.map((p: any) => p.id) }).toEqual({ q: qs.toString(), ...want });
            compared++;
          }
        }
      }
    }
    expect(compared).toBe(queries.length * sorts.length * pages.length * 2);
    // The set is large enough that a common query matches many rows and a narrow one few.
    expect(scan("silva", "id", undefined, 500, 0).total).toBe(32);
    expect(scan("ilva 13", "id", undefined, 500, 0).total).toBeLessThan(20);
    // Hundreds of queries, each checked against a scan: ≈ 60 s on PostgreSQL while the other CI lanes run.
  }, 240_000);
});

describe("POST /api/contract/create/externalapp/name/{externalAppName}; GET /api/contract, /api/person, /api/city: the indexes follow the upsert", () => {
  test("rows the upsert creates and changes are found by their new text only", async () => {
    await ok("POST", "/api/externalapp", { name: "erp" });
    const body = contractBody(4242);
    const c = await ok("POST", "/api/contract/create/externalapp/name/erp", {
      ...body,
      number: "CTR-Ñandú-4242",
      customer: { ...body.customer, name: "Cliente Araçá", display_name: null },
      billing_customer: { ...body.billing_customer, name: "Cliente Araçá", display_name: null },
      address: { ...body.address, city: { identity: "city-itau", name: "Itaú de Minas", state: "MG", country: "BR" } },
    });
    expect(await found("/api/contract", "nandu", "number")).toEqual(["CTR-Ñandú-4242"]);
    expect(await found("/api/contract", "-4242", "number")).toEqual(["CTR-Ñandú-4242"]);
    expect(await found("/api/person", "araca")).toEqual(["Cliente Araçá"]);
    expect(await found("/api/city", "itau")).toEqual(["Itaú de Minas"]);
    await ok("POST", "/api/contract/create/externalapp/name/erp", {
      ...body,
      number: "CTR-Jaboticaba-4242",
      customer: { ...body.customer, name: "Cliente Buriti", display_name: null },
      billing_customer: { ...body.billing_customer, name: "Cliente Buriti", display_name: null },
      address: { ...body.address, city: { identity: "city-itau", name: "Itaú", state: "MG", country: "BR" } },
    });
    // The old number is gone, but the PPPoE username the insert gave it (the number then) stays:
    // the upsert never changes the connection settings, and ?q finds by username too.
    expect(c.config.username).toBe("CTR-Ñandú-4242");
    expect(await found("/api/contract", "nandu", "number")).toEqual(["CTR-Jaboticaba-4242"]);
    expect(await found("/api/contract", "jabotic", "number")).toEqual(["CTR-Jaboticaba-4242"]);
    expect(await found("/api/contract", "araca", "number")).toEqual([]);
    expect(await found("/api/contract", "buriti", "number")).toEqual(["CTR-Jaboticaba-4242"]);
    expect(await found("/api/person", "araca")).toEqual([]);
    expect(await found("/api/person", "buriti")).toEqual(["Cliente Buriti"]);
    expect(await found("/api/city", "itau de")).toEqual([]);
    expect((await admin.req("GET", `/api/contract?q=jabotic&id=${c.id}`)).body.total).toBe(1);
  });

  test("an upsert that fails rolls its index entries back with its rows, beside one that commits in the same group", async () => {
    const body = (i: number, number: string, name: string) => {
      const b = contractBody(i);
      return { ...b, number, customer: { ...b.customer, name, display_name: null }, billing_customer: { ...b.billing_customer, name, display_name: null } };
    };
    const [good, bad] = await Promise.all([
      admin.req("POST", "/api/contract/create/externalapp/name/erp", body(5151, "CTR-5151", "Cliente Graviola")),
      // The number of the contract above (4242's): 409, after its customer was written.
      admin.req("POST", "/api/contract/create/externalapp/name/erp", body(5252, "CTR-Jaboticaba-4242", "Cliente Pitomba")),
    ]);
    expect([good.status, bad.status]).toEqual([200, 409]);
    expect(await found("/api/person", "graviola")).toEqual(["Cliente Graviola"]);
    expect(await found("/api/person", "pitomba")).toEqual([]);
    expect(await found("/api/contract", "5252", "number")).toEqual([]);
  });
});

describe("POST /api/contract/create/externalapp/name/{externalAppName}: the entries a grouped write indexes at its end", () => {
  // SQLite-only: the notes are the SQLite door's (PostgreSQL has no FTS5 index).
  testSqliteOnly("leave no note or marker behind, so the file's other writers index at once", async () => {
    await ok("POST", "/api/externalapp", { name: "erp-notes" });
    const res = await Promise.all([6161, 6262].map((i) => admin.req("POST", "/api/contract/create/externalapp/name/erp-notes", contractBody(i))));
    expect(res.map((r) => r.status)).toEqual([200, 200]);
    const db = t.sqlWrite(admin.corpId);
    expect(db.query("SELECT count(*) AS n FROM search_pending").get()).toEqual({ n: 0 });
    // A writer outside the door (a tool, the QR writer thread) sees no marker: its trigger indexes.
    db.run("INSERT INTO persons (id, name, corporate, created_at, updated_at) VALUES ('p-outside', 'Cliente Cambuci', 0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')");
    expect(await found("/api/person", "cambuci")).toEqual(["Cliente Cambuci"]);
    expect(await found("/api/contract", "6161", "number")).toEqual(["C-6161"]);
  });
});

describe("GET /api/city, /api/product, /api/qrcode: ?q through their indexes", () => {
  test("cities by name and state", async () => {
    const city = await ok("POST", "/api/city", { name: "São Gonçalo", state: "RJ", country: "BR" });
    expect(await found("/api/city", "sao gon")).toEqual(["São Gonçalo"]);
    await ok("PUT", `/api/city/${city.id}`, { name: "São Gonçalo", state: "Piauí", country: "BR" });
    expect(await found("/api/city", "PIAUI")).toEqual(["São Gonçalo"]);
    await ok("DELETE", `/api/city/${city.id}`);
    expect(await found("/api/city", "sao gon")).toEqual([]);
  });

  test("products by identity and name", async () => {
    const p = await ok("POST", "/api/product", { identity: "FIBRA-ÓPTICA-1G", name: "Fibra Óptica 1 Giga" });
    expect(await found("/api/product", "optica-1")).toEqual(["Fibra Óptica 1 Giga"]);
    expect(await found("/api/product", "OPTICA 1")).toEqual(["Fibra Óptica 1 Giga"]);
    await ok("PUT", `/api/product/${p.id}`, { identity: "RADIO-5G", name: "Rádio 5 GHz" });
    expect(await found("/api/product", "optica")).toEqual([]);
    expect(await found("/api/product", "radio")).toEqual(["Rádio 5 GHz"]);
    await ok("DELETE", `/api/product/${p.id}`);
    expect(await found("/api/product", "radio")).toEqual([]);
  });

  test("QR codes by name, content, target and slug", async () => {
    const stat = await ok("POST", "/api/qrcode", { name: "Cardápio", kind: "static", content: "Promoção de verão" });
    const dyn = await ok("POST", "/api/qrcode", { name: "Folheto", kind: "dynamic", target: "https://example.com/inverno", slug: "folheto-sul" });
    expect(await found("/api/qrcode", "cardapio")).toEqual(["Cardápio"]);
    expect(await found("/api/qrcode", "PROMOCAO")).toEqual(["Cardápio"]);
    expect(await found("/api/qrcode", "inverno")).toEqual(["Folheto"]);
    expect(await found("/api/qrcode", "to-su")).toEqual(["Folheto"]);
    // The export joins campaigns and categories: the index condition names its table.
    const csv = await t.req("GET", "/api/qrcode/export?format=csv&q=promocao", { token: admin.token });
    expect(csv.status).toBe(200);
    expect(csv.text.trim().split("\n").map((l: string) => l.split(",")[1])).toEqual(["name", "Cardápio"]);
    await ok("PUT", `/api/qrcode/${dyn.id}`, { name: "Folheto", kind: "dynamic", target: "https://example.com/outono", slug: "folheto-sul" });
    expect(await found("/api/qrcode", "inverno")).toEqual([]);
    expect(await found("/api/qrcode", "outono")).toEqual(["Folheto"]);
    await ok("DELETE", `/api/qrcode/${stat.id}`);
    expect(await found("/api/qrcode", "cardapio")).toEqual([]);
  });
});

describe("GET /api/person: a corporation file from before the search indexes is indexed when it migrates", () => {
  // SQLite-only: FTS5 indexes and SQLite's migration of a corporation file.
  testSqliteOnly("the start-up migration builds the index from the rows already there", async () => {
    const old = await makeApp();
    const a = await startAndLogin(old);
    const res = await old.req("POST", "/api/person", { token: a.token, body: { name: "Antônio Brandão" } });
    expect(res.status).toBe(200);
    // Put the file back to the schema before this migration: no index tables, no triggers, the
    // migration not recorded.
    const db = old.sqlWrite(a.corpId);
    // 0018 noted the rows a grouped write indexes at its end (search_pending, a trigger more per
    // operation of persons, contracts and contract configs).
    for (const table of ["persons", "contracts", "contract_configs"]) for (const op of ["insert", "update", "delete"]) db.run(`DROP TRIGGER ${table}_fts_later_${op}`);
    db.run("DROP TABLE search_pending");
    for (const table of ["persons", "contracts", "cities", "products", "qr_codes"]) {
      for (const op of ["insert", "update", "delete"]) db.run(`DROP TRIGGER ${table}_fts_${op}`);
      db.run(`DROP TABLE ${table}_fts`);
    }
    // The migrations after it are undone too (a migration re-runs only when it is newer than the
    // newest recorded): 0011 keyed accounting records by their RADIUS session, 0012 indexed the
    // contracts' usernames (its triggers on contract_configs); a new tenant migration adds its undo here.
    for (const op of ["insert", "update", "delete"]) db.run(`DROP TRIGGER contract_configs_fts_${op}`);
    db.run("DROP INDEX isp_radius_accounting_session_record");
    db.run("ALTER TABLE isp_radius_accounting DROP COLUMN radius_session_id");
    db.run("CREATE UNIQUE INDEX isp_radius_accounting_record ON isp_radius_accounting (nas_id, session_id, status_type, session_time)");
    // 0013 kept the NAS's health on its row, 0014 added the history of changes, 0015 the usage.
    for (const column of ["last_accounting_at", "open_sessions", "quiet_after", "quiet_since"]) db.run(`ALTER TABLE isp_nas DROP COLUMN ${column}`);
    db.run("DROP TABLE history");
    // 0015 added the daily usage rollups.
    db.run("DROP TABLE isp_usage_daily");
    // 0016 added the monthly usage rollups.
    db.run("DROP TABLE isp_usage_monthly");
    // 0017 added the network policy, the contracts' network state and the fair-use settings.
    db.run("DROP TABLE isp_network_policy");
    db.run("DROP TABLE isp_contract_network");
    for (const column of ["allowance_gb", "throttle_max_upload", "throttle_max_download"]) db.run(`ALTER TABLE contract_configs DROP COLUMN ${column}`);
    // 0019 dropped the accounting records' indexes by user name and by contract (nothing read them).
    db.run("CREATE INDEX isp_radius_accounting_user ON isp_radius_accounting (username, received_at)");
    db.run("CREATE INDEX isp_radius_accounting_contract ON isp_radius_accounting (contract_id)");
    // Every migration from 0010 on is undone: only 0000-0009 stay recorded.
    db.run("DELETE FROM __drizzle_migrations WHERE rowid NOT IN (SELECT rowid FROM __drizzle_migrations ORDER BY created_at LIMIT 10)");
    expect(db.query("SELECT count(*) AS n FROM sqlite_master WHERE name LIKE '%_fts%'").get()).toEqual({ n: 0 });
    const version = (db.query("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n;
    old.sqlWrite().query("UPDATE corporations SET schema_version = ?1 WHERE id = ?2").run(version, a.corpId);
    await old.close(false);
    const t2 = await makeApp({ dir: old.dir });
    try {
      const login = await t2.req("POST", "/api/login", { body: { corp: "acme", login: "admin", password: "admin-password-1" } });
      const list = await t2.req("GET", "/api/person?q=antonio%20brandao", { token: login.body.access_token });
      expect(list.status, list.text).toBe(200);
      expect(list.body.items.map((p: any) => p.name)).toEqual(["Antônio Brandão"]);
    } finally {
      await t2.close();
    }
  });
});
