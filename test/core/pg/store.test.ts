// source-only: drives the PostgreSQL store and registry (src/core/pg/store.ts) directly against a throwaway server.
// Start-up migrates and seeds once (a second start finds everything in place); a corporation needs
// nothing to exist and its deletion removes its rows from every tenant table and nothing of another's;
// a write that comes after its corporation's deletion answers 404 instead of leaving orphan rows.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { postgresMigrationPlan } from "../../../src/cli/migrate";
import { EventBus } from "../../../src/core/events";
import { Problem } from "../../../src/lib/problem";
import { migrationsOf } from "../../../src/db/migrations";
import { corporations } from "../../../src/db/platform/schema";
import { cities, contracts, persons } from "../../../src/db/tenant/schema";
import { pgStorage, preparePostgres, TENANT_DELETE_ORDER, type PgStart } from "../../../src/core/pg/store";
import * as tenantSchema from "../../../src/db/pg/tenant";
import { startPostgres, type TestPostgres } from "../../support/postgres";

const AT = "2026-01-01T00:00:00.000+00:00";
let pg: TestPostgres;
let start: PgStart;
let su: SQL;
let storage: ReturnType<typeof pgStorage>;

beforeAll(async () => {
  pg = await startPostgres();
  start = await preparePostgres(pg.appUrl, "/tmp/corpadmin-data");
  su = new SQL(pg.url);
  storage = pgStorage(start, new EventBus());
});

afterAll(async () => {
  await su?.close();
  await start?.sql.close();
  await pg?.stop();
});

async function addCorp(id: string): Promise<void> {
  await storage.store.platform.write((tx) =>
    tx.insert(corporations).values({ id, auth_name: id, company_name: id, server_id: start.builtinServerId, created_at: AT, updated_at: AT }),
  );
}

async function fill(corpId: string): Promise<void> {
  await storage.store.tenant(corpId).write(async (tx) => {
    await tx.insert(persons).values({ id: "p1", name: "Ana", corporate: false, created_at: AT, updated_at: AT });
    await tx.insert(persons).values({ id: "p2", name: "Bia", corporate: true, created_at: AT, updated_at: AT });
    await tx.insert(cities).values({ id: "c1", name: "X", state: "SP", country: "BR", created_at: AT, updated_at: AT });
    await tx
      .insert(contracts)
      .values({ id: "k1", customer_id: "p1", billing_customer_id: "p2", number: "1", start_date: "2026-01-01", total_value: 1, contract_status: "active", contract_stage: "installed", created_at: AT, updated_at: AT });
  });
}

const rowsOf = async (corpId: string) => {
  let n = 0;
  for (const t of TENANT_DELETE_ORDER) n += Number((await su.unsafe(`SELECT count(*) AS n FROM "${t}" WHERE corp_id = $1`, [corpId]))[0].n);
  return n;
};

describe("core/pg/store: start-up", () => {
  test("migrates and seeds the built-in server and services once; a second start changes nothing", async () => {
    expect(start.migrated.to).toBe(migrationsOf("pg").length);
    const again = await preparePostgres(pg.appUrl, "/tmp/corpadmin-data");
    try {
      expect(again.migrated.applied).toEqual([]);
      expect(again.builtinServerId).toBe(start.builtinServerId);
      const [{ n }] = await su`SELECT count(*)::int AS n FROM services WHERE builtin`;
      expect(n).toBe(16);
    } finally {
      await again.sql.close();
    }
  });

  test("migrate --dry-run on PostgreSQL: pending migrations of an empty database, none once migrated; nothing written", async () => {
    const empty = await pg.createDatabase("dry_run");
    const plan = await postgresMigrationPlan(empty.appUrl);
    expect(plan).toContain(`schema version 0 of ${migrationsOf("pg").length}; pending: ${migrationsOf("pg")[0].tag}`);
    expect(await postgresMigrationPlan(empty.appUrl)).toBe(plan);
    expect(await postgresMigrationPlan(pg.appUrl)).toContain("up to date");
  });

  test("the built-in server follows a moved data directory", async () => {
    const moved = await preparePostgres(pg.appUrl, "/tmp/corpadmin-moved");
    await moved.sql.close();
    const [{ path }] = await su`SELECT path FROM servers WHERE builtin`;
    expect(path).toBe("/tmp/corpadmin-moved/corps");
  });
});

describe("core/pg/store: corporations", () => {
  test("the delete order lists every tenant table, each after every table that references it", () => {
    const tables = (Object.values(tenantSchema) as unknown[]).filter((v): v is PgTable => is(v, PgTable)).map((t) => getTableConfig(t));
    expect([...TENANT_DELETE_ORDER].sort()).toEqual(tables.map((t) => t.name).sort());
    for (const t of tables)
      for (const fk of t.foreignKeys) {
        const parent = getTableConfig(fk.reference().foreignTable).name;
        if (parent !== t.name) expect(TENANT_DELETE_ORDER.indexOf(t.name)).toBeLessThan(TENANT_DELETE_ORDER.indexOf(parent));
      }
  });

  test("a new corporation is current at once; migrateLive records the version", async () => {
    await addCorp("corp-new");
    const r = await storage.tenants.migrateLive("corp-new");
    const latest = migrationsOf("pg").length;
    expect(r).toEqual({ from: latest, to: latest, applied: [] });
    expect(await storage.tenants.schemaStatus(null)).toEqual({ version: latest, latest, pending: [] });
    const [{ v }] = await su`SELECT schema_version AS v FROM corporations WHERE id = 'corp-new'`;
    expect(Number(v)).toBe(latest);
  });

  test("deleting a corporation removes its rows from every tenant table and none of another's", async () => {
    await addCorp("corp-a");
    await addCorp("corp-b");
    await fill("corp-a");
    await fill("corp-b");
    expect(await rowsOf("corp-a")).toBe(4);
    await storage.store.platform.write((tx) => tx.$client.query("DELETE FROM corporations WHERE id = ?1").run("corp-a"));
    await storage.tenants.closeWhenIdle("corp-a");
    expect(await rowsOf("corp-a")).toBe(0);
    expect(await rowsOf("corp-b")).toBe(4);
  });

  test("a write after its corporation's deletion answers 404 and leaves nothing; a read sees nothing", async () => {
    await addCorp("corp-gone");
    await fill("corp-gone");
    await storage.store.platform.write((tx) => tx.$client.query("DELETE FROM corporations WHERE id = ?1").run("corp-gone"));
    const door = storage.store.tenant("corp-gone");
    const err = await door.write((tx) => tx.insert(cities).values({ id: "late", name: "L", state: "SP", country: "BR", created_at: AT, updated_at: AT })).catch((e) => e);
    expect(err).toBeInstanceOf(Problem);
    expect((err as Problem).status).toBe(404);
    const grouped = await door.writeGrouped((tx) => tx.insert(cities).values({ id: "late2", name: "L", state: "SP", country: "BR", created_at: AT, updated_at: AT })).catch((e) => e);
    expect((grouped as Problem).status).toBe(404);
    await storage.tenants.closeWhenIdle("corp-gone");
    expect(await rowsOf("corp-gone")).toBe(0);
    expect(await storage.store.tenant("corp-gone").read((db) => db.select().from(cities).all())).toEqual([]);
  });
});
