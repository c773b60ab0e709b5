// In-memory state read from the database (the corporation cache, permissions, safe IP ranges, QR
// slugs) learns of committed changes through `ctx.changes`, whichever engine is behind the store:
//
//   await ctx.changes.publish(tx, w, CORPS_TOPIC, corpId)     inside the write that changes it
//   ctx.changes.subscribe(CORPS_TOPIC, { changed: (id) => ..., resync: () => ... })
//
// A publish calls this node's subscribers after the COMMIT (never on a rollback), so the writing
// node's caches have forgotten the key before the write's response is sent. On PostgreSQL (cluster
// mode) it also sends the change through the transaction to every node's change feed
// (core/pg/feed.ts), which calls their subscribers at COMMIT, this node's included: a key may be
// reported twice, and subscribers only forget or reload, so that is harmless. The transport also
// calls `resync()` when notifications may have been missed (its connection was lost).
import type { Handle } from "../db/handle";
import type { Logger } from "../lib/log";
import type { WriteScope } from "./store";

export interface ChangeSubscriber {
  /** `key` of the topic changed (committed), on this node or another. */
  changed(key: string): void;
  /** Changes may have been missed: anything of the topic may have changed. */
  resync(): void;
}

/** What carries changes to the other nodes (PostgreSQL's change feed); none on SQLite. */
export interface ChangeTransport {
  /** Inside the write: delivered to every node's subscribers at COMMIT. */
  publish(tx: Handle, topic: string, key: string): Promise<void>;
  /** The same for several keys of one topic, sent together (PostgreSQL: a few NOTIFYs, one statement). */
  publishMany(tx: Handle, topic: string, keys: string[]): Promise<void>;
  subscribe(topic: string, subscriber: ChangeSubscriber): () => void;
}

export class Changes {
  private topics = new Map<string, Set<ChangeSubscriber>>();
  /** What each write published already: a key sent once per write. */
  private published = new WeakMap<WriteScope, Set<string>>();

  constructor(
    private transport: ChangeTransport | null,
    private logger: Logger,
  ) {}

  /** Inside a write: the topic's subscribers are told `key` changed once it commits, on every node. */
  async publish(tx: Handle, w: WriteScope, topic: string, key: string): Promise<void> {
    let sent = this.published.get(w);
    if (!sent) this.published.set(w, (sent = new Set()));
    const id = `${topic}\n${key}`;
    if (sent.has(id)) return;
    sent.add(id);
    w.afterCommit(() => this.tell(topic, (s) => s.changed(key)));
    if (this.transport) await this.transport.publish(tx, topic, key);
  }

  /**
   * `publish` for several keys of one topic at once (a batch of RADIUS accounting records' session
   * changes): on PostgreSQL they travel in as few NOTIFYs as fit, one statement, instead of one
   * NOTIFY and one statement per key.
   */
  async publishMany(tx: Handle, w: WriteScope, topic: string, keys: readonly string[]): Promise<void> {
    let sent = this.published.get(w);
    if (!sent) this.published.set(w, (sent = new Set()));
    const fresh: string[] = [];
    for (const key of keys) {
      const id = `${topic}\n${key}`;
      if (sent.has(id)) continue;
      sent.add(id);
      fresh.push(key);
    }
    if (!fresh.length) return;
    w.afterCommit(() => {
      for (const key of fresh) this.tell(topic, (s) => s.changed(key));
    });
    if (this.transport) await this.transport.publishMany(tx, topic, fresh);
  }

  /** Subscribes to a topic (on this node and, through the transport, to other nodes' changes); returns the unsubscribe. */
  subscribe(topic: string, subscriber: ChangeSubscriber): () => void {
    let set = this.topics.get(topic);
    if (!set) this.topics.set(topic, (set = new Set()));
    set.add(subscriber);
    const remote = this.transport?.subscribe(topic, subscriber);
    return () => {
      set.delete(subscriber);
      remote?.();
    };
  }

  private tell(topic: string, call: (s: ChangeSubscriber) => void): void {
    for (const s of this.topics.get(topic) ?? []) {
      try {
        call(s);
      } catch (err) {
        // One cache's failure must not keep the others stale, nor fail a committed write.
        this.logger.error("a change subscriber failed", { topic, error: String(err) });
      }
    }
  }
}
