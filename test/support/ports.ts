// Loopback ports for servers the tests start (the app's binary, PostgreSQL, Patroni, FreeRADIUS's
// peers): the one helper every harness uses, kept apart from helpers.ts so that harnesses it
// imports (backend.ts → postgres.ts) can use it too.
import { readFileSync } from "node:fs";

/**
 * The lowest port of the kernel's ephemeral range. Ports are picked below it: a port the kernel
 * handed out (port 0) is also what it hands the next outgoing connection as its local port, and
 * with three test lanes connecting at once, a server started a moment later could find its port
 * taken by a client socket (a Patroni node's PostgreSQL then never starts).
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

const LOW = 10_000;
const HIGH = ephemeralLow();

/** Loopback ports nothing listens on at the moment of asking, each a different one. */
export function freePorts(n: number): number[] {
  const servers: ReturnType<typeof Bun.serve>[] = [];
  try {
    for (let tries = 0; servers.length < n; tries++) {
      if (tries > 1000) throw new Error(`no free loopback port between ${LOW} and ${HIGH}`);
      const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
      try {
        servers.push(Bun.serve({ port, hostname: "127.0.0.1", fetch: () => new Response() }));
      } catch {
        // taken: another one
      }
    }
    return servers.map((s) => s.port!);
  } finally {
    for (const s of servers) s.stop(true);
  }
}

/** A loopback port free at the moment of asking (for a server another process will open). */
export function freePort(): number {
  return freePorts(1)[0];
}
