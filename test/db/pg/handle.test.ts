// source-only: drives a SQLite door and a PostgreSQL door (a throwaway server) directly, no app.
// Issue 19: the modules write their queries once, in SQLite's dialect; on PostgreSQL the door hands
// a handle of the same type (src/db/pg/handle.ts) that translates them (src/db/pg/translate.ts).
// Each scenario below runs the same function on both doors and expects the same result.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { and, asc, count, desc, eq, inArray, isNull, like, or, sql } from "drizzle-orm";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteDoor } from "../../../src/db/door";
import type { Handle } from "../../../src/db/handle";
import { migrationsOf, applyMigrations } from "../../../src/db/migrations";
import { PgDoors } from "../../../src/core/pg/door";
import { PgStatementError } from "../../../src/db/pg/handle";
import { migratePg } from "../../../src/db/pg/migrate";
import { translate } from "../../../src/db/pg/translate";
import { readTogether, writeTogether } from "../../../src/db/rows";
import { Problem } from "../../../src/lib/problem";
import { openTenantDb } from "../../../src/db/sqlite";
import { cities, contracts, events, metrics, metricValues, persons } from "../../../src/db/tenant/schema";
import { throwawayPostgres } from "../../support/postgres";

const A = "corp-a";
const B = "corp-b";
const AT = "2026-01-02T03:04:05.000+00:00";

const pg = await throwawayPostgres();
const client = pg.connect(pg.appUrl, 4);
await migratePg(client);
const doors = new PgDoors(client);
const dir = mkdtempSync(join(tmpdir(), "corpadmin-pg-handle-"));
const litePath = join(dir, "a.db");
const liteDb = openTenantDb(litePath);
applyMigrations(liteDb, migrationsOf("tenant"));
const lite = new SqliteDoor(liteDb, litePath);
afterAll(() => {
  lite.close();
  rmSync(dir, { recursive: true, force: true });
});

// Until the codemod types the SQLite door's handle as `Handle`, its synchronous Drizzle is awaited as one.
const asHandle = (db: unknown) => db as Handle;
/** `Handle`'s run result is typed unknown; both engines give `changes`. */
const changes = (r: unknown) => (r as { changes: number }).changes;

/** The same write on the SQLite door and on corporation A's PostgreSQL door: [sqlite, postgres]. */
async function bothWrite<T>(fn: (db: Handle) => Promise<T>): Promise<[T, T]> {
  return [await lite.write((db) => fn(asHandle(db))), await doors.tenant(A).write((db) => fn(db))];
}
async function bothRead<T>(fn: (db: Handle) => Promise<T>): Promise<[T, T]> {
  return [await lite.read((db) => fn(asHandle(db))), await doors.tenant(A).read((db) => fn(db))];
}
function same<T>([a, b]: [T, T]): T {
  expect(b).toEqual(a);
  return a;
}

const city = (id: string, name: string, state = "SP") => ({ id, name, state, country: "BR", created_at: AT, updated_at: AT });
const person = (id: string, name: string, corporate: boolean, email: string | null = null) => ({ id, name, corporate, email, created_at: AT, updated_at: AT });

