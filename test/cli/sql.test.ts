// SQLite only (not in test/pg-backend.txt): `corpadmin sql` reads the embedded mode's files (cluster mode: refused, tested here too).
// Issue 29 defect 11: `corpadmin sql` (the binary in the binary pass) opens the platform database
// or a corporation's, FTS tables included, with the binary's own SQLite, read-only: one statement
// with -c (table or CSV), statements from standard input otherwise; a write fails and changes nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { serveCommand } from "../support/app-node";
import { sqliteOnly } from "../support/backend";
import { appChecksum } from "../support/checksum";
import { makeApp, startAndLogin, type TestApp } from "../support/helpers";
import { splitStatements } from "../../src/cli/sql";

const CORPADMIN = serveCommand().slice(0, -1);

sqliteOnly("corpadmin sql", () => {
  let t: TestApp;
  let admin: { token: string; corpId: string };

  function sql(args: string[], stdin?: string) {
    const p = Bun.spawnSync([...CORPADMIN, "sql", "--data-dir", t.dir, ...args], {
      stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
      stdout: "pipe",
      stderr: "pipe",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
  }

  beforeAll(async () => {
    t = await makeApp();
    admin = await startAndLogin(t);
    for (const [name, display] of [
      ["João da Silva", "Joao"],
      ["Maria, \"Mia\" Souza", "Mia"],
    ]) {
      const res = await t.req("POST", "/api/person", { token: admin.token, body: { name, display_name: display } });
      expect(res.status).toBe(200);
    }
  });
  afterAll(() => t?.close());

  test("-c: one statement on the platform database, as a table", () => {
    const r = sql(["-c", "SELECT auth_name, company_name FROM corporations"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^auth_name\s+company_name$/);
    expect(lines[1]).toMatch(/^-+\s+-+$/);
    expect(lines[2]).toMatch(/^acme\s+ACME Telecom$/);
    expect(lines.at(-1)).toBe("(1 row)");
  });

  test("--corp by auth name or id: the corporation's database, its FTS tables too (which Debian 12's sqlite3 cannot open); --csv", () => {
    const byName = sql(["--corp", "acme", "--csv", "-c", "SELECT name, display_name FROM persons ORDER BY name"]);
    expect(byName.err).toBe("");
    expect(byName.code).toBe(0);
    expect(byName.out).toBe('name,display_name\r\nJoão da Silva,Joao\r\n"Maria, ""Mia"" Souza",Mia\r\n');
    // persons_fts is contentless_delete with the trigram tokenizer's remove_diacritics.
    const fts = sql(["--corp", admin.corpId, "--csv", "-c", "SELECT count(*) AS n FROM persons_fts WHERE persons_fts MATCH 'joao'"]);
    expect(fts.err).toBe("");
    expect(fts.out).toBe("n\r\n1\r\n");
  });

  test("a write fails and changes nothing: UPDATE, DELETE, a PRAGMA that writes, ATTACH to create a file", async () => {
    const before = await appChecksum(t);
    for (const [args, db] of [
      [["-c", "UPDATE corporations SET company_name = 'hacked'"], "platform"],
      [["--corp", "acme", "-c", "DELETE FROM persons"], "acme"],
      [["--corp", "acme", "-c", "PRAGMA user_version = 99"], "acme"],
      [["-c", "CREATE TABLE x (a)"], "platform"],
      [["-c", `ATTACH '${t.dir}/new.db' AS n`], "platform"],
    ] as const) {
      const r = sql([...args]);
      expect(r.code, `${db}: ${args.join(" ")}`).toBe(1);
      expect(r.err).toMatch(/readonly|read-only|unable to open/);
    }
    expect(sql(["-c", "SELECT company_name FROM corporations"]).out).toContain("ACME Telecom");
    expect(sql(["--corp", "acme", "-c", "PRAGMA user_version"]).out).not.toContain("99");
    expect(await appChecksum(t)).toEqual(before);
    // Two statements are not one: refused, and the second (a write) never ran.
    const two = sql(["-c", "SELECT 1; UPDATE corporations SET company_name = 'x'"]);
    expect(two.code).toBe(1);
    expect(two.err).toContain("-c runs one statement");
  });

  test("statements from standard input, split at their semicolons (not those in quotes), .tables; an error is reported and the rest runs", () => {
    const r = sql(["--corp", "acme"], "SELECT count(*) AS n\n  FROM persons;\nSELECT 'a;b' AS s; SELECT nope;\n.tables\nUPDATE persons SET name = 'x';\nSELECT 2 AS two;\n");
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^n\n-\n2\n\(1 row\)\n/);
    expect(r.out).toContain("a;b");
    expect(r.out).toContain("persons_fts");
    expect(r.out).toMatch(/two\n---\n2\n\(1 row\)\n$/);
    expect(r.err).toContain("no such column: nope");
    expect(r.err).toContain("readonly");
    expect(sql(["--corp", "acme", "-c", "SELECT count(*) AS n FROM persons WHERE name = 'x'"]).out).toContain("\n0\n");
  });

  test("an unknown corporation, a missing data directory, and cluster mode: exit 2 saying why", () => {
    const unknown = sql(["--corp", "nope", "-c", "SELECT 1"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('no corporation "nope"');
    const p = Bun.spawnSync([...CORPADMIN, "sql", "--data-dir", "/nonexistent/corpadmin", "-c", "SELECT 1"], { stdout: "pipe", stderr: "pipe" });
    expect(p.exitCode).toBe(2);
    expect(p.stderr.toString()).toContain("does not exist");
    const cluster = Bun.spawnSync([...CORPADMIN, "sql", "--data-dir", t.dir, "--database-url", "postgres://u@127.0.0.1:1/db", "-c", "SELECT 1"], { stdout: "pipe", stderr: "pipe" });
    expect(cluster.exitCode).toBe(2);
    expect(cluster.stderr.toString()).toContain("use psql");
  });
});

describe("splitStatements", () => {
  test("semicolons in strings, quoted names and comments do not end a statement; the unfinished rest is kept", () => {
    expect(splitStatements(`SELECT 'a;''b'; SELECT "x;y" FROM [t;] -- c;\n; SELECT /* ; */ 1`)).toEqual({
      statements: ["SELECT 'a;''b'", `SELECT "x;y" FROM [t;] -- c;`],
      rest: "SELECT /* ; */ 1",
    });
    expect(splitStatements("SELECT ';")).toEqual({ statements: [], rest: "SELECT ';" });
  });
});
