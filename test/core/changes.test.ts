// source-only: drives ctx.changes (src/core/changes.ts) of an in-process app directly.
// Cache invalidations published inside a write reach the topic's subscribers once the write has
// committed, never before and never after a rollback; a failing subscriber fails neither the write
// nor the other subscribers. (Across nodes: test/core/pg/feed-app.test.ts.)
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ChangeSubscriber } from "../../src/core/changes";
import { makeApp, type TestApp } from "../support/helpers";

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(() => t.close());

/** A subscriber recording what it is told. */
function recorder(topic: string) {
  const heard: string[] = [];
  const s: ChangeSubscriber = { changed: (key) => heard.push(key), resync: () => heard.push("(resync)") };
  const unsubscribe = t.ctx.changes.subscribe(topic, s);
  return { heard, unsubscribe };
}

describe("core/changes: ctx.changes.publish in a write (POST /api/corp/{id}/block and every cache's writes)", () => {
  test("subscribers hear the key after the COMMIT, before the write resolves; a key published twice in a write is sent once", async () => {
    const r = recorder("test-commit");
    const other = recorder("test-other");
    let duringWrite: string[] = [];
    await t.ctx.store.platform.write(async (tx, w) => {
      await t.ctx.changes.publish(tx, w, "test-commit", "k1");
      await t.ctx.changes.publish(tx, w, "test-commit", "k1");
      duringWrite = [...r.heard];
    });
    expect(duringWrite).toEqual([]);
    expect(r.heard).toEqual(["k1"]);
    // On PostgreSQL the change feed reports it again (every node hears each change): still only k1.
    await Bun.sleep(200);
    expect(new Set(r.heard)).toEqual(new Set(["k1"]));
    expect(other.heard).toEqual([]);
    r.unsubscribe();
    other.unsubscribe();
  });

  test("a write that rolls back tells nobody", async () => {
    const r = recorder("test-rollback");
    await expect(
      t.ctx.store.platform.write(async (tx, w) => {
        await t.ctx.changes.publish(tx, w, "test-rollback", "k2");
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    await Bun.sleep(200);
    expect(r.heard).toEqual([]);
    r.unsubscribe();
  });

  test("a failing subscriber fails neither the write nor the others; an unsubscribed one hears nothing", async () => {
    const failing = t.ctx.changes.subscribe("test-fail", { changed: () => { throw new Error("boom"); }, resync: () => {} });
    const r = recorder("test-fail");
    const gone = recorder("test-fail");
    gone.unsubscribe();
    await t.ctx.store.platform.write(async (tx, w) => t.ctx.changes.publish(tx, w, "test-fail", "k3"));
    expect(r.heard[0]).toBe("k3");
    await Bun.sleep(200);
    expect(gone.heard).toEqual([]);
    failing();
    r.unsubscribe();
  });
});
