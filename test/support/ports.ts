// Loopback ports for servers the tests start (the app's binary, PostgreSQL, Patroni, FreeRADIUS's
// peers): the one helper every harness uses, kept apart from helpers.ts so that harnesses it
// imports (backend.ts → postgres.ts) can use it too.

/** Loopback ports nothing listens on at the moment of asking, each a different one. */
export function freePorts(n: number): number[] {
  const servers = Array.from({ length: n }, () => Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() }));
  const ports = servers.map((s) => s.port!);
  for (const s of servers) s.stop(true);
  return ports;
}

/** A loopback port free at the moment of asking (for a server another process will open). */
export function freePort(): number {
  return freePorts(1)[0];
}
