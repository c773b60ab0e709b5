import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import * as OTPAuth from "otpauth";
import { addCorp, addMember, addUser, makeApp, startAndLogin, testSourceOnly, type TestApp } from "../../support/helpers";

const GOOGLE_CLIENT = "google-client-id.apps.example";
const MS_CLIENT = "8c1e5f3a-ms-client";
const GOOGLE_ISS = "https://accounts.google.com";
const MS_TENANT = "9188040d-6c67-4c5b-b112-36a304b66dad";

let jwks: ReturnType<typeof Bun.serve>;
let rsa: { privateKey: CryptoKey; jwk: JWK };
let ec: { privateKey: CryptoKey; jwk: JWK };
let impostor: CryptoKey;
let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;

async function keyPair(alg: "RS256" | "ES256", kid: string) {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } };
}

beforeAll(async () => {
  rsa = await keyPair("RS256", "rsa-1");
  ec = await keyPair("ES256", "ec-1");
  impostor = (await generateKeyPair("RS256")).privateKey;
  jwks = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/google" || path === "/microsoft") return Response.json({ keys: [rsa.jwk, ec.jwk] });
      return new Response("not found", { status: 404 });
    },
  });
  const base = `http://127.0.0.1:${jwks.port}`;
  t = await makeApp({
    env: {
      CORPADMIN_EGRESS_ALLOW: "127.0.0.0/8", // the key sets are served on loopback
      CORPADMIN_OIDC_GOOGLE_CLIENT_ID: GOOGLE_CLIENT,
      CORPADMIN_OIDC_GOOGLE_ISSUER: GOOGLE_ISS,
      CORPADMIN_OIDC_GOOGLE_JWKS_URL: `${base}/google`,
      CORPADMIN_OIDC_MICROSOFT_CLIENT_ID: MS_CLIENT,
      CORPADMIN_OIDC_MICROSOFT_JWKS_URL: `${base}/microsoft`,
    },
  });
  admin = await startAndLogin(t);
});
afterAll(async () => {
  await t.close();
  jwks.stop(true);
});

interface TokenOptions {
  sub?: string;
  iss?: string;
  aud?: string;
  exp?: number;
  nbf?: number;
  email_verified?: boolean;
  tid?: string;
  key?: CryptoKey;
  alg?: "RS256" | "ES256";
  kid?: string;
}

async function idToken(o: TokenOptions = {}): Promise<string> {
  const nowS = Math.floor(Date.now() / 1000);
  const alg = o.alg ?? "RS256";
  const claims: Record<string, unknown> = { email: `${o.sub ?? "sub"}@mail.example`, email_verified: o.email_verified ?? true };
  if (o.tid) claims.tid = o.tid;
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg, kid: o.kid ?? (alg === "RS256" ? "rsa-1" : "ec-1") })
    .setSubject(o.sub ?? "google-sub-1")
    .setIssuer(o.iss ?? GOOGLE_ISS)
    .setAudience(o.aud ?? GOOGLE_CLIENT)
    .setIssuedAt(nowS - 10)
    .setExpirationTime(o.exp ?? nowS + 600);
  if (o.nbf !== undefined) jwt.setNotBefore(o.nbf);
  return jwt.sign(o.key ?? (alg === "RS256" ? rsa.privateKey : ec.privateKey));
}

const exchange = (provider: string, body: Record<string, unknown>, ip?: string) => t.req("POST", `/api/auth/oidc/${provider}/exchange`, { body, ip });
const link = (provider: string, token: string, id_token: string) => t.req("POST", `/api/auth/oidc/${provider}/link`, { token, body: { id_token } });

