// source-only: drives the PostgreSQL door (src/core/pg/door.ts) directly against a throwaway server.
// The door's guarantees, as the SQLite door's (test/core/store.test.ts): a corporation sees and
// touches only its own rows, writers of one corporation serialize (across nodes too), a failed write
// rolls back whole and emits nothing, grouped writes roll back alone, and events are told (NOTIFY,
// the local bus) only after COMMIT. Callbacks get the modules' handle (SQLite's builder and tables,
// src/db/pg/handle.ts); corp_id, which the SQLite tables do not declare, is reached by raw SQL.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { eq } from "drizzle-orm";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventBus } from "../../../src/core/events";
import { EVENTS_CHANNEL, PgDoors } from "../../../src/core/pg/door";
import { migratePg } from "../../../src/db/pg/migrate";
import { settings } from "../../../src/db/platform/schema";
import { cities, contracts, events, persons } from "../../../src/db/tenant/schema";
import { startPostgres, type TestPostgres } from "../../support/postgres";
import { waitFor } from "../../support/wait";

const A = "corp-a";
const B = "corp-b";

let pg: TestPostgres;
/** Two app nodes: a connection pool and doors each, over the same database. */
let node1: SQL;
let node2: SQL;
let doors1: PgDoors;
let doors2: PgDoors;
let su: SQL;
const bus = new EventBus();
const told: string[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  node1 = new SQL({ url: pg.appUrl, max: 5 });
  node2 = new SQL({ url: pg.appUrl, max: 5 });
  su = new SQL(pg.url);
  await migratePg(node1);
  bus.subscribe((corpId) => told.push(corpId));
  doors1 = new PgDoors(node1, bus);
  doors2 = new PgDoors(node2);
}, 60_000);
afterAll(async () => {
  await Promise.all([node1?.close(), node2?.close(), su?.close()]);
  await pg?.stop();
});

/** The database's own message (the handle's error carries it, and the server's error as cause). */
async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return String((e as Error & { cause?: Error }).cause?.message ?? (e as Error).message);
  }
  throw new Error("expected a refusal, the write went through");
}

const city = (name: string) => ({ name, state: "SP", country: "BR" });
const eventsOf = async (corp: string) => Number((await su`SELECT count(*)::int AS n FROM events WHERE corp_id = ${corp}`)[0].n);

