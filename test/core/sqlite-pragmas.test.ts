// source-only: opens connections through src/db/sqlite.ts directly.
// The pragmas openSqlite gives a connection (docs/architecture.md, "Corporation files").
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/db/sqlite";

const dir = mkdtempSync(join(tmpdir(), "corpadmin-pragmas-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("openSqlite: connection pragmas", () => {
  test("a writer keeps temp data (savepoint sub-journals of grouped writes) in memory; a read connection does not", () => {
    const path = join(dir, "a.db");
    const writer = openSqlite(path);
    const reader = openSqlite(path, { readonly: true });
    try {
      const tempStore = (db: typeof writer) => (db.query("PRAGMA temp_store").get() as { temp_store: number }).temp_store;
      expect(tempStore(writer)).toBe(2); // MEMORY
      expect(tempStore(reader)).toBe(0); // the build's default: files
      // A savepoint that rewrites pages the transaction dirtied before still rolls back alone.
      writer.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
      writer.run("BEGIN IMMEDIATE");
      for (let i = 0; i < 200; i++) writer.run("INSERT INTO t (v) VALUES (?1)", [`row ${i} ${"x".repeat(200)}`]);
      writer.run("SAVEPOINT s");
      writer.run("UPDATE t SET v = 'changed'");
      writer.run("ROLLBACK TO s");
      writer.run("RELEASE s");
      writer.run("COMMIT");
      expect(reader.query("SELECT count(*) AS n FROM t WHERE v = 'changed'").get()).toEqual({ n: 0 });
      expect(reader.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 200 });
    } finally {
      reader.close();
      writer.close();
    }
  });
});
