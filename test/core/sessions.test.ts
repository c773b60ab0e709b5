// source-only: unit test of the session store.
// Verified tokens are remembered (the guard checks one on every request): remembering must not
// let through a token whose time ran out, nor a forged one that differs from a remembered one.
// Live rows kept per node (PostgreSQL) likewise: dropped by a published revocation, ended by the clock.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Sessions } from "../../src/core/sessions";
import { userFlags } from "../../src/modules/user/service";
import { makeApp, startAndLogin, type TestApp } from "../support/helpers";

let t: TestApp;
let ids: { corpId: string; userId: string };
beforeAll(async () => {
  t = await makeApp();
  ids = await startAndLogin(t);
});
afterAll(() => t.close());

/**
 * Tokens live 5 s here (at least 4: `exp` counts from the issuing second), so that the checks made
 * before expiry fit in on a loaded machine (PostgreSQL writes, psql runs); the test then sleeps
 * until just past the token's own `exp`.
 */
const TTL_S = 5;
const pastExpiry = (token: string) => Bun.sleep(JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString()).exp * 1000 + 100 - Date.now());

test("a remembered token still expires, and a forged signature or payload is refused after the genuine one was seen", async () => {
  const sessions = new Sessions(t.ctx.store.platform, crypto.getRandomValues(new Uint8Array(32)), TTL_S, userFlags, t.ctx.logger);
  const { token } = await sessions.issue(ids.userId, ids.corpId);
  const first = sessions.verify(token);
  expect(first?.sub).toBe(ids.userId);
  expect(sessions.verify(token)).toEqual(first);

  const [h, p, sig] = token.split(".");
  const flipped = sig[5] === "A" ? "B" : "A";
  expect(sessions.verify(`${h}.${p}.${sig.slice(0, 5)}${flipped}${sig.slice(6)}`)).toBeNull();
  const payload = JSON.parse(Buffer.from(p, "base64url").toString());
  const forged = Buffer.from(JSON.stringify({ ...payload, exp: payload.exp + 3600 })).toString("base64url");
  expect(sessions.verify(`${h}.${forged}.${sig}`)).toBeNull();
  // Another key never accepts it, remembered elsewhere or not.
  expect(new Sessions(t.ctx.store.platform, crypto.getRandomValues(new Uint8Array(32)), TTL_S, userFlags, t.ctx.logger).verify(token)).toBeNull();

  await pastExpiry(token);
  expect(sessions.verify(token)).toBeNull();
});

test("kept live rows (PostgreSQL's mode) still expire by the clock, and a published revocation drops them", async () => {
  const sessions = new Sessions(t.ctx.store.platform, crypto.getRandomValues(new Uint8Array(32)), TTL_S, userFlags, t.ctx.logger, t.ctx.changes, true);
  const revoked = await sessions.issue(ids.userId, ids.corpId);
  const expiring = await sessions.issue(ids.userId, ids.corpId);
  expect((await sessions.live(revoked.sessionId))?.id).toBe(revoked.sessionId);
  expect((await sessions.live(expiring.sessionId))?.super_admin).toBe(1);
  // The app's session store publishes the revocation; this one hears it (as another node would).
  await t.ctx.sessions.revoke(revoked.sessionId);
  expect(await sessions.live(revoked.sessionId)).toBeNull();
  // Kept: a revocation behind the app's back (nothing published) is not seen...
  t.sqlWrite().query("UPDATE sessions SET revoked_at = ? WHERE id = ?").run(new Date().toISOString(), expiring.sessionId);
  expect((await sessions.live(expiring.sessionId))?.id).toBe(expiring.sessionId);
  // ...but the clock is, from the kept row.
  await pastExpiry(expiring.token);
  expect(await sessions.live(expiring.sessionId)).toBeNull();
});
