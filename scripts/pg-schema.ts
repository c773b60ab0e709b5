// PostgreSQL DDL from the Drizzle SQLite schemas (issue 19, cluster mode). Drizzle has no
// dialect-neutral schema, so the PostgreSQL tables are derived from the SQLite ones through
// getTableConfig: same tables, columns, keys and indexes, with the types mapped.
//
//   bun scripts/pg-schema.ts [--layout schema|shared] [--stdout]
//
// writes src/db/pg/platform.sql and src/db/pg/tenant.sql (tenant tables in the given layout), and
// the Drizzle PostgreSQL schemas src/db/pg/platform.ts and src/db/pg/tenant.ts (always the shared
// layout: what the store uses and drizzle-kit turns into migrations/pg, see drizzle.pg.config.ts):
// - schema: one PostgreSQL schema per corporation, tables as they are (psql -v schema=corp_<id>).
// - shared: one set of tables for every corporation, `corp_id` first in each, leading every
//   primary key, unique key, index and foreign key, and forced row-level security on
//   current_setting('corpadmin.corp_id').
// bench/pg-tenancy.ts imports tenantStatements/platformStatements to measure both layouts.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getTableColumns, is, SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { getTableConfig, SQLiteTable, type AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import { newId } from "../src/lib/ids";
import { nowIso } from "../src/lib/time";
import * as platformSchema from "../src/db/platform/schema";
import * as tenantSchema from "../src/db/tenant/schema";

export type Layout = "schema" | "shared";

/** The tenant column of the shared layout and the setting its row-level security reads. */
export const CORP_COLUMN = "corp_id";
export const CORP_SETTING = "corpadmin.corp_id";
const CORP_CURRENT = `current_setting('${CORP_SETTING}')`;

/** What the generator leaves out, said in each file's header (and in docs/cluster-tenancy.md). */
export const SKIPPED = [
  "$defaultFn/$onUpdateFn (ids, created_at, updated_at): computed by Drizzle in the app, so they stay there",
  "text enum values ({ enum: [...] }): SQLite does not check them either; the API validates them",
  "CHECK constraints and generated columns: the SQLite schemas declare none (the generator throws if one appears)",
];

const dialect = new PgDialect();
const q = (name: string): string => {
  // PostgreSQL cuts identifiers at 63 bytes: two long names could silently become one.
  if (Buffer.byteLength(name) > 63) throw new Error(`identifier longer than 63 bytes: ${name}`);
  return `"${name.replaceAll('"', '""')}"`;
};
const literal = (s: string): string => `'${s.replaceAll("'", "''")}'`;

function tablesOf(schema: Record<string, unknown>): SQLiteTable[] {
  return Object.values(schema).filter((v): v is SQLiteTable => is(v, SQLiteTable));
}

/** Renders an expression (index column or partial-index WHERE) with bare column names. */
function expression(e: SQL): string {
  const { sql, params } = dialect.sqlToQuery(e, "indexes");
  if (params.length) throw new Error(`index expression with parameters is not portable: ${sql}`);
  return sql;
}

/** A single-column integer primary key is SQLite's rowid alias: it numbers rows left without one. */
function isRowid(col: AnySQLiteColumn, pkColumns: number): boolean {
  return col.primary && pkColumns === 1 && col.columnType === "SQLiteInteger";
}

function pgType(col: AnySQLiteColumn): { type: string; note?: string } {
  switch (col.columnType) {
    case "SQLiteText":
    case "SQLiteTextJson": // JSON kept as text, as SQLite keeps it
      return { type: "text" };
    case "SQLiteInteger":
    case "SQLiteTimestamp": // integer({ mode: "timestamp" }): epoch seconds or ms, as stored
      return { type: "bigint" };
    case "SQLiteBoolean":
      return { type: "boolean" };
    case "SQLiteReal":
      return { type: "double precision" };
    case "SQLiteNumeric":
    case "SQLiteNumericNumber":
    case "SQLiteNumericBigInt":
      return { type: "numeric" };
    case "SQLiteBlobBuffer":
    case "SQLiteBlobJson":
    case "SQLiteBigInt":
      return { type: "bytea" };
    case "SQLiteCustomColumn": {
      const declared = col.getSQLType().toLowerCase();
      // metric_values.value: declared BLOB in SQLite (no type affinity) so a number stays a number
      // and a text a text. jsonb keeps both as given, and reads return them as they were written
      // (src/db/pg/handle.ts sends the value JSON-encoded); a numeric aggregate casts.
      if (declared === "blob") return { type: "jsonb", note: "declared BLOB in SQLite (no type affinity: numbers and text kept as given); jsonb keeps both as given" };
      return { type: declared === "integer" ? "bigint" : declared === "real" ? "double precision" : declared };
    }
    default:
      throw new Error(`no PostgreSQL type for ${col.columnType} (${col.name})`);
  }
}