describe("db/pg/handle: the same Drizzle queries on SQLite and PostgreSQL", () => {
  beforeAll(async () => {
    await bothWrite(async (db) => {
      await db.insert(cities).values([city("c1", "Alpha"), city("c2", "beta", "RJ"), city("c3", "Gamma"), city("c4", "Delta", "MG")]);
      await db.insert(persons).values([person("p1", "Ana", true, "ana@x"), person("p2", "Bruno", false), person("p3", "Carla", false, "c@x")]);
    });
  });

  test("select with eq/and/or/inArray/like/isNull, orderBy, limit, offset, count", async () => {
    same(await bothRead((db) => db.select().from(cities).where(eq(cities.id, "c1"))));
    same(await bothRead((db) => db.select({ id: cities.id }).from(cities).where(and(eq(cities.state, "SP"), or(eq(cities.name, "Alpha"), inArray(cities.id, ["c3", "c4"])))).orderBy(asc(cities.id))));
    // SQLite's LIKE ignores ASCII case: "%BETA%" finds "beta" on both.
    expect(same(await bothRead((db) => db.select({ id: cities.id }).from(cities).where(like(cities.name, "%BETA%"))))).toEqual([{ id: "c2" }]);
    same(await bothRead((db) => db.select({ id: persons.id }).from(persons).where(isNull(persons.email)).orderBy(persons.id)));
    // src/db/list.ts's scan condition: LIKE with an escaped wildcard.
    same(await bothRead((db) => db.select({ id: cities.id }).from(cities).where(sql`${cities.name} LIKE ${"%a\\%%"} ESCAPE '\\'`)));
    expect(same(await bothRead((db) => db.select({ id: cities.id }).from(cities).where(sql`${cities.name} LIKE ${"%PH%"} ESCAPE '\\'`)))).toEqual([{ id: "c1" }]);
    same(await bothRead((db) => db.select({ name: cities.name }).from(cities).orderBy(desc(cities.name)).limit(2).offset(1)));
    expect(same(await bothRead((db) => db.select({ n: count() }).from(cities)))).toEqual([{ n: 4 }]);
    same(await bothRead(async (db) => (await db.select({ n: count() }).from(cities).where(eq(cities.state, "SP")).get())!.n));
    expect(same(await bothRead(async (db) => (await db.select().from(cities).where(eq(cities.id, "none")).get()) ?? null))).toBeNull();
  });

  test("booleans come back as booleans through Drizzle, 1/0 through raw SQL; a boolean filter works both ways", async () => {
    expect(same(await bothRead((db) => db.select({ id: persons.id, corporate: persons.corporate }).from(persons).orderBy(persons.id)))).toEqual([
      { id: "p1", corporate: true },
      { id: "p2", corporate: false },
      { id: "p3", corporate: false },
    ]);
    same(await bothRead((db) => db.select({ id: persons.id }).from(persons).where(eq(persons.corporate, true))));
    expect(same(await bothRead((db) => db.$client.query("SELECT id, corporate FROM persons WHERE corporate = 1").all()))).toEqual([{ id: "p1", corporate: 1 }]);
    same(await bothRead((db) => db.$client.query("SELECT count(*) AS n FROM persons WHERE corporate = ?1").get(0)));
  });

  test("readTogether and writeTogether (one statement on PostgreSQL) give what the statements give one by one on SQLite", async () => {
    const reads = [
      { sql: "SELECT id, name, corporate FROM persons WHERE id = ?1", params: ["p1"] },
      { sql: "SELECT id FROM cities WHERE name <> ?1 ORDER BY id", params: ["nothing"], all: true },
      { sql: "SELECT id, name FROM persons WHERE id = ?1", params: ["none"] },
      { sql: "SELECT id FROM cities WHERE id = ?1", params: ["none"], all: true },
    ];
    const rows = same(await bothRead((db) => readTogether(db, reads)));
    expect(rows[0]).toEqual({ id: "p1", name: "Ana", corporate: 1 });
    expect((rows[1] as unknown[]).length).toBeGreaterThan(0);
    expect(rows.slice(2)).toEqual([null, []]);
    // A row and a row referring to it in one statement: the foreign key is checked at its end.
    const written = same(
      await bothWrite(async (db) => {
        await writeTogether(db, [
          { sql: "INSERT INTO cities (id, name, state, country, created_at, updated_at) VALUES (?1, ?2, 'SP', 'BR', ?3, ?3)", params: ["c9", "Nine", AT] },
          { sql: "INSERT INTO persons (id, name, corporate, address_city_id, created_at, updated_at) VALUES (?1, ?2, 0, ?3, ?4, ?4)", params: ["p9", "Nove", "c9", AT] },
        ]);
        return db.$client.query("SELECT p.id, c.name FROM persons p JOIN cities c ON c.id = p.address_city_id WHERE p.id = ?1").get("p9");
      }),
    );
    expect(written).toEqual({ id: "p9", name: "Nine" });
  });

  test("update and delete with returning(); run() reports changes; timestamps and JSON text keep their text", async () => {
    same(await bothWrite((db) => db.update(cities).set({ name: "Gamma 2", updated_at: "2026-02-03T00:00:00.000+00:00" }).where(eq(cities.id, "c3")).returning()));
    same(await bothWrite(async (db) => changes(await db.update(cities).set({ state: "PR" }).where(eq(cities.state, "MG")).run())));
    expect(same(await bothWrite(async (db) => changes(await db.delete(cities).where(eq(cities.id, "c4")).run())))).toBe(1);
    same(await bothWrite((db) => db.delete(cities).where(eq(cities.id, "nothing")).returning({ id: cities.id })));
    const payload = JSON.stringify({ type: "X", data: { a: [1, "two"], b: null } });
    same(
      await bothWrite(async (db) => {
        await db.insert(events).values({ id: "e1", type: "CITY_AFTER_INSERT", record_id: "c1", payload, created_at: AT });
        // seq numbers the row on both (SQLite's rowid alias, PostgreSQL's identity).
        const [row] = await db.select().from(events).where(eq(events.id, "e1"));
        return { ...row, seq: typeof row.seq };
      }),
    );
  });

  test("onConflictDoUpdate and onConflictDoNothing on a tenant table (unique keys lead with corp_id on PostgreSQL)", async () => {
    const upsert = (name: string, periodicity: string) => (db: Handle) =>
      db
        .insert(metrics)
        .values({ id: `m-${name}`, name, data_type: "Int", periodicity, start_date: "2026-01-01", created_at: AT, updated_at: AT })
        .onConflictDoUpdate({ target: metrics.name, set: { periodicity } })
        .returning({ id: metrics.id, name: metrics.name, periodicity: metrics.periodicity, daily_start_time: metrics.daily_start_time });
    same(await bothWrite(upsert("load", "1h")));
    expect(same(await bothWrite(upsert("load", "5m")))).toEqual([{ id: "m-load", name: "load", periodicity: "5m", daily_start_time: "00:00" }]);
    // A composite unique key as the target.
    same(
      await bothWrite((db) =>
        db
          .insert(cities)
          .values(city("c9", "Alpha"))
          .onConflictDoUpdate({ target: [cities.name, cities.state, cities.country], set: { updated_at: "2026-03-01T00:00:00.000+00:00" } })
          .returning({ id: cities.id, updated_at: cities.updated_at }),
      ),
    );
    same(await bothWrite((db) => db.insert(cities).values(city("c1", "Other")).onConflictDoNothing().returning()));
    same(await bothWrite(async (db) => changes(await db.insert(cities).values(city("c1", "Other")).onConflictDoNothing().run())));
  });

  test("a join, a subquery in sql``, and a unique violation carrying SQLite's code", async () => {
    await bothWrite((db) =>
      db.insert(contracts).values({ id: "k1", customer_id: "p1", billing_customer_id: "p2", number: "C-1", start_date: "2026-01-01", total_value: 12.5, contract_status: "active", contract_stage: "installed", created_at: AT, updated_at: AT }),
    );
    same(
      await bothRead((db) =>
        db
          .select({ number: contracts.number, customer: persons.name, value: contracts.total_value })
          .from(contracts)
          .innerJoin(persons, eq(persons.id, contracts.customer_id))
          .where(sql`${contracts.customer_id} IN (SELECT ${persons.id} FROM ${persons} WHERE ${persons.corporate} = 1)`),
      ),
    );
    same(await bothRead((db) => db.select({ id: contracts.id, who: persons.name }).from(contracts).leftJoin(persons, eq(persons.id, contracts.agent_id))));
    const code = async (db: Handle) => {
      try {
        await db.insert(cities).values(city("c1", "Dup"));
        return "inserted";
      } catch (e) {
        return (e as { code?: string }).code;
      }
    };
    // src/app.ts answers 409 for either code. Unlike SQLite, a failed statement aborts PostgreSQL's
    // transaction: the write fails whole even when its callback catches the error.
    expect(await lite.write((db) => code(asHandle(db)))).toBe("SQLITE_CONSTRAINT_PRIMARYKEY");
    expect(await doors.tenant(A).write((db) => db.insert(cities).values(city("c1", "Dup"))).catch((e) => e.code)).toBe("SQLITE_CONSTRAINT_UNIQUE");
    expect(await doors.tenant(A).write(code).catch((e) => e.code)).toBe("ERR_POSTGRES_COMMIT_ROLLED_BACK");
  });

  test("raw $client.query with ?N, ?, and named $params: get, all, values, run().changes", async () => {
    same(await bothRead((db) => db.$client.query("SELECT id, name FROM cities WHERE state = ?1 AND name <> ?2 ORDER BY id").all("SP", "x")));
    same(await bothRead((db) => db.$client.query("SELECT id FROM cities WHERE id = ? OR id = ? ORDER BY id").all("c1", "c2")));
    same(await bothRead((db) => db.$client.query("SELECT id, corporate, count(*) OVER () AS n FROM persons WHERE id <> ?1 ORDER BY id").values("p3")));
    expect(same(await bothRead((db) => db.$client.query("SELECT id FROM cities WHERE id = ?1").get("none")))).toBeNull();
    same(await bothRead((db) => db.$client.query("SELECT group_concat(id, '|') AS ids, ifnull(NULL, 'x') AS y FROM (SELECT id FROM cities ORDER BY id) t").get()));
    same(await bothRead((db) => db.$client.query("SELECT json_group_array(id) AS ids, (SELECT json_group_array(name) FROM cities WHERE id = ?1) AS none FROM (SELECT id FROM cities ORDER BY id) t").get("none")));
    same(await bothWrite(async (db) => changes(await db.$client.query("UPDATE cities SET updated_at = ?2 WHERE state = ?1").run("SP", "2026-04-01T00:00:00.000+00:00"))));
    same(await bothWrite(async (db) => changes(await db.$client.query("UPDATE cities SET name = $name WHERE id = $id").run({ $name: "Alpha", $id: "c1" }))));
    same(await bothWrite(async (db) => changes(await db.$client.query("INSERT OR IGNORE INTO cities (id, name, state, country, created_at, updated_at) VALUES (?1, 'Dup', 'SP', 'BR', ?2, ?2)").run("c1", AT))));
    // A bare 0/1 for a boolean column in VALUES (SQLite has no booleans).
    same(await bothWrite(async (db) => changes(await db.$client.query("INSERT INTO persons (id, name, corporate, created_at, updated_at) VALUES (?1, 'Bool', 1, ?2, ?2), (?3, 'Bool2', 0, ?2, ?2)").run("pb1", AT, "pb2"))));
    same(await bothRead((db) => db.$client.query("SELECT id, corporate FROM persons WHERE name LIKE 'bool%' ORDER BY id").all()));
    // Drizzle's db.all/get/run/values of a sql`` template: rows as bun-sqlite gives them (all: objects; get, values: arrays).
    same(await bothRead((db) => db.all(sql`SELECT id, name FROM cities WHERE state = ${"SP"} ORDER BY id`)));
    same(await bothRead((db) => db.get(sql`SELECT count(*) AS n FROM cities WHERE id = ${"c1"}`)));
    same(await bothRead((db) => db.values(sql`SELECT id FROM cities ORDER BY id`)));
    same(await bothWrite(async (db) => changes(await db.run(sql`UPDATE cities SET updated_at = ${AT} WHERE id = ${"c2"}`))));
    // The retention form: a bounded DELETE through rowid (ctid on PostgreSQL).
    same(await bothWrite(async (db) => changes(await db.$client.query("DELETE FROM cities WHERE rowid IN (SELECT rowid FROM cities WHERE state = ?1 LIMIT ?2)").run("PR", 10))));
  });

  test("the modules' hand-written forms: an upsert reading the existing row, optional filters, json_each, a constant-false filter", async () => {
    const upsert =
      "INSERT INTO metrics (id, name, data_type, periodicity, start_date, created_at, updated_at) VALUES (?1, ?2, 'Int', '1h', '2026-01-01', ?3, ?3) " +
      "ON CONFLICT (name) DO UPDATE SET periodicity = periodicity || '+', updated_at = excluded.updated_at RETURNING periodicity";
    same(await bothWrite((db) => db.$client.query(upsert).get("u1", "upserted", AT)));
    expect(same(await bothWrite((db) => db.$client.query(upsert).get("u2", "upserted", AT)))).toEqual({ periodicity: "1h+" });
    const optional = "SELECT id FROM cities WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR name = ?2) ORDER BY id";
    same(await bothRead((db) => db.$client.query(optional).all(null, null)));
    same(await bothRead((db) => db.$client.query(optional).all("SP", null)));
    const days = JSON.stringify([["d1", "c1", "c3"], ["d2", "c3", "c9"]]);
    const perDay =
      "WITH d(date, s, e) AS (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?1)) " +
      "SELECT d.date AS date, count(c.id) AS n FROM d LEFT JOIN cities c ON c.id >= d.s AND c.id < d.e GROUP BY d.date ORDER BY d.date";
    same(await bothRead((db) => db.$client.query(perDay).all(days)));
    same(await bothRead((db) => db.$client.query("SELECT id FROM cities WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id").all(JSON.stringify(["c1", "c2"]))));
    expect(same(await bothRead((db) => db.$client.query("SELECT count(*) AS n FROM cities WHERE state = ?1 AND 0").get("SP")))).toEqual({ n: 0 });
  });

  test("metric values keep their type: a number stays a number, a text a text, a boolean 1/0", async () => {
    await bothWrite((db) =>
      db.insert(metrics).values({ id: "mv", name: "mixed", data_type: "Int", periodicity: "1h", start_date: "2026-01-01", created_at: AT, updated_at: AT }),
    );
    const insert = "INSERT INTO metric_values (metric_id, at, at_ms, value) VALUES (?1, ?2, ?3, ?4)";
    same(
      await bothWrite(async (db) => {
        for (const [i, v] of [7, 2.5, "12", "text", 1, 0].entries()) await db.$client.query(insert).run("mv", `t${i}`, i, v);
        await db.insert(metricValues).values({ metric_id: "mv", at: "t9", at_ms: 9, value: 42 });
      }),
    );
    const rows = same(await bothRead((db) => db.$client.query("SELECT at, value FROM metric_values WHERE metric_id = ?1 ORDER BY at_ms").all("mv")));
    expect(rows.map((r) => r.value)).toEqual([7, 2.5, "12", "text", 1, 0, 42]);
    same(await bothRead((db) => db.select({ at: metricValues.at, value: metricValues.value }).from(metricValues).where(eq(metricValues.metric_id, "mv")).orderBy(metricValues.at_ms)));
    expect(same(await bothRead((db) => db.$client.query("SELECT at FROM metric_values WHERE metric_id = ?1 AND value = ?2").all("mv", "text")))).toEqual([{ at: "t3" }]);
    expect(same(await bothRead((db) => db.$client.query("SELECT at FROM metric_values WHERE metric_id = ?1 AND value = ?2").all("mv", 7)))).toEqual([{ at: "t0" }]);
  });
});

