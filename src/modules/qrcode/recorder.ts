// Scan records are appended to memory and handed in batches to a writer thread (access-writer.worker.ts)
// at most FLUSH_MS after the oldest of them arrived (or as soon as the batch before is committed,
// when that took longer), sooner when a batch fills up, and on shutdown: a visitor never waits for
// a commit, and the commit's disk sync never stalls the event loop. What a crash can lose is thus
// FLUSH_MS plus about two commits (README gives the measured bound).
import type { AppContext } from "../../core/context";
import { newId } from "../../lib/ids";
import { toIso } from "../../lib/time";
import { writerUrl, type DoneMessage, type WriteMessage } from "./access-writer";
import { writeAccessesPg } from "./access-writer-pg";

/**
 * Rows of one corporation as UTF-8 JSON text (AccessRows, access-writer.ts), comma separated, in
 * buffers of a fixed size: a row is written to bytes as it arrives, so a batch goes to the writer
 * as a few shared buffers (no pause of the event loop to join, copy or encode thousands of rows at
 * once), and pending rows are not thousands of strings for the collector to walk.
 */
class Chunk {
  bytes: Buffer;
  length = 0;
  rows = 0;
  constructor(size: number) {
    // Shared memory: the writer reads the rows where they are written. A batch's bytes copied into
    // the message (a view is cloned with its whole buffer) cost the event loop ≈ 0.6 µs per scan
    // under load (0.9 ms per 1,500-row batch, measured), as much as the rest of the recording.
    // A chunk is appended to only before it is sent, or after the writer has answered for it.
    this.bytes = Buffer.from(new SharedArrayBuffer(size));
  }
}
/** A corporation's first buffer is small (thousands of corporations may each have a scan pending); the next ones grow. */
const FIRST_CHUNK_BYTES = 2 * 1024;
const CHUNK_BYTES = 256 * 1024;
/**
 * Buffers the writer has answered for are kept (up to this many bytes) and written again by later
 * batches: a new SharedArrayBuffer costs its allocation, the first touch of each of its pages, and
 * ≈ 0.2 ms more per message to hand to the writer than one sent before (measured: 55 µs of CPU
 * per message with kept buffers, 150–160 µs with new ones). Two batches' worth under load.
 */
const MAX_SPARE_BYTES = 2 * 1024 * 1024;
const COMMA = 44;

/** A batch as sent. */
interface SentBatch {
  corpId: string;
  chunks: Chunk[];
}

const json = JSON.stringify;
const jsonOrNull = (v: string | null) => (v === null ? "null" : json(v));

const FLUSH_MS = 50;
const FLUSH_BATCH = 5_000;
/** Pause before writing again after a failure (a locked or broken database). */
const RETRY_MS = 2_000;
/** Kept in memory while a corporation's database refuses writes; beyond it the oldest go. */
const MAX_PENDING_PER_CORP = 200_000;

const BOT_RE =
  /bot|crawl|spider|slurp|archiver|facebookexternalhit|embedly|preview|whatsapp|telegram|skype|discord|monitor|uptime|pingdom|lighthouse|headless|phantomjs|curl|wget|httpie|python|java\/|okhttp|go-http-client|node-fetch|axios|libwww|scrapy|httpclient|^$/i;

/** A likely crawler or script, by its user agent (none at all counts as one). */
export function isBot(userAgent: string | null): boolean {
  return BOT_RE.test(userAgent ?? "");
}

/** A user agent's JSON text and whether it is a bot's. */
interface Agent {
  json: string;
  bot: boolean;
}
/** User agents remembered (most scans come from a few hundred browsers); past it the memory starts over. */
const MAX_AGENTS = 2_000;

export class AccessRecorder {
  private pending = new Map<string, Chunk[]>();
  private count = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private worker: Worker | null = null;
  /**
   * The writer the storage calls for: a thread appending to each corporation's file, or, when one
   * database holds every corporation (cluster mode), the doors (access-writer-pg.ts).
   */
  private get viaDoors(): boolean {
    return !this.ctx.tenants.filesPerCorp;
  }
  private inflight: { seq: number; batches: SentBatch[] } | null = null;
  private seq = 0;
  private waiters: (() => void)[] = [];
  private closed = false;
  private lastAt = NaN;
  /** When the oldest scan not yet handed to the writer arrived (performance.now()): the flush deadline counts from it. */
  private firstAt = 0;
  private paths = new Map<string, string>();
  private lastAtText = "";
  /** Corporations whose pending rows include some sent before, perhaps stored (see WriteBatch.recheck). */
  private recheck = new Set<string>();
  /** The bot test runs a long regex over a long header, the largest part of a scan's work: done once per agent. */
  private agents = new Map<string, Agent>();
  private nullAgent: Agent = { json: "null", bot: isBot(null) };
  /** Buffers free to write again, by size (see MAX_SPARE_BYTES). */
  private spare = new Map<number, Chunk[]>();
  private spareBytes = 0;

