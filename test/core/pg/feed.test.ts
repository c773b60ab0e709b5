// source-only: drives src/core/pg/feed.ts and the PostgreSQL door directly against a throwaway server.
// The cross-node change feed: a committed write on node A wakes node B's EventBus and B's cache
// subscribers, a rolled-back one does not, and after B's LISTEN connection is killed B listens
// again and every subscriber is told to resync (notifications may have been missed meanwhile); a
// node skips the notifications that carry its own id; many keys go in few NOTIFYs (publishChanges).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { EventBus } from "../../../src/core/events";
import { PgDoors } from "../../../src/core/pg/door";
import { CHANGES_CHANNEL, ChangeFeed, EVENTS_TOPIC, publishChange, publishChanges } from "../../../src/core/pg/feed";
import { migratePg } from "../../../src/db/pg/migrate";
import { cities } from "../../../src/db/tenant/schema";
import { startPostgres, type TestPostgres } from "../../support/postgres";

let pg: TestPostgres;
let nodeA: SQL;
let doorsA: PgDoors;
let su: SQL;
/** Node B: its bus and its feed, no doors (it only listens). */
const busB = new EventBus();
let feedB: ChangeFeed;
const wokenB: string[] = [];
const heard: string[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  nodeA = new SQL({ url: pg.appUrl, max: 3 });
  su = new SQL(pg.url);
  await migratePg(nodeA);
  doorsA = new PgDoors(nodeA);
  busB.subscribe((corpId) => wokenB.push(corpId));
  feedB = new ChangeFeed(pg.appUrl, busB);
  feedB.subscribe("contract-view", { changed: (key) => heard.push(`changed ${key}`), resync: () => heard.push("resync") });
  feedB.subscribe(EVENTS_TOPIC, { changed: (corp) => heard.push(`event ${corp}`), resync: () => heard.push("events resync") });
  await feedB.start();
}, 60_000);
afterAll(async () => {
  await feedB?.close();
  await Promise.all([nodeA?.close(), su?.close()]);
  await pg?.stop();
});

async function until(cond: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`not within ${ms} ms: ${JSON.stringify(heard)}`);
    await Bun.sleep(10);
  }
}