describe("db/pg/handle: corporations", () => {
  test("corporation A's handle sees nothing of B's, also through raw SQL and the retention form", async () => {
    await doors.tenant(B).write((db) => db.insert(cities).values(city("b1", "Bravo")));
    expect(await doors.tenant(A).read((db) => db.select().from(cities).where(eq(cities.id, "b1")))).toEqual([]);
    expect(await doors.tenant(A).read((db) => db.$client.query("SELECT id FROM cities WHERE name = ?1").all("Bravo"))).toEqual([]);
    expect(await doors.tenant(A).write(async (db) => (await db.$client.query("DELETE FROM cities WHERE rowid IN (SELECT rowid FROM cities WHERE name = ?1 LIMIT 5)").run("Bravo")).changes)).toBe(0);
    expect(await doors.tenant(B).read((db) => db.select({ id: cities.id }).from(cities))).toEqual([{ id: "b1" }]);
    // The same unique key in both corporations: each has its own (corp_id leads the key).
    await doors.tenant(B).write((db) => db.insert(cities).values(city("b2", "Alpha")).onConflictDoNothing());
    expect(await doors.tenant(B).read((db) => db.$client.query("SELECT count(*) AS n FROM cities WHERE name = 'Alpha'").get())).toEqual({ n: 1 });
  });
});