describe("core/pg/door: isolation between corporations", () => {
  let aId: string;
  let bId: string;
  beforeAll(async () => {
    [{ id: aId }] = await doors1.tenant(A).write((tx) => tx.insert(cities).values(city("Alpha")).returning({ id: cities.id }));
    [{ id: bId }] = await doors1.tenant(B).write((tx) => tx.insert(cities).values(city("Beta")).returning({ id: cities.id }));
  });

  test("A reads only its rows: B's by id is nothing, a scan or raw SQL shows A's alone", async () => {
    const a = doors1.tenant(A);
    expect(await a.read((tx) => tx.select().from(cities).where(eq(cities.id, bId)))).toEqual([]);
    const all = await a.read((tx) => tx.select({ id: cities.id }).from(cities));
    expect(all).toEqual([{ id: aId }]);
    const raw = await a.read((tx) => tx.$client.query("SELECT corp_id FROM cities").all());
    expect(raw).toEqual([{ corp_id: A }]);
  });

  test("A cannot update or delete B's rows (nothing affected) nor move its own to B", async () => {
    const a = doors1.tenant(A);
    expect(await a.write((tx) => tx.update(cities).set({ name: "Taken" }).where(eq(cities.id, bId)).returning())).toEqual([]);
    expect(await a.write((tx) => tx.delete(cities).where(eq(cities.id, bId)).returning())).toEqual([]);
    expect(await refusal(a.write((tx) => tx.$client.query("UPDATE cities SET corp_id = ?1 WHERE id = ?2").run(B, aId)))).toMatch(/row-level security/);
    const [b] = await su`SELECT corp_id, name FROM cities WHERE id = ${bId}`;
    expect(b).toEqual({ corp_id: B, name: "Beta" });
  });

  test("A cannot insert a row for B; a row without corp_id is A's", async () => {
    const a = doors1.tenant(A);
    const forged = "INSERT INTO cities (id, name, state, country, created_at, updated_at, corp_id) VALUES ('forged', 'Forged', 'SP', 'BR', '', '', ?1)";
    expect(await refusal(a.write((tx) => tx.$client.query(forged).run(B)))).toMatch(/row-level security/);
    const [{ id }] = await a.write((tx) => tx.insert(cities).values(city("Gamma")).returning({ id: cities.id }));
    expect((await su`SELECT corp_id FROM cities WHERE id = ${id}`)[0].corp_id).toBe(A);
    expect((await su`SELECT count(*)::int AS n FROM cities WHERE name = 'Forged'`)[0].n).toBe(0);
  });

  test("A cannot point its rows at B's (a contract of A for B's customer): the corp_id-led foreign key refuses", async () => {
    const [{ id: bPerson }] = await doors1.tenant(B).write((tx) => tx.insert(persons).values({ name: "B's customer" }).returning({ id: persons.id }));
    const contract = {
      customer_id: bPerson,
      billing_customer_id: bPerson,
      number: "C-1",
      start_date: "2026-01-01",
      total_value: 1,
      contract_status: "active",
      contract_stage: "installed",
    };
    expect(await refusal(doors1.tenant(A).write((tx) => tx.insert(contracts).values(contract)))).toMatch(/foreign key/);
    // The same contract for B is fine: the refusal was the corporation, not the row.
    await doors1.tenant(B).write((tx) => tx.insert(contracts).values(contract));
  });

  test("a read is READ ONLY, and a connection outside a door sees nothing (fails closed)", async () => {
    expect(await refusal(doors1.tenant(A).read((tx) => tx.insert(cities).values(city("Sneaky"))))).toMatch(/read-only/);
    const one = new SQL({ url: pg.appUrl, max: 1 });
    try {
      const doors = new PgDoors(one);
      await doors.tenant(A).read((tx) => tx.select().from(cities));
      // The same pooled connection after the door's transaction: the setting ended with it.
      expect(await one`SELECT * FROM cities`).toHaveLength(0);
    } finally {
      await one.close();
    }
    const fresh = new SQL({ url: pg.appUrl, max: 1 });
    try {
      await expect(fresh`SELECT * FROM cities`).rejects.toThrow(/corpadmin.corp_id/);
    } finally {
      await fresh.close();
    }
  });
});

describe("core/pg/door: reads are not waited for between them (BEGIN and setting in one message, COMMIT not awaited)", () => {
  test("reads of two corporations, many at once on ONE connection: each sees its own rows; a failed read leaves the connection clean", async () => {
    const one = new SQL({ url: pg.appUrl, max: 1 });
    try {
      const doors = new PgDoors(one);
      const names = async (corp: string) => (await doors.tenant(corp).read((tx) => tx.$client.query<{ corp_id: string }>("SELECT DISTINCT corp_id FROM cities").all())).map((r) => r.corp_id);
      const bad = doors.tenant(A).read((tx) => tx.$client.query("SELECT no_such_column FROM cities").all());
      const seen = await Promise.all([bad.then(() => "read", () => "refused"), ...Array.from({ length: 40 }, (_, i) => names(i % 2 ? B : A))]);
      expect(seen[0]).toBe("refused");
      seen.slice(1).forEach((corps, i) => expect(corps).toEqual([i % 2 ? B : A]));
      // The connection after them: no corporation set, no transaction left open (now() would stay
      // the transaction's start from one statement to the next).
      const at = async () => (await one`SELECT coalesce(current_setting('corpadmin.corp_id', true), '') AS c, now()::text AS t`)[0];
      const first = await at();
      await Bun.sleep(5);
      const second = await at();
      expect([first.c, second.c]).toEqual(["", ""]);
      expect(second.t).not.toBe(first.t);
    } finally {
      await one.close();
    }
  });

  test("a corporation id that cannot be a literal is set by a parameter: the read sees that corporation's rows", async () => {
    const odd = "corp 'odd'";
    await doors1.tenant(odd).write((tx) => tx.insert(cities).values(city("Odd")));
    expect(await doors1.tenant(odd).read((tx) => tx.$client.query("SELECT corp_id, name FROM cities").all())).toEqual([{ corp_id: odd, name: "Odd" }]);
  });
});

