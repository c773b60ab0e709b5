// A user's sessions (routes.md, Operator additions): GET /api/user/{id}/sessions and
// DELETE /api/user/{id}/sessions/{sessionId}.
import { beforeAll, expect, test } from "bun:test";
import { addCorp, addMember, addUser, logIn, makeApp, UNKNOWN_ID, openApp } from "../../support/helpers";

const { t, admin } = await openApp();
let betaId: string;

beforeAll(async () => {
  betaId = await addCorp(t, "beta");
});

const sessionIdOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString()).jti as string;

test("self: every live session with where it came from, the current one flagged", async () => {
  const u = await addUser(t, admin.corpId, { login: "sam" });
  const phone = await logIn(t, "acme", "sam", u.password, { ip: "198.51.100.7", userAgent: "Phone/1.0" });
  const laptop = await logIn(t, "acme", "sam", u.password, { ip: "2001:db8::5", userAgent: "Laptop/2.0" });
  const res = await t.req("GET", `/api/user/${u.userId}/sessions`, { token: laptop });
  expect(res.status).toBe(200);
  const items = res.body.items as any[];
  expect(items).toHaveLength(3); // addUser's own login too
  const byId = new Map(items.map((s) => [s.id, s]));
  expect(byId.get(sessionIdOf(phone))).toMatchObject({ user_id: u.userId, corp_id: admin.corpId, ip: "198.51.100.7", user_agent: "Phone/1.0", current: false });
  expect(byId.get(sessionIdOf(laptop))).toMatchObject({ ip: "2001:db8::5", user_agent: "Laptop/2.0", current: true });
  for (const s of items) {
    expect(Date.parse(s.expires_at)).toBeGreaterThan(Date.parse(s.created_at));
    expect(s.last_seen_at >= s.created_at).toBe(true);
  }
  // Logged out and refreshed sessions are not live.
  await t.req("DELETE", "/api/logout", { token: phone });
  const after = (await t.req("GET", `/api/user/${u.userId}/sessions`, { token: laptop })).body.items as any[];
  expect(after.map((s) => s.id)).not.toContain(sessionIdOf(phone));
  expect(after).toHaveLength(2);
});

test("last_seen_at moves with use, at most once a minute", async () => {
  const u = await addUser(t, admin.corpId, { login: "lena" });
  const token = await logIn(t, "acme", "lena", u.password, { ip: "203.0.113.1", userAgent: "ua" });
  const sid = sessionIdOf(token);
  const row = () => t.sql().query("SELECT created_at, last_seen_at FROM sessions WHERE id = ?").get(sid) as { created_at: string; last_seen_at: string };
  const first = row();
  expect(first.last_seen_at).toBe(first.created_at);
  await Bun.sleep(5);
  await t.req("GET", `/api/user/${u.userId}`, { token });
  // Within the minute: no write.
  expect(row().last_seen_at).toBe(first.created_at);
  // A process that has not written it yet (here: after a restart) writes it at the first request.
  const again = await makeApp({ dir: t.dir });
  try {
    expect((await again.req("GET", `/api/user/${u.userId}`, { token })).status).toBe(200);
    const seen = again.sql().query("SELECT last_seen_at FROM sessions WHERE id = ?").get(sid) as { last_seen_at: string };
    expect(seen.last_seen_at > first.created_at).toBe(true);
  } finally {
    await again.close(false);
  }
});

test("revoke: the token is 401 at once; revoking again is 404", async () => {
  const u = await addUser(t, admin.corpId, { login: "rita" });
  const other = await logIn(t, "acme", "rita", u.password, { ip: "203.0.113.2", userAgent: "Other/1" });
  const del = await t.req("DELETE", `/api/user/${u.userId}/sessions/${sessionIdOf(other)}`, { token: u.token });
  expect(del.status).toBe(204);
  expect((await t.req("GET", `/api/user/${u.userId}`, { token: other })).status).toBe(401);
  expect((await t.req("GET", `/api/user/${u.userId}`, { token: u.token })).status).toBe(200);
  expect((await t.req("DELETE", `/api/user/${u.userId}/sessions/${sessionIdOf(other)}`, { token: u.token })).status).toBe(404);
  expect((await t.req("DELETE", `/api/user/${u.userId}/sessions/${UNKNOWN_ID}`, { token: u.token })).status).toBe(404);
  expect((await t.req("DELETE", `/api/user/${u.userId}/sessions/not-a-uuid`, { token: u.token })).status).toBe(404);
  // Revoking one's own current session works like a logout.
  expect((await t.req("DELETE", `/api/user/${u.userId}/sessions/${sessionIdOf(u.token)}`, { token: u.token })).status).toBe(204);
  expect((await t.req("GET", `/api/user/${u.userId}`, { token: u.token })).status).toBe(401);
});

