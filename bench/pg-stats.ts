// The profiles' PostgreSQL side (bench/*-profile.ts): a throwaway durable server with a database
// "bench" for the app, and the superuser's view of that database around the measured part —
// transactions (pg_stat_database, which backends report up to a second late: a rough figure) and,
// with STATS=1, the statements by total time (pg_stat_statements: execution + planning).
import { SQL } from "bun";
import { startPostgres, type TestPostgres } from "../test/support/postgres";
import { childrenByPid, childrenCpuByKindUs, endedChildrenCpuUs } from "./proc-cpu";

/** Loaded only with STATS=1: tracking every statement's plans costs the server a little. */
const STATEMENT_SETTINGS = { "pg_stat_statements.track_planning": "on", "pg_stat_statements.track": "all" };

/**
 * EXPLAIN=<dir> (PostgreSQL): auto_explain logs the statements' plans with their actual rows,
 * timings, buffers, triggers and nested statements (the foreign-key checks) into the server's log
 * files in <dir> — from `PgStats.explainFromNow()` on (the set-up's statements are not logged), a
 * `sample` of them. Slow: its timings add to every statement; for where a statement's time goes,
 * not for rates.
 */
export interface Explain {
  dir: string;
  sample?: number;
}

/**
 * `engine` "pg": the server and the app's database; `durable` (default): fsync and
 * synchronous_commit on, as production runs it; `stats`: STATS=1 was asked; `explain`: EXPLAIN=<dir>
 * was asked (both PostgreSQL only). Any other engine: nothing started.
 */