describe("core/pg/door: a read's statements share one snapshot", () => {
  test("a write committed by another node during a read is not seen by that read's later statements", async () => {
    const count = async (tx: Parameters<Parameters<ReturnType<PgDoors["tenant"]>["read"]>[0]>[0]) =>
      (await tx.$client.query<{ n: number }>("SELECT count(*) AS n FROM cities").get())!.n;
    const [first, second] = await doors1.tenant(A).read(async (tx) => {
      const first = await count(tx);
      await doors2.tenant(A).write((w) => w.insert(cities).values(city(`Snapshot ${first}`)));
      return [first, await count(tx)];
    });
    expect(second).toBe(first);
    expect(await doors1.tenant(A).read(count)).toBe(first + 1);
  });
});

/**
 * A write that marks its start, then holds its transaction until the test releases it: what must
 * wait for it is shown by the test's steps, not by sleeps raced against a loaded machine.
 */
function heldWrite(write: (fn: () => Promise<void>) => Promise<unknown>, name: string, marks: string[]) {
  const started = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const done = write(async () => {
    marks.push(`${name} start`);
    started.resolve();
    await release.promise;
    marks.push(`${name} end`);
  });
  done.catch((err) => started.reject(err));
  return { started: started.promise, release: () => release.resolve(), done };
}

/** Long enough for a write that is not held back to have run: only a false pass can come of it. */
const settle = () => Bun.sleep(200);

/** A door as these tests write through it (a corporation's or the platform's). */
type Writer = { write: (fn: () => Promise<void>) => Promise<unknown> };

/**
 * One writer per database across nodes: while node 1 holds a write open, node 2's write of the
 * same database waits for it and node 2's write of another database does not. Each row: the
 * held write, the one that waits, the one that passes (a mark and its door).
 */
const ONE_WRITER: { name: string; held: [string, () => Writer]; waits: [string, () => Writer]; passes: [string, () => Writer] }[] = [
  {
    name: "two writes of one corporation on two nodes serialize; another corporation's does not wait",
    held: ["A1", () => doors1.tenant(A)],
    waits: ["A2", () => doors2.tenant(A)],
    passes: ["B", () => doors2.tenant(B)],
  },
  {
    name: "platform writes serialize across nodes; a corporation's write does not wait for them",
    held: ["P1", () => doors1.platform],
    waits: ["P2", () => doors2.platform],
    passes: ["A", () => doors2.tenant(A)],
  },
];

describe("core/pg/door: one writer per database across nodes", () => {
  for (const { name, held, waits, passes } of ONE_WRITER) {
    test(name, async () => {
      const marks: string[] = [];
      const slow = heldWrite((fn) => held[1]().write(fn), held[0], marks);
      await slow.started;
      const second = waits[1]().write(async () => void marks.push(`${waits[0]} start`));
      await passes[1]().write(async () => void marks.push(`${passes[0]} start`));
      await settle();
      expect(marks).toEqual([`${held[0]} start`, `${passes[0]} start`]);
      slow.release();
      await Promise.all([slow.done, second]);
      expect(marks).toEqual([`${held[0]} start`, `${passes[0]} start`, `${held[0]} end`, `${waits[0]} start`]);
    });
  }
});

