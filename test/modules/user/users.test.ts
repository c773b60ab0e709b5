import { beforeAll, describe, expect, test } from "bun:test";
import { ADMIN, addMember, addUser, UNKNOWN_ID, openApp, serviceRoles, type User } from "../../support/helpers";

const { t, admin } = await openApp();
let manager: User, plain: User, outsider: User, otherCorp: string;
beforeAll(async () => {
  ({ manager, plain, otherCorp, outsider } = await serviceRoles(t, admin.corpId, "platform.user"));
});

const newUser = (login: string, extra: Record<string, unknown> = {}) => ({ name: `Name ${login}`, email: `${login}@example.com`, login, password: "secret-pass-1", ...extra });
const login = (corp: string, l: string, password: string) => t.req("POST", "/api/login", { body: { corp, login: l, password } });

describe("POST /api/user", () => {
  test("creates a member of the working corporation with Location; the password works", async () => {
    const res = await t.req("POST", "/api/user", { token: manager.token, body: newUser("created-1") });
    expect(res.status).toBe(200);
    expect(res.headers.get("location")).toBe(`/api/user/${res.body.id}`);
    expect(Object.keys(res.body).sort()).toEqual(["builtin", "corps", "created_at", "email", "id", "login", "name", "status", "super_admin", "two_factor_required", "updated_at"]);
    expect(res.body).toMatchObject({ login: "created-1", name: "Name created-1", status: true, super_admin: false, builtin: false, two_factor_required: false });
    expect(res.body.corps).toEqual({ acme: { id: admin.corpId, company_name: "ACME Telecom" } });
    expect(res.text).not.toContain("password");
    expect((await login("acme", "created-1", "secret-pass-1")).status).toBe(200);
  });

  test("409 when the login is taken", async () => {
    const res = await t.req("POST", "/api/user", { token: manager.token, body: newUser("plain") });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe("urn:corpadmin:problem:conflict");
  });

  test("400 naming bad fields", async () => {
    const res = await t.req("POST", "/api/user", { token: manager.token, body: { name: "x", email: "not-an-email", login: "a b", password: "short" } });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["email", "login", "password"]);
  });

  test("401 without a token, 403 without platform.user", async () => {
    expect((await t.req("POST", "/api/user", { body: newUser("nope-1") })).status).toBe(401);
    expect((await t.req("POST", "/api/user", { token: plain.token, body: newUser("nope-2") })).status).toBe(403);
  });

  test("only * may create a super_admin", async () => {
    expect((await t.req("POST", "/api/user", { token: manager.token, body: newUser("wannabe", { super_admin: true }) })).status).toBe(403);
    const res = await t.req("POST", "/api/user", { token: admin.token, body: newUser("real-super", { super_admin: true }) });
    expect(res.status).toBe(200);
    expect(res.body.super_admin).toBe(true);
  });
});

