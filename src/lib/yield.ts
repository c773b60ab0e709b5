// Long background passes (over every corporation, every backup file) on SQLite can run a second or
// more without a real wait: every await resolves at once. Awaiting this between units of work lets
// the HTTP requests and timers queued meanwhile run first.

/** Resolves after the event loop has run what is queued now (requests, timers). */
export const yieldToRequests = (): Promise<void> => new Promise<void>((r) => setImmediate(r));