function defaultClause(col: AnySQLiteColumn): string {
  const d = col.default;
  if (d === undefined) return "";
  if (is(d, SQL)) return ` DEFAULT (${expression(d)})`;
  if (typeof d === "boolean") return ` DEFAULT ${d}`;
  if (typeof d === "number" || typeof d === "bigint") return ` DEFAULT ${d}`;
  if (typeof d === "string") return ` DEFAULT ${literal(d)}`;
  return ""; // objects (json mode): not portable as a literal; the app supplies the value
}

/** CREATE TABLE, then its indexes; foreign keys come apart (see foreignKeys) so order does not matter. */
function tableStatements(table: SQLiteTable, shared: boolean): { create: string; indexes: string[]; rls: string[] } {
  const cfg = getTableConfig(table);
  const t = cfg.name;
  const prefix = shared ? [CORP_COLUMN] : [];
  const cols = (names: string[]) => [...prefix, ...names].map(q).join(", ");
  const lines: string[] = [];
  if (shared) lines.push(`${q(CORP_COLUMN)} text NOT NULL DEFAULT ${CORP_CURRENT}`);

  if (cfg.checks.length) throw new Error(`${t}: CHECK constraints are not mapped`);
  const pkColumns = cfg.columns.filter((c) => c.primary);
  if (pkColumns.length > 1) throw new Error(`${t}: several columns marked primary`);
  for (const col of cfg.columns) {
    if (col.generated) throw new Error(`${t}.${col.name}: generated columns are not mapped`);
    const { type, note } = pgType(col);
    let line = `${q(col.name)} ${type}`;
    if (isRowid(col, pkColumns.length)) line += " GENERATED BY DEFAULT AS IDENTITY";
    else line += defaultClause(col);
    if (col.notNull || col.primary) line += " NOT NULL";
    if (note) line += ` -- ${note}`;
    lines.push(line);
  }

  const constraints: string[] = [];
  if (pkColumns.length === 1) constraints.push(`CONSTRAINT ${q(`${t}_pkey`)} PRIMARY KEY (${cols([pkColumns[0].name])})`);
  for (const pk of cfg.primaryKeys) constraints.push(`CONSTRAINT ${q(pk.getName())} PRIMARY KEY (${cols(pk.columns.map((c) => c.name))})`);
  for (const col of cfg.columns) {
    if (col.isUnique) constraints.push(`CONSTRAINT ${q(col.uniqueName ?? `${t}_${col.name}_unique`)} UNIQUE (${cols([col.name])})`);
  }
  for (const u of cfg.uniqueConstraints) {
    constraints.push(`CONSTRAINT ${q(u.getName() ?? `${t}_${u.columns.map((c) => c.name).join("_")}_unique`)} UNIQUE (${cols(u.columns.map((c) => c.name))})`);
  }

  // A comment after a column would swallow the comma that follows it, so notes go last on their line.
  const body = [...lines, ...constraints].map((l, i, all) => {
    const comma = i < all.length - 1 ? "," : "";
    const at = l.indexOf(" -- ");
    return at < 0 ? `  ${l}${comma}` : `  ${l.slice(0, at)}${comma}${l.slice(at)}`;
  });
  const create = `CREATE TABLE ${q(t)} (\n${body.join("\n")}\n);`;

  const indexes = cfg.indexes.map((ix) => {
    const c = ix.config;
    const parts = [...prefix.map(q), ...c.columns.map((x) => (is(x, SQL) ? `(${expression(x)})` : q((x as AnySQLiteColumn).name)))];
    const where = c.where ? ` WHERE ${expression(c.where)}` : "";
    return `CREATE ${c.unique ? "UNIQUE " : ""}INDEX ${q(c.name)} ON ${q(t)} (${parts.join(", ")})${where};`;
  });

  const rls = shared
    ? [
        `ALTER TABLE ${q(t)} ENABLE ROW LEVEL SECURITY;`,
        `ALTER TABLE ${q(t)} FORCE ROW LEVEL SECURITY;`,
        `CREATE POLICY tenant ON ${q(t)} USING (${q(CORP_COLUMN)} = ${CORP_CURRENT}) WITH CHECK (${q(CORP_COLUMN)} = ${CORP_CURRENT});`,
      ]
    : [];
  return { create, indexes, rls };
}