describe("GET /api/user; GET /api/user/{id}; GET /api/user/login/{login}", () => {
  test("a corporation admin lists only the working corporation's users; * lists all", async () => {
    const mine = await t.req("GET", "/api/user?limit=500", { token: manager.token });
    expect(mine.status).toBe(200);
    const logins = mine.body.items.map((u: { login: string }) => u.login);
    expect(logins).toContain("plain");
    expect(logins).not.toContain("outsider");
    const all = await t.req("GET", "/api/user?limit=500", { token: admin.token });
    expect(all.body.items.map((u: { login: string }) => u.login)).toContain("outsider");
    expect(all.body.total).toBeGreaterThan(mine.body.total);
  });

  test("?q, ?sort and field filters; an unknown field or a secret column is 400", async () => {
    const q = await t.req("GET", "/api/user?q=PLAIN", { token: manager.token });
    expect(q.body.items.map((u: { login: string }) => u.login)).toEqual(["plain"]);
    const sorted = await t.req("GET", "/api/user?sort=-login", { token: manager.token });
    const logins = sorted.body.items.map((u: { login: string }) => u.login);
    expect(logins).toEqual([...logins].sort().reverse());
    expect((await t.req("GET", "/api/user?login=manager", { token: manager.token })).body.total).toBe(1);
    expect((await t.req("GET", "/api/user?password_hash=x", { token: manager.token })).status).toBe(400);
    expect((await t.req("GET", "/api/user?sort=two_factor_secret", { token: manager.token })).status).toBe(400);
  });

  test("list: 401 and 403", async () => {
    expect((await t.req("GET", "/api/user")).status).toBe(401);
    expect((await t.req("GET", "/api/user", { token: plain.token })).status).toBe(403);
  });

  test("show: self without the permission, others with it; other corporations 404", async () => {
    expect((await t.req("GET", `/api/user/${plain.userId}`, { token: plain.token })).status).toBe(200);
    expect((await t.req("GET", `/api/user/${manager.userId}`, { token: plain.token })).status).toBe(403);
    const res = await t.req("GET", `/api/user/${plain.userId}`, { token: manager.token });
    expect(res.status).toBe(200);
    expect(res.body.login).toBe("plain");
    expect((await t.req("GET", `/api/user/${outsider.userId}`, { token: manager.token })).status).toBe(404);
    expect((await t.req("GET", `/api/user/${UNKNOWN_ID}`, { token: manager.token })).status).toBe(404);
    expect((await t.req("GET", "/api/user/not-a-uuid", { token: manager.token })).status).toBe(404);
    expect((await t.req("GET", `/api/user/${outsider.userId}`, { token: admin.token })).status).toBe(200);
    expect((await t.req("GET", `/api/user/${plain.userId}`)).status).toBe(401);
  });

  test("get by login", async () => {
    const res = await t.req("GET", "/api/user/login/plain", { token: manager.token });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(plain.userId);
    expect((await t.req("GET", "/api/user/login/outsider", { token: manager.token })).status).toBe(404);
    expect((await t.req("GET", "/api/user/login/nobody-here", { token: manager.token })).status).toBe(404);
    expect((await t.req("GET", "/api/user/login/plain", { token: plain.token })).status).toBe(403);
    expect((await t.req("GET", "/api/user/login/plain")).status).toBe(401);
  });
});