describe("core/pg/feed: the cross-node change feed", () => {
  test("a write with events on node A wakes node B's bus and its events subscribers; a rolled-back one does not", async () => {
    wokenB.length = heard.length = 0;
    await doorsA.tenant("corp-a").write(async (tx, w) => {
      const [c] = await tx.insert(cities).values({ name: "Alpha", state: "SP", country: "BR" }).returning({ id: cities.id });
      w.emit("CITY_AFTER_INSERT", c.id, { id: c.id });
    });
    await until(() => wokenB.length === 1, 15_000);
    expect(wokenB).toEqual(["corp-a"]);
    expect(heard).toEqual(["event corp-a"]);

    const failed = doorsA.tenant("corp-b").write(async (tx, w) => {
      const [c] = await tx.insert(cities).values({ name: "Beta", state: "SP", country: "BR" }).returning({ id: cities.id });
      w.emit("CITY_AFTER_INSERT", c.id, { id: c.id });
      throw new Error("refused");
    });
    await expect(failed).rejects.toThrow("refused");
    await doorsA.tenant("corp-c").write(async (tx, w) => w.emit("CITY_AFTER_INSERT", "x", {}));
    await until(() => wokenB.length === 2, 15_000);
    expect(wokenB).toEqual(["corp-a", "corp-c"]);
  });

  test("publishChange in a write reaches B's subscribers of that topic at COMMIT, with the key; a rollback sends nothing", async () => {
    heard.length = 0;
    await expect(
      doorsA.tenant("corp-a").write(async (tx) => {
        await publishChange(tx, "contract-view", "lost");
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    await doorsA.tenant("corp-a").write(async (tx) => {
      await publishChange(tx, "contract-view", "c-1");
      await publishChange(tx, "other-topic", "c-2");
    });
    await until(() => heard.length === 1, 15_000);
    await Bun.sleep(100);
    expect(heard).toEqual(["changed c-1"]);
  });

  test("B skips the notifications carrying its own node id (its door and ctx.changes told it), and hears another node's", async () => {
    wokenB.length = heard.length = 0;
    feedB.origin = "node-b";
    try {
      // Node B's own writes: an event and a change, with B's id in the payloads.
      await new PgDoors(nodeA, null, { origin: "node-b" }).tenant("corp-own").write(async (tx, w) => {
        w.emit("CITY_AFTER_INSERT", "x", {});
        await publishChange(tx, "contract-view", "own", "node-b");
      });
      // Then another node's, committed after: NOTIFYs reach a listener in commit order, so once
      // these are heard, B's own were delivered before them and skipped.
      await new PgDoors(nodeA, null, { origin: "node-a" }).tenant("corp-other").write(async (tx, w) => {
        w.emit("CITY_AFTER_INSERT", "y", {});
        await publishChange(tx, "contract-view", "other", "node-a");
      });
      await until(() => wokenB.length === 1 && heard.includes("changed other"), 10_000);
      expect(wokenB).toEqual(["corp-other"]);
      expect(heard.sort()).toEqual(["changed other", "event corp-other"]);
    } finally {
      feedB.origin = "";
    }
  });

  test("publishChanges sends many keys of a topic in as few NOTIFYs as fit (one statement): B's subscribers hear each once, in order; a rollback sends nothing", async () => {
    heard.length = 0;
    // Raw payloads on the channel, to count the NOTIFYs.
    const payloads: string[] = [];
    const raw = new SQL({ url: pg.appUrl, max: 1 });
    const sub = await raw.listen(CHANGES_CHANNEL, (p) => {
      if (p.includes("contract-view")) payloads.push(p);
    });
    try {
      // 300 keys of ≈ 60 bytes: more than one payload of 8,000 bytes holds.
      const keys = Array.from({ length: 300 }, (_, i) => `key-${String(i).padStart(3, "0")}-${"x".repeat(50)} "quoted" é`);
      await expect(
        doorsA.tenant("corp-a").write(async (tx) => {
          await publishChanges(tx, "contract-view", ["lost-1", "lost-2"]);
          throw new Error("refused");
        }),
      ).rejects.toThrow("refused");
      await doorsA.tenant("corp-a").write((tx) => publishChanges(tx, "contract-view", keys));
      await until(() => heard.length === keys.length, 15_000);
      // The raw listener is a connection of its own: PostgreSQL delivers to it on its own time.
      await until(() => payloads.some((p) => p.includes("key-299")), 15_000);
      await Bun.sleep(100);
      expect(heard).toEqual(keys.map((k) => `changed ${k}`));
      expect(payloads.length).toBeGreaterThanOrEqual(2);
      expect(payloads.length).toBeLessThanOrEqual(4);
      for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(8_000);
      // One key alone goes as publishChange's payload.
      heard.length = 0;
      await doorsA.tenant("corp-a").write((tx) => publishChanges(tx, "contract-view", ["single"]));
      await until(() => heard.length === 1, 15_000);
      expect(heard).toEqual(["changed single"]);
      await until(() => payloads.some((p) => p.includes("single")), 15_000);
      expect(payloads.at(-1)).toBe("\ncontract-view\nsingle");
    } finally {
      await sub.unlisten();
      await raw.close();
    }
  });

  test("publishChange refuses a topic that is not a plain name", async () => {
    await expect(doorsA.tenant("corp-a").write((tx) => publishChange(tx, "a\nb", "k"))).rejects.toThrow("plain topic");
  });

  test("B's LISTEN connection killed: B listens again, every subscriber resyncs once, then notifications flow again", async () => {
    heard.length = 0;
    const listeners = async () => (await su`SELECT pid FROM pg_stat_activity WHERE datname = 'corpadmin' AND query LIKE 'LISTEN%'`).map((r: { pid: number }) => r.pid);
    const [pid] = await listeners();
    expect(pid).toBeGreaterThan(0);
    await su`SELECT pg_terminate_backend(${pid})`;
    await until(() => heard.length === 2, 20_000);
    await Bun.sleep(200);
    expect(heard.sort()).toEqual(["events resync", "resync"]);
    const [again] = await listeners();
    expect(again).not.toBe(pid);

    heard.length = 0;
    await doorsA.tenant("corp-a").write((tx) => publishChange(tx, "contract-view", "c-3"));
    await until(() => heard.length === 1, 15_000);
    expect(heard).toEqual(["changed c-3"]);
  }, 30_000);
});

describe("core/pg/feed: a restarted PostgreSQL", () => {
  test("B listens again once the server is back, every subscriber resyncs, then notifications flow again", async () => {
    heard.length = 0;
    await pg.restart();
    await until(() => heard.length === 2, 20_000);
    expect(heard.sort()).toEqual(["events resync", "resync"]);

    heard.length = 0;
    const fresh = new SQL({ url: pg.appUrl, max: 1 });
    try {
      await new PgDoors(fresh).tenant("corp-a").write((tx) => publishChange(tx, "contract-view", "c-4"));
    } finally {
      await fresh.close();
    }
    await until(() => heard.length === 1, 15_000);
    expect(heard).toEqual(["changed c-4"]);
  }, 40_000);
});
