// `corpadmin copy-to-postgres --database-url postgres://... [--data-dir DIR] [--replace | --verify-only]`:
// moves an embedded site (the SQLite files under the data directory) into the shared PostgreSQL
// database of cluster mode, and verifies it (src/db/pg/copy.ts; deploy/cluster/README.md, section 4).
import { SQL } from "bun";
import { existsSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config";
import { migratePg } from "../db/pg/migrate";
import { copySite, CopyError, formatChecks, targetState, verifySite, type CopyResult, type CopySource } from "../db/pg/copy";
import { migrationPlan } from "./migrate";

const out = (line: string) => process.stdout.write(line + "\n");
const fail = (line: string) => process.stderr.write(`corpadmin: ${line}\n`);

export interface CopyFlags {
  databaseUrl: string;
  replace: boolean;
  verifyOnly: boolean;
}

const on = (v: string | undefined) => v !== undefined && v !== "false";

export function copyFlagsFrom(flags: Map<string, string>, env: Record<string, string | undefined> = process.env): CopyFlags {
  return {
    databaseUrl: (flags.get("database-url") ?? env.CORPADMIN_DATABASE_URL ?? "").trim(),
    replace: on(flags.get("replace")),
    verifyOnly: on(flags.get("verify-only")),
  };
}

/** PIDs of other processes that hold one of `paths` open (Linux /proc; elsewhere none are found). */
export function openersOf(paths: string[]): number[] {
  if (!existsSync("/proc/self/fd")) return [];
  const wanted = new Set(paths.flatMap((p) => [p, `${p}-wal`, `${p}-shm`]));
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or another user's process this one may not inspect
    }
    for (const fd of fds) {
      try {
        if (wanted.has(readlinkSync(`/proc/${pid}/fd/${fd}`))) {
          pids.push(pid);
          break;
        }
      } catch {
        // closed meanwhile
      }
    }
  }
  return pids;
}

/** The site's files: the platform's and each corporation's (where `corpadmin migrate` finds them). */
async function siteOf(dataDir: string): Promise<CopySource> {
  const plan = await migrationPlan(dataDir);
  if (!plan[0].exists) throw new CopyError(`${plan[0].path} does not exist: --data-dir must be the embedded site's data directory`);
  const behind = plan.filter((e) => e.exists && e.pending.length);
  if (behind.length)
    throw new CopyError(
      `${behind.length} database(s) of the site have pending migrations (${behind[0].path}: ${behind[0].pending.join(", ")}); ` +
        "run `corpadmin migrate` of this release on the site first",
    );
  // Every corporation has its file from its creation on: a missing one was not brought along
  // (a server's directory outside the data directory), and copying without it would lose its data.
  const missing = plan.slice(1).filter((e) => !e.exists);
  if (missing.length)
    throw new CopyError(
      `${missing.length} corporation database file(s) are missing (${missing.map((e) => `${e.auth_name}: ${e.path}`).join(", ")}); ` +
        "bring every server's directory to the paths the platform database names",
    );
  return {
    platform: plan[0].path,
    corporations: plan.slice(1).map((e) => ({ id: e.corp_id!, name: e.auth_name!, path: e.path })),
  };
}

function report(result: CopyResult, what: string): number {
  process.stdout.write(formatChecks(result.checks));
  const differ = result.checks.filter((c) => !c.ok);
  for (const f of result.failed) fail(`${f.database}: ${f.error}`);
  const rows = result.checks.reduce((n, c) => n + c.targetRows, 0);
  if (differ.length || result.failed.length) {
    fail(`${what} FAILED: ${differ.length} table(s) differ, ${result.failed.length} database(s) failed`);
    return 1;
  }
  out(`${what}: ${result.checks.length} table(s), ${rows} row(s); every row count and checksum equal`);
  return 0;
}

export async function copyToPostgres(config: Config, flags: CopyFlags): Promise<number> {
  if (!/^postgres(ql)?:\/\//.test(flags.databaseUrl)) {
    fail("copy-to-postgres needs --database-url postgres://user:password@host:port/database (or CORPADMIN_DATABASE_URL)");
    return 2;
  }
  if (flags.replace && flags.verifyOnly) {
    fail("--replace and --verify-only exclude each other");
    return 2;
  }
  let source: CopySource;
  try {
    source = await siteOf(config.dataDir);
  } catch (err) {
    if (err instanceof CopyError) {
      fail(`copy-to-postgres refused: ${err.message}`);
      return 1;
    }
    throw err;
  }
  // A running service would go on writing after its files were copied (lost in the cluster), and
  // each file's snapshot is taken at another moment: the service must be stopped.
  const files = [source.platform, ...source.corporations.map((c) => c.path)];
  const holders = openersOf(files);
  if (holders.length) {
    fail(`copy-to-postgres refused: process(es) ${holders.join(", ")} hold the site's database files open; stop the service first (systemctl stop corpadmin)`);
    return 1;
  }
  const client = new SQL({ url: flags.databaseUrl, max: 2 });
  try {
    if (flags.verifyOnly) return report(await verifySite(client, source), "verify");
    const migrated = await migratePg(client);
    if (migrated.applied.length) out(`PostgreSQL migrated: ${migrated.applied.length} migration(s) applied`);
    const state = await targetState(client);
    if (state.corporations || state.users) {
      if (!flags.replace) {
        fail(
          `copy-to-postgres refused: the PostgreSQL database already holds data (${state.corporations} corporation(s), ${state.users} user(s)). ` +
            "--replace deletes every row of every corpadmin table there (every corporation's data and the platform's) before the copy",
        );
        return 1;
      }
      const held = [...state.rows].filter(([, n]) => n).map(([t, n]) => `${t} ${n}`);
      out(`--replace: deleting every row of every corpadmin table (platform tables: ${held.join(", ")}; and every corporation's rows of the tenant tables)`);
    } else if ([...state.rows.values()].some((n) => n)) {
      // No corporation, no user: the built-in rows an app node seeds at start, which the site's replace.
      out(`the PostgreSQL database holds only built-in rows (${[...state.rows].filter(([, n]) => n).map(([t, n]) => `${t} ${n}`).join(", ")}): replaced by the site's`);
    }
    out(`copying ${config.dataDir}: platform + ${source.corporations.length} corporation(s)`);
    return report(await copySite(client, source, { log: out, replace: flags.replace }), "copy");
  } catch (err) {
    // The database unreachable, a refused login, a schema of another release: its message says it.
    fail(`copy-to-postgres failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    await client.close();
  }
}