describe("PUT /api/user/{id}", () => {
  test("updates; the user may update themself", async () => {
    const u = await addUser(t, admin.corpId, { login: "to-update" });
    const res = await t.req("PUT", `/api/user/${u.userId}`, { token: manager.token, body: { name: "Renamed", email: "renamed@example.com", login: "to-update-2" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: "Renamed", email: "renamed@example.com", login: "to-update-2" });
    const self = await t.req("PUT", `/api/user/${u.userId}`, { token: u.token, body: { name: "Self", email: "self@example.com", login: "to-update-2", password: "ignored-field" } });
    expect(self.status).toBe(200);
    expect(self.body.name).toBe("Self");
    expect((await login("acme", "to-update-2", u.password)).status).toBe(200);
  });

  test("409 login taken; 400 bad field; 403 other user without permission; 404 other corporation", async () => {
    const u = await addUser(t, admin.corpId, { login: "to-update-3" });
    const body = { name: "N", email: "n@example.com", login: "plain" };
    expect((await t.req("PUT", `/api/user/${u.userId}`, { token: manager.token, body })).status).toBe(409);
    const bad = await t.req("PUT", `/api/user/${u.userId}`, { token: manager.token, body: { name: "N", login: "to-update-3" } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("email");
    const ok = { name: "N", email: "n@example.com", login: "to-update-3" };
    expect((await t.req("PUT", `/api/user/${u.userId}`, { token: plain.token, body: ok })).status).toBe(403);
    expect((await t.req("PUT", `/api/user/${outsider.userId}`, { token: manager.token, body: { ...ok, login: "outsider" } })).status).toBe(404);
    expect((await t.req("PUT", `/api/user/${u.userId}`, { body: ok })).status).toBe(401);
  });

  test("super_admin changes only by *", async () => {
    const u = await addUser(t, admin.corpId, { login: "promote-me" });
    const body = { name: "P", email: "p@example.com", login: "promote-me", super_admin: true };
    expect((await t.req("PUT", `/api/user/${u.userId}`, { token: manager.token, body })).status).toBe(403);
    expect((await t.req("PUT", `/api/user/${u.userId}`, { token: u.token, body })).status).toBe(403);
    const res = await t.req("PUT", `/api/user/${u.userId}`, { token: admin.token, body });
    expect(res.status).toBe(200);
    expect(res.body.super_admin).toBe(true);
    // and now a corporation admin may not touch them at all
    expect((await t.req("PUT", `/api/user/${u.userId}`, { token: manager.token, body: { ...body, super_admin: false } })).status).toBe(403);
    expect((await t.req("POST", `/api/user/${u.userId}/password`, { token: manager.token, body: { new_password: "taken-over-1" } })).status).toBe(403);
  });

  test("the built-in user keeps super_admin", async () => {
    const res = await t.req("PUT", `/api/user/${admin.userId}`, { token: admin.token, body: { name: ADMIN.name, email: ADMIN.email, login: ADMIN.login } });
    expect(res.status).toBe(409);
  });
});

describe("PUT /api/user/{id}/inactive; POST /api/user/{id}/2fa/reset: accounts reaching beyond the working corporation", () => {
  test("a member of another corporation is changed only by * or themself", async () => {
    const u = await addUser(t, admin.corpId, { login: "shared-user" });
    await addMember(t, otherCorp, u.userId);
    const body = { name: "Hijacked", email: "attacker@example.com", login: "shared-user" };
    const put = await t.req("PUT", `/api/user/${u.userId}`, { token: manager.token, body });
    expect(put.status).toBe(403);
    expect((await t.req("POST", `/api/user/${u.userId}/password`, { token: manager.token, body: { new_password: "taken-over-1" } })).status).toBe(403);
    expect((await t.req("PUT", `/api/user/${u.userId}/inactive`, { token: manager.token })).status).toBe(403);
    expect((await t.req("POST", `/api/user/${u.userId}/2fa/reset`, { token: manager.token })).status).toBe(403);
    // still readable, and unchanged
    const shown = await t.req("GET", `/api/user/${u.userId}`, { token: manager.token });
    expect(shown.body.email).toBe("shared-user@example.com");
    expect((await t.req("PUT", `/api/user/${u.userId}`, { token: u.token, body: { ...body, name: "Own choice" } })).status).toBe(200);
    expect((await t.req("PUT", `/api/user/${u.userId}`, { token: admin.token, body })).status).toBe(200);
  });
});

describe("PUT /api/user/{id}/active|inactive: active and inactive", () => {
  test("inactive revokes the sessions and blocks login; active restores login", async () => {
    const u = await addUser(t, admin.corpId, { login: "sleepy" });
    const res = await t.req("PUT", `/api/user/${u.userId}/inactive`, { token: manager.token });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe(false);
    expect((await t.req("GET", "/api/auth/credentials", { token: u.token })).status).toBe(401);
    expect((await login("acme", u.login, u.password)).body.type).toBe("urn:corpadmin:problem:account-inactive");
    const back = await t.req("PUT", `/api/user/${u.userId}/active`, { token: manager.token });
    expect(back.status).toBe(200);
    expect(back.body.status).toBe(true);
    expect((await login("acme", u.login, u.password)).status).toBe(200);
  });

  test("409 for self and the built-in user; 403, 404 and 401", async () => {
    expect((await t.req("PUT", `/api/user/${manager.userId}/inactive`, { token: manager.token })).status).toBe(409);
    expect((await t.req("PUT", `/api/user/${admin.userId}/inactive`, { token: admin.token })).status).toBe(409);
    expect((await t.req("PUT", `/api/user/${plain.userId}/inactive`, { token: plain.token })).status).toBe(403);
    expect((await t.req("PUT", `/api/user/${outsider.userId}/inactive`, { token: manager.token })).status).toBe(404);
    expect((await t.req("PUT", `/api/user/${UNKNOWN_ID}/active`, { token: manager.token })).status).toBe(404);
    expect((await t.req("PUT", `/api/user/${plain.userId}/active`)).status).toBe(401);
    expect((await t.req("PUT", `/api/user/${plain.userId}/active`, { token: plain.token })).status).toBe(403);
  });
});

describe("POST /api/user/{id}/password", () => {
  test("self: needs the current password; other sessions revoked, this one kept", async () => {
    const u = await addUser(t, admin.corpId, { login: "changer" });
    const second = (await login("acme", u.login, u.password)).body.access_token;
    const missing = await t.req("POST", `/api/user/${u.userId}/password`, { token: u.token, body: { new_password: "brand-new-pass" } });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].path).toBe("current_password");
    const wrong = await t.req("POST", `/api/user/${u.userId}/password`, { token: u.token, body: { current_password: "wrong-one", new_password: "brand-new-pass" } });
    expect(wrong.status).toBe(403);
    const ok = await t.req("POST", `/api/user/${u.userId}/password`, { token: u.token, body: { current_password: u.password, new_password: "brand-new-pass" } });
    expect(ok.status).toBe(204);
    expect((await t.req("GET", "/api/auth/credentials", { token: u.token })).status).toBe(200);
    expect((await t.req("GET", "/api/auth/credentials", { token: second })).status).toBe(401);
    expect((await login("acme", u.login, u.password)).status).toBe(403);
    expect((await login("acme", u.login, "brand-new-pass")).status).toBe(200);
  });

  test("an admin sets another user's password without the current one; all their sessions end", async () => {
    const u = await addUser(t, admin.corpId, { login: "forgetful" });
    const res = await t.req("POST", `/api/user/${u.userId}/password`, { token: manager.token, body: { new_password: "set-by-admin-1" } });
    expect(res.status).toBe(204);
    expect((await t.req("GET", "/api/auth/credentials", { token: u.token })).status).toBe(401);
    expect((await login("acme", u.login, "set-by-admin-1")).status).toBe(200);
  });

  test("400 short password, 403 without permission, 404 other corporation, 401", async () => {
    const bad = await t.req("POST", `/api/user/${plain.userId}/password`, { token: manager.token, body: { new_password: "short" } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("new_password");
    expect((await t.req("POST", `/api/user/${manager.userId}/password`, { token: plain.token, body: { new_password: "long-enough-1" } })).status).toBe(403);
    expect((await t.req("POST", `/api/user/${outsider.userId}/password`, { token: manager.token, body: { new_password: "long-enough-1" } })).status).toBe(404);
    expect((await t.req("POST", `/api/user/${plain.userId}/password`, { body: { new_password: "long-enough-1" } })).status).toBe(401);
  });
});

describe("DELETE /api/user/{id}", () => {
  test("deletes: the user's token is 401 and the login fails", async () => {
    const u = await addUser(t, admin.corpId, { login: "doomed" });
    expect((await t.req("DELETE", `/api/user/${u.userId}`, { token: manager.token })).status).toBe(204);
    expect((await t.req("GET", "/api/auth/credentials", { token: u.token })).status).toBe(401);
    expect((await t.req("GET", `/api/user/${u.userId}`, { token: manager.token })).status).toBe(404);
    expect((await login("acme", u.login, u.password)).status).toBe(403);
  });

  test("409 self, built-in, or a member of another corporation (unless *)", async () => {
    expect((await t.req("DELETE", `/api/user/${manager.userId}`, { token: manager.token })).status).toBe(409);
    expect((await t.req("DELETE", `/api/user/${admin.userId}`, { token: admin.token })).status).toBe(409);
    const both = await addUser(t, admin.corpId, { login: "two-homes" });
    await addMember(t, otherCorp, both.userId);
    expect((await t.req("DELETE", `/api/user/${both.userId}`, { token: manager.token })).status).toBe(409);
    expect((await t.req("DELETE", `/api/user/${both.userId}`, { token: admin.token })).status).toBe(204);
  });

  test("403, 404, 401", async () => {
    expect((await t.req("DELETE", `/api/user/${plain.userId}`, { token: plain.token })).status).toBe(403);
    expect((await t.req("DELETE", `/api/user/${outsider.userId}`, { token: manager.token })).status).toBe(404);
    expect((await t.req("DELETE", `/api/user/${UNKNOWN_ID}`, { token: manager.token })).status).toBe(404);
    expect((await t.req("DELETE", `/api/user/${plain.userId}`)).status).toBe(401);
  });
});

describe("GET /api/user/{id}/permissions", () => {
  test("global and per-service lists in the working corporation", async () => {
    const u = await addUser(t, admin.corpId, { login: "perm-user", services: ["platform.city"], actions: ["localhost:80/api/person/GET"] });
    const res = await t.req("GET", `/api/user/${u.userId}/permissions`, { token: u.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      user_id: u.userId,
      corp: admin.corpId,
      admin: ["platform.city"],
      allow: ["localhost:80/api/person/GET"],
      services: { "platform.city": { admin: true, allow: [] }, "platform.core": { admin: false, allow: ["localhost:80/api/person/GET"] } },
    });
    const byManager = await t.req("GET", `/api/user/${u.userId}/permissions`, { token: manager.token });
    expect(byManager.body.admin).toEqual(["platform.city"]);
  });

  test("another corporation: * or the user's own membership; else 403; unknown corporation 404", async () => {
    const u = await addUser(t, admin.corpId, { login: "perm-two" });
    await addMember(t, otherCorp, u.userId);
    expect((await t.req("GET", `/api/user/${u.userId}/permissions?corp_id=${otherCorp}`, { token: u.token })).status).toBe(200);
    expect((await t.req("GET", `/api/user/${u.userId}/permissions?corp_id=${otherCorp}`, { token: manager.token })).status).toBe(403);
    const bySuper = await t.req("GET", `/api/user/${u.userId}/permissions?corp_id=${otherCorp}`, { token: admin.token });
    expect(bySuper.status).toBe(200);
    expect(bySuper.body.corp).toBe(otherCorp);
    expect((await t.req("GET", `/api/user/${plain.userId}/permissions?corp_id=${otherCorp}`, { token: plain.token })).status).toBe(403);
    expect((await t.req("GET", `/api/user/${u.userId}/permissions?corp_id=${UNKNOWN_ID}`, { token: admin.token })).status).toBe(404);
    const bad = await t.req("GET", `/api/user/${u.userId}/permissions?corp_id=nope`, { token: admin.token });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("corp_id");
  });

  test("a super_admin has * in both lists", async () => {
    const res = await t.req("GET", `/api/user/${admin.userId}/permissions`, { token: admin.token });
    expect(res.body.admin).toEqual(["*"]);
    expect(res.body.allow).toEqual(["*"]);
    expect(res.body.services["platform.user"]).toEqual({ admin: true, allow: [] });
  });

  test("403, 404, 401", async () => {
    expect((await t.req("GET", `/api/user/${manager.userId}/permissions`, { token: plain.token })).status).toBe(403);
    expect((await t.req("GET", `/api/user/${outsider.userId}/permissions`, { token: manager.token })).status).toBe(404);
    expect((await t.req("GET", `/api/user/${plain.userId}/permissions`)).status).toBe(401);
  });
});
