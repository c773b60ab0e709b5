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
