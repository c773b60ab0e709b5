// `corpadmin sql`: a read-only SQL shell over the embedded databases with the binary's own SQLite.
// The corporation databases use FTS5 options that older sqlite3 shells reject (contentless_delete:
// 3.43; the trigram tokenizer's remove_diacritics: 3.45; Debian 12 ships 3.40), so an operator
// could not look into them. Read-only twice: the file is opened SQLITE_OPEN_READONLY and the
// connection is `query_only`, so no statement can change it, also while the service runs on it
// (src/db/files.ts ReadOnlyDatabaseFile).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Config } from "../config";
import { ReadOnlyDatabaseFile } from "../db/files";
import { corporationFiles } from "./migrate";

export const SQL_HELP = `Usage: corpadmin sql [--corp ID|AUTH_NAME] [-c "SQL"] [--csv] [--data-dir DIR]

A read-only SQL shell over the SQLite files of the data directory, with the binary's own SQLite
(the files need SQLite 3.45 or newer, which Debian 12's sqlite3 is not). Without --corp: the
platform database (platform.db); with it: that corporation's database. Nothing can be written.
  -c "SQL"   run one statement, print its rows and exit (1 when it fails)
  --csv      rows as CSV (a header line first) instead of a table
Without -c, statements are read from standard input, each ending with ";"; commands:
  .tables    the tables        .schema [TABLE]   their CREATE statements
  .quit      leave (end of input too)
Embedded mode only: in cluster mode (--database-url) use psql with a role that only reads.
`;

export interface SqlOptions {
  corp: string | null;
  command: string | null;
  csv: boolean;
}

export class SqlUsageError extends Error {}

/** -c takes one dash, which parseFlags does not read: the command's own flags come from argv. */
export function sqlOptionsFrom(argv: string[]): SqlOptions {
  const o: SqlOptions = { corp: null, command: null, csv: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new SqlUsageError(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "-c" || a === "--command") o.command = next();
    else if (a.startsWith("--command=")) o.command = a.slice(10);
    else if (a === "--corp") o.corp = next();
    else if (a.startsWith("--corp=")) o.corp = a.slice(7);
    else if (a === "--csv" || a === "--csv=true") o.csv = true;
  }
  if (o.command !== null && !o.command.trim()) throw new SqlUsageError("-c needs a statement");
  return o;
}

/** The database file `--corp` names (an id or an auth name), or platform.db. */
async function databaseFile(dataDir: string, corp: string | null): Promise<string> {
  const platform = join(dataDir, "platform.db");
  if (!existsSync(platform)) throw new SqlUsageError(`${platform} does not exist: --data-dir must be corpadmin's data directory`);
  if (corp === null) return platform;
  const found = (await corporationFiles(dataDir)).find((c) => c.id === corp || c.auth_name === corp);
  if (!found) throw new SqlUsageError(`no corporation ${JSON.stringify(corp)} (by id or auth name) in ${platform}`);
  if (!existsSync(found.path)) throw new SqlUsageError(`corporation ${found.auth_name}'s database ${found.path} does not exist`);
  return found.path;
}

/**
 * Splits text at the semicolons that end statements (not those inside quotes or comments):
 * the complete statements, and what follows the last semicolon (an unfinished one, or "").
 */
export function splitStatements(sql: string): { statements: string[]; rest: string } {
  const statements: string[] = [];
  let start = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    const close = c === "'" || c === '"' || c === "`" ? c : c === "[" ? "]" : null;
    if (close) {
      const end = sql.indexOf(close, i + 1);
      if (end < 0) break;
      i = end;
      // '' inside a string is a quote, and the scan goes on past it.
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      if (end < 0) break;
      i = end;
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      if (end < 0) break;
      i = end + 1;
    } else if (c === ";") {
      const statement = sql.slice(start, i).trim();
      if (statement) statements.push(statement);
      start = i + 1;
    }
  }
  return { statements, rest: sql.slice(start).trim() };
}

/** A value as sqlite3 prints it: NULL empty, blobs as x'hex'. */
function text(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (value instanceof Uint8Array) return `x'${Buffer.from(value).toString("hex")}'`;
  return String(value);
}