describe("core/pg/door: writes of one corporation", () => {
  test("a write inside a write of the same corporation gives up after the lock wait with a 503, never hangs", async () => {
    const doors = new PgDoors(node1, null, { lockWaitMs: 300 });
    const t0 = performance.now();
    const err = await doors
      .tenant(A)
      .write(() => doors.tenant(A).write(() => "inner"))
      .catch((e) => e);
    expect(err).toMatchObject({ status: 503 });
    expect(performance.now() - t0).toBeLessThan(5_000);
    // The lock was given back: the next write goes through.
    expect(await doors.tenant(A).write(() => "after")).toBe("after");
  });

  test("read-modify-write from two nodes loses no update", async () => {
    const [{ id }] = await doors1.tenant(A).write((tx) => tx.insert(cities).values(city("0")).returning({ id: cities.id }));
    const bump = (doors: PgDoors) =>
      doors.tenant(A).write(async (tx) => {
        const [row] = await tx.select({ name: cities.name }).from(cities).where(eq(cities.id, id));
        await tx.update(cities).set({ name: String(Number(row.name) + 1) }).where(eq(cities.id, id));
      });
    await Promise.all(Array.from({ length: 20 }, (_, i) => bump(i % 2 ? doors1 : doors2)));
    const [row] = await doors2.tenant(A).read((tx) => tx.select({ name: cities.name }).from(cities).where(eq(cities.id, id)));
    expect(row.name).toBe("20");
  });

  test("a failed write rolls back whole: no row, no outbox event, no NOTIFY, the bus is not told", async () => {
    const heard: string[] = [];
    const sub = await node2.listen(EVENTS_CHANNEL, (p) => heard.push(p));
    try {
      const before = await eventsOf(A);
      told.length = 0;
      await expect(
        doors1.tenant(A).write(async (tx, w) => {
          await tx.insert(cities).values(city("Doomed"));
          w.emit("CITY_AFTER_INSERT", "x", { name: "Doomed" });
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      await Bun.sleep(300);
      expect(await eventsOf(A)).toBe(before);
      expect((await su`SELECT count(*)::int AS n FROM cities WHERE name = 'Doomed'`)[0].n).toBe(0);
      expect(heard).toEqual([]);
      expect(told).toEqual([]);
    } finally {
      await sub.unlisten();
    }
  });

  test("an event: the outbox row is written in the transaction, its data built from the write's state, NOTIFY reaches another node only after COMMIT", async () => {
    const heard: { corp: string; at: number }[] = [];
    const sub = await node2.listen(EVENTS_CHANNEL, (p) => heard.push({ corp: p.slice(p.indexOf("\n") + 1), at: performance.now() }));
    try {
      told.length = 0;
      let callbackEnd = 0;
      let heardDuring = -1;
      const id = await doors1.tenant(A).write(async (tx, w) => {
        const [{ id }] = await tx.insert(cities).values(city("Delta")).returning({ id: cities.id });
        w.emit("CITY_AFTER_INSERT", id, async (t: typeof tx) => (await t.select({ name: cities.name }).from(cities).where(eq(cities.id, id)))[0]);
        await tx.update(cities).set({ name: "Delta 2" }).where(eq(cities.id, id));
        await Bun.sleep(300);
        heardDuring = heard.length;
        callbackEnd = performance.now();
        return id;
      });
      await waitFor("the NOTIFY on the other node", () => heard.length > 0);
      expect(heardDuring).toBe(0);
      expect(heard.map((h) => h.corp)).toEqual([A]);
      expect(heard[0].at).toBeGreaterThan(callbackEnd);
      expect(told).toEqual([A]);
      const [row] = await doors1.tenant(A).read((tx) => tx.select().from(events).where(eq(events.record_id, id)));
      expect((await su`SELECT corp_id FROM events WHERE id = ${row.id}`)[0].corp_id).toBe(A);
      expect(JSON.parse(row.payload)).toMatchObject({ type: "CITY_AFTER_INSERT", data: { name: "Delta 2" } });
    } finally {
      await sub.unlisten();
    }
  });

  test("writeGrouped: writes queued in one turn share one transaction; a failing one rolls back alone with its event", async () => {
    const before = await eventsOf(B);
    const door = doors1.tenant(B);
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        door.writeGrouped(async (tx, w) => {
          await tx.insert(cities).values(city(`Grouped ${i}`));
          w.emit("CITY_AFTER_INSERT", `g${i}`, { i });
          if (i === 3) throw new Error("third fails");
          return (await tx.$client.query<{ x: number }>("SELECT txid_current() AS x").get())!.x;
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled"]);
    const txids = new Set(results.filter((r) => r.status === "fulfilled").map((r) => (r as PromiseFulfilledResult<number>).value));
    expect(txids.size).toBe(1);
    const names = (await su`SELECT name FROM cities WHERE corp_id = ${B} AND name LIKE 'Grouped %' ORDER BY name`).map((r: { name: string }) => r.name);
    expect(names).toEqual(["Grouped 0", "Grouped 1", "Grouped 2", "Grouped 4", "Grouped 5"]);
    expect(await eventsOf(B)).toBe(before + 5);
  });

  test("writeGrouped while another node holds the writer lock: the writes wait for it, and past the lock wait fail with a 503, nothing written", async () => {
    const doors = new PgDoors(node2, null, { lockWaitMs: 300 });
    const before = await eventsOf(B);
    const group = (tag: string, independent: boolean) =>
      Promise.allSettled(
        Array.from({ length: 4 }, (_, i) =>
          doors.tenant(B).writeGrouped(
            async (tx, w) => {
              await tx.insert(cities).values(city(`${tag} ${i}`));
              w.emit("CITY_AFTER_INSERT", `${tag}${i}`, { i });
              return i;
            },
            { independent },
          ),
        ),
      );
    // Node 1 holds B's lock for 1 s: both groups (savepoints, side by side) give up after 300 ms.
    const holder = doors1.tenant(B).write(() => Bun.sleep(1000));
    await Bun.sleep(50);
    const [held, heldSide] = await Promise.all([group("Held", false), group("HeldSide", true)]);
    await holder;
    for (const r of [...held, ...heldSide]) expect(r).toMatchObject({ status: "rejected", reason: { status: 503 } });
    // Held a moment only: the group waits for the lock and goes through.
    const short = doors1.tenant(B).write(() => Bun.sleep(100));
    await Bun.sleep(20);
    const passed = await group("Waited", true);
    await short;
    expect(passed.map((r) => (r as PromiseFulfilledResult<number>).value)).toEqual([0, 1, 2, 3]);
    const names = (await su`SELECT name FROM cities WHERE corp_id = ${B} AND (name LIKE 'Held%' OR name LIKE 'Waited %') ORDER BY name`).map((r: { name: string }) => r.name);
    expect(names).toEqual(["Waited 0", "Waited 1", "Waited 2", "Waited 3"]);
    expect(await eventsOf(B)).toBe(before + 4);
  });
});

describe("core/pg/door: the platform door", () => {
  test("reads and writes the platform tables, sees no corporation's rows, emits no events", async () => {
    const p = doors1.platform;
    await p.write((tx) => tx.insert(settings).values({ key: "k", value: "v" }));
    expect(await doors2.platform.read((tx) => tx.select().from(settings))).toEqual([{ key: "k", value: "v" }]);
    expect(await refusal(p.read((tx) => tx.insert(settings).values({ key: "k2", value: "v" })))).toMatch(/read-only/);
    // A fresh connection refuses (no setting); one a corporation used before has it empty: no rows.
    const rows = await p.read((tx) => tx.select().from(cities)).catch((e) => String(e.cause?.message));
    expect(typeof rows === "string" ? rows : String(rows.length)).toMatch(/^0$|corpadmin.corp_id/);
    await expect(p.write((_tx, w) => (w as unknown as { emit: (...a: unknown[]) => void }).emit("CITY_AFTER_INSERT", "x", {}))).rejects.toThrow(/corporation/);
  });

  test("a write with exclusive: false takes no writer lock: it does not wait for a platform write in flight", async () => {
    const marks: string[] = [];
    const slow = heldWrite((fn) => doors1.platform.write(fn), "P1", marks);
    await slow.started;
    const counter = doors2.platform.write(
      async (tx) => {
        await tx.$client.query("INSERT INTO settings (key, value) VALUES ('door-test:counter', '1') ON CONFLICT (key) DO UPDATE SET value = '2'").run();
        marks.push("P2 upsert");
      },
      { durable: false, exclusive: false },
    );
    await counter;
    slow.release();
    await slow.done;
    expect(marks).toEqual(["P1 start", "P2 upsert", "P1 end"]);
  });
});

describe("core/pg/door: copyTo", () => {
  test("writes this corporation's rows only, one JSON line each", async () => {
    const dir = mkdtempSync(join(tmpdir(), "corpadmin-pg-copy-"));
    const file = join(dir, "a.jsonl");
    await doors1.tenant(A).copyTo(file);
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    rmSync(dir, { recursive: true, force: true });
    expect(lines.length).toBeGreaterThan(3);
    expect(new Set(lines.map((l) => l.row.corp_id))).toEqual(new Set([A]));
    expect(lines.filter((l) => l.table === "cities").map((l) => l.row.name)).toContain("Alpha");
  });
});
