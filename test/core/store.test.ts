// source-only: drives the store (src/core/store.ts) of an in-process app directly, holding a write transaction open across awaits.
// The store's guarantees: no read sees another request's uncommitted rows, writers to one database
// serialize (no SQLITE_BUSY), a failed write rolls back whole and emits nothing, grouped writes
// roll back alone, and events are told only after COMMIT.
// SQLite only (not in test/pg-backend.txt): SQLite's store itself (its write lock, read epochs, fsync, WAL); the PostgreSQL door's contract is test/core/pg/door.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Checkpointer } from "../../src/db/checkpointer";
import { SqliteDoor } from "../../src/db/door";
import { openTenantDb, requireSqliteClient } from "../../src/db/sqlite";
import { addUser, makeApp, startAndLogin, type TestApp } from "../support/helpers";
import { sqliteTenants } from "../support/backend";
import { DEADLINE_MS, waitFor } from "../support/wait";

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
  t.ctx.store.tenant(corpId).read((db) => requireSqliteClient(db).query<{ n: number }, [string]>("SELECT count(*) AS n FROM cities WHERE name = ?1").get(name)!.n);

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
      requireSqliteClient(tx).run("INSERT INTO cities (id, name, state, country, created_at, updated_at) VALUES (?1, 'Uncommitted', 'SP', 'BR', ?2, ?2)", [
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
    await door.write((tx) => requireSqliteClient(tx).run("INSERT INTO notes (id, user_id, content, created_at, updated_at) VALUES ('counter', 'u', '0', 'x', 'x')"));
    const bump = () =>
      door.write(async (tx) => {
        const n = Number(requireSqliteClient(tx).query<{ content: string }, []>("SELECT content FROM notes WHERE id = 'counter'").get()!.content);
        await Bun.sleep(1);
        requireSqliteClient(tx).run("UPDATE notes SET content = ?1 WHERE id = 'counter'", [String(n + 1)]);
        return n + 1;
      });
    const results = await Promise.all(Array.from({ length: 20 }, bump));
    expect([...results].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await door.read((db) => requireSqliteClient(db).query<{ content: string }, []>("SELECT content FROM notes WHERE id = 'counter'").get()!.content)).toBe("20");
  });

  test("a write that throws rolls back whole, emits nothing, and releases the lock", async () => {
    const door = t.ctx.store.tenant(corpId);
    const told: string[] = [];
    const off = t.ctx.events.subscribe((id) => told.push(id));
    const events = () => door.read((db) => requireSqliteClient(db).query<{ n: number }, []>("SELECT count(*) AS n FROM events").get()!.n);
    const before = await events();
    const failing = door.write(async (tx, w) => {
      requireSqliteClient(tx).run("INSERT INTO cities (id, name, state, country, created_at, updated_at) VALUES (?1, 'RolledBack', 'SP', 'BR', 'x', 'x')", [crypto.randomUUID()]);
      w.emit("CITY_AFTER_INSERT", "x", { name: "RolledBack" });
      await Bun.sleep(1);
      throw new Error("refused");
    });
    await expect(failing).rejects.toThrow("refused");
    expect(await countCities("RolledBack")).toBe(0);
    expect(await events()).toBe(before);
    expect(told).toEqual([]);
    // The next write proceeds, and its event is told after its COMMIT, once.
    await door.write((_tx, w) => w.emit("CITY_AFTER_UPDATE", "y", async (tx: typeof _tx) => ({ seen: await tx.$client.query("SELECT 1 AS one").get() })));
    expect(await events()).toBe(before + 1);
    expect(told).toEqual([corpId]);
    off();
  });

  test("grouped writes share a transaction; one that fails rolls back alone", async () => {
    const door = t.ctx.store.tenant(corpId);
    const insert = (name: string, fail: boolean) =>
      door.writeGrouped((tx) => {
        requireSqliteClient(tx).run("INSERT INTO cities (id, name, state, country, created_at, updated_at) VALUES (?1, ?2, 'SP', 'BR', 'x', 'x')", [crypto.randomUUID(), name]);
        if (fail) throw new Error(`refused ${name}`);
        return name;
      });
    const outcomes = await Promise.allSettled([insert("GroupA", false), insert("GroupB", true), insert("GroupC", false)]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect([await countCities("GroupA"), await countCities("GroupB"), await countCities("GroupC")]).toEqual([1, 0, 1]);
  });

  test("the read connection refuses writes", async () => {
    await expect(t.ctx.store.tenant(corpId).read((db) => requireSqliteClient(db).run("DELETE FROM cities"))).rejects.toThrow();
    expect(await countCities("GroupA")).toBe(1);
  });
});

