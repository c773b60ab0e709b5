// source-only: compares the Drizzle schemas of the source tree (no app, no database).
// Issue 19: the PostgreSQL schema is generated from the SQLite one (scripts/pg-schema.ts); both must
// have the same tables, columns, keys and indexes: the tenant ones with corp_id first in each.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { getTableColumns, is } from "drizzle-orm";
import { getTableConfig as pgConfig, PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as pgPlatform from "../../../src/db/pg/platform";
import * as pgTenant from "../../../src/db/pg/tenant";
import * as sqlitePlatform from "../../../src/db/platform/schema";
import * as sqliteTenant from "../../../src/db/tenant/schema";
import { CORP_COLUMN, tsFile } from "../../../scripts/pg-schema";

const root = join(import.meta.dir, "../../..");

const TYPES: Record<string, string> = {
  SQLiteText: "text",
  SQLiteInteger: "bigint",
  SQLiteBoolean: "boolean",
  SQLiteReal: "double precision",
  SQLiteBlobBuffer: "bytea",
  SQLiteCustomColumn: "jsonb",
};

type Shape = {
  columns: string[];
  primaryKey: string[];
  uniques: string[];
  indexes: string[];
  foreignKeys: string[];
};

function sqliteShape(table: SQLiteTable, shared: boolean): Shape {
  const c = sqliteConfig(table);
  const pre = shared ? [CORP_COLUMN] : [];
  const pk = c.columns.filter((x) => x.primary).map((x) => x.name);
  return {
    columns: [...(shared ? [`${CORP_COLUMN} text notnull`] : []), ...c.columns.map((x) => `${x.name} ${TYPES[x.columnType]}${x.notNull || x.primary ? " notnull" : ""}`)],
    primaryKey: [...pre, ...(pk.length ? pk : c.primaryKeys[0]?.columns.map((x) => x.name) ?? [])],
    uniques: [
      ...c.columns.filter((x) => x.isUnique).map((x) => [...pre, x.name].join(",")),
      ...c.uniqueConstraints.map((u) => [...pre, ...u.columns.map((x) => x.name)].join(",")),
    ].sort(),
    indexes: c.indexes.map((i) => `${i.config.name}${i.config.unique ? " unique" : ""}(${[...pre, ...i.config.columns.map((x) => (x as { name: string }).name)].join(",")})`).sort(),
    foreignKeys: c.foreignKeys
      .map((f) => {
        const r = f.reference();
        return `${f.getName()}(${[...pre, ...r.columns.map((x) => x.name)]})->${sqliteConfig(r.foreignTable).name}(${[...pre, ...r.foreignColumns.map((x) => x.name)]}) ${f.onDelete ?? "no action"}`;
      })
      .sort(),
  };
}

function pgShape(table: PgTable): Shape {
  const c = pgConfig(table);
  const pk = c.columns.filter((x) => x.primary).map((x) => x.name);
  return {
    columns: c.columns.map((x) => `${x.name} ${x.getSQLType()}${x.notNull ? " notnull" : ""}`),
    primaryKey: pk.length ? pk : (c.primaryKeys[0]?.columns.map((x) => x.name) ?? []),
    uniques: [...c.columns.filter((x) => x.isUnique).map((x) => x.name), ...c.uniqueConstraints.map((u) => u.columns.map((x) => x.name).join(","))].sort(),
    indexes: c.indexes.map((i) => `${i.config.name}${i.config.unique ? " unique" : ""}(${i.config.columns.map((x) => (x as { name: string }).name).join(",")})`).sort(),
    foreignKeys: c.foreignKeys
      .map((f) => {
        const r = f.reference();
        return `${f.getName()}(${r.columns.map((x) => x.name)})->${pgConfig(r.foreignTable).name}(${r.foreignColumns.map((x) => x.name)}) ${f.onDelete ?? "no action"}`;
      })
      .sort(),
  };
}

const tables = <T>(schema: Record<string, unknown>, kind: new (...a: never[]) => T) =>
  new Map(Object.entries(schema).filter((e): e is [string, T] => is(e[1], kind as never)));

for (const [what, sqliteSchema, pgSchema, shared] of [
  ["platform", sqlitePlatform, pgPlatform, false],
  ["tenant", sqliteTenant, pgTenant, true],
] as const) {
  describe(`db/pg: the ${what} schema on PostgreSQL matches SQLite's`, () => {
    const lite = tables(sqliteSchema, SQLiteTable);
    const pg = tables(pgSchema, PgTable);

    test("same tables, under the same export names", () => {
      expect([...pg.keys()].sort()).toEqual([...lite.keys()].sort());
      for (const [k, t] of lite) expect(pgConfig(pg.get(k)!).name).toBe(sqliteConfig(t).name);
    });

    test(`same columns, keys, unique keys, indexes and foreign keys${shared ? ", each led by corp_id" : ""}`, () => {
      for (const [k, t] of lite) {
        const name = sqliteConfig(t).name;
        expect({ name, ...pgShape(pg.get(k)!) }).toEqual({ name, ...sqliteShape(t, shared) });
        // Same property names: code written against one schema reads the other's rows alike.
        expect(Object.keys(getTableColumns(pg.get(k)!)).filter((c) => !shared || c !== CORP_COLUMN)).toEqual(Object.keys(getTableColumns(t)));
      }
    });

    test(shared ? "every table has the corporation policy" : "no table has a policy", () => {
      for (const t of pg.values()) {
        const policies = pgConfig(t).policies.map((p) => p.name);
        expect(policies).toEqual(shared ? ["tenant"] : []);
      }
    });

    test("the committed file is what the generator writes now (run `bun scripts/pg-schema.ts`)", () => {
      const file = readFileSync(join(root, "src/db/pg", `${what}.ts`), "utf8");
      expect(file).toBe(tsFile(sqliteSchema, `src/db/${what}/schema.ts`, shared));
    });
  });
}
