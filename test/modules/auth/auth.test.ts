import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { SignJWT } from "jose";
import { events } from "../../../src/db/tenant/schema";
import { authGuard } from "../../../src/http/guard";
import { recordEvent } from "../../../src/core/events";
import type { Principal } from "../../../src/core/principal";
import { ADMIN, addCorp, addMember, addUser, makeApp, sourceOnly, startAndLogin, openApp } from "../../support/helpers";

const { t, admin } = await openApp();

const login = (body: Record<string, unknown>) => t.req("POST", "/api/login", { body });

describe("POST /api/login", () => {
  test("answers the interface document's Credentials, field by field", async () => {
    const res = await login({ corp: "acme", login: ADMIN.login, password: ADMIN.password });
    expect(res.status).toBe(200);
    const c = res.body;
    expect(Object.keys(c).sort()).toEqual(["access_token", "credentials", "expires_in", "token_type"]);
    expect(typeof c.access_token).toBe("string");
    expect(c.token_type).toBe("bearer");
    expect(c.expires_in).toBe(3600);
    expect(Object.keys(c.credentials).sort()).toEqual(["corp", "permission", "user"]);
    const u = c.credentials.user;
    expect(Object.keys(u).sort()).toEqual(["corps", "email", "id", "login", "name", "status", "two_factor_required"]);
    expect(u).toMatchObject({ id: admin.userId, name: ADMIN.name, email: ADMIN.email, login: ADMIN.login, status: true, two_factor_required: false });
    expect(u.corps).toEqual({ acme: { id: admin.corpId, company_name: "ACME Telecom" } });
    expect(c.credentials.corp).toBe(admin.corpId);
    expect(c.credentials.permission).toEqual({ admin: ["*"], allow: ["*"] });
    const [, payload] = c.access_token.split(".");
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
    expect(Object.keys(claims).sort()).toEqual(["corp", "exp", "iat", "jti", "sub"]);
    expect(claims.sub).toBe(admin.userId);
    expect(claims.corp).toBe(admin.corpId);
  });

  test("accepts the corporation's id as well as its auth_name", async () => {
    const res = await login({ corp: admin.corpId, login: ADMIN.login, password: ADMIN.password });
    expect(res.status).toBe(200);
    expect(res.body.credentials.corp).toBe(admin.corpId);
  });

  test.each([
    ["wrong password", { corp: "acme", login: ADMIN.login, password: "nope-nope" }],
    ["unknown login", { corp: "acme", login: "ghost", password: ADMIN.password }],
    ["unknown corporation", { corp: "nowhere", login: ADMIN.login, password: ADMIN.password }],
  ])("%s is 403 invalid-credentials, saying no more", async (_name, body) => {
    const res = await login(body);
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body.type).toBe("urn:corpadmin:problem:invalid-credentials");
    expect(res.body.detail).toBe("Invalid login, password or corporation");
  });

  test("a user who is not a member of the corporation is 403", async () => {
    const other = await addCorp(t, "other-isp");
    const u = await addUser(t, other, { login: "only-other" });
    const res = await login({ corp: "acme", login: u.login, password: u.password });
    expect(res.status).toBe(403);
    expect(res.body.type).toBe("urn:corpadmin:problem:invalid-credentials");
  });

  test("an inactive user is 403 account-inactive", async () => {
    const u = await addUser(t, admin.corpId, { login: "inactive-one" });
    expect((await t.req("PUT", `/api/user/${u.userId}/inactive`, { token: admin.token })).status).toBe(200);
    const res = await login({ corp: "acme", login: u.login, password: u.password });
    expect(res.status).toBe(403);
    expect(res.body.type).toBe("urn:corpadmin:problem:account-inactive");
    // ... and the token it held before is no longer accepted
    expect((await t.req("GET", "/api/auth/credentials", { token: u.token })).status).toBe(401);
  });

  test("missing and mistyped fields are 400 naming each field", async () => {
    const res = await login({ corp: "acme", password: 5 });
    expect(res.status).toBe(400);
    expect(res.body.type).toBe("urn:corpadmin:problem:validation");
    const paths = res.body.errors.map((e: { path: string }) => e.path).sort();
    expect(paths).toEqual(["login", "password"]);
  });

  test("two_factor_code must be 6 digits", async () => {
    const res = await login({ corp: "acme", login: ADMIN.login, password: ADMIN.password, two_factor_code: "12ab56" });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("two_factor_code");
  });

  test("malformed JSON is 400, a non-JSON content type 415, an oversized body 413", async () => {
    const bad = await t.req("POST", "/api/login", { raw: "{\"corp\": " });
    expect(bad.status).toBe(400);
    expect(bad.body.type).toBe("urn:corpadmin:problem:validation");
    const text = await t.req("POST", "/api/login", { raw: "corp=acme", headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(415);
    expect(text.body.type).toBe("urn:corpadmin:problem:unsupported-media-type");
    const huge = await t.req("POST", "/api/login", { raw: JSON.stringify({ corp: "x".repeat(1024 * 1024 + 10) }) });
    expect(huge.status).toBe(413);
    expect(huge.body.type).toBe("urn:corpadmin:problem:payload-too-large");
  });

  test("a chunked body over the limit is 413 too", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream({
      pull(c) {
        if (sent++ < 20) c.enqueue(chunk);
        else c.close();
      },
    });
    const res = await t.fetch("/api/login", { method: "POST", headers: { "content-type": "application/json", "transfer-encoding": "chunked" }, body: stream });
    expect(res.status).toBe(413);
  });
});