function foreignKeys(table: SQLiteTable, shared: boolean): string[] {
  const cfg = getTableConfig(table);
  return cfg.foreignKeys.map((fk) => {
    const ref = fk.reference();
    const from = ref.columns.map((c) => c.name);
    const to = ref.foreignColumns.map((c) => c.name);
    const target = getTableConfig(ref.foreignTable).name;
    const prefix = shared ? [CORP_COLUMN] : [];
    const action = (verb: string, a: string | undefined) => {
      if (!a || a === "no action") return "";
      const upper = a.toUpperCase();
      // In the shared layout corp_id belongs to the key but must never be nulled or defaulted.
      if (shared && (a === "set null" || a === "set default")) {
        if (verb === "UPDATE") throw new Error(`${cfg.name}: ON UPDATE ${upper} cannot keep corp_id`);
        return ` ON ${verb} ${upper} (${from.map(q).join(", ")})`;
      }
      return ` ON ${verb} ${upper}`;
    };
    return (
      `ALTER TABLE ${q(cfg.name)} ADD CONSTRAINT ${q(fk.getName())} FOREIGN KEY (${[...prefix, ...from].map(q).join(", ")}) ` +
      `REFERENCES ${q(target)} (${[...prefix, ...to].map(q).join(", ")})${action("DELETE", fk.onDelete)}${action("UPDATE", fk.onUpdate)};`
    );
  });
}

export function statements(tables: SQLiteTable[], shared: boolean): string[] {
  const parts = tables.map((t) => tableStatements(t, shared));
  return [...parts.map((p) => p.create), ...parts.flatMap((p) => p.indexes), ...tables.flatMap((t) => foreignKeys(t, shared)), ...parts.flatMap((p) => p.rls)];
}

// ---- the Drizzle PostgreSQL schema (TypeScript), shared layout ----------------------------------

/** The TypeScript of one column's builder, e.g. `bigint("seq", { mode: "number" }).generatedByDefaultAsIdentity()`. */
function tsColumn(col: AnySQLiteColumn, pkColumns: number): string {
  const { type, note } = pgType(col);
  const name = JSON.stringify(col.name);
  const enumValues = (col as { enumValues?: string[] }).enumValues;
  let b: string;
  switch (type) {
    case "text":
      b = enumValues?.length ? `text(${name}, { enum: ${JSON.stringify(enumValues)} })` : `text(${name})`;
      break;
    case "bigint":
      b = `bigint(${name}, { mode: "number" })`;
      break;
    case "boolean":
      b = `boolean(${name})`;
      break;
    case "double precision":
      b = `doublePrecision(${name})`;
      break;
    case "numeric":
      b = `numeric(${name})`;
      break;
    case "bytea":
      b = `bytea(${name})`;
      break;
    case "jsonb":
      b = `jsonb(${name})`;
      break;
    default:
      throw new Error(`no Drizzle PostgreSQL builder for ${type} (${col.name})`);
  }
  if (isRowid(col, pkColumns)) b += ".generatedByDefaultAsIdentity()";
  else if (col.default !== undefined) {
    const d = col.default;
    if (is(d, SQL)) b += `.default(sql\`${expression(d).replaceAll("`", "\\`")}\`)`;
    else if (typeof d === "boolean" || typeof d === "number" || typeof d === "string") b += `.default(${JSON.stringify(d)})`;
  }
  if (col.notNull || col.primary) b += ".notNull()";
  // The app-side defaults: the two the SQLite schemas use are kept, anything else must be added here.
  const fn = (f: unknown, what: string) => {
    if (f === undefined) return "";
    if (f === newId) return `.${what}(newId)`;
    if (f === nowIso) return `.${what}(nowIso)`;
    throw new Error(`${col.name}: ${what} other than newId/nowIso is not mapped`);
  };
  b += fn(col.defaultFn, "$defaultFn") + fn(col.onUpdateFn, "$onUpdateFn");
  return note ? `${b}, // ${note}` : `${b},`;
}