  constructor(private ctx: AppContext) {}

  record(corpId: string, qrcodeId: string, ip: string, userAgent: string | null, referer: string | null): void {
    let agent = userAgent === null ? this.nullAgent : this.agents.get(userAgent);
    if (agent === undefined) {
      if (this.agents.size >= MAX_AGENTS) this.agents.clear();
      this.agents.set(userAgent!, (agent = { json: json(userAgent), bot: isBot(userAgent) }));
    }
    const now = this.ctx.now();
    // Under load many scans share a millisecond: format each instant once.
    if (now !== this.lastAt) {
      this.lastAt = now;
      this.lastAtText = toIso(now);
    }
    // Ids and instants need no escaping.
    const row = `["${newId()}","${qrcodeId}","${this.lastAtText}",${json(ip)},${agent.json},${jsonOrNull(referer)},${agent.bot ? 1 : 0}]`;
    let chunks = this.pending.get(corpId);
    if (!chunks) this.pending.set(corpId, (chunks = []));
    // At most 3 UTF-8 bytes per UTF-16 unit, and the comma.
    const room = row.length * 3 + 1;
    let chunk = chunks[chunks.length - 1];
    if (chunk === undefined || chunk.bytes.length - chunk.length < room) {
      const size = chunk === undefined ? FIRST_CHUNK_BYTES : Math.min(chunk.bytes.length * 4, CHUNK_BYTES);
      chunks.push((chunk = this.chunk(Math.max(size, room))));
    }
    if (chunk.rows > 0) chunk.bytes[chunk.length++] = COMMA;
    chunk.length += chunk.bytes.write(row, chunk.length, "utf8");
    chunk.rows++;
    if (this.count === 0) {
      this.firstAt = performance.now();
      if (!this.worker && !this.closed && !this.viaDoors) this.writer(); // started while the first batch gathers, not after
    }
    this.count++;
    if (this.count >= FLUSH_BATCH) this.send();
    else if (!this.timer && !this.closed) this.timer = setTimeout(() => this.send(), Math.max(0, this.firstAt + FLUSH_MS - performance.now()));
  }

  /** An empty buffer of `size` bytes: a spare one if there is one. */
  private chunk(size: number): Chunk {
    const spare = this.spare.get(size)?.pop();
    if (spare === undefined) return new Chunk(size);
    this.spareBytes -= size;
    return spare;
  }

  /** Buffers nothing refers to any longer (the writer has answered for them, or they were never sent). */
  private release(chunks: Chunk[]): void {
    for (const c of chunks) {
      const size = c.bytes.length;
      if (this.spareBytes + size > MAX_SPARE_BYTES) continue;
      c.length = 0;
      c.rows = 0;
      let list = this.spare.get(size);
      if (!list) this.spare.set(size, (list = []));
      list.push(c);
      this.spareBytes += size;
    }
  }

