// Cluster mode (issue 19 item 3): the cross-node change feed. One LISTEN connection per node turns
// the NOTIFYs other nodes' transactions send at COMMIT into this node's signals:
// - EVENTS_CHANNEL (the doors' committed events, payload "origin\ncorpId") → the local
//   EventBus's committed(corpId), so this node's dispatcher and sockets wake for writes made
//   elsewhere, and the subscribers of the topic "events";
// - CHANGES_CHANNEL (`publishChange` in a write: payload "origin\ntopic\nkey"; `publishChanges`:
//   "origin\n+topic\n" and a JSON array of keys) → the subscribers of that topic (a cache drops the key).
// The origin is the writing node's id. A node hears its own NOTIFYs too, and skips those carrying
// its own id (`origin`, set by pgStorage to ctx.nodeId; its doors and ctx.changes put it there):
// its door has told its bus and change stamps after the COMMIT, and ctx.changes its subscribers.
// A payload with an empty origin (publishChange called directly) reaches every node, this one too.
// A lost connection may have missed notifications: Bun.sql reconnects it with backoff and
// re-subscribes, and once the LISTEN is acknowledged again every subscriber's resync() is called
// ("everything may have changed"): a change committed while no LISTEN was in place is then read
// from the database, and one committed after it is notified. The app's feed is started by
// `prepareStorage` (core/context.ts) and is the transport of `ctx.changes` (core/changes.ts).
import { SQL } from "bun";
import type { EventBus } from "../events";
import { silentLogger, type Logger } from "../../lib/log";
import { CHANGES_CHANNEL, changesPayload, EVENTS_CHANNEL, type PgTx } from "./door";

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
export async function publishChange(tx: PgTx, topic: string, key: string, origin = ""): Promise<void> {
  plainTopic(topic);
  const payload = changesPayload(origin, topic, key);
  if (Buffer.byteLength(payload) > MAX_PAYLOAD) throw new Error("a change's key is too long for a NOTIFY");
  await tx.$client.query("SELECT pg_notify(?1, ?2)").run(CHANGES_CHANNEL, payload);
}

function plainTopic(topic: string): void {
  if (!/^[a-z][a-z0-9_.-]*$/.test(topic)) throw new Error(`not a plain topic name: ${topic}`);
}

/**
 * Before the topic, marks a payload carrying several keys: "origin\n+topic\n" and the keys as a
 * JSON array (a plain topic never starts with it; a node that does not know the mark hears a topic
 * nobody subscribes to).
 */
const MANY = "+";

/** `SELECT pg_notify(?1, ?2), pg_notify(?1, ?3), ...` for `n` payloads, per count. */
const notifyTexts = new Map<number, string>();
function notifyText(n: number): string {
  let text = notifyTexts.get(n);
  if (!text) notifyTexts.set(n, (text = `SELECT ${Array.from({ length: n }, (_, i) => `pg_notify(?1, ?${i + 2})`).join(", ")}`));
  return text;
}

/**
 * `publishChange` for several keys of one topic: as many keys a NOTIFY as fit in its payload (a
 * batch of accounting records' session changes: ≈ 50 a payload), every payload in one statement.
 * One NOTIFY a key cost the server a statement and a queue entry each, and each listening node a
 * message (docs/architecture.md, "RADIUS accounting on PostgreSQL").
 */
export async function publishChanges(tx: PgTx, topic: string, keys: readonly string[], origin = ""): Promise<void> {
  plainTopic(topic);
  if (keys.length <= 1) {
    if (keys.length) await publishChange(tx, topic, keys[0], origin);
    return;
  }
  const head = changesPayload(origin, MANY + topic, "");
  const room = MAX_PAYLOAD - Buffer.byteLength(head) - 2;
  const payloads: string[] = [];
  let chunk: string[] = [];
  let used = 0;
  for (const key of keys) {
    const encoded = JSON.stringify(key);
    const size = Buffer.byteLength(encoded) + 1;
    if (size > room) throw new Error("a change's key is too long for a NOTIFY");
    if (used + size > room) {
      payloads.push(`${head}[${chunk.join(",")}]`);
      chunk = [];
      used = 0;
    }
    chunk.push(encoded);
    used += size;
  }
  payloads.push(`${head}[${chunk.join(",")}]`);
  await tx.$client.query(notifyText(payloads.length)).run(CHANGES_CHANNEL, ...payloads);
}

