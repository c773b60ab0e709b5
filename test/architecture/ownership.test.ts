// source-only: reads the source tree, not the running service.
// The store's rules, checked on the source (issue 16; docs/architecture.md, "Table ownership"):
// - `bun:sqlite` is imported only under src/db/;
// - a table's Drizzle object is imported, and its name written in SQL, only by its owner;
// - `$client` (raw statements) appears only under src/db/, in the kernel and in owners' service
//   files, never in route files (any file that builds an Elysia instance, whatever its name) or
//   schema files (model.ts);
// - SQL is read case-insensitively, and a read exception is proven read-only (no INSERT, UPDATE,
//   DELETE or Drizzle insert/update/delete of the tables it may read).
// - the kernel (src/core) imports no module and nothing of HTTP.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const SRC = join(ROOT, "src");

/** Owner of each table: a folder under src/ (the kernel is `core`, modules are `modules/<area>`). */
const OWNERS: Record<string, string> = {
  sessions: "core",
  audit_log: "core",
  events: "core",
  history: "core",
  platform_history: "core",
  safe_ip_ranges: "modules/auth",
  external_identities: "modules/auth",
  remembered_devices: "modules/auth",
  login_failures: "modules/auth",
  rate_limit_windows: "modules/auth",
  users: "modules/user",
  password_reset_keys: "modules/user",
  corporations: "modules/corp",
  corp_members: "modules/membership",
  corp_services: "modules/corp",
  servers: "modules/server",
  services: "modules/catalog",
  features: "modules/catalog",
  actions: "modules/catalog",
  menus: "modules/catalog",
  workgroups: "modules/workgroup",
  workgroup_members: "modules/workgroup",
  workgroup_services: "modules/workgroup",
  workgroup_features: "modules/workgroup",
  notes: "modules/notepad",
  cities: "modules/city",
  persons: "modules/person",
  products: "modules/product",
  product_classifications: "modules/product",
  classifications: "modules/classification",
  contracts: "modules/contract",
  contract_configs: "modules/contract",
  contract_items: "modules/contract",
  contract_flags: "modules/contract",
  external_apps: "modules/externalapp",
  external_links: "modules/externalapp",
  webhooks: "modules/webhook",
  webhook_groups: "modules/webhook",
  webhook_deliveries: "modules/webhook",
  metrics: "modules/metric",
  metric_values: "modules/metric",
  settings: "core",
  // Search indexes (FTS5, migrations/tenant/0010_search_fts.sql): no Drizzle object, owned with
  // their table.
  persons_fts: "modules/person",
  contracts_fts: "modules/contract",
  cities_fts: "modules/city",
  products_fts: "modules/product",
  // The rows a grouped write indexes at its end (migrations/tenant/0018_search_pending.sql): the door's.
  search_pending: "db",
};

/**
 * Deliberate reads of another module's tables, each with its reason (the architecture page lists
 * them). Read-only: no exception allows a write.
 */
const READ_EXCEPTIONS: { file: string; tables: string[]; why: string }[] = [
  {
    file: "modules/membership/service.ts",
    tables: ["corporations", "corp_services"],
    why: "a member's corporations by name and whether a service is enabled: membership questions the identity modules ask below the corp module",
  },
  {
    file: "modules/workgroup/service.ts",
    tables: ["services", "features", "actions", "corp_services"],
    why: "the one permission query joins grants with the catalog and the corporation's enabled services",
  },
  {
    file: "modules/contract/service.ts",
    tables: ["persons", "cities", "classifications"],
    why: "the contract view (GET /api/contract/{id}, the hot read) is one statement that embeds its parties, their cities and its flags' names; through the owners it would be about seven statements",
  },
];

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** `core`, `modules/<area>`, `db`, `lib`, ... for a file under src/. */
function areaOf(file: string): string {
  const parts = relative(SRC, file).split("/");
  return parts[0] === "modules" ? `modules/${parts[1]}` : parts.length > 1 ? parts[0] : "";
}