  /** Hands everything pending to the writer, unless a batch is still being written. */
  private send(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.inflight || this.count === 0) return;
    const batches: SentBatch[] = [];
    const message: WriteMessage = { seq: ++this.seq, batches: [] };
    for (const [corpId, chunks] of this.pending) {
      let path = this.paths.get(corpId);
      // Deleted since (its cache entry is dropped then)? pathOf decides. corps.get is async: a promise is never falsy.
      if (path !== undefined && this.ctx.corps.peek(corpId) === undefined) path = undefined;
      // PostgreSQL: no file; a deleted corporation's write answers 404 and its batch is dropped.
      if (path === undefined && this.viaDoors) path = "";
      if (path === undefined) {
        try {
          path = this.ctx.tenants.pathOf(corpId);
        } catch {
          this.release(chunks);
          continue; // the corporation was deleted, and its scans with it
        }
        // A corporation's file stays where it is while the service runs (pathOf builds a query).
        if (this.paths.size >= 10_000) this.paths.clear();
        this.paths.set(corpId, path);
      }
      batches.push({ corpId, chunks });
      // Shared, not copied (see Chunk); the rows stay here to send again if the writer dies.
      message.batches.push({ corpId, path, recheck: this.recheck.has(corpId), chunks: chunks.map((c) => c.bytes.subarray(0, c.length)) });
    }
    this.pending = new Map();
    this.recheck.clear();
    this.count = 0;
    if (batches.length === 0) return;
    this.inflight = { seq: message.seq, batches };
    if (this.viaDoors) {
      void writeAccessesPg(this.ctx, message).then((d) => this.done(d));
      return;
    }
    const worker = this.writer();
    worker.ref(); // keep the process alive until the batch is written (shutdown waits for it)
    worker.postMessage(message);
  }

  private writer(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(writerUrl());
    worker.unref(); // idle until a batch is sent
    worker.onmessage = (event: MessageEvent<DoneMessage>) => this.done(event.data);
    worker.onerror = (event) => {
      this.ctx.logger.error("the QR access writer failed; restarting it", { error: String(event.message) });
      worker.terminate();
      this.worker = null;
      const lost = this.inflight;
      this.inflight = null;
      // The batch may have been committed: the writer skips the rows it already holds.
      if (lost) for (const b of lost.batches) this.requeue(b.corpId, b.chunks);
      this.after(true);
    };
    this.worker = worker;
    return worker;
  }

  private done(msg: DoneMessage): void {
    if (!this.inflight || msg.seq !== this.inflight.seq) return;
    const sent = this.inflight.batches;
    this.inflight = null;
    let kept = false;
    const requeued = new Set<SentBatch>();
    for (const f of msg.failed) {
      // The file is gone with its corporation. Otherwise the rows are kept: a corporation deleted
      // meanwhile is dropped by the next send, whose pathOf no longer finds it.
      if (f.missing) continue;
      const batch = sent.find((b) => b.corpId === f.corpId);
      if (!batch) continue;
      const count = batch.chunks.reduce((n, c) => n + c.rows, 0);
      this.ctx.logger.error("writing QR accesses failed; kept for the next attempt", { corp_id: f.corpId, count, error: f.error });
      this.requeue(f.corpId, batch.chunks);
      requeued.add(batch);
      kept = true;
    }
    // The writer is done reading the others' buffers (it answers after the batch).
    for (const b of sent) if (!requeued.has(b)) this.release(b.chunks);
    this.after(kept);
  }

  /** Puts rows sent before back in front of the pending ones; past the limit the oldest go, a buffer at a time. */
  private requeue(corpId: string, chunks: Chunk[]): void {
    this.recheck.add(corpId);
    const before = this.pending.get(corpId) ?? [];
    const merged = chunks.concat(before);
    let rows = merged.reduce((n, c) => n + c.rows, 0);
    while (rows > MAX_PENDING_PER_CORP && merged.length > 1) rows -= merged.shift()!.rows;
    this.count += rows - before.reduce((n, c) => n + c.rows, 0);
    this.pending.set(corpId, merged);
  }

  /** After a batch: wake whoever waits for it; schedule what is left (after a failure, after a pause). */
  private after(retry: boolean): void {
    for (const resolve of this.waiters.splice(0)) resolve();
    if (this.count === 0 || this.closed) {
      this.worker?.unref();
      return;
    }
    if (retry) {
      if (!this.timer) this.timer = setTimeout(() => this.send(), RETRY_MS);
      return;
    }
    // Scans that arrived while the batch was written wait FLUSH_MS from the first of them, not
    // from now: if the commit took longer they go at once.
    const due = this.firstAt + FLUSH_MS - performance.now();
    if (this.count >= FLUSH_BATCH || due <= 0) this.send();
    else {
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => this.send(), due);
    }
  }

  private batchDone(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Writes everything recorded so far; a corporation whose writes keep failing is given up after a few tries. */
  async drain(attempts = 5): Promise<void> {
    for (let i = 0; i < attempts; i++) {
      if (this.inflight) await this.batchDone();
      if (this.count === 0) return;
      this.send();
      if (this.inflight) await this.batchDone();
      if (this.count === 0) return;
    }
  }

  /** Shutdown: write what is left, then stop the writer. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.drain();
    if (this.count > 0) this.ctx.logger.error("QR accesses dropped at shutdown", { count: this.count });
    // The writer keeps its connections open between batches: it closes them before it stops.
    const worker = this.worker;
    if (worker && !this.inflight) {
      const seq = ++this.seq;
      this.inflight = { seq, batches: [] };
      worker.ref();
      worker.postMessage({ seq, batches: [], close: true } satisfies WriteMessage);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.batchDone(), new Promise<void>((resolve) => (timer = setTimeout(resolve, 2_000)))]);
      clearTimeout(timer);
    }
    this.worker?.terminate();
    this.worker = null;
  }
}