/** One node's feed: start() once, close() at shutdown. */
export class ChangeFeed {
  private readonly client: SQL;
  private readonly topics = new Map<string, Set<FeedSubscriber>>();
  private subscriptions: SQL.ListenSubscription[] = [];
  /** LISTENs acknowledged so far, per channel: a second acknowledgement is a reconnect. */
  private acks = new Map<string, number>();
  private readonly logger: Logger;
  /**
   * This node's id (pgStorage sets it to ctx.nodeId before the app writes): notifications that
   * carry it are skipped, and `publish` puts it in what it sends. Empty: nothing is skipped.
   */
  origin = "";
  /** Called after a reconnect, once the LISTENs are back (the role is checked again: store.ts). */
  onReconnect: (() => void) | null = null;

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
      this.client.listen(EVENTS_CHANNEL, (payload) => this.event(payload), () => this.listening(EVENTS_CHANNEL)),
      this.client.listen(CHANGES_CHANNEL, (payload) => this.change(payload), () => this.listening(CHANGES_CHANNEL)),
    ]);
  }

  /**
   * `publishChange` from this node: the transport of `ctx.changes` (core/changes.ts), which tells
   * this node's subscribers itself after the COMMIT, so this node's feed skips it.
   */
  publish(tx: PgTx, topic: string, key: string): Promise<void> {
    return publishChange(tx, topic, key, this.origin);
  }

  /** `publishChanges` from this node (ctx.changes' publishMany). */
  publishMany(tx: PgTx, topic: string, keys: string[]): Promise<void> {
    return publishChanges(tx, topic, keys, this.origin);
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

  /** Whether a payload's origin (its text before the first newline) is this node. */
  private own(payload: string, nl: number): boolean {
    return nl === this.origin.length && this.origin !== "" && payload.startsWith(this.origin);
  }

  private event(payload: string): void {
    const nl = payload.indexOf("\n");
    if (nl < 0) return this.logger.warn("change feed: an event notification without its origin", { payload: payload.slice(0, 100) });
    if (this.own(payload, nl)) return;
    const corpId = payload.slice(nl + 1);
    this.bus?.committed(corpId);
    this.tell(EVENTS_TOPIC, (s) => s.changed(corpId));
  }

  private change(payload: string): void {
    const at = payload.indexOf("\n");
    const nl = at < 0 ? -1 : payload.indexOf("\n", at + 1);
    if (nl <= at + 1) return this.logger.warn("change feed: a notification without a topic", { payload: payload.slice(0, 100) });
    if (this.own(payload, at)) return;
    const topic = payload.slice(at + 1, nl);
    if (topic.startsWith(MANY)) return this.changedMany(topic.slice(MANY.length), payload.slice(nl + 1));
    const key = payload.slice(nl + 1);
    this.tell(topic, (s) => s.changed(key));
  }

  /** A payload of several keys (publishChanges): each key told in order. */
  private changedMany(topic: string, keys: string): void {
    let list: unknown;
    try {
      list = JSON.parse(keys);
    } catch {
      list = null;
    }
    if (!Array.isArray(list)) return this.logger.warn("change feed: a notification of several keys without their list", { topic, payload: keys.slice(0, 100) });
    if (!this.topics.has(topic)) return;
    for (const key of list) if (typeof key === "string") this.tell(topic, (s) => s.changed(key));
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
    this.onReconnect?.();
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
