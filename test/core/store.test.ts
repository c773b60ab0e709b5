// source-only: drives the store (src/core/store.ts) of an in-process app directly, holding a write transaction open across awaits.
// The store's guarantees: no read sees another request's uncommitted rows, writers to one database
// serialize (no SQLITE_BUSY), a failed write rolls back whole and emits nothing, grouped writes
// roll back alone, and events are told only after COMMIT.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, startAndLogin, type TestApp } from "../support/helpers";

let t: TestApp;
let corpId: string;
let token: string;
beforeAll(async () => {
  t = await makeApp();
  const s = await startAndLogin(t);
  corpId = s.corpId;
  token = s.token;
});
afterAll(() => t.close());

const countCities = (name: string) =>
  t.ctx.store.tenant(corpId).read((db) => db.$client.query<{ n: number }, [string]>("SELECT count(*) AS n FROM cities WHERE name = ?1").get(name)!.n);

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("core/store: reads and writes of one corporation", () => {
  test("a read made while another write transaction is open across an await does not see its rows (store and HTTP)", async () => {
    const door = t.ctx.store.tenant(corpId);
    const hold = gate();
    const writing = door.write(async (tx) => {
      tx.$client.run("INSERT INTO cities (id, name, state, country, created_at, updated_at) VALUES (?1, 'Uncommitted', 'SP', 'BR', ?2, ?2)", [
        crypto.randomUUID(),
        new Date().toISOString(),
      ]);
      await hold.opened;
    });
    try {
      await Bun.sleep(10);
      expect(await countCities("Uncommitted")).toBe(0);
      const listed = await t.req("GET", "/api/city?name=Uncommitted", { token });
      expect(listed.status).toBe(200);
      expect(listed.body.total).toBe(0);
    } finally {
      hold.open();
      await writing;
    }
    expect(await countCities("Uncommitted")).toBe(1);
    expect((await t.req("GET", "/api/city?name=Uncommitted", { token })).body.total).toBe(1);
  });

  test("twenty concurrent read-then-write transactions serialize: no SQLITE_BUSY, no lost update", async () => {
    const door = t.ctx.store.tenant(corpId);
    await door.write((tx) => tx.$client.run("INSERT INTO notes (id, user_id, content, created_at, updated_at) VALUES ('counter', 'u', '0', 'x', 'x')"));
    const bump = () =>
      door.write(async (tx) => {
        const n = Number(tx.$client.query<{ content: string }, []>("SELECT content FROM notes WHERE id = 'counter'").get()!.content);
        await Bun.sleep(1);
        tx.$client.run("UPDATE notes SET content = ?1 WHERE id = 'counter'", [String(n + 1)]);
        return n + 1;
      });
    const results = await Promise.all(Array.from({ length: 20 }, bump));
    expect([...results].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await door.read((db) => db.$client.query<{ content: string }, []>("SELECT content FROM notes WHERE id = 'counter'").get()!.content)).toBe("20");
  });

  test("a write that throws rolls back whole, emits nothing, and releases the lock", async () => {
    const door = t.ctx.store.tenant(corpId);
    const told: string[] = [];
    const off = t.ctx.events.subscribe((id) => told.push(id));
    const events = () => door.read((db) => db.$client.query<{ n: number }, []>("SELECT count(*) AS n FROM events").get()!.n);
    const before = await events();
    const failing = door.write(async (tx, w) => {
      tx.$client.run("INSERT INTO cities (id, name, state, country, created_at, updated_at) VALUES (?1, 'RolledBack', 'SP', 'BR', 'x', 'x')", [crypto.randomUUID()]);
      w.emit("CITY_AFTER_INSERT", "x", { name: "RolledBack" });
      await Bun.sleep(1);
      throw new Error("refused");
    });
    await expect(failing).rejects.toThrow("refused");
    expect(await countCities("RolledBack")).toBe(0);
    expect(await events()).toBe(before);
    expect(told).toEqual([]);
    // The next write proceeds, and its event is told after its COMMIT, once.
    await door.write((_tx, w) => w.emit("CITY_AFTER_UPDATE", "y", (tx: typeof _tx) => ({ seen: tx.$client.query("SELECT 1 AS one").get() })));
    expect(await events()).toBe(before + 1);
    expect(told).toEqual([corpId]);
    off();
  });

  test("grouped writes share a transaction; one that fails rolls back alone", async () => {
    const door = t.ctx.store.tenant(corpId);
    const insert = (name: string, fail: boolean) =>
      door.writeGrouped((tx) => {
        tx.$client.run("INSERT INTO cities (id, name, state, country, created_at, updated_at) VALUES (?1, ?2, 'SP', 'BR', 'x', 'x')", [crypto.randomUUID(), name]);
        if (fail) throw new Error(`refused ${name}`);
        return name;
      });
    const outcomes = await Promise.allSettled([insert("GroupA", false), insert("GroupB", true), insert("GroupC", false)]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect([await countCities("GroupA"), await countCities("GroupB"), await countCities("GroupC")]).toEqual([1, 0, 1]);
  });

  test("the read connection refuses writes", async () => {
    await expect(t.ctx.store.tenant(corpId).read((db) => db.$client.run("DELETE FROM cities"))).rejects.toThrow();
    expect(await countCities("GroupA")).toBe(1);
  });
});

describe("core/store: a write nested inside another write on the same database", () => {
  test("fails after the lock wait (503) instead of hanging, rolls the outer write back, and leaves the database usable", async () => {
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { SqliteDoor } = await import("../../src/db/door");
    const { openTenantDb } = await import("../../src/db/sqlite");
    const path = join(mkdtempSync(join(tmpdir(), "corpadmin-door-")), "nested.db");
    const door = new SqliteDoor(openTenantDb(path), path, { lockWaitMs: 150 });
    await door.write((tx) => tx.$client.run("CREATE TABLE t (x INTEGER)"));
    const started = performance.now();
    const outer = door.write(async (tx) => {
      tx.$client.run("INSERT INTO t VALUES (1)");
      await door.write((inner) => inner.$client.run("INSERT INTO t VALUES (2)"));
    });
    const error = await outer.then(() => null, (e: unknown) => e as { status?: number });
    expect(error?.status).toBe(503);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(await door.read((db) => db.$client.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()!.n)).toBe(0);
    await door.write((tx) => tx.$client.run("INSERT INTO t VALUES (3)"));
    expect(await door.read((db) => db.$client.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()!.n)).toBe(1);
    door.close();
  });

  test("grouped writes waiting behind a stuck write fail with it, and later groups still run", async () => {
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { SqliteDoor } = await import("../../src/db/door");
    const { openTenantDb } = await import("../../src/db/sqlite");
    const path = join(mkdtempSync(join(tmpdir(), "corpadmin-door-")), "grouped.db");
    const door = new SqliteDoor(openTenantDb(path), path, { lockWaitMs: 150 });
    await door.write((tx) => tx.$client.run("CREATE TABLE t (x INTEGER)"));
    const release = gate();
    const holding = door.write(async () => {
      await release.opened;
    });
    const grouped = door.writeGrouped((tx) => tx.$client.run("INSERT INTO t VALUES (1)"));
    expect(await grouped.then(() => null, (e: { status?: number }) => e.status)).toBe(503);
    release.open();
    await holding;
    await door.writeGrouped((tx) => tx.$client.run("INSERT INTO t VALUES (2)"));
    expect(await door.read((db) => db.$client.query<{ x: number }, []>("SELECT x FROM t").all())).toEqual([{ x: 2 }]);
    door.close();
  });
});

describe("core/store: a read's statements share one snapshot", () => {
  test("two statements of one synchronous read see the same state even when a commit lands between them", async () => {
    const door = t.ctx.store.tenant(corpId);
    const name = `Snapshot ${crypto.randomUUID()}`;
    const insert = () =>
      door.write((tx) =>
        tx.$client.run("INSERT INTO cities (id, name, state, country, created_at, updated_at) VALUES (?1, ?2, 'RJ', 'BR', ?3, ?3)", [crypto.randomUUID(), name, new Date().toISOString()]),
      );
    const counts = await door.read((db) => {
      const count = () => db.$client.query<{ n: number }, [string]>("SELECT count(*) AS n FROM cities WHERE name = ?1").get(name)!.n;
      const before = count();
      // A commit on the writer connection between the two statements of this read.
      const writer = (door as unknown as { door: { writer: { $client: { run(sql: string, p: unknown[]): void } } } }).door.writer.$client;
      writer.run("INSERT INTO cities (id, name, state, country, created_at, updated_at) VALUES (?1, ?2, 'SP', 'BR', ?3, ?3)", [crypto.randomUUID(), name, new Date().toISOString()]);
      return [before, count()];
    });
    expect(counts).toEqual([0, 0]);
    expect(await countCities(name)).toBe(1);
    await insert();
    expect(await countCities(name)).toBe(2);
  });
});

describe("core/store: a write is acknowledged only once its commit is on disk (POST /api/city)", () => {
  const city = (name: string) => ({ token, body: { name, state: "SP", country: "BR" } });

  test("the answer waits for the door's fsync of the WAL, and commits made meanwhile share the next one", async () => {
    const door = t.ctx.tenants.door(corpId);
    const real = door.syncFile;
    const disk = gate();
    let syncs = 0;
    door.syncFile = async (fd) => {
      syncs++;
      await disk.opened;
      return real(fd);
    };
    try {
      let answered = 0;
      const posts = Array.from({ length: 5 }, (_, i) => t.req("POST", "/api/city", city(`Synced ${i}`)).then((r) => (answered++, r)));
      // Committed (a read sees them) but not answered while the disk has not confirmed.
      const committed = async () => (await Promise.all([0, 1, 2, 3, 4].map((i) => countCities(`Synced ${i}`)))).reduce((a, b) => a + b);
      for (let i = 0; i < 200 && (await committed()) < 5; i++) await Bun.sleep(5);
      expect(await committed()).toBe(5);
      expect(answered).toBe(0);
      expect(syncs).toBe(1);
      // The four commits made during the first fsync wait together for the next one.
      expect((door as unknown as { syncWaiters: unknown[] }).syncWaiters.length).toBe(4);
      disk.open();
      expect((await Promise.all(posts)).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    } finally {
      door.syncFile = real;
    }
  });

  test("a failing fsync answers 503 (plain and grouped writes), and the next writes succeed", async () => {
    const door = t.ctx.tenants.door(corpId);
    const real = door.syncFile;
    door.syncFile = () => Promise.reject(new Error("EIO: i/o error, fdatasync"));
    try {
      const refused = await t.req("POST", "/api/city", city("Unconfirmed"));
      expect(refused.status).toBe(503);
      expect(refused.body.detail).toContain("not acknowledged");
      const grouped = t.ctx.store.tenant(corpId).writeGrouped((tx) => tx.$client.run("INSERT INTO notes (id, user_id, content, created_at, updated_at) VALUES ('g', 'u', '', 'x', 'x')"));
      expect(await grouped.then(() => null, (e: { status?: number }) => e.status)).toBe(503);
    } finally {
      door.syncFile = real;
    }
    expect((await t.req("POST", "/api/city", city("Confirmed"))).status).toBe(200);
  });

  test("durable: false does not wait for the fsync", async () => {
    const door = t.ctx.tenants.door(corpId);
    const real = door.syncFile;
    const disk = gate();
    door.syncFile = async (fd) => {
      await disk.opened;
      return real(fd);
    };
    try {
      await t.ctx.store.tenant(corpId).write((tx) => tx.$client.run("INSERT INTO notes (id, user_id, content, created_at, updated_at) VALUES ('nd', 'u', '', 'x', 'x')"), { durable: false });
    } finally {
      disk.open();
      door.syncFile = real;
    }
  });
});

describe("core/store: WAL checkpoints run on the checkpointer's thread", () => {
  test("a door's commits are checkpointed off the writer within a second, a growing WAL at once, the WAL starts over after each, and maintain() empties it", async () => {
    const { mkdtempSync, statSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { SqliteDoor } = await import("../../src/db/door");
    const { Checkpointer } = await import("../../src/db/checkpointer");
    const { openTenantDb } = await import("../../src/db/sqlite");
    const path = join(mkdtempSync(join(tmpdir(), "corpadmin-door-")), "ckpt.db");
    const checkpointer = new Checkpointer();
    const asked: { log: number; checkpointed: number }[] = [];
    const run = checkpointer.checkpoint.bind(checkpointer);
    checkpointer.checkpoint = async (p, mode) => {
      const done = await run(p, mode);
      if (done.ok && mode !== "TRUNCATE") asked.push({ log: done.log, checkpointed: done.checkpointed });
      return done;
    };
    const door = new SqliteDoor(openTenantDb(path), path, { checkpointer });
    try {
      await door.write((tx) => tx.$client.run("CREATE TABLE t (x BLOB)"));
      // SQLite's autocheckpoint would run inside COMMIT, on the event loop: off on the writer.
      expect(door.writer.$client.query("PRAGMA wal_autocheckpoint").get()).toEqual({ wal_autocheckpoint: 0 });
      // A small WAL: one pass, beside the writes.
      for (let i = 0; i < 50 && asked.length < 1; i++) await Bun.sleep(50);
      await Bun.sleep(50);
      expect(asked.length).toBe(1);
      expect(asked[0].log).toBeGreaterThan(0);
      expect(asked[0].checkpointed).toBe(asked[0].log);
      // 6 MB in one transaction: past the WAL's size by more than 4 MB, checkpointed without the
      // timer, in two passes: beside the writes, then under the write lock (the commits made meanwhile).
      await door.write((tx) => {
        for (let i = 0; i < 6; i++) tx.$client.run("INSERT INTO t VALUES (randomblob(1048576))");
      });
      for (let i = 0; i < 40 && asked.length < 3; i++) await Bun.sleep(10);
      expect(asked.length).toBe(3);
      expect(asked[1].log).toBeGreaterThan(1000);
      expect(asked[2].checkpointed).toBe(asked[2].log);
      // The next transaction started the WAL over: the next checkpoint (the timer's) sees only its frames.
      await door.write((tx) => tx.$client.run("INSERT INTO t VALUES (x'00')"));
      for (let i = 0; i < 50 && asked.length < 4; i++) await Bun.sleep(50);
      expect(asked[3].log).toBeLessThan(10);
      expect(await door.maintain({ checkpoint: true, optimize: false })).toEqual({ checkpointed: true, optimized: false });
      expect(statSync(`${path}-wal`).size).toBe(0);
      expect(await door.read((db) => db.$client.query("SELECT count(*) AS n FROM t").get())).toEqual({ n: 7 });
    } finally {
      door.close();
      await checkpointer.close();
    }
  });
});
