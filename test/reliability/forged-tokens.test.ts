// Every forged, stale or orphaned token is 401.
import { expect, test } from "bun:test";
import { generateKeyPair, SignJWT } from "jose";
import { addCorp, addUser, testSourceOnly, openApp } from "../support/helpers";

const { t, admin } = await openApp();
const KEY = new TextEncoder().encode("test-secret-key-0123456789abcdef"); // the test app's key

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString());
const status = async (token: string) => (await t.req("GET", "/api/auth/credentials", { token })).status;

test("the genuine token works (the cases below differ from it in one thing each)", async () => {
  expect(await status(admin.token)).toBe(200);
  const c = claimsOf(admin.token);
  const resigned = await new SignJWT({ corp: c.corp }).setProtectedHeader({ alg: "HS256" }).setSubject(c.sub).setJti(c.jti).setIssuedAt(c.iat).setExpirationTime(c.exp).sign(KEY);
  expect(await status(resigned)).toBe(200);
});

test("alg none, wrong key, HS/RS confusion, altered claims: 401", async () => {
  const c = claimsOf(admin.token);
  expect(await status(`${b64({ alg: "none", typ: "JWT" })}.${b64(c)}.`)).toBe(401);
  const wrongKey = await new SignJWT({ corp: c.corp }).setProtectedHeader({ alg: "HS256" }).setSubject(c.sub).setJti(c.jti).setIssuedAt().setExpirationTime("1h").sign(new TextEncoder().encode("some-other-key-0123456789abcdef"));
  expect(await status(wrongKey)).toBe(401);
  const { privateKey } = await generateKeyPair("RS256");
  const rs = await new SignJWT({ corp: c.corp }).setProtectedHeader({ alg: "RS256" }).setSubject(c.sub).setJti(c.jti).setIssuedAt().setExpirationTime("1h").sign(privateKey);
  expect(await status(rs)).toBe(401);
  const [h, , s] = admin.token.split(".");
  expect(await status(`${h}.${b64({ ...c, sub: "01900000-0000-7000-8000-00000000beef" })}.${s}`)).toBe(401);
  expect(await status(`${h}.${b64({ ...c, exp: c.exp + 86400 })}.${s}`)).toBe(401);
  expect(await status(admin.token.slice(0, -2))).toBe(401);
});

test("expired and not-yet-valid tokens: 401", async () => {
  const c = claimsOf(admin.token);
  const now = Math.floor(Date.now() / 1000);
  const expired = await new SignJWT({ corp: c.corp }).setProtectedHeader({ alg: "HS256" }).setSubject(c.sub).setJti(c.jti).setIssuedAt(now - 7200).setExpirationTime(now - 3600).sign(KEY);
  expect(await status(expired)).toBe(401);
  const future = await new SignJWT({ corp: c.corp }).setProtectedHeader({ alg: "HS256" }).setSubject(c.sub).setJti(c.jti).setIssuedAt(now).setNotBefore(now + 3600).setExpirationTime(now + 7200).sign(KEY);
  expect(await status(future)).toBe(401);
});

test("a token whose claims point at another session, user or corporation than its session row: 401", async () => {
  const other = await addUser(t, admin.corpId, { login: "claims-other" });
  const c = claimsOf(admin.token);
  const o = claimsOf(other.token);
  const mixed = await new SignJWT({ corp: c.corp }).setProtectedHeader({ alg: "HS256" }).setSubject(c.sub).setJti(o.jti).setIssuedAt().setExpirationTime("1h").sign(KEY);
  expect(await status(mixed)).toBe(401);
  const corpB = await addCorp(t, "forged-b");
  const wrongCorp = await new SignJWT({ corp: corpB }).setProtectedHeader({ alg: "HS256" }).setSubject(c.sub).setJti(c.jti).setIssuedAt().setExpirationTime("1h").sign(KEY);
  expect(await status(wrongCorp)).toBe(401);
});

// In-process: revokes and deletes past the API (which would revoke the sessions itself).
testSourceOnly("revoked session, deleted user, deleted corporation: 401", async () => {
  const u = await addUser(t, admin.corpId, { login: "to-revoke" });
  await t.ctx.sessions.revoke(claimsOf(u.token).jti);
  expect(await status(u.token)).toBe(401);

  const d = await addUser(t, admin.corpId, { login: "to-delete" });
  expect(await status(d.token)).toBe(200);
  t.sqlWrite().query("DELETE FROM users WHERE id = ?").run(d.userId);
  // Behind the app's back: what the user module's delete publishes (PostgreSQL keeps live sessions).
  t.ctx.sessions.forget(`user:${d.userId}`);
  expect(await status(d.token)).toBe(401);

  const corpId = await addCorp(t, "to-vanish");
  const v = await addUser(t, corpId, { login: "in-vanishing-corp" });
  expect(await status(v.token)).toBe(200);
  t.sqlWrite().query("DELETE FROM corporations WHERE id = ?").run(corpId);
  t.ctx.corps.invalidate(corpId);
  expect(await status(v.token)).toBe(401);
});

// Base64url's last character can carry bits that decode to nothing; standard base64 and padding
// decode to the same bytes too. Only the one spelling the service issued is its token.
test("a token in any spelling but the canonical base64url one: 401", async () => {
  const [h, p, s] = admin.token.split(".");
  const A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  // 32 bytes → 43 characters, the last carrying 4 bits and 2 unused ones.
  const last = A.indexOf(s.at(-1)!);
  const variants = [1, 2, 3].map((d) => `${h}.${p}.${s.slice(0, -1)}${A[(last & ~3) | ((last + d) & 3)]}`);
  for (const v of variants) expect(Buffer.from(v.split(".")[2], "base64url").equals(Buffer.from(s, "base64url"))).toBe(true);
  const standard = (x: string) => Buffer.from(x, "base64url").toString("base64");
  const cases = [
    ...variants,
    `${h}.${p}.${s}=`,
    `${h}.${p}.${standard(s)}`,
    `${h}.${p}.${s}==`,
    `${h}==.${p}.${s}`,
    `${h}.${p}=.${s}`,
    `${h}.${p}.${s.slice(0, 20)} ${s.slice(20)}`,
  ];
  for (const c of cases) expect({ c, status: await status(c) }).toEqual({ c, status: 401 });
  expect(await status(admin.token)).toBe(200);
});

test("an API key with extra parts, padding or a changed spelling: 401; the exact key works", async () => {
  const app = (await t.req("POST", "/api/externalapp", { token: admin.token, body: { name: "canonical-key" } })).body;
  const path = "/api/city/externalapp/name/canonical-key/identity/none";
  const ok = await t.req("GET", path, { apiKey: app.api_key });
  expect(ok.status).toBe(404); // authenticated: the city is simply not there
  const [corp, id, secret] = app.api_key.split(".");
  for (const k of [
    `${app.api_key}.extra`,
    `${app.api_key}.`,
    `${app.api_key}..`,
    `${corp}.${id}.${secret}=`,
    `${corp.toUpperCase()}.${id}.${secret}`,
    `${corp}.${id.toUpperCase()}.${secret}`,
    `${corp}.${id}.${secret}.${secret}`,
  ]) {
    expect({ k, status: (await t.req("GET", path, { apiKey: k })).status }).toEqual({ k, status: 401 });
  }
});