/** `pgTable(...)` of one table; `names` maps each SQLite table to its export name. */
function tsTable(table: SQLiteTable, key: string, names: Map<SQLiteTable, string>, shared: boolean): string {
  const cfg = getTableConfig(table);
  const t = cfg.name;
  const props = new Map(Object.entries(getTableColumns(table)).map(([k, c]) => [c.name, k]));
  const prop = (c: { name: string }) => {
    const k = props.get(c.name);
    if (!k) throw new Error(`${t}.${c.name}: no property`);
    return k;
  };
  const cols = (list: { name: string }[], on = "t") => [...(shared ? [`${on}.${CORP_COLUMN}`] : []), ...list.map((c) => `${on}.${prop(c)}`)].join(", ");
  const pkColumns = cfg.columns.filter((c) => c.primary);
  const lines: string[] = [];
  if (shared) lines.push(`${CORP_COLUMN}: text(${JSON.stringify(CORP_COLUMN)}).notNull().default(sql\`${CORP_CURRENT}\`),`);
  for (const col of cfg.columns) lines.push(`${prop(col)}: ${tsColumn(col, pkColumns.length)}`);

  const extra: string[] = [];
  if (pkColumns.length === 1) extra.push(`primaryKey({ name: ${JSON.stringify(`${t}_pkey`)}, columns: [${cols(pkColumns)}] }),`);
  for (const pk of cfg.primaryKeys) extra.push(`primaryKey({ name: ${JSON.stringify(pk.getName())}, columns: [${cols(pk.columns)}] }),`);
  for (const col of cfg.columns) if (col.isUnique) extra.push(`unique(${JSON.stringify(col.uniqueName ?? `${t}_${col.name}_unique`)}).on(${cols([col])}),`);
  for (const u of cfg.uniqueConstraints)
    extra.push(`unique(${JSON.stringify(u.getName() ?? `${t}_${u.columns.map((c) => c.name).join("_")}_unique`)}).on(${cols(u.columns)}),`);
  for (const ix of cfg.indexes) {
    const c = ix.config;
    const parts = c.columns.map((x) => (is(x, SQL) ? `sql\`${expression(x)}\`` : `t.${prop(x as AnySQLiteColumn)}`));
    const all = [...(shared ? [`t.${CORP_COLUMN}`] : []), ...parts].join(", ");
    const where = c.where ? `.where(sql\`${expression(c.where)}\`)` : "";
    extra.push(`${c.unique ? "uniqueIndex" : "index"}(${JSON.stringify(c.name)}).on(${all})${where},`);
  }
  for (const fk of cfg.foreignKeys) {
    const ref = fk.reference();
    const target = names.get(ref.foreignTable as SQLiteTable);
    if (!target) throw new Error(`${t}: foreign key to a table outside its schema`);
    const targetCols = new Map(Object.entries(getTableColumns(ref.foreignTable)).map(([k, c]) => [c.name, k]));
    // A self-reference names the callback's own columns (naming the const inside its initializer defeats type inference).
    const on = target === key ? "t" : target;
    const to = [...(shared ? [`${on}.${CORP_COLUMN}`] : []), ...ref.foreignColumns.map((c) => `${on}.${targetCols.get(c.name)}`)].join(", ");
    let line = `foreignKey({ name: ${JSON.stringify(fk.getName())}, columns: [${cols(ref.columns)}], foreignColumns: [${to}] })`;
    for (const [verb, a] of [["onDelete", fk.onDelete], ["onUpdate", fk.onUpdate]] as const) {
      if (!a || a === "no action") continue;
      // drizzle-kit cannot say `SET NULL (col)`: nulling a key would null corp_id too.
      if (shared && (a === "set null" || a === "set default")) throw new Error(`${t}: ${verb} ${a} cannot keep corp_id in the shared layout`);
      line += `.${verb}(${JSON.stringify(a)})`;
    }
    extra.push(`${line},`);
  }
  if (shared) extra.push(`pgPolicy("tenant", { for: "all", using: sql\`${q(CORP_COLUMN)} = ${CORP_CURRENT}\`, withCheck: sql\`${q(CORP_COLUMN)} = ${CORP_CURRENT}\` }),`);

  const ind = (l: string) => `    ${l}`;
  return `export const ${key} = pgTable(\n  ${JSON.stringify(t)},\n  {\n${lines.map(ind).join("\n")}\n  },\n  (t) => [\n${extra.map(ind).join("\n")}\n  ],\n);`;
}

