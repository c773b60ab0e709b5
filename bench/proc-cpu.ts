// CPU time of processes read from /proc, for the bench scripts (bench/run.ts, upsert-profile.ts).
import { readdirSync, readFileSync } from "node:fs";

/** CPU of a process's children (a PostgreSQL server's backends and writers under its postmaster), in µs. */
export function childrenCpuUs(parent: number): number {
  let total = 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(f[1]) === parent) total += (Number(f[11]) + Number(f[12])) * 10_000;
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}

/**
 * The same CPU split by what each child is (its process title: `backends` for the sessions,
 * else `checkpointer`, `walwriter`, `autovacuum worker`, ...), in µs: whether a write's server
 * CPU is its statements' or the WAL's and vacuum's behind them. `listeners`: backends counted
 * apart as "LISTEN backend" (the app's change feed: PgStats.listenerPids).
 */
export function childrenCpuByKindUs(parent: number, listeners: Set<number> = new Set()): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(f[1]) !== parent) continue;
      const title = readFileSync(`/proc/${name}/cmdline`, "utf8").replace(/\0/g, " ");
      const kind = listeners.has(Number(name)) ? "LISTEN backend" : /^postgres: (checkpointer|background writer|walwriter|autovacuum launcher|autovacuum worker|logical replication launcher|archiver)/.exec(title)?.[1] ?? "backends";
      out[kind] = (out[kind] ?? 0) + (Number(f[11]) + Number(f[12])) * 10_000;
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** CPU time (user + system) one process has used, in µs; 0 when it is gone. */
export function processCpuUs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime, in clock ticks of 10 ms (USER_HZ is 100 on Linux).
    return (Number(f[11]) + Number(f[12])) * 10_000;
  } catch {
    return 0;
  }
}
