// source-only: opens connections through src/db/sqlite.ts directly.
// The pragmas openSqlite gives a connection (docs/architecture.md, "Corporation files").
// SQLite only (not in test/pg-backend.txt): the pragmas of SQLite's own connections.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { forgetStatements, openSqlite } from "../../src/db/sqlite";

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

  test("a writer's query() keeps more statements than bun:sqlite's 20, by SQL text, until forgetStatements", () => {
    const path = join(dir, "b.db");
    const writer = openSqlite(path, { statements: 200 });
    const reader = openSqlite(path, { readonly: true, statements: 200 });
    try {
      const texts = Array.from({ length: 60 }, (_, i) => `SELECT ${i} AS n`);
      const first = texts.map((q) => writer.query(q));
      expect(texts.map((q) => writer.query(q)).every((s, i) => s === first[i])).toBe(true);
      expect(writer.query(texts[7]!).get()).toEqual({ n: 7 });
      // The read connection keeps bun's own bound: the first texts were compiled again.
      const read = texts.map((q) => reader.query(q));
      expect(reader.query(texts[0]!) === read[0]).toBe(false);
      forgetStatements(writer);
      expect(writer.query(texts[0]!) === first[0]).toBe(false);
      expect(writer.query(texts[0]!).get()).toEqual({ n: 0 });
    } finally {
      reader.close();
      writer.close();
    }
  });
});