export function tsFile(schema: Record<string, unknown>, source: string, shared: boolean): string {
  const entries = Object.entries(schema).filter((e): e is [string, SQLiteTable] => is(e[1], SQLiteTable));
  const names = new Map(entries.map(([k, v]) => [v, k]));
  const body = entries.map(([k, v]) => tsTable(v, k, names, shared)).join("\n\n");
  const builders = ["bigint", "boolean", "doublePrecision", "foreignKey", "index", "jsonb", "numeric", "pgPolicy", "pgTable", "primaryKey", "text", "unique", "uniqueIndex"].filter((b) =>
    new RegExp(`\\b${b}\\(`).test(body),
  );
  const lines = [
    `// GENERATED by scripts/pg-schema.ts from ${source} (drizzle-orm getTableConfig): do not edit.`,
    "// Regenerate: `bun run db:generate` (runs this script, then drizzle-kit writes migrations/pg).",
    shared
      ? `// Shared layout: every corporation's rows in the same tables, ${CORP_COLUMN} first (defaulting to the transaction's`
      : "// Platform tables: one set per installation, no row-level security.",
    ...(shared
      ? [
          `// ${CORP_SETTING}), leading every key, index and foreign key; a row-level security policy per table`,
          "// (drizzle-kit enables RLS and creates it; FORCE is applied by src/db/pg/migrate.ts).",
        ]
      : []),
    "// Text enums are TypeScript types only, as on SQLite (no CHECK); ids and timestamps are computed in the app.",
    ...SKIPPED.filter((x) => x.startsWith("CHECK")).map((x) => `// Left out: ${x}`),
    ...(/\bsql`/.test(body) ? ['import { sql } from "drizzle-orm";'] : []),
    `import { ${builders.join(", ")} } from "drizzle-orm/pg-core";`,
    ...(/\bbytea\(/.test(body) ? ['import { bytea } from "./columns";'] : []),
    ...(/\bnewId\b/.test(body) ? ['import { newId } from "../../lib/ids";'] : []),
    ...(/\bnowIso\b/.test(body) ? ['import { nowIso } from "../../lib/time";'] : []),
    "",
    body,
    "",
  ];
  return lines.join("\n");
}

export const tenantTables = (): SQLiteTable[] => tablesOf(tenantSchema);
export const platformTables = (): SQLiteTable[] => tablesOf(platformSchema);

/** The tenant DDL, unqualified: for the schema layout run it with search_path set to the tenant's schema. */
export const tenantStatements = (layout: Layout): string[] => statements(tenantTables(), layout === "shared");
export const platformStatements = (): string[] => statements(platformTables(), false);

function header(what: string, source: string, layout?: Layout): string {
  const lines = [
    `-- GENERATED by scripts/pg-schema.ts from ${source} (drizzle-orm getTableConfig): do not edit.`,
    `-- Regenerate: bun scripts/pg-schema.ts${layout ? ` --layout ${layout}` : ""}`,
    `-- ${what}`,
    "-- Types: text→text, integer→bigint (a lone integer primary key, SQLite's rowid, → identity),",
    "-- integer boolean mode→boolean, real→double precision, blob→bytea, json text→text, no-affinity blob→jsonb.",
    "-- Left out:",
    ...SKIPPED.map((s) => `--   ${s}`),
  ];
  return lines.join("\n") + "\n";
}

export function tenantFile(layout: Layout): string {
  const what =
    layout === "schema"
      ? "Tenant tables, layout `schema`: one PostgreSQL schema per corporation (psql -v schema=corp_<id> -f tenant.sql)."
      : `Tenant tables, layout \`shared\`: every corporation in the same tables, ${CORP_COLUMN} leading every key, forced row-level security on ${CORP_SETTING}.`;
  const pre = layout === "schema" ? ['CREATE SCHEMA :"schema";', 'SET search_path TO :"schema";'] : [];
  return `${header(what, "src/db/tenant/schema.ts", layout)}\n${[...pre, ...tenantStatements(layout)].join("\n\n")}\n`;
}

export function platformFile(): string {
  return `${header("Platform tables (one set per installation).", "src/db/platform/schema.ts")}\n${platformStatements().join("\n\n")}\n`;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--layout");
  const layout = (at >= 0 ? args[at + 1] : "shared") as Layout;
  if (layout !== "schema" && layout !== "shared") throw new Error("--layout schema|shared");
  if (args.includes("--stdout")) {
    process.stdout.write(platformFile() + "\n" + tenantFile(layout));
  } else {
    const dir = join(import.meta.dir, "..", "src", "db", "pg");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "platform.sql"), platformFile());
    writeFileSync(join(dir, "tenant.sql"), tenantFile(layout));
    writeFileSync(join(dir, "platform.ts"), tsFile(platformSchema, "src/db/platform/schema.ts", false));
    writeFileSync(join(dir, "tenant.ts"), tsFile(tenantSchema, "src/db/tenant/schema.ts", true));
    console.log(`wrote src/db/pg/platform.sql and src/db/pg/tenant.sql (layout ${layout}), src/db/pg/platform.ts and src/db/pg/tenant.ts`);
  }
}