/** Drizzle variable name → SQL table name, from the schema files. */
function drizzleTables(): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of [...walk(join(SRC, "db/platform")), ...walk(join(SRC, "db/tenant"))]) {
    for (const m of readFileSync(file, "utf8").matchAll(/export const (\w+) = sqliteTable\(\s*"(\w+)"/g)) out.set(m[1], m[2]);
  }
  return out;
}

const isp = (table: string) => (table.startsWith("isp_") ? "modules/isp" : table.startsWith("qr_") ? "modules/qrcode" : undefined);
const ownerOf = (table: string): string | undefined => OWNERS[table] ?? isp(table);

/** The string and template literals of a file that read as SQL (a statement keyword in them). */
function sqlLiterals(text: string): string[] {
  return [...text.matchAll(/`[^`]*`|"(?:[^"\\\n]|\\.)*"/g)]
    .map((m) => m[0])
    .filter((lit) => /\b(?:select\b[\s\S]*\bfrom|insert\s+(?:or\s+\w+\s+)?into|update\s+\w+\s+set|delete\s+from|(?:create|drop|alter)\s+(?:virtual\s+)?table|join\s+\w+)\b/i.test(lit));
}

/** Table names written in SQL in the file's string and template literals, in any letter case. */
function sqlTables(text: string, known: Set<string>): Set<string> {
  const found = new Set<string>();
  for (const lit of sqlLiterals(text)) {
    // SQL identifiers fold case: `UPDATE Persons` writes persons.
    for (const m of lit.matchAll(/\b(?:from|join|into|update|table)\s+(\w+)/gi)) {
      if (known.has(m[1].toLowerCase())) found.add(m[1].toLowerCase());
    }
  }
  return found;
}

/** Tables the file writes: SQL INSERT/UPDATE/DELETE in any letter case, or Drizzle's insert/update/delete of a table object. */
function writtenTables(text: string, known: Set<string>, drizzle: Map<string, string>): Set<string> {
  const found = new Set<string>();
  for (const lit of sqlLiterals(text)) {
    for (const m of lit.matchAll(/\b(?:insert\s+(?:or\s+\w+\s+)?into|update|delete\s+from)\s+(\w+)/gi)) {
      if (known.has(m[1].toLowerCase())) found.add(m[1].toLowerCase());
    }
  }
  for (const m of text.matchAll(/\.(?:insert|update|delete)\(\s*(\w+)\s*\)/g)) {
    const table = drizzle.get(m[1]);
    if (table) found.add(table);
  }
  return found;
}

/** A route file is one that builds an Elysia instance (its role), whatever the file is called. */
const isRouteFile = (text: string): boolean => /\bnew Elysia\b/.test(text);

const files = walk(SRC).filter((f) => !f.endsWith(".generated.ts"));
const tables = drizzleTables();
/** Tables without a Drizzle object, known by name: the search indexes (`qr_codes_fts` by its prefix). */
const SQL_ONLY = ["persons_fts", "contracts_fts", "cities_fts", "products_fts", "qr_codes_fts", "search_pending"];
const sqlNames = new Set([...tables.values(), ...SQL_ONLY]);

describe("architecture: table ownership (issue 16)", () => {
  test("every table has an owner in this test's map", () => {
    expect([...sqlNames].filter((name) => ownerOf(name) === undefined)).toEqual([]);
  });

  test("bun:sqlite is imported only under src/db/", () => {
    // The offline file tools too: they open files through src/db/files.ts.
    const offenders = files.filter((f) => areaOf(f) !== "db" && /from "bun:sqlite"/.test(readFileSync(f, "utf8")));
    expect(offenders.map((f) => relative(ROOT, f))).toEqual([]);
  });

  test("a table's Drizzle object is imported, and its name written in SQL, only by its owner", () => {
    const offenders: string[] = [];
    for (const file of files) {
      const area = areaOf(file);
      const rel = relative(SRC, file);
      // The storage itself: src/db, and the PostgreSQL store (src/core/pg: its bootstrap writes the
      // built-in server and services as db/bootstrap.ts does on SQLite, its doors check a corporation).
      if (area === "db" || rel.startsWith("core/pg/")) continue;
      const text = readFileSync(file, "utf8");
      const allowed = new Set(READ_EXCEPTIONS.filter((e) => e.file === rel).flatMap((e) => e.tables));
      const used = new Set<string>();
      for (const imp of text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+"[./]*db\/(?:platform|tenant)\/[\w-]+"/g)) {
        for (const name of imp[1].split(",").map((n) => n.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0])) {
          const table = tables.get(name);
          // A type-only import of the row type is not an access.
          if (table && !/import\s+type/.test(imp[0])) used.add(table);
        }
      }
      for (const table of sqlTables(text, sqlNames)) used.add(table);
      for (const table of used) {
        if (ownerOf(table) !== area && !allowed.has(table)) offenders.push(`${rel}: ${table} (owner ${ownerOf(table) || "none"})`);
      }
    }
    expect(offenders).toEqual([]);
  });

  test("raw statements ($client) only in src/db/, the kernel and owners' service files — never in routes or schemas", () => {
    const offenders = files.filter((f) => {
      const area = areaOf(f);
      if (area === "db" || area === "core") return false;
      if (!/\$client/.test(readFileSync(f, "utf8"))) return false;
      const text = readFileSync(f, "utf8");
      const name = relative(SRC, f).split("/").pop()!;
      const owns = Object.values(OWNERS).includes(area) || ["modules/isp", "modules/qrcode"].includes(area);
      return !area.startsWith("modules/") || !owns || isRouteFile(text) || name === "model.ts";
    });
    expect(offenders.map((f) => relative(ROOT, f))).toEqual([]);
  });

  test("a read exception is read-only: its file writes none of the other module's tables it may read", () => {
    const offenders: string[] = [];
    for (const e of READ_EXCEPTIONS) {
      const text = readFileSync(join(SRC, e.file), "utf8");
      for (const table of writtenTables(text, sqlNames, tables)) {
        if (e.tables.includes(table)) offenders.push(`${e.file} writes ${table}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  test("the checks see what they look for (each detector finds a planted case)", () => {
    // Guards against a detector that silently matches nothing: lower-case SQL, a write through an
    // exception, a route file not named index.ts.
    expect([...sqlTables("const q = `select id from persons where name = ?`;", sqlNames)]).toEqual(["persons"]);
    expect([...writtenTables("db.$client.run(`update persons set name = ?`);", sqlNames, tables)]).toEqual(["persons"]);
    expect([...writtenTables("await tx.update(persons).set({ name });", sqlNames, tables)]).toEqual(["persons"]);
    expect([...writtenTables("tx.$client.run(\"INSERT OR REPLACE INTO cities (id) VALUES (?)\");", sqlNames, tables)]).toEqual(["cities"]);
    // Identifiers in any case: `UPDATE Persons` is a write of persons.
    expect([...writtenTables('const q = "UPDATE Persons SET name = ?1";', sqlNames, tables)]).toEqual(["persons"]);
    expect([...sqlTables("const q = `SELECT id FROM CONTRACTS`;", sqlNames)]).toEqual(["contracts"]);
    expect(isRouteFile("export const nasRoutes = new Elysia({ prefix: \"/nas\" })")).toBe(true);
    // Prose is not SQL: an error message naming a table is not an access.
    expect([...sqlTables('throw new Error("The city is used by persons");', sqlNames)]).toEqual([]);
    expect([...sqlTables('detail: { summary: "Delete a classification (also from products)" }', sqlNames)]).toEqual([]);
  });

  test("the kernel (src/core) imports no module, no HTTP framework and nothing above it", () => {
    const offenders: string[] = [];
    for (const file of files.filter((f) => areaOf(f) === "core")) {
      for (const m of readFileSync(file, "utf8").matchAll(/from\s+"([^"]+)"/g)) {
        const spec = m[1];
        if (/modules\/|\.\.\/app|\.\.\/cli|^elysia|^@elysiajs/.test(spec)) offenders.push(`${relative(SRC, file)} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
