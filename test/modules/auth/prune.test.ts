// source-only: the owners' retention functions (housekeeping calls each owner's prune<Table>), run
// on rows written past the API.
import { expect } from "bun:test";
import { testSourceOnly, openApp } from "../../support/helpers";
import { pruneLoginFailures, pruneRememberedDevices } from "../../../src/modules/auth/service";
import { prunePasswordResetKeys } from "../../../src/modules/user/service";

const { t, admin } = await openApp();

const OLD = "2000-01-01T00:00:00.000Z";
const LATER = "2999-01-01T00:00:00.000Z";
const count = (table: string) => (t.sql().query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

testSourceOnly("prune functions delete what housekeeping deletes, at most `limit` a call, and say how many", async () => {
  // Devices: 3 expired. Reset keys: 2 expired, 1 used, 2 live. Failure counters: 4 idle, of which 1 still locks.
  await t.ctx.store.platform.write(async (tx) => {
    const sql = tx.$client;
    for (let i = 0; i < 5; i++) {
      await sql.query("INSERT INTO remembered_devices (id, user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)").run(crypto.randomUUID(), admin.userId, `h-${i}`, OLD, i < 3 ? OLD : LATER);
      await sql
        .query("INSERT INTO password_reset_keys (id, user_id, key_hash, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?)")
        .run(crypto.randomUUID(), admin.userId, `k-${i}`, OLD, i < 2 ? OLD : LATER, i === 4 ? OLD : null);
      await sql.query("INSERT INTO login_failures (corp_id, login, failures, locked_until, updated_at) VALUES (?, ?, 1, ?, ?)").run(admin.corpId, `l-${i}`, i === 0 ? LATER : null, i < 4 ? OLD : LATER);
    }
  });
  const now = Date.now();
  const pruned = await t.ctx.store.platform.write(async (tx) => [
    await pruneRememberedDevices(tx, now, 2),
    await pruneRememberedDevices(tx, now, 2),
    await pruneRememberedDevices(tx, now, 2),
    await prunePasswordResetKeys(tx, now, 10),
    await pruneLoginFailures(tx, now, 10),
  ]);
  expect(pruned).toEqual([2, 1, 0, 3, 3]);
  expect([count("remembered_devices"), count("password_reset_keys"), count("login_failures")]).toEqual([2, 2, 2]);
});