export async function benchPostgres(
  engine: string,
  { durable = true, explainSample = 1 }: { durable?: boolean; explainSample?: number } = {},
): Promise<{ pg: TestPostgres | null; db: { url: string; appUrl: string } | null; stats: boolean; explain: Explain | null }> {
  if (engine !== "pg" && engine !== "sqlite") {
    // `--help` or a mistyped engine: the script's header says what it measures and how to call it.
    const lines = (await Bun.file(process.argv[1]).text()).split("\n");
    const header = lines.slice(0, lines.findIndex((l) => !l.startsWith("//")));
    process.stdout.write(header.map((l) => l.replace(/^\/\/ ?/, "")).join("\n") + "\n");
    process.exit(engine === "--help" || engine === "-h" ? 0 : 2);
  }
  const stats = engine === "pg" && !!process.env.STATS;
  const explain = engine === "pg" && process.env.EXPLAIN ? { dir: process.env.EXPLAIN, sample: explainSample } : null;
  if (engine !== "pg") return { pg: null, db: null, stats, explain };
  const preload = [...(stats ? ["pg_stat_statements"] : []), ...(explain ? ["auto_explain"] : [])];
  const pg = await startPostgres({
    durable,
    settings: {
      ...(preload.length ? { shared_preload_libraries: preload.join(",") } : {}),
      ...(stats ? STATEMENT_SETTINGS : {}),
      ...(explain
        ? {
            logging_collector: "on",
            log_directory: explain.dir,
            "auto_explain.log_min_duration": "-1",
            "auto_explain.log_analyze": "on",
            "auto_explain.log_buffers": "on",
            "auto_explain.log_nested_statements": "on",
            "auto_explain.log_triggers": "on",
            "auto_explain.sample_rate": String(explain.sample ?? 1),
          }
        : {}),
    },
  });
  return { pg, db: await pg.createDatabase("bench"), stats, explain };
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
      await su.unsafe("CREATE EXTENSION IF NOT EXISTS pg_walinspect");
      await su.unsafe("SELECT pg_stat_statements_reset()");
    }
    return new PgStats(su, stats);
  }

  /** STATS=1: the statements counted from zero again (a profile measuring several steps). */
  async reset(): Promise<void> {
    if (this.stats) await this.su.unsafe("SELECT pg_stat_statements_reset()");
  }

  /** EXPLAIN=<dir>: auto_explain logs from here on (benchPostgres started it logging nothing). */
  async explainFromNow(): Promise<void> {
    await this.su.unsafe("ALTER SYSTEM SET auto_explain.log_min_duration = 0");
    await this.su.unsafe("SELECT pg_reload_conf()");
    await Bun.sleep(200);
  }

  /** WAL written so far (pg_stat_wal): records, full-page images, bytes — what durability costs. */
  async wal(): Promise<{ records: number; fpi: number; bytes: number; lsn: string }> {
    const [w] = await this.su.unsafe("SELECT wal_records::int8 AS records, wal_fpi::int8 AS fpi, wal_bytes::int8 AS bytes, pg_current_wal_insert_lsn()::text AS lsn FROM pg_stat_wal");
    return { records: Number(w.records), fpi: Number(w.fpi), bytes: Number(w.bytes), lsn: String(w.lsn) };
  }

  /** STATS=1: the WAL records between two `wal()` readings by kind (pg_walinspect), the `limit` most frequent. */
  async walKinds(from: { lsn: string }, to: { lsn: string }, limit = 14): Promise<{ kind: string; count: number }[]> {
    if (!this.stats) return [];
    const rows = await this.su.unsafe(`SELECT "resource_manager/record_type" AS kind, count FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) WHERE count > 0 ORDER BY count DESC LIMIT ${limit}`, [from.lsn, to.lsn]);
    return rows.map((r: { kind: string; count: unknown }) => ({ kind: r.kind, count: Number(r.count) }));
  }

  /** A statement of the profile's own as the superuser (what it stored, a plan), its rows. */
  async rows(text: string): Promise<Record<string, unknown>[]> {
    return await this.su.unsafe(text);
  }

  /** Whether updates stay on their page (HOT: no index entry written), per table, since the server started. */
  async hotUpdates(limit = 8): Promise<string[]> {
    const rows = await this.su.unsafe(`SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE n_tup_upd > 0 ORDER BY n_tup_upd DESC LIMIT ${limit}`);
    return rows.map((r: Record<string, unknown>) => `${r.relname}: ${r.n_tup_ins} inserted, ${r.n_tup_upd} updated, ${r.n_tup_hot_upd} of them HOT`);
  }

  /** The backends holding a LISTEN (the app's change feed), told apart in the server's CPU by process. */
  async listenerPids(): Promise<Set<number>> {
    return new Set((await this.su.unsafe("SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN%'")).map((r: { pid: number }) => Number(r.pid)));
  }

  /** Transactions of the bench database so far (committed and rolled back). */
  async xacts(): Promise<number> {
    return Number((await this.su.unsafe("SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = 'bench'"))[0].n);
  }

  /**
   * The statements since `open` (or `reset`) by total time, the `limit` costliest (all when none
   * is given; without STATS=1: none). Its own pg_stat_* reads are left out.
   */
  async statements(limit?: number, width = 160): Promise<StatementCost[]> {
    if (!this.stats) return [];
    const rows = await this.su.unsafe(`SELECT calls, rows, total_exec_time AS exec, total_plan_time AS plan, plans, left(regexp_replace(query, '\\s+', ' ', 'g'), ${width}) AS q
      FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'bench') AND query NOT LIKE '%pg_stat_%' ORDER BY total_exec_time + total_plan_time DESC ${limit === undefined ? "" : `LIMIT ${limit}`}`);
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

/** What a profile's measured part cost, in total (divide by the units it ran). */
export interface Measured {
  wallMs: number;
  /** The app's process (process.cpuUsage: every thread) and its main thread alone, µs. */
  appUs: number;
  appMainUs: number;
  /** The server's processes, µs, in all and by kind of process (proc-cpu childrenCpuByKindUs). */
  pgUs: number;
  pgByKindUs: Record<string, number>;
  /** The bench database's transactions (pg_stat_database: reported up to a second late, rough). */
  xacts: number;
}

/**
 * `run` measured: the app's CPU, the server's and the transactions between two readings, after a
 * full collection (the set-up's garbage is not the run's). `after`: what must happen between the
 * CPU's second reading and the transactions' (a dispatcher stopped, the statistics let arrive).
 */
export async function measured(
  pg: TestPostgres | null,
  su: PgStats | null,
  run: () => Promise<unknown>,
  { listeners, after }: { listeners?: Set<number>; after?: () => Promise<unknown> } = {},
): Promise<Measured> {
  Bun.gc(true);
  const x0 = su ? await su.xacts() : 0;
  const kinds0 = pg ? childrenCpuByKindUs(pg.pid, listeners) : {};
  const c0 = process.cpuUsage();
  const m0 = process.threadCpuUsage();
  const w0 = performance.now();
  await run();
  const wallMs = performance.now() - w0;
  const c1 = process.cpuUsage(c0);
  const m1 = process.threadCpuUsage(m0);
  const kinds1 = pg ? childrenCpuByKindUs(pg.pid, listeners) : {};
  await after?.();
  const x1 = su ? await su.xacts() : 0;
  const pgByKindUs: Record<string, number> = {};
  for (const [kind, us] of Object.entries(kinds1)) if (us !== (kinds0[kind] ?? 0)) pgByKindUs[kind] = us - (kinds0[kind] ?? 0);
  return {
    wallMs,
    appUs: c1.user + c1.system,
    appMainUs: m1.user + m1.system,
    pgUs: Object.values(pgByKindUs).reduce((a, b) => a + b, 0),
    pgByKindUs,
    // The second reading's own transaction left out.
    xacts: su ? x1 - x0 - 1 : 0,
  };
}

/** The machine's load average (1, 5, 15 minutes): beside every figure, what else was running. */
export async function loadAverage(): Promise<string> {
  return (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ");
}

/**
 * What PostgreSQL's own background did over a span (a bench row, the wait before one): autovacuum's
 * and manual vacuums and analyzes by table, checkpoints, WAL, and the server's CPU by kind of
 * process, so that a row's own cost can be told from what earlier rows left behind.
 */
export interface BackgroundReport {
  seconds: number;
  /** autovacuum's work seen under way ("VACUUM ANALYZE persons" → seconds seen in the samples), in the order first seen. */
  autovacuum_seen: Record<string, number>;
  /** Vacuums and analyzes that finished, by table: "persons" → "autovacuum 1, autoanalyze 1". */
  finished: Record<string, string>;
  checkpoints_timed: number;
  checkpoints_requested: number;
  /** Buffers the checkpointer wrote (a spread checkpoint writes over checkpoint_completion_target of its interval). */
  checkpoint_buffers: number;
  wal_mb: number;
  /** Full-page images: a page's first change after a checkpoint logs the whole 8 kB page. */
  wal_fpi: number;
  /** The WAL's MB by resource manager (pg_walinspect), the largest 4: whose writes it was (Heap, Btree, Gin, ...). */
  wal_mb_by_kind: Record<string, number>;
  /** The sessions' statements seen under way in the samples (their first words), the 4 most seen, with how many times. */
  statements_seen: Record<string, number>;
  /** The server's CPU by kind of process, ms (`ended processes`: the part of processes that ended after the last sample). */
  cpu_ms: Record<string, number>;
}

interface BackgroundSnapshot {
  at: number;
  tables: Map<string, number[]>;
  checkpoints: { timed: number; requested: number; buffers: number };
  wal: { bytes: number; fpi: number; lsn: string };
  procs: Map<number, { kind: string; us: number }>;
  endedUs: number;
}

/** The autovacuum settings a table's storage parameters may override, and the server's values of them. */
const AUTOVACUUM_SETTINGS = [
  "autovacuum_vacuum_threshold",
  "autovacuum_vacuum_scale_factor",
  "autovacuum_vacuum_insert_threshold",
  "autovacuum_vacuum_insert_scale_factor",
  "autovacuum_analyze_threshold",
  "autovacuum_analyze_scale_factor",
] as const;

/** One table autovacuum would process now, and what it would run. */
export interface DueTable {
  table: string;
  vacuum: boolean;
  analyze: boolean;
}

export class PgBackground {
  private constructor(
    private su: SQL,
    private pgPid: number,
    private walinspect: boolean,
  ) {}

  /**
   * `url`: the superuser's URL of the database to watch (its tables); `pgPid`: the server's
   * postmaster. pg_walinspect (contrib) is created in that database when it can be, for the WAL by kind.
   */
  static async open(url: string, pgPid: number): Promise<PgBackground> {
    const su = new SQL({ url, max: 1 });
    const walinspect = await su.unsafe("CREATE EXTENSION IF NOT EXISTS pg_walinspect").then(() => true, () => false);
    return new PgBackground(su, pgPid, walinspect);
  }

  private async snapshot(): Promise<BackgroundSnapshot> {
    const tables = await this.su.unsafe("SELECT relname, autovacuum_count, autoanalyze_count, vacuum_count, analyze_count FROM pg_stat_user_tables");
    const [c] = await this.su.unsafe("SELECT checkpoints_timed::int8 AS timed, checkpoints_req::int8 AS requested, buffers_checkpoint::int8 AS buffers FROM pg_stat_bgwriter");
    const [w] = await this.su.unsafe("SELECT wal_bytes::int8 AS bytes, wal_fpi::int8 AS fpi, pg_current_wal_flush_lsn()::text AS lsn FROM pg_stat_wal");
    return {
      at: performance.now(),
      tables: new Map(tables.map((t: Record<string, unknown>) => [String(t.relname), [t.autovacuum_count, t.autoanalyze_count, t.vacuum_count, t.analyze_count].map(Number)])),
      checkpoints: { timed: Number(c.timed), requested: Number(c.requested), buffers: Number(c.buffers) },
      wal: { bytes: Number(w.bytes), fpi: Number(w.fpi), lsn: String(w.lsn) },
      procs: childrenByPid(this.pgPid),
      endedUs: endedChildrenCpuUs(this.pgPid),
    };
  }

  /** autovacuum's workers under way: "VACUUM ANALYZE persons", with the database when not this one. */
  async autovacuumRunning(): Promise<string[]> {
    return (await this.activity()).autovacuum;
  }

  /**
   * Waits until the app is idle for a second (`maxMs` at most): four looks in a row, 250 ms apart,
   * where this database's sessions run no statement, the WAL has not moved and the app's process
   * (`appCpuUs`, its CPU so far) used under a tenth of a core. Then the writes the app put off until
   * after a load (the QR scans' recorder, the dispatcher's outcomes) are done. Seconds waited (0
   * when idle at once) and the statements seen meanwhile.
   */
  async untilIdle(appCpuUs: () => number, maxMs = 60_000): Promise<{ seconds: number; statements: Record<string, number> }> {
    const t0 = performance.now();
    const statements = new Map<string, number>();
    const position = async () => String((await this.su.unsafe("SELECT pg_current_wal_insert_lsn()::text AS lsn"))[0].lsn);
    let lsn = await position();
    let cpu = appCpuUs();
    let quiet = 0;
    let busy = false;
    while (quiet < 4 && performance.now() - t0 < maxMs) {
      await Bun.sleep(250);
      const now = (await this.activity()).statements;
      const [lsn1, cpu1] = [await position(), appCpuUs()];
      const still = now.length === 0 && lsn1 === lsn && cpu1 - cpu < 25_000;
      for (const q of now) statements.set(q, (statements.get(q) ?? 0) + 1);
      [lsn, cpu] = [lsn1, cpu1];
      if (still) quiet++;
      else [quiet, busy] = [0, true];
    }
    const seconds = busy ? Math.max(0, Math.round((performance.now() - t0 - 1000) / 100) / 10) : 0;
    return { seconds, statements: Object.fromEntries([...statements].sort((a, b) => b[1] - a[1]).slice(0, 4)) };
  }

  /** autovacuum's workers under way, and the first words of the statements this database's sessions (not this one) are running. */
  private async activity(): Promise<{ autovacuum: string[]; statements: string[] }> {
    const rows = await this.su.unsafe(
      `SELECT backend_type = 'autovacuum worker' AS autovacuum, datname = current_database() AS here, datname, left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS query
        FROM pg_stat_activity WHERE (backend_type = 'autovacuum worker' AND query LIKE 'autovacuum: %')
          OR (backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid() AND datname = current_database())`,
    );
    const out = { autovacuum: [] as string[], statements: [] as string[] };
    for (const r of rows as { autovacuum: boolean; here: boolean; datname: string; query: string }[]) {
      if (!r.autovacuum) out.statements.push(r.query);
      else {
        const what = r.query.replace(/^autovacuum: /, "").replace(/\bpublic\./, "");
        out.autovacuum.push(r.here ? what : `${what} (database ${r.datname})`);
      }
    }
    return out;
  }

  /**
   * Watches from now until `stop()`: every `everyMs` the server's processes (so that a process
   * ending before the end is still known by its kind) and autovacuum's workers.
   */
  async watch(everyMs = 1000): Promise<{ stop: () => Promise<BackgroundReport> }> {
    const start = await this.snapshot();
    const seen = new Map<number, { kind: string; us: number }>(start.procs);
    const autovacuum = new Map<string, number>();
    const statements = new Map<string, number>();
    let sampling: Promise<void> = Promise.resolve();
    const sample = async () => {
      for (const [pid, p] of childrenByPid(this.pgPid)) seen.set(pid, p);
      const now = await this.activity();
      for (const what of now.autovacuum) autovacuum.set(what, (autovacuum.get(what) ?? 0) + everyMs / 1000);
      for (const q of now.statements) statements.set(q, (statements.get(q) ?? 0) + 1);
    };
    const timer = setInterval(() => {
      sampling = sampling.then(sample, () => {});
    }, everyMs);
    return {
      stop: async () => {
        clearInterval(timer);
        await sampling.catch(() => {});
        await sample();
        const end = await this.snapshot();
        const walKinds = this.walinspect
          ? await this.su.unsafe(`SELECT "resource_manager/record_type" AS kind, combined_size::int8 AS bytes FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, false) WHERE combined_size > 0 ORDER BY combined_size DESC LIMIT 4`, [start.wal.lsn, end.wal.lsn]).catch(() => [])
          : [];
        const report = this.report(start, end, seen, autovacuum);
        report.wal_mb_by_kind = Object.fromEntries(walKinds.map((k: { kind: string; bytes: unknown }) => [k.kind, Math.round(Number(k.bytes) / 1e5) / 10]));
        report.statements_seen = Object.fromEntries([...statements].sort((a, b) => b[1] - a[1]).slice(0, 4));
        return report;
      },
    };
  }

  private report(start: BackgroundSnapshot, end: BackgroundSnapshot, seen: Map<number, { kind: string; us: number }>, autovacuum: Map<string, number>): BackgroundReport {
    const cpu: Record<string, number> = {};
    const add = (kind: string, us: number) => {
      if (us > 0) cpu[kind] = (cpu[kind] ?? 0) + us;
    };
    // Live at the end: what it used since the start (all of it when it started meanwhile). Ended
    // meanwhile: up to its last sample by its kind, the rest (after that sample) as `ended processes`.
    let endedSeenUs = 0;
    for (const [pid, p] of seen) {
      const from = start.procs.get(pid)?.us ?? 0;
      const last = end.procs.get(pid);
      if (last) add(last.kind, last.us - from);
      else {
        add(p.kind, p.us - from);
        endedSeenUs += p.us;
      }
    }
    add("ended processes", end.endedUs - start.endedUs - endedSeenUs);
    const finished: Record<string, string> = {};
    const names = ["autovacuum", "autoanalyze", "vacuum", "analyze"];
    for (const [table, counts] of end.tables) {
      const before = start.tables.get(table) ?? [0, 0, 0, 0];
      const parts = counts.map((n, i) => n - before[i]).flatMap((d, i) => (d > 0 ? [`${names[i]} ${d}`] : []));
      if (parts.length) finished[table] = parts.join(", ");
    }
    return {
      seconds: Math.round((end.at - start.at) / 100) / 10,
      autovacuum_seen: Object.fromEntries([...autovacuum].map(([k, s]) => [k, Math.round(s * 10) / 10])),
      finished,
      checkpoints_timed: end.checkpoints.timed - start.checkpoints.timed,
      checkpoints_requested: end.checkpoints.requested - start.checkpoints.requested,
      checkpoint_buffers: end.checkpoints.buffers - start.checkpoints.buffers,
      wal_mb: Math.round((end.wal.bytes - start.wal.bytes) / 1e5) / 10,
      wal_fpi: end.wal.fpi - start.wal.fpi,
      wal_mb_by_kind: {},
      statements_seen: {},
      cpu_ms: Object.fromEntries(Object.entries(cpu).sort((a, b) => b[1] - a[1]).map(([k, us]) => [k, Math.round(us / 1000)])),
    };
  }

  /**
   * The tables autovacuum would process at its next look (PostgreSQL 15's relation_needs_vacanalyze:
   * dead rows over threshold + scale × rows, rows inserted since the last vacuum over the insert
   * threshold + scale × rows, rows changed since the last analyze over its own), with each table's
   * storage parameters over the server's settings. The counts reach the statistics up to a second
   * after their transactions.
   */
  async dueTables(): Promise<DueTable[]> {
    const settings = Object.fromEntries(
      (await this.su.unsafe(`SELECT name, setting FROM pg_settings WHERE name IN (${AUTOVACUUM_SETTINGS.map((n) => `'${n}'`).join(", ")}) OR name = 'autovacuum'`)).map(
        (r: { name: string; setting: string }) => [r.name, r.setting],
      ),
    );
    if (settings.autovacuum !== "on") return [];
    const rows = await this.su.unsafe(`SELECT s.relname, s.n_dead_tup::int8 AS dead, s.n_ins_since_vacuum::int8 AS inserted, s.n_mod_since_analyze::int8 AS changed,
        greatest(c.reltuples, 0)::float8 AS tuples, coalesce(c.reloptions, '{}') AS options
      FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE c.relkind = 'r'`);
    const due: DueTable[] = [];
    for (const r of rows as { relname: string; dead: string; inserted: string; changed: string; tuples: number; options: string[] }[]) {
      const own = Object.fromEntries(r.options.map((o) => o.split("=") as [string, string]));
      if (own.autovacuum_enabled === "false") continue;
      const value = (name: (typeof AUTOVACUUM_SETTINGS)[number]) => Number(own[name] ?? settings[name]);
      const insertThreshold = value("autovacuum_vacuum_insert_threshold");
      const vacuum =
        Number(r.dead) > value("autovacuum_vacuum_threshold") + value("autovacuum_vacuum_scale_factor") * r.tuples ||
        (insertThreshold >= 0 && Number(r.inserted) > insertThreshold + value("autovacuum_vacuum_insert_scale_factor") * r.tuples);
      const analyze = Number(r.changed) > value("autovacuum_analyze_threshold") + value("autovacuum_analyze_scale_factor") * r.tuples;
      if (vacuum || analyze) due.push({ table: r.relname, vacuum, analyze });
    }
    return due;
  }

  /** Runs what autovacuum would run on a due table (VACUUM, ANALYZE or both), now. */
  async runDue(t: DueTable): Promise<void> {
    const name = `"${t.table.replaceAll('"', '""')}"`;
    await this.su.unsafe(t.vacuum ? `VACUUM ${t.analyze ? "(ANALYZE) " : ""}${name}` : `ANALYZE ${name}`);
  }

  /** A statement of the caller's own as this superuser (the dispatcher's queue, say), its rows. */
  async rows(text: string): Promise<Record<string, unknown>[]> {
    return await this.su.unsafe(text);
  }

  async close(): Promise<void> {
    await this.su.close();
  }
}

/** A BackgroundReport in a line: "autovacuum VACUUM persons 6 s; finished persons: autovacuum 1; checkpoints 1 timed; WAL 120 MB, 9,000 full pages; CPU s backends 3.1, ...". */
export function backgroundLine(r: BackgroundReport): string {
  const parts: string[] = [];
  const seen = Object.entries(r.autovacuum_seen);
  parts.push(seen.length ? `autovacuum under way: ${seen.map(([w, s]) => `${w} ${s} s`).join(", ")}` : "no autovacuum seen");
  const finished = Object.entries(r.finished);
  if (finished.length) parts.push(`finished: ${finished.map(([t, what]) => `${t} (${what})`).join(", ")}`);
  parts.push(`checkpoints ${r.checkpoints_timed} timed + ${r.checkpoints_requested} requested (${r.checkpoint_buffers} buffers written)`);
  const walKinds = Object.entries(r.wal_mb_by_kind);
  parts.push(`WAL ${r.wal_mb} MB${walKinds.length ? ` (${walKinds.map(([k, mb]) => `${k} ${mb}`).join(", ")})` : ""}, ${r.wal_fpi.toLocaleString("en")} full-page images`);
  const statements = Object.entries(r.statements_seen);
  if (statements.length) parts.push(`statements seen under way (samples): ${statements.map(([q, n]) => `${n}× ${q}`).join(" | ")}`);
  parts.push(`PostgreSQL CPU s: ${Object.entries(r.cpu_ms).map(([k, ms]) => `${k} ${(ms / 1000).toFixed(2)}`).join(", ") || "none"}`);
  return parts.join("; ");
}
