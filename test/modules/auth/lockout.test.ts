import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as OTPAuth from "otpauth";
import { addCorp, addMember, addUser, inProcessOnly, makeApp, startAndLogin, TARGET, type TestApp } from "../../support/helpers";

let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
let offsetMs = 0;
const now = () => Date.now() + offsetMs;

beforeAll(async () => {
  t = await makeApp({ options: inProcessOnly({ now }) });
  admin = await startAndLogin(t);
});
afterAll(() => t.close());

const login = (l: string, password: string, extra: Record<string, unknown> = {}, corp = "acme") =>
  t.req("POST", "/api/login", { body: { corp, login: l, password, ...extra } });

describe("POST /api/login: lockout after 5 consecutive failures", () => {
  test("20 parallel wrong logins: at most 5 are evaluated, the rest 429; then even the right password is 429", async () => {
    const u = await addUser(t, admin.corpId, { login: "lock-parallel" });
    const results = await Promise.all(Array.from({ length: 20 }, () => login(u.login, "wrong-password")));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 403).length).toBe(5);
    expect(statuses.filter((s) => s === 429).length).toBe(15);
    const row = t.sql().query("SELECT failures FROM login_failures WHERE login = ?").get(u.login) as { failures: number };
    expect(row.failures).toBe(5);
    const right = await login(u.login, u.password);
    expect(right.status).toBe(429);
    expect(right.body.type).toBe("urn:corpadmin:problem:rate-limited");
    const retry = Number(right.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(14 * 60);
    expect(retry).toBeLessThanOrEqual(15 * 60);
    // the lock is per (corporation, login): the same user elsewhere is not locked
    const other = await addCorp(t, "lock-other");
    await addMember(t, other, u.userId);
    expect((await login(u.login, u.password, {}, "lock-other")).status).toBe(200);
    // 15 minutes later the lock is gone and a success clears the count (the in-process app's clock moves)
    if (TARGET === "source") {
      offsetMs += 15 * 60_000 + 1000;
      expect((await login(u.login, u.password)).status).toBe(200);
      expect(t.sql().query("SELECT failures FROM login_failures WHERE login = ?").get(u.login)).toBeNull();
    }
  });

  test("unknown logins lock the same way, so the lock reveals nothing", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await login("nobody-at-all", "whatever")).status);
    expect(statuses).toEqual([403, 403, 403, 403, 403, 429]);
  });

  test("a success resets the count", async () => {
    const u = await addUser(t, admin.corpId, { login: "lock-reset" });
    for (let i = 0; i < 4; i++) expect((await login(u.login, "wrong")).status).toBe(403);
    expect((await login(u.login, u.password)).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await login(u.login, "wrong")).status).toBe(403);
    expect((await login(u.login, u.password)).status).toBe(200);
  });

  test("a missing 2FA code is not a failure; a wrong one is", async () => {
    const u = await addUser(t, admin.corpId, { login: "lock-2fa" });
    const code = (secret: string) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: now() });
    const secret = (await t.req("POST", `/api/user/${u.userId}/2fa/enable`, { token: u.token })).body.secret as string;
    expect((await t.req("POST", `/api/user/${u.userId}/2fa/enable`, { token: u.token, body: { code: code(secret) } })).status).toBe(200);
    for (let i = 0; i < 7; i++) expect((await login(u.login, u.password)).body.type).toBe("urn:corpadmin:problem:two-factor-required");
    const good = code(secret);
    const wrong = good === "000000" ? "000001" : "000000";
    for (let i = 0; i < 5; i++) expect((await login(u.login, u.password, { two_factor_code: wrong })).body.type).toBe("urn:corpadmin:problem:two-factor-invalid");
    expect((await login(u.login, u.password, { two_factor_code: good })).status).toBe(429);
  });
});