describe("POST /api/auth/oidc/{provider}/link", () => {
  test("links a verified account to the caller; again is 200 unchanged; another user 409", async () => {
    const u = await addUser(t, admin.corpId, { login: "oidc-linker" });
    const token = await idToken({ sub: "link-sub-1" });
    const res = await link("google", u.token, token);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["created_at", "email", "id", "provider", "subject", "updated_at", "user_id"]);
    expect(res.body).toMatchObject({ provider: "google", subject: "link-sub-1", email: "link-sub-1@mail.example", user_id: u.userId });
    const again = await link("google", u.token, token);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(res.body.id);
    const other = await addUser(t, admin.corpId, { login: "oidc-thief" });
    expect((await link("google", other.token, token)).status).toBe(409);
    // the same subject at the other provider is another account
    const ms = await link("microsoft", other.token, await idToken({ sub: "link-sub-1", iss: `https://login.microsoftonline.com/${MS_TENANT}/v2.0`, aud: MS_CLIENT, tid: MS_TENANT, email_verified: false }));
    expect(ms.status).toBe(200);
    expect(ms.body.user_id).toBe(other.userId);
  });

  test("google needs email_verified; invalid tokens 403; 401 without a token; 400 without id_token; unknown provider 404", async () => {
    const u = await addUser(t, admin.corpId, { login: "oidc-unverified" });
    expect((await link("google", u.token, await idToken({ sub: "unverified", email_verified: false }))).status).toBe(403);
    expect((await link("google", u.token, await idToken({ sub: "x", aud: "someone-else" }))).status).toBe(403);
    expect((await t.req("POST", "/api/auth/oidc/google/link", { body: { id_token: await idToken() } })).status).toBe(401);
    const bad = await t.req("POST", "/api/auth/oidc/google/link", { token: u.token, body: {} });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("id_token");
    expect((await link("github", u.token, await idToken())).status).toBe(404);
  });
});

