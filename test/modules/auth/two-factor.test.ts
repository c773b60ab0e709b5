// source-only: moves the app's clock (options.now).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as OTPAuth from "otpauth";
import { addCorp, addUser, makeApp, startAndLogin, type TestApp } from "../../support/helpers";

let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
let manager: Awaited<ReturnType<typeof addUser>>;
/** The app's clock: tests move it forward by whole TOTP steps. */
let offsetMs = 0;
const now = () => Date.now() + offsetMs;

beforeAll(async () => {
  t = await makeApp({ options: { now } });
  admin = await startAndLogin(t);
  manager = await addUser(t, admin.corpId, { login: "tfa-manager", services: ["platform.user"] });
});
afterAll(() => t.close());

const codeAt = (secret: string, at: number) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 }).generate({ timestamp: at });
const nextStep = () => {
  offsetMs += 30_000;
};
const login = (l: string, password: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  t.req("POST", "/api/login", { body: { corp: "acme", login: l, password, ...extra }, headers });

/** A user with two-factor enabled through the routes; returns the secret. */
async function enrolled(loginName: string) {
  const u = await addUser(t, admin.corpId, { login: loginName });
  const start = await t.req("POST", `/api/user/${u.userId}/2fa/enable`, { token: u.token });
  const secret = start.body.secret as string;
  const confirm = await t.req("POST", `/api/user/${u.userId}/2fa/enable`, { token: u.token, body: { code: codeAt(secret, now()) } });
  if (confirm.status !== 200) throw new Error(`enrolment failed: ${confirm.text}`);
  nextStep();
  return { ...u, secret };
}

describe("POST /api/login: RFC 6238 appendix B vectors (SHA-1, last 6 digits) through the login", () => {
  test("each vector logs in at its time; integers are left-padded; a replay is refused", async () => {
    let clock = Date.now();
    const clocked = await makeApp({ options: { now: () => clock } });
    try {
      await startAndLogin(clocked);
      const acmeId = (await clocked.ctx.corps.find("acme"))!.id;
      const u = await addUser(clocked, acmeId, { login: "rfc-user" });
      // The RFC's SHA-1 seed "12345678901234567890" in base32.
      clocked.sqlWrite().query("UPDATE users SET two_factor_secret = ? WHERE id = ?").run("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", u.userId);
      const vectors: [number, string | number][] = [
        [59, "287082"],
        [1111111109, 81804],
        [1111111111, "050471"],
        [1234567890, "005924"],
        [2000000000, "279037"],
        [20000000000, "353130"],
      ];
      for (const [seconds, code] of vectors) {
        clock = seconds * 1000;
        const res = await clocked.req("POST", "/api/login", { body: { corp: "acme", login: u.login, password: u.password, two_factor_code: code } });
        expect(res.status, `T=${seconds}`).toBe(200);
      }
      const replay = await clocked.req("POST", "/api/login", { body: { corp: "acme", login: u.login, password: u.password, two_factor_code: "353130" } });
      expect(replay.status).toBe(403);
      expect(replay.body.type).toBe("urn:corpadmin:problem:two-factor-invalid");
      clock = 59_000 + 30_000 * 3;
      const stale = await clocked.req("POST", "/api/login", { body: { corp: "acme", login: u.login, password: u.password, two_factor_code: "287082" } });
      expect(stale.status).toBe(403);
    } finally {
      await clocked.close();
    }
  });
});

describe("POST /api/user/{id}/2fa/enable|disable; POST /api/login: enable, confirm, login", () => {
  test("enable hands out a pending secret; the first code confirms it and is then used up", async () => {
    const u = await addUser(t, admin.corpId, { login: "tfa-enable" });
    const start = await t.req("POST", `/api/user/${u.userId}/2fa/enable`, { token: u.token });
    expect(start.status).toBe(200);
    expect(start.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(start.body.otpauth_uri);
    expect(uri.protocol).toBe("otpauth:");
    expect(uri.searchParams.get("secret")).toBe(start.body.secret);
    expect(uri.searchParams.get("issuer")).toBe("corpadmin");
    // still off until confirmed
    expect((await login(u.login, u.password)).status).toBe(200);
    const wrong = await t.req("POST", `/api/user/${u.userId}/2fa/enable`, { token: u.token, body: { code: "000000" === codeAt(start.body.secret, now()) ? "111111" : "000000" } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.type).toBe("urn:corpadmin:problem:two-factor-invalid");
    const code = codeAt(start.body.secret, now());
    const ok = await t.req("POST", `/api/user/${u.userId}/2fa/enable`, { token: u.token, body: { code } });
    expect(ok.status).toBe(200);
    expect(ok.body.two_factor_required).toBe(true);
    expect(ok.body.id).toBe(u.userId);
    const required = await login(u.login, u.password);
    expect(required.status).toBe(403);
    expect(required.body.type).toBe("urn:corpadmin:problem:two-factor-required");
    const reused = await login(u.login, u.password, { two_factor_code: code });
    expect(reused.status).toBe(403);
    expect(reused.body.type).toBe("urn:corpadmin:problem:two-factor-invalid");
    nextStep();
    const fresh = await login(u.login, u.password, { two_factor_code: codeAt(start.body.secret, now()) });
    expect(fresh.status).toBe(200);
    expect(fresh.body.credentials.user.two_factor_required).toBe(true);
    expect((await t.req("POST", `/api/user/${u.userId}/2fa/enable`, { token: u.token })).status).toBe(409);
  });

  test("one step of drift either way is accepted, two are not", async () => {
    const u = await enrolled("tfa-drift");
    // the enrolment used the step before the current one: move well past it
    nextStep();
    nextStep();
    // And to 1 s into a step: the four logins (each a password hash first) end well before the
    // next one, which would turn the step before into two steps before.
    offsetMs += 30_000 - (now() % 30_000) + 1_000;
    expect((await login(u.login, u.password, { two_factor_code: codeAt(u.secret, now() - 60_000) })).status).toBe(403);
    expect((await login(u.login, u.password, { two_factor_code: codeAt(u.secret, now() - 30_000) })).status).toBe(200);
    expect((await login(u.login, u.password, { two_factor_code: codeAt(u.secret, now() + 30_000) })).status).toBe(200);
    expect((await login(u.login, u.password, { two_factor_code: codeAt(u.secret, now() + 90_000) })).status).toBe(403);
  });

  test("two parallel logins with the same code: exactly one succeeds", async () => {
    const u = await enrolled("tfa-race");
    const code = codeAt(u.secret, now());
    const results = await Promise.all([login(u.login, u.password, { two_factor_code: code }), login(u.login, u.password, { two_factor_code: code })]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
  });

  test("confirming without a pending secret is 409; enable and disable are self only; 401; 400", async () => {
    const u = await addUser(t, admin.corpId, { login: "tfa-nopending" });
    expect((await t.req("POST", `/api/user/${u.userId}/2fa/enable`, { token: u.token, body: { code: "123456" } })).status).toBe(409);
    expect((await t.req("POST", `/api/user/${u.userId}/2fa/enable`, { token: manager.token })).status).toBe(403);
    expect((await t.req("POST", `/api/user/${u.userId}/2fa/enable`, { token: admin.token })).status).toBe(403);
    expect((await t.req("POST", `/api/user/${u.userId}/2fa/disable`, { token: manager.token, body: { code: "123456" } })).status).toBe(403);
    expect((await t.req("POST", `/api/user/${u.userId}/2fa/enable`)).status).toBe(401);
    const bad = await t.req("POST", `/api/user/${u.userId}/2fa/enable`, { token: u.token, body: { code: "12x456" } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("code");
    const missing = await t.req("POST", `/api/user/${u.userId}/2fa/disable`, { token: u.token, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].path).toBe("code");
    expect((await t.req("POST", `/api/user/${u.userId}/2fa/disable`, { token: u.token, body: { code: "123456" } })).status).toBe(409);
  });
});

describe("POST /api/login; POST /api/user/{id}/password; POST /api/user/{id}/2fa/reset: remembered devices", () => {
  test("remember_device sets the cookie as Conventions say; the device then skips the code", async () => {
    const u = await enrolled("tfa-device");
    const res = await login(u.login, u.password, { two_factor_code: codeAt(u.secret, now()), remember_device: true });
    expect(res.status).toBe(200);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("corpadmin_device="))!;
    expect(cookie).toBeDefined();
    const parts = cookie.split(";").map((p) => p.trim());
    const value = parts[0].slice("corpadmin_device=".length);
    expect(value).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(parts).toContain("HttpOnly");
    expect(parts).toContain("SameSite=Strict");
    expect(parts).toContain("Path=/api");
    expect(parts).toContain("Max-Age=2592000");
    expect(parts).not.toContain("Secure");
    const stored = t.sql().query("SELECT token_hash FROM remembered_devices WHERE user_id = ?").all(u.userId) as { token_hash: string }[];
    expect(stored.length).toBe(1);
    expect(stored[0].token_hash).not.toBe(value);
    const skipped = await login(u.login, u.password, {}, { cookie: `corpadmin_device=${value}` });
    expect(skipped.status).toBe(200);
    expect(skipped.headers.getSetCookie().some((c) => c.startsWith("corpadmin_device="))).toBe(false);
    // a cookie of another user's device, or a made-up one, does not
    const other = await enrolled("tfa-device-other");
    expect((await login(other.login, other.password, {}, { cookie: `corpadmin_device=${value}` })).body.type).toBe("urn:corpadmin:problem:two-factor-required");
    for (const made of ["made-up", "123", "%7B%22a%22%3A1%7D", "true", ""]) {
      expect((await login(u.login, u.password, {}, { cookie: `corpadmin_device=${made}` })).body.type).toBe("urn:corpadmin:problem:two-factor-required");
    }
    // without a correct code, nothing is remembered
    const noCode = await login(other.login, other.password, { remember_device: true });
    expect(noCode.headers.getSetCookie().length).toBe(0);
  });

  test("over https the cookie is Secure", async () => {
    const u = await enrolled("tfa-https");
    const res = await t.app.handle(
      new Request("https://localhost/api/login", {
        method: "POST",
        headers: { "content-type": "application/json", host: "localhost" },
        body: JSON.stringify({ corp: "acme", login: u.login, password: u.password, two_factor_code: codeAt(u.secret, now()), remember_device: true }),
      }),
    );
    expect(res.status).toBe(200);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("corpadmin_device="))!;
    expect(cookie.split(";").map((p) => p.trim())).toContain("Secure");
  });

  async function rememberedCookie(u: Awaited<ReturnType<typeof enrolled>>) {
    const res = await login(u.login, u.password, { two_factor_code: codeAt(u.secret, now()), remember_device: true });
    nextStep();
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("corpadmin_device="))!.split(";")[0];
    expect((await login(u.login, u.password, {}, { cookie })).status).toBe(200);
    return cookie;
  }

  test("changing the password forgets remembered devices", async () => {
    const u = await enrolled("tfa-pw");
    const cookie = await rememberedCookie(u);
    expect((await t.req("POST", `/api/user/${u.userId}/password`, { token: u.token, body: { current_password: u.password, new_password: "changed-password-1" } })).status).toBe(204);
    expect((await login(u.login, "changed-password-1", {}, { cookie })).body.type).toBe("urn:corpadmin:problem:two-factor-required");
  });

  test("disable needs a valid code, removes the secret and the devices", async () => {
    const u = await enrolled("tfa-disable");
    const cookie = await rememberedCookie(u);
    const wrongCode = codeAt(u.secret, now() - 120_000);
    const wrong = await t.req("POST", `/api/user/${u.userId}/2fa/disable`, { token: u.token, body: { code: wrongCode } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.type).toBe("urn:corpadmin:problem:two-factor-invalid");
    const ok = await t.req("POST", `/api/user/${u.userId}/2fa/disable`, { token: u.token, body: { code: Number(codeAt(u.secret, now())) } });
    expect(ok.status).toBe(200);
    expect(ok.body.two_factor_required).toBe(false);
    expect((await login(u.login, u.password)).status).toBe(200);
    expect((t.sql().query("SELECT count(*) AS n FROM remembered_devices WHERE user_id = ?").get(u.userId) as { n: number }).n).toBe(0);
    void cookie;
    expect((await t.req("POST", `/api/user/${u.userId}/2fa/disable`, { token: u.token, body: { code: "123456" } })).status).toBe(409);
  });

  test("reset by an administrator: secret and devices removed; 403, 404, 401", async () => {
    const u = await enrolled("tfa-reset");
    const cookie = await rememberedCookie(u);
    const plain = await addUser(t, admin.corpId, { login: "tfa-plain" });
    expect((await t.req("POST", `/api/user/${u.userId}/2fa/reset`, { token: plain.token })).status).toBe(403);
    expect((await t.req("POST", `/api/user/${u.userId}/2fa/reset`)).status).toBe(401);
    const res = await t.req("POST", `/api/user/${u.userId}/2fa/reset`, { token: manager.token });
    expect(res.status).toBe(200);
    expect(res.body.two_factor_required).toBe(false);
    expect((await login(u.login, u.password)).status).toBe(200);
    // enabled again later, the old device no longer skips the code
    const start = await t.req("POST", `/api/user/${u.userId}/2fa/enable`, { token: u.token });
    nextStep();
    await t.req("POST", `/api/user/${u.userId}/2fa/enable`, { token: u.token, body: { code: codeAt(start.body.secret, now()) } });
    expect((await login(u.login, u.password, {}, { cookie })).body.type).toBe("urn:corpadmin:problem:two-factor-required");
    const elsewhere = await addCorp(t, "tfa-other");
    const outsider = await addUser(t, elsewhere, { login: "tfa-outsider" });
    expect((await t.req("POST", `/api/user/${outsider.userId}/2fa/reset`, { token: manager.token })).status).toBe(404);
  });
});
