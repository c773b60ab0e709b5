// Cluster mode (issue 19 item 3): the cross-node change feed. One LISTEN connection per node turns
// the NOTIFYs other nodes' transactions send at COMMIT into this node's signals:
// - EVENTS_CHANNEL (the doors' committed events, payload the corporation id) → the local
//   EventBus's committed(corpId), so this node's dispatcher and sockets wake for writes made
//   elsewhere, and the subscribers of the topic "events";
// - CHANGES_CHANNEL (`publishChange` in a write: payload "topic\nkey") → the subscribers of that
//   topic (a cache drops the key).
// A node hears its own NOTIFYs too: the bus of the writing node is told twice (by its door after
// COMMIT, then here), which its listeners, wake-ups that read the outbox, take as one.
// A lost connection may have missed notifications: Bun.sql reconnects it with backoff and
// re-subscribes, and once the LISTEN is acknowledged again every subscriber's resync() is called
// ("everything may have changed"): a change committed while no LISTEN was in place is then read
// from the database, and one committed after it is notified. The app's feed is started by
// `prepareStorage` (core/context.ts) and is the transport of `ctx.changes` (core/changes.ts).
import { SQL } from "bun";
import type { EventBus } from "../../core/events";
import { silentLogger, type Logger } from "../../lib/log";
import { CHANGES_CHANNEL, EVENTS_CHANNEL, type PgTx } from "./door";

export { CHANGES_CHANNEL };
/** The topic whose subscribers hear the committed events' corporations (and their resyncs). */
export const EVENTS_TOPIC = "events";

/** PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more. */
const MAX_PAYLOAD = 7_999;

export interface FeedSubscriber {
  /** Something under `key` changed on some node (committed). */
  changed(key: string): void;
  /** Notifications may have been missed: anything of this topic may have changed. */
  resync(): void;
}

/**
 * Inside a write: tells every node's subscribers of `topic` that `key` changed, at COMMIT (a
 * rollback sends nothing). Topics are plain names; keys are ids.
 */
export async function publishChange(tx: PgTx, topic: string, key: string): Promise<void> {
  if (!/^[a-z][a-z0-9_.-]*$/.test(topic)) throw new Error(`not a plain topic name: ${topic}`);
  const payload = `${topic}\n${key}`;
  if (Buffer.byteLength(payload) > MAX_PAYLOAD) throw new Error("a change's key is too long for a NOTIFY");
  await tx.$client.query("SELECT pg_notify(?1, ?2)").run(CHANGES_CHANNEL, payload);
}

/** One node's feed: start() once, close() at shutdown. */
export class ChangeFeed {
  private readonly client: SQL;
  private readonly topics = new Map<string, Set<FeedSubscriber>>();
  private subscriptions: SQL.ListenSubscription[] = [];
  /** LISTENs acknowledged so far, per channel: a second acknowledgement is a reconnect. */
  private acks = new Map<string, number>();
  private readonly logger: Logger;

  constructor(
    url: string,
    private readonly bus: EventBus | null,
    { logger = silentLogger }: { logger?: Logger } = {},
  ) {
    // listen() keeps a connection of its own; the pool is never used for queries.
    this.client = new SQL({ url, max: 1 });
    this.logger = logger;
  }

  /** Resolves once both channels are listened to. */
  async start(): Promise<void> {
    if (this.subscriptions.length) return;
    this.subscriptions = await Promise.all([
      this.client.listen(EVENTS_CHANNEL, (corpId) => this.event(corpId), () => this.listening(EVENTS_CHANNEL)),
      this.client.listen(CHANGES_CHANNEL, (payload) => this.change(payload), () => this.listening(CHANGES_CHANNEL)),
    ]);
  }

  /** `publishChange`: so the feed is the transport of `ctx.changes` (core/changes.ts). */
  publish(tx: PgTx, topic: string, key: string): Promise<void> {
    return publishChange(tx, topic, key);
  }

  /** Subscribes to a topic; returns the unsubscribe. */
  subscribe(topic: string, subscriber: FeedSubscriber): () => void {
    let set = this.topics.get(topic);
    if (!set) this.topics.set(topic, (set = new Set()));
    set.add(subscriber);
    return () => set.delete(subscriber);
  }

  async close(): Promise<void> {
    const subs = this.subscriptions;
    this.subscriptions = [];
    await Promise.all(subs.map((s) => s.unlisten().catch(() => {})));
    await this.client.close({ timeout: 0 });
  }

  private event(corpId: string): void {
    this.bus?.committed(corpId);
    this.tell(EVENTS_TOPIC, (s) => s.changed(corpId));
  }

  private change(payload: string): void {
    const nl = payload.indexOf("\n");
    if (nl <= 0) return this.logger.warn("change feed: a notification without a topic", { payload: payload.slice(0, 100) });
    const key = payload.slice(nl + 1);
    this.tell(payload.slice(0, nl), (s) => s.changed(key));
  }

  /**
   * A LISTEN acknowledged. The first of each channel is the start; after a reconnect, once every
   * channel is listened to again (they share one connection), every subscriber resyncs.
   */
  private listening(channel: string): void {
    this.acks.set(channel, (this.acks.get(channel) ?? 0) + 1);
    const counts = [EVENTS_CHANNEL, CHANGES_CHANNEL].map((c) => this.acks.get(c) ?? 0);
    if (counts[0] !== counts[1] || counts[0] < 2) return;
    this.logger.warn("change feed: reconnected, every subscriber resyncs");
    for (const topic of this.topics.keys()) this.tell(topic, (s) => s.resync());
  }

  private tell(topic: string, call: (s: FeedSubscriber) => void): void {
    for (const s of this.topics.get(topic) ?? []) {
      try {
        call(s);
      } catch (err) {
        // One cache's failure must not keep the others stale.
        this.logger.error("change feed: a subscriber failed", { topic, error: String(err) });
      }
    }
  }
}