describe("core/store: a write nested inside another write on the same database", () => {
  test("fails after the lock wait (503) instead of hanging, rolls the outer write back, and leaves the database usable", async () => {
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
        requireSqliteClient(tx).run("INSERT INTO cities (id, name, state, country, created_at, updated_at) VALUES (?1, ?2, 'RJ', 'BR', ?3, ?3)", [crypto.randomUUID(), name, new Date().toISOString()]),
      );
    const counts = await door.read((db) => {
      const count = () => requireSqliteClient(db).query<{ n: number }, [string]>("SELECT count(*) AS n FROM cities WHERE name = ?1").get(name)!.n;
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
    const door = sqliteTenants(t.ctx).door(corpId);
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
      await waitFor("the five commits", async () => (await committed()) >= 5);
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

  test("a failing fsync answers 503 and still runs the after-commit steps; durable writes are then refused, uncommitted, until a checkpoint has copied the whole WAL", async () => {
    const door = sqliteTenants(t.ctx).door(corpId);
    const real = door.syncFile;
    // A reader of another connection whose snapshot predates the failing commits: no checkpoint
    // can copy those frames while it lasts.
    const pinned = new Database((door as unknown as { path: string }).path, { readonly: true });
    pinned.run("BEGIN");
    pinned.query("SELECT count(*) FROM cities").get();
    try {
      door.syncFile = () => Promise.reject(new Error("EIO: i/o error, fdatasync"));
      try {
        // Committed, so its after-commit steps run; a sibling whose savepoint rolled back runs none.
        const ran: string[] = [];
        const grouped = t.ctx.store.tenant(corpId).writeGrouped((tx, w) => {
          w.afterCommit(() => ran.push("g"));
          requireSqliteClient(tx).run("INSERT INTO notes (id, user_id, content, created_at, updated_at) VALUES ('g', 'u', '', 'x', 'x')");
        });
        const failed = t.ctx.store.tenant(corpId).writeGrouped((_tx, w) => {
          w.afterCommit(() => ran.push("rolled back"));
          throw new Error("no");
        });
        expect(await grouped.then(() => null, (e: { status?: number; message: string }) => [e.status, e.message])).toEqual([503, expect.stringContaining("not acknowledged")]);
        expect(await failed.then(() => null, (e: Error) => e.message)).toBe("no");
        expect(ran).toEqual(["g"]);
        // The door is unconfirmed, and the pinned reader keeps the checkpoint from copying the
        // whole WAL: refused before BEGIN, nothing written.
        const refused = await t.req("POST", "/api/city", city("Unconfirmed"));
        expect(refused.status).toBe(503);
        expect(refused.body.detail).toContain("could not be checkpointed");
        // A corporation's migration (run on the writer outside the door's transactions) is refused too.
        expect(await door.exclusive(() => "migrated").then(() => null, (e: { status?: number }) => e.status)).toBe(503);
      } finally {
        door.syncFile = real;
      }
      // The disk answers again, but the frames of the failed fsync may never have reached it: a
      // later fsync proves nothing about them.
      const again = await t.req("POST", "/api/city", city("Refused"));
      expect(again.status).toBe(503);
      expect(again.headers.get("retry-after")).toBe("1");
      expect(await countCities("Refused")).toBe(0);
      expect(await countCities("Unconfirmed")).toBe(0);
    } finally {
      pinned.run("COMMIT");
      pinned.close();
    }
    // Nothing pins the WAL now: the next write checkpoints it whole, then commits and is confirmed.
    expect((await t.req("POST", "/api/city", city("Confirmed"))).status).toBe(200);
    expect((await t.req("POST", "/api/city", city("Confirmed 2"))).status).toBe(200);
  });

  test("durable: false does not wait for the fsync", async () => {
    const door = sqliteTenants(t.ctx).door(corpId);
    const real = door.syncFile;
    const disk = gate();
    door.syncFile = async (fd) => {
      await disk.opened;
      return real(fd);
    };
    try {
      await t.ctx.store.tenant(corpId).write((tx) => requireSqliteClient(tx).run("INSERT INTO notes (id, user_id, content, created_at, updated_at) VALUES ('nd', 'u', '', 'x', 'x')"), { durable: false });
    } finally {
      disk.open();
      door.syncFile = real;
    }
  });
});

describe("core/store: WAL checkpoints run on the checkpointer's thread", () => {
  test("a door's commits are checkpointed off the writer within a second, a growing WAL at once, the WAL starts over after each, and maintain() empties it", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "corpadmin-door-")), "ckpt.db");
    const checkpointer = new Checkpointer();
    const asked: { log: number; checkpointed: number }[] = [];
    // Every checkpoint goes through whenReady (the second pass with its lock-taking `ready`).
    const run = checkpointer.whenReady.bind(checkpointer);
    checkpointer.whenReady = async (p, mode, ready) => {
      const done = await run(p, mode, ready);
      if (done.ok && mode !== "TRUNCATE") asked.push({ log: done.log, checkpointed: done.checkpointed });
      return done;
    };
    const door = new SqliteDoor(openTenantDb(path), path, { checkpointer });
    try {
      await door.write((tx) => tx.$client.run("CREATE TABLE t (x BLOB)"));
      // SQLite's autocheckpoint would run inside COMMIT, on the event loop: off on the writer.
      expect(door.writer.$client.query("PRAGMA wal_autocheckpoint").get()).toEqual({ wal_autocheckpoint: 0 });
      // A small WAL: one pass, beside the writes.
      await waitFor("the first checkpoint", () => asked.length >= 1);
      await Bun.sleep(50);
      expect(asked.length).toBe(1);
      expect(asked[0].log).toBeGreaterThan(0);
      expect(asked[0].checkpointed).toBe(asked[0].log);
      // 6 MB in one transaction: past the WAL's size by more than 4 MB, checkpointed without the
      // timer, in two passes: beside the writes, then under the write lock (the commits made meanwhile).
      await door.write((tx) => {
        for (let i = 0; i < 6; i++) tx.$client.run("INSERT INTO t VALUES (randomblob(1048576))");
      });
      await waitFor("the two passes of the large WAL's checkpoint", () => asked.length >= 3);
      expect(asked.length).toBe(3);
      expect(asked[1].log).toBeGreaterThan(1000);
      expect(asked[2].checkpointed).toBe(asked[2].log);
      // The next transaction started the WAL over: the next checkpoint (the timer's) sees only its frames.
      await door.write((tx) => tx.$client.run("INSERT INTO t VALUES (x'00')"));
      await waitFor("the timer's checkpoint", () => asked.length >= 4);
      expect(asked[3].log).toBeLessThan(10);
      expect(await door.maintain({ checkpoint: true, optimize: false })).toEqual({ checkpointed: true, optimized: false });
      expect(statSync(`${path}-wal`).size).toBe(0);
      expect(await door.read((db) => db.$client.query("SELECT count(*) AS n FROM t").get())).toEqual({ n: 7 });
    } finally {
      door.close();
      await checkpointer.close();
    }
  });

  test("a commit made while a checkpoint runs arms the next one", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "corpadmin-door-")), "rearm.db");
    const checkpointer = new Checkpointer();
    const asked: { log: number; checkpointed: number }[] = [];
    const run = checkpointer.whenReady.bind(checkpointer);
    let during: (() => Promise<void>) | null = null;
    checkpointer.whenReady = async (p, mode, ready) => {
      const done = await run(p, mode, ready);
      // A commit after the pass copied the WAL, before the door hears its answer.
      if (during) {
        const commit = during;
        during = null;
        await commit();
      }
      if (done.ok) asked.push({ log: done.log, checkpointed: done.checkpointed });
      return done;
    };
    const door = new SqliteDoor(openTenantDb(path), path, { checkpointer });
    try {
      await door.write((tx) => tx.$client.run("CREATE TABLE t (x)"));
      during = () => door.write((tx) => tx.$client.run("INSERT INTO t VALUES (1)")).then(() => undefined);
      await waitFor("the second checkpoint", () => asked.length >= 2);
      expect(asked.length).toBe(2);
      // The second checkpoint copied the late commit's frames (the WAL started over with them).
      expect(asked[1].log).toBeGreaterThan(0);
      expect(asked[1].checkpointed).toBe(asked[1].log);
    } finally {
      door.close();
      await checkpointer.close();
    }
  });
  test("a second pass waiting for the checkpointer's thread (busy with another database) does not hold the door's write lock", async () => {
    const dir = mkdtempSync(join(tmpdir(), "corpadmin-door-"));
    const [pa, pc] = [join(dir, "a.db"), join(dir, "c.db")];
    const checkpointer = new Checkpointer();
    const other = gate();
    const passes: string[] = [];
    const run = checkpointer.whenReady.bind(checkpointer);
    checkpointer.whenReady = async (p, mode, ready) => {
      const done = await run(p, mode, ready);
      passes.push(ready ? "second" : "first");
      // Another database's checkpoint takes the thread just as A's first pass answers: it holds
      // it until `other` opens (as a long checkpoint of a large WAL would).
      if (passes.length === 1) void run(pc, "PASSIVE", () => other.opened);
      return done;
    };
    const c = new SqliteDoor(openTenantDb(pc), pc);
    const a = new SqliteDoor(openTenantDb(pa), pa, { checkpointer });
    try {
      await c.write((tx) => tx.$client.run("CREATE TABLE t (x BLOB)"));
      await a.write((tx) => tx.$client.run("CREATE TABLE t (x BLOB)"));
      // 6 MB: a checkpoint at once, whose second pass needs A's write lock.
      await a.write((tx) => {
        for (let i = 0; i < 6; i++) tx.$client.run("INSERT INTO t VALUES (randomblob(1048576))");
      });
      await waitFor("the first pass", () => passes.length >= 1);
      expect(passes).toEqual(["first"]);
      // The second pass is queued behind the other database: A's writes go on meanwhile.
      const small = a.write((tx) => tx.$client.run("INSERT INTO t VALUES (x'00')")).then(() => "written");
      expect(await Promise.race([small, Bun.sleep(DEADLINE_MS).then(() => "waited")])).toBe("written");
      expect(passes).toEqual(["first"]);
      other.open();
      await waitFor("the second pass", () => passes.length >= 2);
      expect(passes).toEqual(["first", "second"]);
    } finally {
      other.open();
      a.close();
      c.close();
      await checkpointer.close();
    }
  });
});