/** RFC 4180, values as they are (as sqlite3's .mode csv: no spreadsheet formula guard). */
function csvRow(values: unknown[]): string {
  return values.map((v) => (/[",\r\n]/.test(text(v)) ? `"${text(v).replace(/"/g, '""')}"` : text(v))).join(",") + "\r\n";
}

/** Columns padded to their widest value, with a rule under the header (sqlite3's .mode column). */
function table(columns: string[], rows: unknown[][]): string {
  const cells = rows.map((r) => r.map((v) => text(v).replace(/\r?\n/g, "\\n")));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i])).join("  ").trimEnd() + "\n";
  return line(columns) + line(widths.map((w) => "-".repeat(w))) + cells.map(line).join("") + `(${rows.length} row${rows.length === 1 ? "" : "s"})\n`;
}

/** Runs one statement and returns what to print. */
function run(db: ReadOnlyDatabaseFile, statement: string, csv: boolean): string {
  const { columns, rows } = db.run(statement);
  if (!columns.length) return "";
  return csv ? csvRow(columns) + rows.map(csvRow).join("") : table(columns, rows);
}

function dotCommand(db: ReadOnlyDatabaseFile, line: string, csv: boolean): string {
  const [cmd, arg] = line.trim().split(/\s+/);
  if (cmd === ".tables") return run(db, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name", csv);
  if (cmd === ".schema") {
    const { rows } = db.run("SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND (?1 = '' OR tbl_name = ?1) ORDER BY tbl_name, type DESC, name", arg ?? "");
    return rows.map(([sql]) => `${sql};\n`).join("");
  }
  throw new Error(`unknown command ${cmd} (.tables, .schema [TABLE], .quit)`);
}

export async function sqlShell(config: Config, argv: string[]): Promise<number> {
  let o: SqlOptions;
  let path: string;
  try {
    if (config.databaseUrl) throw new SqlUsageError("corpadmin sql reads the SQLite files of embedded mode; in cluster mode (--database-url) use psql with a role that only reads");
    o = sqlOptionsFrom(argv);
    path = await databaseFile(config.dataDir, o.corp);
  } catch (err) {
    if (!(err instanceof SqlUsageError)) throw err;
    process.stderr.write(`corpadmin: ${err.message}\n(corpadmin sql --help)\n`);
    return 2;
  }
  const db = new ReadOnlyDatabaseFile(path);
  try {
    if (o.command !== null) {
      try {
        const { statements, rest } = splitStatements(o.command);
        if (statements.length + (rest ? 1 : 0) > 1) throw new Error("-c runs one statement: give the others one -c each, or feed them on standard input");
        process.stdout.write(run(db, statements[0] ?? rest, o.csv));
        return 0;
      } catch (err) {
        process.stderr.write(`corpadmin: ${(err as Error).message}\n`);
        return 1;
      }
    }
    return await interactive(db, o.csv, path);
  } finally {
    db.close();
  }
}

/** Statements from standard input, each ending with `;` (a prompt when it is a terminal). */
async function interactive(db: ReadOnlyDatabaseFile, csv: boolean, path: string): Promise<number> {
  const tty = process.stdin.isTTY === true;
  if (tty) process.stdout.write(`${path} (read-only; SQLite ${db.engineVersion()}). End statements with ";", .quit to leave.\n`);
  const lines = createInterface({ input: process.stdin, terminal: false });
  let buffer = "";
  let failed = false;
  const prompt = () => tty && process.stdout.write(buffer ? "...> " : "sql> ");
  prompt();
  for await (const line of lines) {
    if (!buffer && line.trim().startsWith(".")) {
      if (/^\.(quit|exit)\b/.test(line.trim())) break;
      try {
        process.stdout.write(dotCommand(db, line, csv));
      } catch (err) {
        failed = true;
        process.stderr.write(`error: ${(err as Error).message}\n`);
      }
      prompt();
      continue;
    }
    const { statements, rest } = splitStatements(buffer + (buffer ? "\n" : "") + line);
    for (const statement of statements) {
      try {
        process.stdout.write(run(db, statement, csv));
      } catch (err) {
        failed = true;
        process.stderr.write(`error: ${(err as Error).message}\n`);
      }
    }
    buffer = rest;
    prompt();
  }
  if (buffer.trim()) {
    process.stderr.write("error: the last statement has no closing \";\": not run\n");
    failed = true;
  }
  if (tty) process.stdout.write("\n");
  return failed ? 1 : 0;
}