describe("db/pg/translate: what PostgreSQL cannot run is refused by name", () => {
  test("FTS5 MATCH, changes(), GLOB and PRAGMA throw a translation error; the handle surfaces it", async () => {
    expect(() => translate("SELECT rowid FROM persons_fts WHERE persons_fts MATCH ?1", { tenant: true })).toThrow(/FTS5 MATCH/);
    expect(() => translate("SELECT changes() AS n", { tenant: true })).toThrow(/changes/);
    expect(() => translate("SELECT 1 FROM t WHERE a GLOB ?", { tenant: true })).toThrow(/GLOB/);
    expect(() => translate("PRAGMA foreign_keys = ON", { tenant: false })).toThrow(/PRAGMA/);
    expect(() => translate("SELECT max(rowid) FROM persons", { tenant: true })).toThrow(/rowid outside/);
    await expect(doors.tenant(A).read((db) => db.$client.query("SELECT changes() AS n").get())).rejects.toThrow(/not translatable/);
    // A literal is never rewritten: the text of a string keeps its `?`, `like` and rowid.
    expect(translate("SELECT 'a ? like rowid' AS x, ?", { tenant: true }).sql).toBe("SELECT 'a ? like rowid' AS x, $1");
  });

  test("a callback cannot open a transaction of its own on the door's connection", async () => {
    await expect(doors.tenant(A).write((db) => db.transaction(async () => {}))).rejects.toThrow(/door's transaction/);
  });

  test("a PostgreSQL error through the handle is a PgStatementError with the server's SQLSTATE", async () => {
    const err = await doors.tenant(A).read((db) => db.$client.query("SELECT no_such_column FROM cities").all()).catch((e) => e);
    expect(err).toBeInstanceOf(PgStatementError);
    expect(err.errno).toBe("42703");
  });

  test("text holding NUL, which PostgreSQL cannot store, is a 400 problem, not a server error", async () => {
    const err = await doors.tenant(A).read((db) => db.$client.query("SELECT id FROM cities WHERE name = ?1").all("a\u0000b")).catch((e) => e);
    expect(err).toBeInstanceOf(Problem);
    expect(err.status).toBe(400);
  });

  test("a number an integer column cannot hold (1e20, a fraction) is a 400 problem, not a server error", async () => {
    for (const n of [1e20, 1e308, 1.5]) {
      const err = await doors.tenant(A).read((db) => db.$client.query("SELECT seq FROM metric_values WHERE at_ms = ?1").all(n)).catch((e) => e);
      expect(err, String(n)).toBeInstanceOf(Problem);
      expect(err.status).toBe(400);
    }
  });
});
