// Waiting for what a test expects to happen. CI runs the suites on 2 loaded cores (the PostgreSQL
// pass beside them): a timer, a commit or a delivery can be seconds late there. A test waits for
// the event itself, up to a deadline that only a real failure reaches, never a fixed sleep.

/** How long a test waits for something that must happen: only a failure takes this long. */
export const DEADLINE_MS = 15_000;
/** How long a service process a test spawns may take to answer /api/health (Bun's start, migrations, a loaded machine). */
export const STARTUP_MS = 30_000;

/**
 * Polls `fn` until it returns a truthy value (returned), or throws naming `what` after `timeoutMs`.
 * Between polls the app gets at least as long as the poll took: a check that blocks the event loop
 * (`t.sql` on PostgreSQL runs psql synchronously) must not starve the app it waits for (its
 * timers, its lease's heartbeat).
 */
export async function waitFor<T>(what: string, fn: () => T | Promise<T>, timeoutMs = DEADLINE_MS): Promise<Exclude<T, false | null | undefined | 0 | "">> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const began = performance.now();
    const v = await fn();
    if (v) return v as Exclude<T, false | null | undefined | 0 | "">;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(Math.max(15, performance.now() - began));
  }
}
