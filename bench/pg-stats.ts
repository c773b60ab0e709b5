// The profiles' PostgreSQL side (bench/*-profile.ts): a throwaway durable server with a database
// "bench" for the app, and the superuser's view of that database around the measured part —
// transactions (pg_stat_database, which backends report up to a second late: a rough figure) and,
// with STATS=1, the statements by total time (pg_stat_statements: execution + planning).
import { SQL } from "bun";
import { startPostgres, type TestPostgres } from "../test/support/postgres";

/** Loaded only with STATS=1: tracking every statement's plans costs the server a little. */
const STATEMENT_SETTINGS = { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track_planning": "on", "pg_stat_statements.track": "all" };

/**
 * `engine` "pg": the server (fsync and synchronous_commit on, as production runs it) and the app's
 * database; `stats`: STATS=1 was asked (PostgreSQL only). Any other engine: nothing started.
 */
export async function benchPostgres(engine: string): Promise<{ pg: TestPostgres | null; db: { url: string; appUrl: string } | null; stats: boolean }> {
  if (engine !== "pg" && engine !== "sqlite") {
    // `--help` or a mistyped engine: the script's header says what it measures and how to call it.
    const lines = (await Bun.file(process.argv[1]).text()).split("\n");
    const header = lines.slice(0, lines.findIndex((l) => !l.startsWith("//")));
    process.stdout.write(header.map((l) => l.replace(/^\/\/ ?/, "")).join("\n") + "\n");
    process.exit(engine === "--help" || engine === "-h" ? 0 : 2);
  }
  const stats = engine === "pg" && !!process.env.STATS;
  if (engine !== "pg") return { pg: null, db: null, stats };
  const pg = await startPostgres({ durable: true, settings: stats ? STATEMENT_SETTINGS : {} });
  return { pg, db: await pg.createDatabase("bench"), stats };
}

/** One statement of the measured part: per unit (an upsert, a record, a delivery) and per call. */
export interface StatementCost {
  calls: number;
  rows: number;
  /** Total ms: execution, planning. */
  exec: number;
  plan: number;
  plans: number;
  query: string;
}

export class PgStats {
  private constructor(
    private su: SQL,
    private stats: boolean,
  ) {}

  /**
   * Opened just before the measured part: the tables analyzed as autovacuum leaves them within a
   * minute (without statistics the pool's generic plans pick among the corp_id-led indexes at
   * random; an ANALYZE invalidates the cached plans), and with `stats` the statements counted from
   * zero.
   */
  static async open(db: { url: string }, stats: boolean): Promise<PgStats> {
    const su = new SQL({ url: db.url, max: 1 });
    await su.unsafe("ANALYZE");
    if (stats) {
      await su.unsafe("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
      await su.unsafe("SELECT pg_stat_statements_reset()");
    }
    return new PgStats(su, stats);
  }

  /** Transactions of the bench database so far (committed and rolled back). */
  async xacts(): Promise<number> {
    return Number((await this.su.unsafe("SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = 'bench'"))[0].n);
  }

  /** The statements since `open` by total time, the `limit` costliest (without STATS=1: none). Its own pg_stat_* reads are left out. */
  async statements(limit: number, width = 160): Promise<StatementCost[]> {
    if (!this.stats) return [];
    const rows = await this.su.unsafe(`SELECT calls, rows, total_exec_time AS exec, total_plan_time AS plan, plans, left(regexp_replace(query, '\\s+', ' ', 'g'), ${width}) AS q
      FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'bench') AND query NOT LIKE '%pg_stat_%' ORDER BY total_exec_time + total_plan_time DESC LIMIT ${limit}`);
    return rows.map((r: Record<string, unknown>) => ({ calls: Number(r.calls), rows: Number(r.rows), exec: Number(r.exec), plan: Number(r.plan), plans: Number(r.plans), query: String(r.q) }));
  }

  async close(): Promise<void> {
    await this.su.close();
  }
}

/** A statement's line of the profiles' listing: µs per `unit` over `count` units, per call, calls per unit. */
export function statementLine(s: StatementCost, unit: string, count: number, callDigits = 2): string {
  const perUnit = (((s.exec + s.plan) * 1000) / count).toFixed(0).padStart(5);
  const exec = ((s.exec * 1000) / s.calls).toFixed(0).padStart(5);
  const plan = ((s.plan * 1000) / Math.max(1, s.calls)).toFixed(0).padStart(4);
  return `${perUnit} µs/${unit}  exec ${exec} plan ${plan} µs/call  calls/${unit} ${(s.calls / count).toFixed(callDigits)} plans ${s.plans} rows/call ${(s.rows / s.calls).toFixed(1)}  ${s.query}`;
}