describe("POST /api/auth/oidc/{provider}/exchange", () => {
  let user: Awaited<ReturnType<typeof addUser>>;
  beforeAll(async () => {
    user = await addUser(t, admin.corpId, { login: "oidc-user", services: ["platform.city"] });
    expect((await link("google", user.token, await idToken({ sub: "exchange-sub" }))).status).toBe(200);
  });

  test("a linked account gets Credentials for its only corporation, or the one named", async () => {
    const res = await exchange("google", { id_token: await idToken({ sub: "exchange-sub" }) });
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe("bearer");
    expect(res.body.credentials.user.id).toBe(user.userId);
    expect(res.body.credentials.corp).toBe(admin.corpId);
    expect(res.body.credentials.permission.admin).toEqual(["platform.city"]);
    expect((await t.req("GET", "/api/auth/credentials", { token: res.body.access_token })).status).toBe(200);
    const named = await exchange("google", { id_token: await idToken({ sub: "exchange-sub", alg: "ES256" }), corp: "acme" });
    expect(named.status).toBe(200);
  });

  test("an unlinked account is 403 invalid-credentials", async () => {
    const res = await exchange("google", { id_token: await idToken({ sub: "never-linked" }) });
    expect(res.status).toBe(403);
    expect(res.body.type).toBe("urn:corpadmin:problem:invalid-credentials");
  });

  test.each([
    ["expired", { exp: Math.floor(Date.now() / 1000) - 3600 }],
    ["not yet valid", { nbf: Math.floor(Date.now() / 1000) + 3600 }],
    ["wrong issuer", { iss: "https://evil.example" }],
    ["wrong audience", { aud: "another-client" }],
    ["signed by another key under a known kid", { key: undefined, kid: "rsa-1", impostor: true }],
    ["an unknown kid", { kid: "nope", impostor: true }],
  ])("%s: 403", async (_name, o) => {
    const opts = { sub: "exchange-sub", ...o } as TokenOptions & { impostor?: boolean };
    if (opts.impostor) opts.key = impostor;
    const res = await exchange("google", { id_token: await idToken(opts) });
    expect(res.status).toBe(403);
  });

  test("alg none, HS256 with the client id as secret, and garbage: 403", async () => {
    const nowS = Math.floor(Date.now() / 1000);
    const payload = { sub: "exchange-sub", iss: GOOGLE_ISS, aud: GOOGLE_CLIENT, iat: nowS, exp: nowS + 600, email_verified: true };
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const none = `${b64({ alg: "none", typ: "JWT" })}.${b64(payload)}.`;
    expect((await exchange("google", { id_token: none })).status).toBe(403);
    const hs = await new SignJWT(payload).setProtectedHeader({ alg: "HS256", kid: "rsa-1" }).sign(new TextEncoder().encode(GOOGLE_CLIENT));
    expect((await exchange("google", { id_token: hs })).status).toBe(403);
    expect((await exchange("google", { id_token: "not-a-jwt" })).status).toBe(403);
    // a valid token's payload swapped under its signature
    const good = (await idToken({ sub: "someone-else" })).split(".");
    const tampered = `${good[0]}.${b64({ ...payload })}.${good[2]}`;
    expect((await exchange("google", { id_token: tampered })).status).toBe(403);
  });

  test("microsoft: the issuer's {tenantid} must be the token's tid", async () => {
    const ms = await addUser(t, admin.corpId, { login: "oidc-ms" });
    const iss = `https://login.microsoftonline.com/${MS_TENANT}/v2.0`;
    expect((await link("microsoft", ms.token, await idToken({ sub: "ms-sub", iss, aud: MS_CLIENT, tid: MS_TENANT }))).status).toBe(200);
    expect((await exchange("microsoft", { id_token: await idToken({ sub: "ms-sub", iss, aud: MS_CLIENT, tid: MS_TENANT }) })).status).toBe(200);
    const otherTenant = "00000000-0000-0000-0000-000000000001";
    expect((await exchange("microsoft", { id_token: await idToken({ sub: "ms-sub", iss, aud: MS_CLIENT, tid: otherTenant }) })).status).toBe(403);
    expect((await exchange("microsoft", { id_token: await idToken({ sub: "ms-sub", iss, aud: MS_CLIENT }) })).status).toBe(403);
    // a google token is not a microsoft token
    expect((await exchange("microsoft", { id_token: await idToken({ sub: "ms-sub" }) })).status).toBe(403);
  });

  test("unknown provider and a provider without a client id are 404; bad body 400", async () => {
    expect((await exchange("github", { id_token: await idToken() })).status).toBe(404);
    const bare = await makeApp();
    try {
      const res = await bare.req("POST", "/api/auth/oidc/google/exchange", { body: { id_token: await idToken() } });
      expect(res.status).toBe(404);
    } finally {
      await bare.close();
    }
    const bad = await exchange("google", { id_token: 5 });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("id_token");
  });

  test("corp left out with several corporations is 400 naming corp", async () => {
    const u = await addUser(t, admin.corpId, { login: "oidc-two-corps" });
    const second = await addCorp(t, "oidc-second");
    await addMember(t, second, u.userId);
    await link("google", u.token, await idToken({ sub: "two-corps-sub" }));
    const res = await exchange("google", { id_token: await idToken({ sub: "two-corps-sub" }) });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("corp");
    const named = await exchange("google", { id_token: await idToken({ sub: "two-corps-sub" }), corp: "oidc-second" });
    expect(named.status).toBe(200);
    expect(named.body.credentials.corp).toBe(second);
  });

  // In-process: sets the second factor and the status past the API.
  testSourceOnly("the login checks apply: inactive, safe IP, two-factor and the lock", async () => {
    const u = await addUser(t, admin.corpId, { login: "oidc-checked" });
    await link("google", u.token, await idToken({ sub: "checked-sub" }));
    const tok = () => idToken({ sub: "checked-sub" });
    // two-factor
    const secret = new OTPAuth.Secret({ size: 20 }).base32;
    t.sqlWrite().query("UPDATE users SET two_factor_secret = ? WHERE id = ?").run(secret, u.userId);
    expect((await exchange("google", { id_token: await tok() })).body.type).toBe("urn:corpadmin:problem:two-factor-required");
    const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate();
    const wrong = code === "000000" ? "000001" : "000000";
    const ok = await exchange("google", { id_token: await tok(), two_factor_code: code, remember_device: true });
    expect(ok.status).toBe(200);
    expect(ok.headers.getSetCookie().some((c) => c.startsWith("corpadmin_device="))).toBe(true);
    // safe IP ranges of the corporation
    const fenced = await addCorp(t, "oidc-fenced");
    await addMember(t, fenced, u.userId);
    expect((await t.req("POST", "/api/auth/safe-ip/oidc-fenced", { token: admin.token, body: { range: "10.0.0.0/8" } })).status).toBe(200);
    t.sqlWrite().query("UPDATE users SET two_factor_secret = NULL WHERE id = ?").run(u.userId);
    expect((await exchange("google", { id_token: await tok(), corp: "oidc-fenced" }, "192.0.2.1")).body.type).toBe("urn:corpadmin:problem:ip-not-allowed");
    expect((await exchange("google", { id_token: await tok(), corp: "oidc-fenced" }, "10.0.0.1")).status).toBe(200);
    // inactive
    t.sqlWrite().query("UPDATE users SET status = 0 WHERE id = ?").run(u.userId);
    expect((await exchange("google", { id_token: await tok(), corp: "acme" })).body.type).toBe("urn:corpadmin:problem:account-inactive");
    t.sqlWrite().query("UPDATE users SET status = 1, two_factor_secret = ? WHERE id = ?").run(secret, u.userId);
    // five wrong codes lock the (corporation, login)
    for (let i = 0; i < 5; i++) {
      expect((await exchange("google", { id_token: await tok(), corp: "acme", two_factor_code: wrong })).body.type).toBe("urn:corpadmin:problem:two-factor-invalid");
    }
    const locked = await exchange("google", { id_token: await tok(), corp: "acme" });
    expect(locked.status).toBe(429);
    expect(locked.headers.get("retry-after")).toBeTruthy();
    expect((await t.req("POST", "/api/login", { body: { corp: "acme", login: u.login, password: u.password } })).status).toBe(429);
  });
});