describe("core/store: a read callback that awaits keeps one read transaction (the read epoch)", () => {
  type Door = import("../../src/db/door").SqliteDoor;
  async function openDoor(name: string, checkpointer: import("../../src/db/checkpointer").Checkpointer | null = null): Promise<Door> {
    const path = join(mkdtempSync(join(tmpdir(), "corpadmin-epoch-")), `${name}.db`);
    const door = new SqliteDoor(openTenantDb(path), path, { checkpointer });
    await door.write((tx) => tx.$client.run("CREATE TABLE t (x INTEGER)"));
    return door;
  }
  const count = (db: { $client: import("bun:sqlite").Database }) => db.$client.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()!.n;
  /** A commit the door does not count (straight on its writer): only a shared snapshot hides it. */
  const sneak = (door: Door) => door.writer.$client.run("INSERT INTO t VALUES (0)");
  /** The door's fsync settled in a microtask: a whole write then never leaves the turn. */
  const instantDisk = (door: Door) => (door.syncFile = async () => {});

  test("an async callback's awaited statements run in one transaction and see one snapshot; the epoch ends after it", async () => {
    const door = await openDoor("one");
    try {
      const seen = await door.read(async (db) => {
        const out: { n: number; inTx: boolean }[] = [];
        for (let i = 0; i < 5; i++) {
          out.push({ n: count(db), inTx: db.$client.inTransaction });
          sneak(door);
          await Promise.resolve();
        }
        return out;
      });
      expect(seen).toEqual(Array.from({ length: 5 }, () => ({ n: 0, inTx: true })));
      expect(door.reader.$client.inTransaction).toBe(false);
      expect(await door.read((db) => count(db))).toBe(5);
    } finally {
      door.close();
    }
  });

  test("a read that starts after a commit sees it, while a read begun before is still in flight", async () => {
    const door = await openDoor("ryw");
    instantDisk(door);
    try {
      const hold = gate();
      const first = door.read(async (db) => {
        const before = count(db);
        await hold.opened;
        return [before, count(db)];
      });
      // Written and acknowledged within this turn: the first read's epoch is still open.
      await door.write((tx) => tx.$client.run("INSERT INTO t VALUES (1)"));
      expect(door.reader.$client.inTransaction).toBe(true);
      expect(await door.read((db) => count(db))).toBe(1);
      hold.open();
      // The first read went on in the new snapshot (read-committed across the commit).
      expect(await first).toEqual([0, 1]);
      expect(door.reader.$client.inTransaction).toBe(false);
    } finally {
      door.close();
    }
  });

  test("concurrent reads with interleaved awaits share the epoch and each get their own answers", async () => {
    const door = await openDoor("many");
    try {
      await door.write((tx) => {
        for (let i = 1; i <= 10; i++) tx.$client.run("INSERT INTO t VALUES (?1)", [i]);
      });
      const sum = (db: { $client: import("bun:sqlite").Database }, below: number) =>
        db.$client.query<{ s: number }, [number]>("SELECT coalesce(sum(x), 0) AS s FROM t WHERE x <= ?1").get(below)!.s;
      const reads = Array.from({ length: 8 }, (_, k) =>
        door.read(async (db) => {
          const parts: number[] = [];
          for (let i = 0; i < 3; i++) {
            parts.push(sum(db, k + i));
            // One commit mid-way (it adds 1 to every sum), hidden from every read of the epoch.
            if (k === 3 && i === 1) door.writer.$client.run("INSERT INTO t VALUES (1)");
            await Promise.resolve();
          }
          return parts;
        }),
      );
      const got = await Promise.all(reads);
      const tri = (n: number) => (Math.min(n, 10) * (Math.min(n, 10) + 1)) / 2;
      expect(got).toEqual(Array.from({ length: 8 }, (_, k) => [tri(k), tri(k + 1), tri(k + 2)]));
      expect(door.reader.$client.inTransaction).toBe(false);
      expect(await door.read((db) => count(db))).toBe(11);
    } finally {
      door.close();
    }
  });

  test("an error in one callback does not break the others, and the epoch still ends", async () => {
    const door = await openDoor("errors");
    try {
      const ok = door.read(async (db) => {
        await Promise.resolve();
        const a = count(db);
        await Promise.resolve();
        return [a, count(db), db.$client.inTransaction];
      });
      const thrown = door.read(async (db) => {
        await Promise.resolve();
        db.$client.query("SELECT * FROM missing_table").get();
      });
      const syncThrown = door.read(() => {
        throw new Error("refused");
      }).catch((e: Error) => e.message);
      await expect(thrown).rejects.toThrow("missing_table");
      expect(await syncThrown).toBe("refused");
      expect(await ok).toEqual([0, 0, true]);
      expect(door.reader.$client.inTransaction).toBe(false);
      expect(door.active).toBe(0);
    } finally {
      door.close();
    }
  });

  test("a read that awaits does not pin the WAL: a checkpoint completes and the WAL starts over meanwhile", async () => {
    const checkpointer = new Checkpointer();
    const door = await openDoor("bound", checkpointer);
    // The read awaits until the test lets it go, after the checkpoint: a checkpoint that waited
    // for it would not complete (was: a 200 ms timer, and the checkpoint timed under 150 ms).
    const held = gate();
    try {
      const slow = door.read(async (db) => {
        const before = count(db);
        await held.opened;
        return [before, count(db)];
      });
      await door.write((tx) => tx.$client.run("INSERT INTO t VALUES (1)"));
      const checkpoint = door.maintain({ checkpoint: true, optimize: false });
      expect(await Promise.race([checkpoint, Bun.sleep(DEADLINE_MS).then(() => "waited for the read")])).toEqual({ checkpointed: true, optimized: false });
      const path = (door as unknown as { path: string }).path;
      expect(statSync(`${path}-wal`).size).toBe(0);
      held.open();
      // Its statements after the wait run outside the old snapshot.
      expect(await slow).toEqual([0, 1]);
    } finally {
      held.open();
      door.close();
      await checkpointer.close();
    }
  });

  test("an iterator a callback leaves by break does not wedge the epoch: the next reads see later commits", async () => {
    const door = await openDoor("iterator");
    instantDisk(door);
    try {
      await door.write((tx) => tx.$client.run("INSERT INTO t VALUES (1), (2), (3)"));
      const hold = gate();
      const first = door.read(async (db) => {
        for (const _row of db.$client.query("SELECT x FROM t").iterate()) break;
        await hold.opened;
        return count(db);
      });
      await door.write((tx) => tx.$client.run("INSERT INTO t VALUES (4)"));
      expect(await door.read((db) => count(db))).toBe(4);
      hold.open();
      expect(await first).toBe(4);
      expect(door.reader.$client.inTransaction).toBe(false);
      await door.write((tx) => tx.$client.run("INSERT INTO t VALUES (5)"));
      expect(await door.read((db) => count(db))).toBe(5);
    } finally {
      door.close();
    }
  });
});

describe("POST /api/corp/{id}/block: a write whose fsync fails still runs its after-commit steps", () => {
  test("the 503 leaves the corporation cache and the gate seeing BLOCKED (the COMMIT happened)", async () => {
    // A user the gate applies to (the built-in admin is a super admin, whom it lets through).
    const user = await addUser(t, corpId, { services: ["platform.city"] });
    expect((await t.req("GET", "/api/city", { token: user.token })).status).toBe(200);
    const door = (t.ctx.tenants as unknown as { platformDoor: import("../../src/db/door").SqliteDoor }).platformDoor;
    const real = door.syncFile;
    door.syncFile = () => Promise.reject(new Error("EIO: i/o error, fdatasync"));
    let blocked;
    try {
      blocked = await t.req("POST", `/api/corp/${corpId}/block`, { token });
    } finally {
      door.syncFile = real;
    }
    expect(blocked.status).toBe(503);
    expect(blocked.body.detail).toContain("not acknowledged");
    expect((await t.ctx.corps.get(corpId))?.status).toBe("BLOCKED");
    const gated = await t.req("GET", "/api/city", { token: user.token });
    expect(gated.status).toBe(403);
    expect(gated.body.type).toContain("corp-blocked");
  });
});
