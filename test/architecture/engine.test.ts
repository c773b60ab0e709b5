// source-only: reads the source tree, not the running service.
// The engine behind the store (issue 30): SQLite or PostgreSQL is the store's business (src/db,
// src/core). A file elsewhere does not import bun:sqlite, reach the driver under Drizzle
// (`$client`), take the SQLite client (`sqliteClientOf`) or branch on the engine
// (`ctx.tenants.engine === ...`): it asks the door (`clientOf(db).query(...)`, a cached statement on
// either engine; the store's reads) instead, and the storage's capabilities where its work differs
// (`ctx.tenants.filesPerCorp`: a database file per corporation; `ctx.tenants.sharedByNodes`: several
// app nodes share the storage).
//
// Two lists say who does today, each file with the uses it has:
// - TOOLS: files that work on the database files themselves, engine-specific by nature;
// - RATCHET: debt, mostly the hot paths other work is measuring now. The test fails when a file
//   gains a use, and also when a listed use is gone (shrink the list: it only ever shrinks).
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");

type Use = "bun:sqlite" | "$client" | "sqliteClientOf" | "engine branch";

const USES: [Use, RegExp][] = [
  ["bun:sqlite", /from\s+["']bun:sqlite["']/],
  ["$client", /\$client\b/],
  ["sqliteClientOf", /\bsqliteClientOf\b/],
  // `ctx.tenants.engine === "postgres"`, `engine !== "sqlite"`: not a backup manifest's own field.
  ["engine branch", /\btenants\.engine\s*[!=]==/],
];

/** Files on the database files themselves (offline copies, a stopped service's data), with why. */
const TOOLS: Record<string, { uses: Use[]; why: string }> = {
  "src/cli/migrate.ts": { uses: ["bun:sqlite", "$client"], why: "`corpadmin migrate --dry-run` reads copies of the files before the service starts" },
  "src/cli/sql.ts": { uses: ["bun:sqlite"], why: "`corpadmin sql`: the operator's own read-only statements over the files (issue 29)" },
  "src/modules/ops/backup.ts": { uses: ["bun:sqlite"], why: "checks and restores backup copies and moves data directories (offline files)" },
  "src/modules/system/doctor.ts": {
    uses: ["bun:sqlite", "$client", "engine branch"],
    why: "`corpadmin doctor` checks the files themselves (PRAGMA quick_check, WAL sizes), also while the service is stopped",
  },
};

/** Debt, to move behind the door; only ever shrinks (empty since the isp, metric, webhook, QR code and start-up uses moved). */
const RATCHET: Record<string, Use[]> = {};

/** The kernel's storage: where the engine is chosen and spoken to. */
const isStore = (file: string) => file.startsWith("src/db/") || file.startsWith("src/core/");

function usesOf(text: string): Use[] {
  return USES.filter(([, re]) => re.test(text)).map(([use]) => use);
}

const files = [...new Bun.Glob("src/**/*.{ts,tsx}").scanSync(ROOT)].sort().filter((f) => !isStore(f));

describe("architecture: the engine behind the store (issue 30)", () => {
  test("outside src/db and src/core, no file speaks to the engine beyond the listed uses, and every listed use is still there", () => {
    const found: Record<string, Use[]> = {};
    for (const file of files) {
      const uses = usesOf(readFileSync(join(ROOT, file), "utf8"));
      if (uses.length) found[file] = uses;
    }
    const listed: Record<string, Use[]> = { ...RATCHET };
    for (const [file, tool] of Object.entries(TOOLS)) listed[file] = tool.uses;
    const sorted = (r: Record<string, Use[]>) => Object.fromEntries(Object.entries(r).sort(([a], [b]) => a.localeCompare(b)).map(([f, u]) => [f, [...u].sort()]));
    // A new entry: put it behind the door (clientOf(db).query, a store method). A vanished one:
    // delete it from RATCHET.
    expect(sorted(found)).toEqual(sorted(listed));
  });

  test("the detector sees each use (a planted case of each)", () => {
    expect(usesOf('import { Database } from "bun:sqlite";')).toEqual(["bun:sqlite"]);
    expect(usesOf("db.$client.prepare(q)")).toEqual(["$client"]);
    expect(usesOf("const c = sqliteClientOf(db);")).toEqual(["sqliteClientOf"]);
    expect(usesOf('if (ctx.tenants.engine === "postgres") return;')).toEqual(["engine branch"]);
    expect(usesOf('if (manifest.engine === "pg") return; clientOf(db).query("SELECT 1")')).toEqual([]);
  });
});
