import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addUser, inProcessOnly, makeApp, startAndLogin, testSourceOnly, type TestApp } from "../../support/helpers";
import { startInbox, type Delivered } from "../../support/smtp";

let inbox: Awaited<ReturnType<typeof startInbox>>;
let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
let offsetMs = 0;

beforeAll(async () => {
  inbox = await startInbox();
  t = await makeApp({
    env: inbox.env,
    options: inProcessOnly({ now: () => Date.now() + offsetMs }),
  });
  admin = await startAndLogin(t);
});
afterAll(async () => {
  await t.close();
  await inbox.stop();
});

function keyIn(mail: Delivered): string {
  const m = /Reset key: ([A-Za-z0-9_-]+)/.exec(mail.text);
  if (!m) throw new Error(`no key in mail: ${mail.text}`);
  return m[1];
}

const requestKey = (login: string) => t.req("POST", "/api/user/password/reset-key", { body: { login } });
const reset = (key: string, new_password: string) => t.req("POST", "/api/user/password/reset", { body: { key, new_password } });
const login = (l: string, password: string) => t.req("POST", "/api/login", { body: { corp: "acme", login: l, password } });

describe("POST /api/user/password/reset-key; POST /api/user/password/reset: password reset", () => {
  test("the key arrives by e-mail, resets the password once and revokes every session", async () => {
    const u = await addUser(t, admin.corpId, { login: "forgot-it" });
    const before = inbox.messages.length;
    const res = await requestKey(u.login);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    const mail = await inbox.message(before + 1);
    expect(mail.to).toEqual(["forgot-it@example.com"]);
    expect(mail.text).toContain("From: noreply@corpadmin.test");
    const key = keyIn(mail);
    // the key is stored hashed, never in clear
    const stored = t.sql().query("SELECT key_hash FROM password_reset_keys").all() as { key_hash: string }[];
    expect(stored.some((r) => r.key_hash === key)).toBe(false);
    expect((await reset(key, "a-new-password-1")).status).toBe(204);
    expect((await t.req("GET", "/api/auth/credentials", { token: u.token })).status).toBe(401);
    expect((await login(u.login, u.password)).status).toBe(403);
    expect((await login(u.login, "a-new-password-1")).status).toBe(200);
    const again = await reset(key, "another-password-2");
    expect(again.status).toBe(400);
    expect(again.body.errors[0].path).toBe("key");
  });

  test("an unknown login answers the same 204 and sends nothing", async () => {
    const u = await addUser(t, admin.corpId, { login: "marker-user" });
    const before = inbox.messages.length;
    const unknown = await requestKey("no-such-login");
    expect(unknown.status).toBe(204);
    expect(unknown.text).toBe("");
    // a known login after it: its mail must be the very next one delivered
    await requestKey(u.login);
    const next = await inbox.message(before + 1);
    expect(next.to).toEqual(["marker-user@example.com"]);
    await Bun.sleep(200);
    expect(inbox.messages.length).toBe(before + 1);
  });

  // In-process: moves the app's clock.
  testSourceOnly("an expired key (after 1 hour) is 400", async () => {
    const u = await addUser(t, admin.corpId, { login: "slow-reader" });
    const before = inbox.messages.length;
    await requestKey(u.login);
    const key = keyIn(await inbox.message(before + 1));
    offsetMs = 61 * 60_000;
    try {
      const res = await reset(key, "too-late-password");
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe("key");
    } finally {
      offsetMs = 0;
    }
    expect((await login(u.login, u.password)).status).toBe(200);
  });

  test("an unknown key and bad bodies are 400 naming the field", async () => {
    const unknown = await reset("made-up-key", "whatever-password");
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].path).toBe("key");
    const short = await reset("made-up-key", "short");
    expect(short.status).toBe(400);
    expect(short.body.errors[0].path).toBe("new_password");
    const missing = await t.req("POST", "/api/user/password/reset-key", { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].path).toBe("login");
  });

  test("two racing resets with one key: exactly one wins", async () => {
    const u = await addUser(t, admin.corpId, { login: "racer" });
    const before = inbox.messages.length;
    await requestKey(u.login);
    const key = keyIn(await inbox.message(before + 1));
    const statuses = (await Promise.all([reset(key, "first-password-1"), reset(key, "second-password-2")])).map((r) => r.status).sort();
    expect(statuses).toEqual([204, 400]);
  });

  test("reset-key is rate-limited per client IP", async () => {
    const limited = await makeApp({ options: { publicAuthLimit: 60 } });
    try {
      await startAndLogin(limited);
      for (let i = 0; i < 59; i++) {
        expect((await limited.req("POST", "/api/user/password/reset-key", { body: { login: "ghost" }, ip: "198.51.100.9" })).status).toBe(204);
      }
      const last = await limited.req("POST", "/api/user/password/reset", { body: { key: "k", new_password: "whatever-password" }, ip: "198.51.100.9" });
      expect(last.status).toBe(400);
      const over = await limited.req("POST", "/api/user/password/reset-key", { body: { login: "ghost" }, ip: "198.51.100.9" });
      expect(over.status).toBe(429);
      expect(over.headers.get("retry-after")).toBeTruthy();
    } finally {
      await limited.close();
    }
  });
});
