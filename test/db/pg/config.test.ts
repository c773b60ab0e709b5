// --database-url / CORPADMIN_DATABASE_URL (cluster mode, issue 19): empty keeps the SQLite files, a
// postgres:// URL selects the shared PostgreSQL database, anything else stops the start naming the flag.
import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../../src/config";
import { redactedDatabaseUrl } from "../../../src/db/pg/url";

describe("config: --database-url", () => {
  test("empty is SQLite; a postgres URL is kept; the flag wins over the variable", () => {
    expect(loadConfig(new Map(), {}).databaseUrl).toBeNull();
    expect(loadConfig(new Map(), { CORPADMIN_DATABASE_URL: "  " }).databaseUrl).toBeNull();
    expect(loadConfig(new Map(), { CORPADMIN_DATABASE_URL: "postgres://app:pw@db1:5432/corpadmin" }).databaseUrl).toBe("postgres://app:pw@db1:5432/corpadmin");
    const flags = new Map([["database-url", "postgresql://app@127.0.0.1/other"]]);
    expect(loadConfig(flags, { CORPADMIN_DATABASE_URL: "postgres://app@db1/corpadmin" }).databaseUrl).toBe("postgresql://app@127.0.0.1/other");
  });

  test("anything else is refused naming the flag, never echoing a password", () => {
    for (const bad of ["not a url", "mysql://app:secret@db/x", "postgres://app:secret@db1", "postgres:///x"]) {
      let err: unknown;
      try {
        loadConfig(new Map(), { CORPADMIN_DATABASE_URL: bad });
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toContain("--database-url");
      expect((err as Error).message).not.toContain("secret");
    }
  });

  test("logs show the URL without its password", () => {
    expect(redactedDatabaseUrl("postgres://app:secret@db1:5432/corpadmin")).toBe("postgres://app:***@db1:5432/corpadmin");
    expect(redactedDatabaseUrl("postgres://app@db1/corpadmin")).toBe("postgres://app@db1/corpadmin");
  });
});
