// WAL checkpoints off the event loop. A door's writer commits with wal_autocheckpoint off (a
// checkpoint inside COMMIT copies up to 1,000 pages and fsyncs the WAL and the database on the
// event loop: tens of ms on a slow disk, every few MB written); the door asks for a PASSIVE
// checkpoint here instead (src/db/door.ts), which a Worker runs on its own connection, one at a
// time from a queue on the main thread. One checkpointer per app, its thread started on the first
// request and stopped by `close`.
import type { Logger } from "../lib/log";

/** main → worker */
export interface CheckpointRequest {
  id: number;
  path: string;
  /** PASSIVE (in the background) or TRUNCATE (maintenance: waits up to 1 s for readers, then empties the WAL). */
  mode: CheckpointMode;
}

export type CheckpointMode = "PASSIVE" | "TRUNCATE";

/** worker → main: SQLite's answer (`busy`: not every frame could be copied; `log`, `checkpointed`: frames). */
export type CheckpointDone = { id: number; ok: true; busy: number; log: number; checkpointed: number } | { id: number; ok: false; error: string };

/**
 * Where the worker's module is: beside this file when run from source; inside the compiled binary
 * it is an entrypoint of its own (build.ts), embedded under /$bunfs/root/ at its path below src/.
 */
function workerUrl(): URL {
  const compiled = Bun.main.startsWith("/$bunfs/") || Bun.main.includes("~BUN");
  return compiled ? new URL("./db/checkpoint.worker.ts", `file://${Bun.main}`) : new URL("./checkpoint.worker.ts", import.meta.url);
}

/**
 * The thread ends after this long without a checkpoint to do (it holds ≈ 7 MB; starting one
 * costs ≈ 30 ms of CPU), and starts again with the next.
 */
const IDLE_MS = 60_000;

export class Checkpointer {
  constructor(readonly logger: Logger | null = null) {}

  private worker: Worker | null = null;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private seq = 0;
  private pending = new Map<number, (done: CheckpointDone) => void>();
  private closed = false;
  /**
   * Checkpoints wait here, on the main thread, and go to the worker one at a time: a door's pass
   * that needs its write lock takes it only when the worker is free for it (`ready`), so its
   * writes never wait behind other databases' checkpoints.
   */
  private queue: { path: string; mode: CheckpointMode; ready: (() => Promise<void>) | null; resolve: (done: CheckpointDone) => void; reject: (err: unknown) => void }[] = [];
  private pumping = false;

  /** Checkpoints the database at `path`; never rejects (a failure is in the answer). */
  checkpoint(path: string, mode: CheckpointMode = "PASSIVE"): Promise<CheckpointDone> {
    return this.whenReady(path, mode, null);
  }

  /**
   * `checkpoint`, with `ready` awaited first once the worker is free for this one (a door takes
   * its write lock there). When `ready` rejects, so does this, and nothing is checkpointed.
   */
  whenReady(path: string, mode: CheckpointMode, ready: (() => Promise<void>) | null): Promise<CheckpointDone> {
    if (this.closed) return Promise.resolve({ id: ++this.seq, ok: false, error: "closed" });
    return new Promise((resolve, reject) => {
      this.queue.push({ path, mode, ready, resolve, reject });
      if (!this.pumping) void this.pump();
    });
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      for (let job = this.queue.shift(); job; job = this.queue.shift()) {
        if (this.closed) {
          job.resolve({ id: ++this.seq, ok: false, error: "closed" });
          continue;
        }
        try {
          await job.ready?.();
        } catch (err) {
          job.reject(err);
          continue;
        }
        // Closed while `ready` waited: no thread is started again.
        job.resolve(this.closed ? { id: ++this.seq, ok: false, error: "closed" } : await this.post(job.path, job.mode));
      }
    } finally {
      this.pumping = false;
    }
  }

  /**
   * A PASSIVE checkpoint posted at once, past the queue: for a door that already holds its write
   * lock (the queue may be waiting for that very lock in its `ready`). Never rejects.
   */
  checkpointNow(path: string): Promise<CheckpointDone> {
    if (this.closed) return Promise.resolve({ id: ++this.seq, ok: false, error: "closed" });
    return this.post(path, "PASSIVE");
  }

  private post(path: string, mode: CheckpointMode): Promise<CheckpointDone> {
    const id = ++this.seq;
    const worker = this.thread();
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      worker.ref(); // a checkpoint in flight keeps the process alive
      worker.postMessage({ id, path, mode } satisfies CheckpointRequest);
    });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(workerUrl());
    worker.unref();
    worker.onmessage = (event: MessageEvent<CheckpointDone>) => {
      const resolve = this.pending.get(event.data.id);
      this.pending.delete(event.data.id);
      if (!this.pending.size) {
        worker.unref();
        this.idleTimer = setTimeout(() => this.stopThread(), IDLE_MS);
        (this.idleTimer as { unref?: () => void }).unref?.();
      }
      // The door gives the job back to SQLite's autocheckpoint; said once per database.
      if (!event.data.ok) this.logger?.warn("WAL checkpoint failed", { error: event.data.error });
      resolve?.(event.data);
    };
    worker.onerror = (event) => {
      // The thread died: what it was doing is answered as failed; the next request starts another.
      this.logger?.error("the WAL checkpoint thread failed", { error: String(event.message) });
      for (const [id, resolve] of this.pending) resolve({ id, ok: false, error: String(event.message) });
      this.pending.clear();
      if (this.worker === worker) this.worker = null;
      worker.terminate();
    };
    return (this.worker = worker);
  }

  private stopThread(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.pending.size) return;
    this.worker?.terminate();
    this.worker = null;
  }

  /** After the doors are closed: the checkpoint in flight ends first (2 s at most; the queued ones are answered "closed"), then the thread. */
  async close(): Promise<void> {
    this.closed = true;
    for (let i = 0; i < 400 && (this.pending.size || this.pumping); i++) await Bun.sleep(5);
    for (const [id, resolve] of this.pending) resolve({ id, ok: false, error: "closed" });
    this.pending.clear();
    this.stopThread();
  }
}