test("platform.user sees and revokes members' sessions in the working corporation only; * sees all", async () => {
  const manager = await addUser(t, admin.corpId, { login: "mgr", services: ["platform.user"] });
  const member = await addUser(t, admin.corpId, { login: "both" });
  // The member also works in beta.
  await addMember(t, betaId, member.userId);
  const inBeta = await logIn(t, "beta", "both", member.password, { ip: "203.0.113.3", userAgent: "Beta/1" });

  const seen = await t.req("GET", `/api/user/${member.userId}/sessions`, { token: manager.token });
  expect(seen.status).toBe(200);
  expect(seen.body.items.map((s: any) => s.corp_id)).toEqual([admin.corpId]);
  expect((await t.req("DELETE", `/api/user/${member.userId}/sessions/${sessionIdOf(inBeta)}`, { token: manager.token })).status).toBe(404);
  const all = await t.req("GET", `/api/user/${member.userId}/sessions`, { token: admin.token });
  expect(all.body.items.map((s: any) => s.corp_id).sort()).toEqual([admin.corpId, betaId].sort());
  expect((await t.req("DELETE", `/api/user/${member.userId}/sessions/${sessionIdOf(member.token)}`, { token: manager.token })).status).toBe(204);
  expect((await t.req("GET", `/api/user/${member.userId}`, { token: member.token })).status).toBe(401);
  expect((await t.req("DELETE", `/api/user/${member.userId}/sessions/${sessionIdOf(inBeta)}`, { token: admin.token })).status).toBe(204);
  expect((await t.req("GET", "/api/user/socket", { token: inBeta })).status).toBe(401);

  // A platform administrator's session is theirs and `*`'s to end.
  const adminSessions = (await t.req("GET", `/api/user/${admin.userId}/sessions`, { token: manager.token })).body.items as any[];
  expect(adminSessions.length).toBeGreaterThan(0);
  expect((await t.req("DELETE", `/api/user/${admin.userId}/sessions/${adminSessions[0].id}`, { token: manager.token })).status).toBe(403);
});

test("401 without a token, 403 without platform.user, 404 unknown or outside the corporation", async () => {
  const plain = await addUser(t, admin.corpId, { login: "plain" });
  const stranger = await addUser(t, betaId, { login: "stranger", services: ["platform.user"] });
  expect((await t.req("GET", `/api/user/${plain.userId}/sessions`)).status).toBe(401);
  expect((await t.req("DELETE", `/api/user/${plain.userId}/sessions/${sessionIdOf(plain.token)}`)).status).toBe(401);
  const clerk = await addUser(t, admin.corpId, { login: "clerk", services: ["platform.city"] });
  expect((await t.req("GET", `/api/user/${plain.userId}/sessions`, { token: clerk.token })).status).toBe(403);
  expect((await t.req("DELETE", `/api/user/${plain.userId}/sessions/${sessionIdOf(plain.token)}`, { token: clerk.token })).status).toBe(403);
  expect((await t.req("GET", `/api/user/${UNKNOWN_ID}/sessions`, { token: admin.token })).status).toBe(404);
  expect((await t.req("GET", `/api/user/${plain.userId}/sessions`, { token: stranger.token })).status).toBe(404);
  expect((await t.req("DELETE", `/api/user/${plain.userId}/sessions/${sessionIdOf(plain.token)}`, { token: stranger.token })).status).toBe(404);
  expect((await t.req("GET", `/api/user/${plain.userId}`, { token: plain.token })).status).toBe(200);
});