describe("GET /api/auth/credentials; GET /api/auth/refresh; POST /api/auth/corp; DELETE /api/logout: tokens", () => {
  test("no token, a malformed token, or a token signed with another key is 401", async () => {
    expect((await t.req("GET", "/api/auth/credentials")).status).toBe(401);
    expect((await t.req("GET", "/api/auth/credentials", { token: "not.a.jwt" })).status).toBe(401);
    const forged = await new SignJWT({ corp: admin.corpId })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(admin.userId)
      .setJti("01900000-0000-7000-8000-000000000000")
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("another-key-entirely-0123456789"));
    const res = await t.req("GET", "/api/auth/credentials", { token: forged });
    expect(res.status).toBe(401);
    expect(res.body.type).toBe("urn:corpadmin:problem:unauthorized");
  });

  test("alg none is 401", async () => {
    const [, payload] = admin.token.split(".");
    const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${payload}.`;
    expect((await t.req("GET", "/api/auth/credentials", { token: none })).status).toBe(401);
  });

  test("credentials answer the same token with the seconds left", async () => {
    const res = await t.req("GET", "/api/auth/credentials", { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body.access_token).toBe(admin.token);
    expect(res.body.expires_in).toBeGreaterThan(3500);
    expect(res.body.expires_in).toBeLessThanOrEqual(3600);
  });

  test("logout revokes the session: the old token is 401 afterwards", async () => {
    const s = await login({ corp: "acme", login: ADMIN.login, password: ADMIN.password });
    const token = s.body.access_token;
    expect((await t.req("DELETE", "/api/logout", { token })).status).toBe(204);
    expect((await t.req("GET", "/api/auth/credentials", { token })).status).toBe(401);
    expect((await t.req("DELETE", "/api/logout", { token })).status).toBe(401);
  });

  test("refresh issues a new token and revokes the old one", async () => {
    const s = await login({ corp: "acme", login: ADMIN.login, password: ADMIN.password });
    const old = s.body.access_token;
    const res = await t.req("GET", "/api/auth/refresh", { token: old });
    expect(res.status).toBe(200);
    expect(res.body.access_token).not.toBe(old);
    expect((await t.req("GET", "/api/auth/credentials", { token: old })).status).toBe(401);
    expect((await t.req("GET", "/api/auth/credentials", { token: res.body.access_token })).status).toBe(200);
  });

  test("refresh of a blocked corporation is 403 corp-blocked; maintenance 503 with Retry-After", async () => {
    const corpId = await addCorp(t, "gate-test");
    const u = await addUser(t, corpId, { login: "gate-user" });
    expect((await t.req("POST", `/api/corp/${corpId}/block`, { token: admin.token })).status).toBe(200);
    const blocked = await t.req("GET", "/api/auth/refresh", { token: u.token });
    expect(blocked.status).toBe(403);
    expect(blocked.body.type).toBe("urn:corpadmin:problem:corp-blocked");
    expect((await t.req("POST", `/api/corp/${corpId}/maintenance`, { token: admin.token })).status).toBe(200);
    const maint = await t.req("GET", "/api/auth/refresh", { token: u.token });
    expect(maint.status).toBe(503);
    expect(maint.headers.get("retry-after")).toBeTruthy();
    expect((await login({ corp: "gate-test", login: u.login, password: u.password })).status).toBe(503);
  });

  test("change of corporation: member 200 and old token revoked; non-member 403; bad body 400", async () => {
    const corpId = await addCorp(t, "second-corp");
    const u = await addUser(t, admin.corpId, { login: "two-corps" });
    await addMember(t, corpId, u.userId);
    const res = await t.req("POST", "/api/auth/corp", { token: u.token, body: { corp: "second-corp" } });
    expect(res.status).toBe(200);
    expect(res.body.credentials.corp).toBe(corpId);
    expect(Object.keys(res.body.credentials.user.corps).sort()).toEqual(["acme", "second-corp"]);
    expect((await t.req("GET", "/api/auth/credentials", { token: u.token })).status).toBe(401);
    const next = res.body.access_token;
    const other = await addCorp(t, "not-mine");
    void other;
    expect((await t.req("POST", "/api/auth/corp", { token: next, body: { corp: "not-mine" } })).status).toBe(403);
    expect((await t.req("POST", "/api/auth/corp", { token: next, body: { corp: "does-not-exist" } })).status).toBe(403);
    expect((await t.req("POST", "/api/auth/corp", { token: next, body: {} })).status).toBe(400);
    expect((await t.req("POST", "/api/auth/corp", { body: { corp: "acme" } })).status).toBe(401);
  });

  test("a session revoked while its requests are in flight answers them 200 or 401, never a 5xx", async () => {
    // Logout races requests of the same token: some pass the guard before the revocation commits
    // and reach their handler after it; those must end in a 401 problem document too.
    const failures: string[] = [];
    let refused = 0;
    for (let round = 0; round < 6; round++) {
      const token = (await login({ corp: "acme", login: ADMIN.login, password: ADMIN.password })).body.access_token;
      let answered = 0;
      let logout: Promise<number> | undefined;
      // Each worker asks until it is refused; the 16th answer sends the logout, so that requests
      // straddle the revocation (in-process, cached answers never yield to a timer).
      const worker = async () => {
        for (;;) {
          const res = await t.req("GET", "/api/auth/credentials", { token });
          if (++answered === 16) logout = t.req("DELETE", "/api/logout", { token }).then((r) => r.status);
          if (res.status === 200) continue;
          if (res.status !== 401 || res.body.type !== "urn:corpadmin:problem:unauthorized") failures.push(`${res.status} ${res.text}`);
          refused++;
          return;
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      expect(await logout).toBe(204);
    }
    expect(failures).toEqual([]);
    expect(refused).toBe(6 * 8);
  });
});

// In-process: an auth check (the guard's last step) ends the session or deletes the user after the
// guard has read them, so the handler finds them gone every time.
sourceOnly("GET /api/auth/credentials; GET /api/auth/refresh; POST /api/auth/corp; POST /api/user/{id}/2fa/enable; POST /api/user/{id}/2fa/disable: gone between the guard and the handler", () => {
  async function withCheck(check: (p: Principal) => Promise<void>, run: () => Promise<void>) {
    t.ctx.authChecks.push(check);
    try {
      await run();
    } finally {
      t.ctx.authChecks.splice(t.ctx.authChecks.indexOf(check), 1);
    }
  }

  test("a session revoked after the guard passed is 401, not 500", async () => {
    const token = (await login({ corp: "acme", login: ADMIN.login, password: ADMIN.password })).body.access_token;
    const sessionId = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString()).jti;
    await withCheck(
      async (p) => {
        if (p.sessionId === sessionId) await t.ctx.sessions.revoke(sessionId);
      },
      async () => {
        const res = await t.req("GET", "/api/auth/credentials", { token });
        expect(res.status).toBe(401);
        expect(res.body.type).toBe("urn:corpadmin:problem:unauthorized");
      },
    );
  });

  test("GET /api/auth/refresh and POST /api/auth/corp of a session revoked after the guard passed are 401: no new token comes of it", async () => {
    for (const [method, path, body] of [
      ["GET", "/api/auth/refresh", undefined],
      ["POST", "/api/auth/corp", { corp: "acme" }],
    ] as const) {
      const token = (await login({ corp: "acme", login: ADMIN.login, password: ADMIN.password })).body.access_token;
      const sessionId = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString()).jti;
      const before = (t.sql().query("SELECT count(*) AS n FROM sessions").get() as { n: number }).n;
      await withCheck(
        async (p) => {
          if (p.sessionId === sessionId) await t.ctx.sessions.revoke(sessionId);
        },
        async () => {
          const res = await t.req(method, path, { token, body });
          expect([path, res.status, res.body.type]).toEqual([path, 401, "urn:corpadmin:problem:unauthorized"]);
        },
      );
      expect((t.sql().query("SELECT count(*) AS n FROM sessions").get() as { n: number }).n).toBe(before);
    }
  });

  test("a user deleted after the guard passed is 404 on the two-factor rows, not 500", async () => {
    for (const [path, body] of [
      ["2fa/enable", {}],
      ["2fa/enable", { code: "123456" }],
      ["2fa/disable", { code: "123456" }],
    ] as const) {
      const u = await addUser(t, admin.corpId);
      await withCheck(
        async (p) => {
          if (p.userId === u.userId) expect((await t.req("DELETE", `/api/user/${u.userId}`, { token: admin.token })).status).toBe(204);
        },
        async () => {
          const res = await t.req("POST", `/api/user/${u.userId}/${path}`, { token: u.token, body });
          expect(res.status).toBe(404);
          expect(res.body.type).toBe("urn:corpadmin:problem:not-found");
        },
      );
    }
  });
});

// In-process: probe routes mounted over the real guard.
sourceOnly("auth guard: probe routes over the real guard", () => {
  // A probe route over the real guard: the tenant handle it resolves is the working corporation's.
  function probeApp() {
    return new Elysia()
      .use(authGuard(t.ctx))
      .get("/api/city", ({ tenant }) => tenant.read(async (db) => ({ events: (await db.select().from(events).all()).map((e) => e.record_id) })), { auth: "platform.city" })
      .get("/api/city/:id", ({ principal }) => ({ corp: principal.corpId }), { auth: "platform.city" })
      .get("/api/only-super", () => ({ ok: true }), { auth: "*" })
      .get("/api/user/:id/self", () => ({ ok: true }), { auth: { guard: "platform.user", self: "id" } });
  }

  /** The probe app answering a refused request with its status alone. */
  const statusProbe = () =>
    probeApp().onError(({ error, set }) => {
      set.status = (error as { status?: number }).status ?? 500;
      return "";
    });

  const call = (app: { handle(r: Request): Promise<Response> }, path: string, token?: string) =>
    app.handle(new Request(`http://localhost${path}`, { headers: token ? { authorization: `Bearer ${token}`, host: "localhost" } : { host: "localhost" } }));

  test("a session in corporation A gets A's database handle, never B's", async () => {
    const a = admin.corpId;
    const b = await addCorp(t, "tenant-b");
    await t.ctx.store.tenant(a).write((tx) => recordEvent(tx, "CITY_AFTER_INSERT", "row-of-a", {}));
    const ua = await addUser(t, a, { services: ["platform.city"] });
    const ub = await addUser(t, b, { services: ["platform.city"] });
    const app = probeApp().onError(({ error }) => String(error));
    const ra = (await (await call(app, "/api/city", ua.token)).json()) as { events: string[] };
    const rb = (await (await call(app, "/api/city", ub.token)).json()) as { events: string[] };
    expect(ra.events).toContain("row-of-a");
    expect(rb.events).not.toContain("row-of-a");
  });

  test("permission: service in admin, action in allow (with the row's path), otherwise 403", async () => {
    const app = statusProbe();
    const none = await addUser(t, admin.corpId);
    const byService = await addUser(t, admin.corpId, { services: ["platform.city"] });
    const byAction = await addUser(t, admin.corpId, { actions: ["localhost:80/api/city/{id}/GET"] });
    const wrongPort = await addUser(t, admin.corpId, { actions: ["localhost:8080/api/city/{id}/GET"] });
    const id = "01900000-0000-7000-8000-000000000001";
    const cases: [who: string, path: string, token: string | undefined, status: number][] = [
      ["no token", `/api/city/${id}`, undefined, 401],
      ["no grant", `/api/city/${id}`, none.token, 403],
      ["the service", `/api/city/${id}`, byService.token, 200],
      ["the row's action", `/api/city/${id}`, byAction.token, 200],
      ["the row's action, another row", "/api/city", byAction.token, 403],
      ["the row's action on another port", `/api/city/${id}`, wrongPort.token, 403],
      ["a service, on a * route", "/api/only-super", byService.token, 403],
      ["*, on a * route", "/api/only-super", admin.token, 200],
      ["no grant, on its own self route", `/api/user/${none.userId}/self`, none.token, 200],
      ["no grant, on another's self route", `/api/user/${byService.userId}/self`, none.token, 403],
    ];
    for (const [who, path, token, status] of cases) expect({ who, path, status: (await call(app, path, token)).status }).toEqual({ who, path, status });
  });

  test("a grant takes effect on the very next request once the cache is invalidated", async () => {
    const app = statusProbe();
    const u = await addUser(t, admin.corpId);
    const granted = await addUser(t, admin.corpId, { services: ["platform.city"] });
    expect((await call(app, "/api/city", u.token)).status).toBe(403);
    const wg = t.sql().query("SELECT workgroup_id FROM workgroup_members WHERE user_id = ?").get(granted.userId) as { workgroup_id: string };
    t.sqlWrite().query("INSERT INTO workgroup_members (workgroup_id, user_id) VALUES (?, ?)").run(wg.workgroup_id, u.userId);
    t.ctx.permissions.invalidate();
    expect((await call(app, "/api/city", u.token)).status).toBe(200);
  });

});

describe("POST /api/login: rate limit of the public auth rows", () => {
  test("a client IP gets 60 logins a minute, then 429 with Retry-After; other IPs are unaffected", async () => {
    const t = await makeApp({ options: { publicAuthLimit: 60 } });
    await startAndLogin(t);
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) {
      statuses.push((await t.req("POST", "/api/login", { body: { corp: "acme", login: "x", password: "" }, ip: "203.0.113.7" })).status);
    }
    expect(statuses.slice(0, 60).every((s) => s === 400)).toBe(true);
    const limited = await t.req("POST", "/api/login", { body: { corp: "acme", login: "x", password: "y" }, ip: "203.0.113.7" });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.body.type).toBe("urn:corpadmin:problem:rate-limited");
    const other = await t.req("POST", "/api/login", { body: { corp: "acme", login: ADMIN.login, password: ADMIN.password }, ip: "203.0.113.8" });
    expect(other.status).toBe(200);
    await t.close();
  });
});

describe("GET /api/city: list query validation", () => {
  test("an out-of-range page or limit is 400 naming the parameter", async () => {
    for (const [q, field] of [["limit=501", "limit"], ["page=0", "page"], ["limit=abc", "limit"]]) {
      const res = await t.req("GET", `/api/city?${q}`, { token: admin.token });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe(field);
    }
  });
});

// In-process: counts the concurrent password checks.
sourceOnly("POST /api/login: parallel logins of one user", () => {
  test("are not serialised behind one password hash while far from the lock", async () => {
    const u = await addUser(t, admin.corpId, { login: "busy-user" });
    const original = t.ctx.passwords.verify.bind(t.ctx.passwords);
    let running = 0;
    let peak = 0;
    t.ctx.passwords.verify = async (p: string, h: string) => {
      peak = Math.max(peak, ++running);
      try {
        return await original(p, h);
      } finally {
        running--;
      }
    };
    try {
      const results = await Promise.all(Array.from({ length: 8 }, () => login({ corp: "acme", login: u.login, password: u.password })));
      expect(results.every((r) => r.status === 200)).toBe(true);
      expect(peak).toBeGreaterThan(1);
    } finally {
      t.ctx.passwords.verify = original;
    }
  });
});