describe("POST /api/auth/oidc/{provider}/exchange: the provider's key set unavailable", () => {
  test("unreachable or failing JWKS endpoint: 503 with Retry-After, not 403 or 500", async () => {
    const failing = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("oops", { status: 500 }) });
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const closedPort = closed.port;
    closed.stop(true);
    try {
      for (const jwksUrl of [`http://127.0.0.1:${failing.port}/keys`, `http://127.0.0.1:${closedPort}/keys`]) {
        const app = await makeApp({ env: { CORPADMIN_EGRESS_ALLOW: "127.0.0.0/8", CORPADMIN_OIDC_GOOGLE_CLIENT_ID: GOOGLE_CLIENT, CORPADMIN_OIDC_GOOGLE_ISSUER: GOOGLE_ISS, CORPADMIN_OIDC_GOOGLE_JWKS_URL: jwksUrl } });
        try {
          const res = await app.req("POST", "/api/auth/oidc/google/exchange", { body: { id_token: await idToken() } });
          expect(res.status).toBe(503);
          expect(res.headers.get("retry-after")).toBeTruthy();
        } finally {
          await app.close();
        }
      }
    } finally {
      failing.stop(true);
    }
  });
});

test("the key set is fetched through the egress policy: a refused address is 503 and never asked", async () => {
  let asked = 0;
  const keys = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => (asked++, Response.json({ keys: [rsa.jwk, ec.jwk] })) });
  try {
    for (const host of ["127.0.0.1", "[::ffff:127.0.0.1]", "[::127.0.0.1]"]) {
      const jwksUrl = `http://${host}:${keys.port}/keys`;
      const app = await makeApp({ env: { CORPADMIN_OIDC_GOOGLE_CLIENT_ID: GOOGLE_CLIENT, CORPADMIN_OIDC_GOOGLE_ISSUER: GOOGLE_ISS, CORPADMIN_OIDC_GOOGLE_JWKS_URL: jwksUrl } });
      try {
        const res = await app.req("POST", "/api/auth/oidc/google/exchange", { body: { id_token: await idToken() } });
        expect(res.status).toBe(503);
      } finally {
        await app.close();
      }
    }
    expect(asked).toBe(0);
  } finally {
    keys.stop(true);
  }
});

test("the exchange is rate-limited per client IP like the other public auth rows", async () => {
  const app = await makeApp({ options: { publicAuthLimit: 60 } });
  try {
    for (let i = 0; i < 60; i++) {
      expect((await app.req("POST", "/api/auth/oidc/google/exchange", { body: { id_token: "x" }, ip: "2001:db8::77" })).status).toBe(404);
    }
    const over = await app.req("POST", "/api/auth/oidc/google/exchange", { body: { id_token: "x" }, ip: "2001:db8::77" });
    expect(over.status).toBe(429);
    expect((await app.req("POST", "/api/auth/oidc/google/exchange", { body: { id_token: "x" }, ip: "2001:db8::78" })).status).toBe(404);
  } finally {
    await app.close();
  }
});
