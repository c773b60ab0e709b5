// CPU time of processes read from /proc, for the bench scripts (bench/run.ts, upsert-profile.ts).
import { readdirSync, readFileSync } from "node:fs";

/** One process's fields of /proc/<pid>/stat that these figures need; null when it is gone. */
function stat(pid: number | string): { ppid: number; us: number; reapedUs: number } | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    // Fields 4 (ppid), 14-15 (utime, stime) and 16-17 (cutime, cstime: the children it has waited
    // for), in clock ticks of 10 ms (USER_HZ is 100 on Linux).
    return { ppid: Number(f[1]), us: (Number(f[11]) + Number(f[12])) * 10_000, reapedUs: (Number(f[13]) + Number(f[14])) * 10_000 };
  } catch {
    return null;
  }
}

/** A PostgreSQL server's process kinds by their titles; anything else under the postmaster is a session. */
const KIND = /^postgres: (checkpointer|background writer|walwriter|autovacuum launcher|autovacuum worker|logical replication launcher|archiver)/;

/**
 * Every live child of `parent` (a PostgreSQL server's backends and writers under its postmaster):
 * its kind (`backends` for the sessions, else `checkpointer`, `walwriter`, `autovacuum worker`,
 * ...; `listeners`: backends counted apart as "LISTEN backend", the app's change feed:
 * PgStats.listenerPids) and the CPU it has used, µs.
 */
export function childrenByPid(parent: number, listeners: Set<number> = new Set()): Map<number, { kind: string; us: number }> {
  const out = new Map<number, { kind: string; us: number }>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(name);
    if (!s || s.ppid !== parent) continue;
    let title = "";
    try {
      title = readFileSync(`/proc/${name}/cmdline`, "utf8").replace(/\0/g, " ");
    } catch {
      continue; // Gone meanwhile.
    }
    const pid = Number(name);
    out.set(pid, { kind: listeners.has(pid) ? "LISTEN backend" : KIND.exec(title)?.[1] ?? "backends", us: s.us });
  }
  return out;
}

/**
 * The CPU of the children `parent` has already waited for (an autovacuum worker that finished, a
 * session that closed), µs: a sum over live children alone loses a process's whole CPU when it
 * ends between two readings (a worker ending during a row made its figure negative).
 */
export function endedChildrenCpuUs(parent: number): number {
  return stat(parent)?.reapedUs ?? 0;
}

/** CPU of a process and all its children, live and ended (a PostgreSQL server's postmaster and every process under it), in µs. */
export function childrenCpuUs(parent: number): number {
  let total = (stat(parent)?.us ?? 0) + endedChildrenCpuUs(parent);
  for (const { us } of childrenByPid(parent).values()) total += us;
  return total;
}

/**
 * The same CPU split by what each child is (childrenByPid's kinds; `ended processes` for the
 * children already waited for, `postmaster` for the parent's own), in µs: whether a write's
 * server CPU is its statements' or the WAL's and vacuum's behind them.
 */
export function childrenCpuByKindUs(parent: number, listeners: Set<number> = new Set()): Record<string, number> {
  const out: Record<string, number> = { postmaster: stat(parent)?.us ?? 0, "ended processes": endedChildrenCpuUs(parent) };
  for (const { kind, us } of childrenByPid(parent, listeners).values()) out[kind] = (out[kind] ?? 0) + us;
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
