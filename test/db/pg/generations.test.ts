// source-only: drives the PostgreSQL door and src/db/pg/generations.ts directly against a throwaway server.
// PostgreSQL's change stamps: a read's stamp is its corporation's generation taken before it
// began; every write of the corporation on this node moves it (also a failed one), the change
// feed moves it for other nodes' writes, a feed resync moves every one, and what a read computed
// while a write ended is not to be kept.
import { describe, expect, test } from "bun:test";
import { readStamp, readStateStamp, stampHolds, stampScope } from "../../../src/db/change-stamp";
import { PgDoors } from "../../../src/core/pg/door";
import { migratePg } from "../../../src/db/pg/migrate";
import { cities } from "../../../src/db/tenant/schema";
import { throwawayPostgres } from "../../support/postgres";

const pg = await throwawayPostgres();
const client = pg.connect(pg.appUrl, 4);
await migratePg(client);
const doors = new PgDoors(client);

const insertCity = (name: string) => doors.tenant("corp-a").write((tx) => tx.insert(cities).values({ name, state: "SP", country: "BR" }).run());

describe("db/pg/generations: PostgreSQL's change stamps", () => {
  test("a read's stamp is the door's stampNow, the same until a write of that corporation ends", async () => {
    const door = doors.tenant("corp-a");
    const now = door.stampNow!();
    const [s1, scope1] = await door.read((db) => [readStamp(db), stampScope(db)] as const);
    const [s2, scope2] = await door.read((db) => [readStamp(db), stampScope(db)] as const);
    expect(s1).toBe(now);
    expect(s2).toBe(s1);
    expect(scope2).toBe(scope1);
    // Another corporation's stamp and scope are its own.
    const other = await doors.tenant("corp-b").read((db) => [readStamp(db), stampScope(db)] as const);
    expect(other[0]).not.toBe(s1);
    expect(other[1]).not.toBe(scope1);

    await insertCity("Alpha");
    expect(door.stampNow!()).not.toBe(s1);
    // A write that fails moves it too (its COMMIT may have happened).
    const before = door.stampNow!();
    await expect(door.write(() => Promise.reject(new Error("no")))).rejects.toThrow("no");
    expect(door.stampNow!()).not.toBe(before);
    // Another corporation's write moves nothing here.
    const mine = door.stampNow!();
    await doors.tenant("corp-b").write((tx) => tx.insert(cities).values({ name: "Beta", state: "SP", country: "BR" }).run());
    expect(door.stampNow!()).toBe(mine);
  });

  test("a log-only write (grouped or not) moves the stamp but not the state stamp; any other write moves both", async () => {
    const door = doors.tenant("corp-a");
    const state = door.stateStampNow!();
    const stamp = door.stampNow!();
    expect(await door.read((db) => readStateStamp(db))).toBe(state);
    await door.write((tx) => tx.insert(cities).values({ name: "Log 1", state: "SP", country: "BR" }).run(), { logOnly: true });
    await Promise.all([1, 2, 3].map((i) => door.writeGrouped((tx) => tx.insert(cities).values({ name: `Log g${i}`, state: "SP", country: "BR" }).run(), { logOnly: true, independent: true })));
    expect(door.stampNow!()).not.toBe(stamp);
    expect(door.stateStampNow!()).toBe(state);
    expect(await door.read((db) => readStateStamp(db))).toBe(state);
    // A group with one write that is not log-only moves the state stamp.
    await Promise.all([door.writeGrouped((tx) => tx.insert(cities).values({ name: "Log g4", state: "SP", country: "BR" }).run(), { logOnly: true }), door.writeGrouped((tx) => tx.insert(cities).values({ name: "State g5", state: "SP", country: "BR" }).run())]);
    expect(door.stateStampNow!()).not.toBe(state);
  });

  test("independent grouped writes run side by side; one failing reruns the group one at a time, rolling back alone", async () => {
    const door = doors.tenant("corp-c");
    const results = await Promise.allSettled(
      [1, 2, 3, 4].map((i) =>
        door.writeGrouped(
          async (tx) => {
            await tx.insert(cities).values({ name: `Side ${i}`, state: "SP", country: "BR" }).run();
            if (i === 3) throw new Error("three fails");
            return i;
          },
          { independent: true },
        ),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    const names = await door.read((db) => db.select().from(cities).all());
    expect(names.map((c) => c.name).sort()).toEqual(["Side 1", "Side 2", "Side 4"]);
  });

  test("a write's handle has no stamp; a read that overlapped a write's end may not keep what it read", async () => {
    await doors.tenant("corp-a").write(async (tx) => {
      expect(readStamp(tx)).toBeNull();
      expect(stampScope(tx)).toBeNull();
    });
    const held = await doors.tenant("corp-a").read(async (db) => {
      const stamp = readStamp(db)!;
      expect(stampHolds(db, stamp)).toBe(true);
      await insertCity("Gamma");
      return stampHolds(db, stamp);
    });
    expect(held).toBe(false);
  });

  test("the feed's signals: a corporation's change moves its stamp, a resync moves every one", () => {
    const a = doors.tenant("corp-a").stampNow!();
    const b = doors.tenant("corp-b").stampNow!();
    doors.generations.changed("corp-a");
    expect(doors.tenant("corp-a").stampNow!()).not.toBe(a);
    expect(doors.tenant("corp-b").stampNow!()).toBe(b);
    const a2 = doors.tenant("corp-a").stampNow!();
    doors.generations.resync();
    expect(doors.tenant("corp-a").stampNow!()).not.toBe(a2);
    expect(doors.tenant("corp-b").stampNow!()).not.toBe(b);
  });
});
