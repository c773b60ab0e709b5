// source-only: reads the source tree, not the running service.
// The store's rules, checked on the source (issue 16; docs/architecture.md, "Table ownership"):
// - `bun:sqlite` is imported only under src/db/;
// - a table's Drizzle object is imported, and its name written in SQL, only by its owner;
// - `$client` (raw statements) appears only under src/db/, in the kernel and in owners' service
//   files, never in route files (index.ts, routes-*.ts) or schema files (model.ts);
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
  corp_members: "modules/corp",
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
  notes: "modules/core",
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
};

/**
 * Deliberate reads of another module's tables, each with its reason (the architecture page lists
 * them). Read-only: no exception allows a write.
 */
const READ_EXCEPTIONS: { file: string; tables: string[]; why: string }[] = [
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

/**
 * Files that open SQLite files themselves, outside the store, with why: they work on files that no
 * door serves (offline copies, or the data directory of a service that is not running).
 */
const FILE_TOOLS: Record<string, string> = {
  "modules/ops/backup.ts": "checks and restores backup copies and moves data directories (offline files, engine-specific by nature)",
  "cli/migrate.ts": "`corpadmin migrate --dry-run` reads copies of the databases before the service starts",
};

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

/** Table names written in SQL in the file's string and template literals. */
function sqlTables(text: string, known: Set<string>): Set<string> {
  const found = new Set<string>();
  for (const lit of text.matchAll(/`[^`]*`|"(?:[^"\\\n]|\\.)*"/g)) {
    // Upper-case keywords, as this code base writes SQL (prose in messages says "from products").
    for (const m of lit[0].matchAll(/\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+(\w+)/g)) {
      if (known.has(m[1])) found.add(m[1]);
    }
  }
  return found;
}

const files = walk(SRC).filter((f) => !f.endsWith(".generated.ts"));
const tables = drizzleTables();
/** Tables without a Drizzle object, known by name: the search indexes (`qr_codes_fts` by its prefix). */
const SQL_ONLY = ["persons_fts", "contracts_fts", "cities_fts", "products_fts", "qr_codes_fts"];
const sqlNames = new Set([...tables.values(), ...SQL_ONLY]);

describe("architecture: table ownership (issue 16)", () => {
  test("every table has an owner in this test's map", () => {
    expect([...sqlNames].filter((name) => ownerOf(name) === undefined)).toEqual([]);
  });

  test("bun:sqlite is imported only under src/db/", () => {
    const offenders = files.filter((f) => areaOf(f) !== "db" && !(relative(SRC, f) in FILE_TOOLS) && /from "bun:sqlite"/.test(readFileSync(f, "utf8")));
    expect(offenders.map((f) => relative(ROOT, f))).toEqual([]);
  });

  test("a table's Drizzle object is imported, and its name written in SQL, only by its owner", () => {
    const offenders: string[] = [];
    for (const file of files) {
      const area = areaOf(file);
      if (area === "db") continue;
      const text = readFileSync(file, "utf8");
      const rel = relative(SRC, file);
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
      if (area === "db" || area === "core" || relative(SRC, f) in FILE_TOOLS) return false;
      if (!/\$client/.test(readFileSync(f, "utf8"))) return false;
      const name = relative(SRC, f).split("/").pop()!;
      const owns = Object.values(OWNERS).includes(area) || ["modules/isp", "modules/qrcode"].includes(area);
      return !area.startsWith("modules/") || !owns || name === "index.ts" || name === "model.ts" || name.startsWith("routes-");
    });
    expect(offenders.map((f) => relative(ROOT, f))).toEqual([]);
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
