// source-only: reads the source tree, not the running service.
// The engine behind the store (issue 30): SQLite or PostgreSQL is the store's business (src/db,
// src/core). A file elsewhere does not import bun:sqlite, reach the driver under Drizzle
// (`$client`), take the SQLite client (`sqliteClientOf`, `requireSqliteClient`) or branch on the engine
// (`ctx.tenants.engine === ...`): it asks the door (`clientOf(db).query(...)`, a cached statement on
// either engine; the store's reads) instead, and the storage's capabilities where its work differs
// (`ctx.tenants.filesPerCorp`: a database file per corporation; `ctx.tenants.sharedByNodes`: several
// app nodes share the storage).
// The offline tools (backups and restores, `migrate --dry-run`, `corpadmin sql`, the doctor's file
// checks) work on the database files through src/db/files.ts. No file is exempt: the test fails
// on any use outside src/db and src/core.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");

type Use = "bun:sqlite" | "$client" | "sqliteClientOf" | "engine branch";

const USES: [Use, RegExp][] = [
  // The driver, or Drizzle over it.
  ["bun:sqlite", /from\s+["'](?:bun:sqlite|drizzle-orm\/bun-sqlite)["']/],
  ["$client", /\$client\b/],
  ["sqliteClientOf", /\b(?:sqliteClientOf|requireSqliteClient)\b/],
  // `ctx.tenants.engine === "postgres"`, `engine !== "sqlite"`: not a backup manifest's own field.
  ["engine branch", /\btenants\.engine\s*[!=]==/],
];

/** The kernel's storage: where the engine is chosen and spoken to. */
const isStore = (file: string) => file.startsWith("src/db/") || file.startsWith("src/core/");

function usesOf(text: string): Use[] {
  return USES.filter(([, re]) => re.test(text)).map(([use]) => use);
}

const files = [...new Bun.Glob("src/**/*.{ts,tsx}").scanSync(ROOT)].sort().filter((f) => !isStore(f));

describe("architecture: the engine behind the store (issue 30)", () => {
  test("outside src/db and src/core, no file speaks to the engine", () => {
    const found: Record<string, Use[]> = {};
    for (const file of files) {
      const uses = usesOf(readFileSync(join(ROOT, file), "utf8"));
      if (uses.length) found[file] = uses;
    }
    // A file here: put what it needs behind the door (clientOf(db).query, a store method, a
    // capability of ctx.tenants) or, for work on the files themselves, src/db/files.ts.
    expect(found).toEqual({});
  });

  test("the detector sees each use (a planted case of each)", () => {
    expect(usesOf('import { Database } from "bun:sqlite";')).toEqual(["bun:sqlite"]);
    expect(usesOf('import { drizzle } from "drizzle-orm/bun-sqlite";')).toEqual(["bun:sqlite"]);
    expect(usesOf("db.$client.prepare(q)")).toEqual(["$client"]);
    expect(usesOf("const c = sqliteClientOf(db);")).toEqual(["sqliteClientOf"]);
    expect(usesOf("migrationStatus(requireSqliteClient(db), m)")).toEqual(["sqliteClientOf"]);
    expect(usesOf('if (ctx.tenants.engine === "postgres") return;')).toEqual(["engine branch"]);
    expect(usesOf('if (manifest.engine === "pg") return; clientOf(db).query("SELECT 1")')).toEqual([]);
  });
});
