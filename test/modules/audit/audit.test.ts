// The security audit log, action by action: each change is made through the HTTP API and its
// audit row (platform table audit_log) and JSON line are checked. Every secret handled on the
// way (passwords, TOTP secrets and codes, device cookies, reset keys, ID tokens, API keys,
// bearer tokens) is collected and must appear in no audit row and no log line, at debug level.
// source-only: captures the in-process logger.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import * as OTPAuth from "otpauth";
import { MAX_FAILURES } from "../../../src/modules/auth/lockout";
import { auditedApp, type AuditRow } from "../../support/audit";
import { ADMIN, addCorp, addUser, startAndLogin, type TestApp } from "../../support/helpers";
import { startInbox } from "../../support/smtp";

const GOOGLE_CLIENT = "audit-client.apps.example";
const GOOGLE_ISS = "https://accounts.google.com";

let t: TestApp;
let audit: Awaited<ReturnType<typeof auditedApp>>;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
const secrets: string[] = [];
/** TOTP codes are short digit strings: checked as whole JSON values, not as substrings. */
const codes: string[] = [];
let offsetMs = 0;
const now = () => Date.now() + offsetMs;
const nextStep = () => {
  offsetMs += 30_000;
};

let jwks: ReturnType<typeof Bun.serve>;
let rsa: { privateKey: CryptoKey; jwk: JWK };
let inbox: Awaited<ReturnType<typeof startInbox>>;

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  rsa = { privateKey, jwk: { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" } };
  jwks = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({ keys: [rsa.jwk] }) });
  inbox = await startInbox();
  audit = await auditedApp(
    {
      env: inbox.env,
      config: { egressAllow: ["127.0.0.0/8"], oidc: { google: { clientId: GOOGLE_CLIENT, issuer: GOOGLE_ISS, jwksUrl: `http://127.0.0.1:${jwks.port}/google` }, microsoft: { clientId: null, issuer: "", jwksUrl: "" } } },
      options: { now },
    },
    "debug",
  );
  t = audit.t;
  admin = await startAndLogin(t);
  secrets.push(ADMIN.password, admin.token);
});

afterAll(async () => {
  await t.close();
  jwks.stop(true);
  await inbox.stop();
});

const allRows = () => audit.rows();
const rowsOf = (action: string, target?: string) => allRows().filter((r) => r.action === action && (target === undefined || r.target === target));
const auditLines = () => audit.logged();
const as = (token: string, method: string, path: string, body?: unknown, ip?: string) => t.req(method, path, { token, body, ip });

/** A user in acme with the given platform services, logged in; its password and token are secrets. */
async function member(services: string[] = []) {
  const u = await addUser(t, admin.corpId, { services, password: `pw-${crypto.randomUUID()}` });
  secrets.push(u.password, u.token);
  return u;
}

const codeAt = (secret: string, at: number) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 }).generate({ timestamp: at });
const code = (secret: string) => {
  const c = codeAt(secret, now());
  codes.push(c);
  return c;
};
/** A code that is not the current one (nor one step either side). */
const wrongCode = (secret: string) => {
  const valid = [-1, 0, 1].map((d) => codeAt(secret, now() + d * 30_000));
  let c = 100000;
  while (valid.includes(String(c))) c++;
  return String(c);
};

async function idToken(sub: string): Promise<string> {
  const s = Math.floor(Date.now() / 1000);
  const jwt = await new SignJWT({ email: `${sub}@mail.example`, email_verified: true })
    .setProtectedHeader({ alg: "RS256", kid: "k1" })
    .setSubject(sub)
    .setIssuer(GOOGLE_ISS)
    .setAudience(GOOGLE_CLIENT)
    .setIssuedAt(s - 10)
    .setExpirationTime(s + 600)
    .sign(rsa.privateKey);
  secrets.push(jwt);
  return jwt;
}

describe("POST /api/login: audit of the lockout", () => {
  test("the failure that locks is recorded once; logins refused while locked carry reason locked", async () => {
    const u = await member();
    const wrong = `wrong-${crypto.randomUUID()}`;
    secrets.push(wrong);
    const login = (password: string) => t.req("POST", "/api/login", { body: { corp: "acme", login: u.login, password }, ip: "203.0.113.9" });
    for (let i = 1; i < MAX_FAILURES; i++) expect((await login(wrong)).status).toBe(403);
    expect(rowsOf("auth.lockout", u.login)).toEqual([]);
    expect((await login(wrong)).status).toBe(403);
    const locks = rowsOf("auth.lockout", u.login);
    expect(locks).toHaveLength(1);
    expect(locks[0]).toMatchObject({ outcome: "success", actor_user_id: null, corp_id: admin.corpId, ip: "203.0.113.9", reason: "too-many-failures" });
    // Even the right password is refused now, and recorded as such; the lock is not recorded again.
    expect((await login(u.password)).status).toBe(429);
    expect((await login(wrong)).status).toBe(429);
    expect(rowsOf("auth.lockout", u.login)).toHaveLength(1);
    const refused = rowsOf("auth.login", u.login).filter((r) => r.reason === "locked");
    expect(refused).toHaveLength(2);
    expect(refused[0]).toMatchObject({ outcome: "failure", corp_id: admin.corpId, ip: "203.0.113.9" });
    expect(rowsOf("auth.login", u.login).filter((r) => r.reason === "invalid-credentials")).toHaveLength(MAX_FAILURES);
  });
});

describe("POST /api/auth/oidc/{provider}/link|exchange: audit of OIDC", () => {
  test("link: success once (not again when unchanged), failure when linked to another user", async () => {
    const u = await member();
    const token = await idToken("audit-sub-1");
    expect((await as(u.token, "POST", "/api/auth/oidc/google/link", { id_token: token }, "198.51.100.4")).status).toBe(200);
    expect((await as(u.token, "POST", "/api/auth/oidc/google/link", { id_token: token })).status).toBe(200);
    const links = rowsOf("auth.oidc_link", "google:audit-sub-1");
    expect(links).toHaveLength(1);
    expect(links[0]).toMatchObject({ outcome: "success", actor_user_id: u.userId, corp_id: admin.corpId, ip: "198.51.100.4", reason: null });
    const other = await member();
    expect((await as(other.token, "POST", "/api/auth/oidc/google/link", { id_token: token })).status).toBe(409);
    expect(rowsOf("auth.oidc_link", "google:audit-sub-1").filter((r) => r.outcome === "failure")).toEqual([
      expect.objectContaining({ actor_user_id: other.userId, reason: "conflict" }),
    ]);
  });

  test("exchange: success names the user and corporation; a forged token and an unlinked account fail", async () => {
    const u = await member();
    expect((await as(u.token, "POST", "/api/auth/oidc/google/link", { id_token: await idToken("audit-sub-2") })).status).toBe(200);
    const ok = await t.req("POST", "/api/auth/oidc/google/exchange", { body: { id_token: await idToken("audit-sub-2"), corp: "acme" }, ip: "198.51.100.5" });
    expect(ok.status).toBe(200);
    secrets.push(ok.body.access_token);
    expect(rowsOf("auth.oidc_exchange", "google:audit-sub-2")).toEqual([
      expect.objectContaining({ outcome: "success", actor_user_id: u.userId, corp_id: admin.corpId, ip: "198.51.100.5", reason: null }),
    ]);

    const forged = (await idToken("audit-sub-2")).slice(0, -4) + "AAAA";
    secrets.push(forged);
    expect((await t.req("POST", "/api/auth/oidc/google/exchange", { body: { id_token: forged } })).status).toBe(403);
    expect((await t.req("POST", "/api/auth/oidc/google/exchange", { body: { id_token: await idToken("nobody-sub"), corp: "acme" } })).status).toBe(403);
    const failures = rowsOf("auth.oidc_exchange").filter((r) => r.outcome === "failure");
    // Before verification only the provider is known; after it, provider and subject.
    expect(failures.map((r) => [r.target, r.corp_id, r.reason])).toEqual([
      ["google", null, "invalid-credentials"],
      ["google:nobody-sub", admin.corpId, "invalid-credentials"],
    ]);
  });
});

describe("POST /api/user/{id}/2fa/enable|disable|reset; POST /api/login: audit of two-factor", () => {
  test("enable (wrong code, confirmed), remembered device, disable (wrong code, done), reset by an administrator", async () => {
    const u = await member();
    const start = await as(u.token, "POST", `/api/user/${u.userId}/2fa/enable`);
    expect(start.status).toBe(200);
    const secret = start.body.secret as string;
    secrets.push(secret, start.body.otpauth_uri);
    // Asking for a pending secret changes nothing yet.
    expect(rowsOf("user.two_factor_enable", u.userId)).toEqual([]);
    expect((await as(u.token, "POST", `/api/user/${u.userId}/2fa/enable`, { code: wrongCode(secret) })).status).toBe(403);
    expect((await as(u.token, "POST", `/api/user/${u.userId}/2fa/enable`, { code: code(secret) }, "192.0.2.10")).status).toBe(200);
    nextStep();
    expect(rowsOf("user.two_factor_enable", u.userId).map((r) => [r.outcome, r.reason])).toEqual([
      ["failure", "two-factor-invalid"],
      ["success", null],
    ]);
    expect(rowsOf("user.two_factor_enable", u.userId)[1]).toMatchObject({ actor_user_id: u.userId, corp_id: admin.corpId, ip: "192.0.2.10" });

    const login = await t.req("POST", "/api/login", { body: { corp: "acme", login: u.login, password: u.password, two_factor_code: code(secret), remember_device: true } });
    nextStep();
    expect(login.status).toBe(200);
    secrets.push(login.body.access_token);
    const cookie = /corpadmin_device=([^;]+)/.exec(login.headers.get("set-cookie") ?? "")![1];
    secrets.push(cookie);
    expect(rowsOf("auth.device_remember", u.login)).toEqual([expect.objectContaining({ outcome: "success", actor_user_id: u.userId, corp_id: admin.corpId })]);

    expect((await as(u.token, "POST", `/api/user/${u.userId}/2fa/disable`, { code: wrongCode(secret) })).status).toBe(403);
    expect((await as(u.token, "POST", `/api/user/${u.userId}/2fa/disable`, { code: code(secret) })).status).toBe(200);
    nextStep();
    expect(rowsOf("user.two_factor_disable", u.userId).map((r) => [r.outcome, r.reason, r.actor_user_id])).toEqual([
      ["failure", "two-factor-invalid", u.userId],
      ["success", null, u.userId],
    ]);

    const again = await as(u.token, "POST", `/api/user/${u.userId}/2fa/enable`);
    secrets.push(again.body.secret, again.body.otpauth_uri);
    expect((await as(u.token, "POST", `/api/user/${u.userId}/2fa/enable`, { code: code(again.body.secret) })).status).toBe(200);
    nextStep();
    expect((await as(admin.token, "POST", `/api/user/${u.userId}/2fa/reset`)).status).toBe(200);
    expect(rowsOf("user.two_factor_reset", u.userId)).toEqual([
      expect.objectContaining({ outcome: "success", actor_user_id: admin.userId, corp_id: admin.corpId }),
    ]);
  });
});

describe("POST /api/user/{id}/password; POST /api/user/password/reset-key|reset: audit of passwords", () => {
  test("change: own with a wrong current password fails, own and by an administrator succeed", async () => {
    const u = await member();
    const wrong = `wrong-current-${crypto.randomUUID()}`;
    const next = `next-${crypto.randomUUID()}`;
    const byAdmin = `admin-set-${crypto.randomUUID()}`;
    secrets.push(wrong, next, byAdmin);
    expect((await as(u.token, "POST", `/api/user/${u.userId}/password`, { current_password: wrong, new_password: next })).status).toBe(403);
    expect((await as(u.token, "POST", `/api/user/${u.userId}/password`, { current_password: u.password, new_password: next })).status).toBe(204);
    expect((await as(admin.token, "POST", `/api/user/${u.userId}/password`, { new_password: byAdmin })).status).toBe(204);
    expect(rowsOf("user.password_change", u.userId).map((r) => [r.outcome, r.actor_user_id, r.reason])).toEqual([
      ["failure", u.userId, "forbidden"],
      ["success", u.userId, null],
      ["success", admin.userId, null],
    ]);
  });

  test("reset-key requests are recorded alike for known and unknown logins; the reset and a bad key are recorded", async () => {
    const u = await member();
    const unknown = `nobody-${crypto.randomUUID().slice(0, 8)}`;
    const mailsBefore = inbox.messages.length;
    expect((await t.req("POST", "/api/user/password/reset-key", { body: { login: u.login }, ip: "203.0.113.20" })).status).toBe(204);
    expect((await t.req("POST", "/api/user/password/reset-key", { body: { login: unknown }, ip: "203.0.113.20" })).status).toBe(204);
    const [known, ghost] = [rowsOf("user.password_reset_request", u.login), rowsOf("user.password_reset_request", unknown)];
    expect(known).toHaveLength(1);
    expect(ghost).toHaveLength(1);
    const shape = (r: AuditRow) => ({ ...r, id: undefined, at: undefined, target: undefined, request_id: undefined });
    expect(shape(known[0])).toEqual(shape(ghost[0]));
    expect(known[0]).toMatchObject({ outcome: "requested", actor_user_id: null, corp_id: null, ip: "203.0.113.20", reason: null });

    const key = /Reset key: ([A-Za-z0-9_-]+)/.exec((await inbox.message(mailsBefore + 1)).text)?.[1];
    expect(key).toBeString();
    const bogus = `bogus-key-${crypto.randomUUID()}`;
    const fresh = `after-reset-${crypto.randomUUID()}`;
    secrets.push(key!, bogus, fresh);
    expect((await t.req("POST", "/api/user/password/reset", { body: { key: bogus, new_password: fresh }, ip: "203.0.113.21" })).status).toBe(400);
    expect((await t.req("POST", "/api/user/password/reset", { body: { key, new_password: fresh }, ip: "203.0.113.21" })).status).toBe(204);
    expect(rowsOf("user.password_reset").map((r) => [r.outcome, r.target, r.actor_user_id, r.ip, r.reason])).toEqual([
      ["failure", null, null, "203.0.113.21", "validation"],
      ["success", u.userId, null, "203.0.113.21", null],
    ]);
  });
});

describe("POST /api/user; PUT|DELETE /api/user/{id}; PUT /api/user/{id}/active|inactive; POST /api/auth/safe-ip/{domain}; DELETE /api/auth/safe-ip/{domain}/{id}: audit of users and safe IP ranges", () => {
  test("create (with super_admin), update (super_admin revoked), inactivate, activate, delete", async () => {
    const password = `created-${crypto.randomUUID()}`;
    secrets.push(password);
    const body = { name: "Audited", email: "audited@example.com", login: "audited-user", password, super_admin: true };
    const created = await as(admin.token, "POST", "/api/user", body, "192.0.2.30");
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    expect((await as(admin.token, "PUT", `/api/user/${id}`, { name: "Audited", email: "audited@example.com", login: "audited-user", super_admin: false })).status).toBe(200);
    expect((await as(admin.token, "PUT", `/api/user/${id}`, { name: "Audited 2", email: "audited@example.com", login: "audited-user", super_admin: false })).status).toBe(200);
    expect((await as(admin.token, "PUT", `/api/user/${id}/inactive`)).status).toBe(200);
    expect((await as(admin.token, "PUT", `/api/user/${id}/active`)).status).toBe(200);
    expect((await as(admin.token, "DELETE", `/api/user/${id}`)).status).toBe(204);
    const mine = allRows().filter((r) => r.target === id);
    expect(mine.map((r) => r.action)).toEqual([
      "user.create",
      "user.super_admin_grant",
      "user.update",
      "user.super_admin_revoke",
      "user.update",
      "user.inactivate",
      "user.activate",
      "user.delete",
    ]);
    for (const r of mine) expect(r).toMatchObject({ outcome: "success", actor_user_id: admin.userId, corp_id: admin.corpId });
    expect(mine[0].ip).toBe("192.0.2.30");
  });

  test("a refused change is not recorded as a change", async () => {
    const u = await member();
    const before = allRows().length;
    expect((await as(u.token, "PUT", `/api/user/${admin.userId}/inactive`)).status).toBe(403);
    expect((await as(u.token, "POST", "/api/workgroup", { name: "nope" })).status).toBe(403);
    expect(allRows().length).toBe(before);
  });

  test("safe IP range add and remove, in the domain's corporation", async () => {
    const beta = await addCorp(t, "audit-beta");
    const added = await as(admin.token, "POST", "/api/auth/safe-ip/audit-beta", { range: "10.1.2.3/16", description: "office" });
    expect(added.status).toBe(200);
    expect((await as(admin.token, "DELETE", `/api/auth/safe-ip/audit-beta/${added.body.id}`)).status).toBe(204);
    expect(allRows().filter((r) => r.action.startsWith("auth.safe_ip")).map((r) => [r.action, r.target, r.corp_id, r.actor_user_id])).toEqual([
      ["auth.safe_ip_add", "10.1.0.0/16", beta, admin.userId],
      ["auth.safe_ip_remove", "10.1.0.0/16", beta, admin.userId],
    ]);
  });
});

describe("POST /api/workgroup; PUT|DELETE /api/workgroup/{id}; POST|DELETE /api/workgroup/{id}/user|service|feature/…; POST /api/menu; POST /api/menu/{id}/workgroup/{workgroupId}: audit of workgroups, memberships, grants, menus", () => {
  test("every change of a workgroup is recorded with the workgroup's corporation", async () => {
    const manager = await member(["platform.workgroup"]);
    const target = await member();
    const wg = await as(manager.token, "POST", "/api/workgroup", { name: "audited-wg" });
    expect(wg.status).toBe(200);
    const w = wg.body.id as string;
    const svc = (t.sql().query("SELECT id FROM services WHERE identifier = 'platform.city'").get() as { id: string }).id;
    const feature = (await as(admin.token, "POST", "/api/feature", { service_id: svc, name: "audit-feature" })).body.id as string;
    const menu = (await as(admin.token, "POST", "/api/menu", { name: "Audit menu", feature_id: feature })).body.id as string;
    const steps: [string, string, string][] = [
      ["PUT", `/api/workgroup/${w}`, "workgroup.update"],
      ["POST", `/api/workgroup/${w}/user/${target.userId}`, "workgroup.member_add"],
      ["DELETE", `/api/workgroup/${w}/user/${target.userId}`, "workgroup.member_remove"],
      ["POST", `/api/workgroup/${w}/service/${svc}`, "workgroup.service_grant"],
      ["DELETE", `/api/workgroup/${w}/service/${svc}`, "workgroup.service_revoke"],
      ["POST", `/api/workgroup/${w}/feature/${feature}`, "workgroup.feature_grant"],
      ["DELETE", `/api/workgroup/${w}/feature/${feature}`, "workgroup.feature_revoke"],
    ];
    for (const [method, path] of steps) expect((await as(manager.token, method, path, method === "PUT" ? { name: "audited-wg-2" } : undefined)).status, path).toBeLessThan(300);
    expect((await as(admin.token, "POST", `/api/menu/${menu}/workgroup/${w}`)).status).toBe(200);
    expect((await as(manager.token, "DELETE", `/api/workgroup/${w}`)).status).toBe(204);

    const mine = allRows().filter((r) => r.target?.startsWith(`workgroup=${w}`));
    expect(mine.map((r) => [r.action, r.target])).toEqual([
      ["workgroup.create", `workgroup=${w}`],
      ["workgroup.update", `workgroup=${w}`],
      ["workgroup.member_add", `workgroup=${w} user=${target.userId}`],
      ["workgroup.member_remove", `workgroup=${w} user=${target.userId}`],
      ["workgroup.service_grant", `workgroup=${w} service=${svc}`],
      ["workgroup.service_revoke", `workgroup=${w} service=${svc}`],
      ["workgroup.feature_grant", `workgroup=${w} feature=${feature}`],
      ["workgroup.feature_revoke", `workgroup=${w} feature=${feature}`],
      ["workgroup.menu_assign", `workgroup=${w} menu=${menu}`],
      ["workgroup.delete", `workgroup=${w}`],
    ]);
    for (const r of mine) {
      expect(r).toMatchObject({ outcome: "success", corp_id: admin.corpId });
      expect(r.actor_user_id).toBe(r.action === "workgroup.menu_assign" ? admin.userId : manager.userId);
    }
  });
});

describe("POST /api/corp; PUT|DELETE /api/corp/{id}; POST|DELETE /api/corp/{id}/user|service/…; POST /api/corp/{id}/block|maintenance|needs-update|enable: audit of corporations", () => {
  test("create, update, members, services, every status transition, delete", async () => {
    const created = await as(admin.token, "POST", "/api/corp", { auth_name: "audit-gamma", company_name: "Gamma" }, "192.0.2.50");
    expect(created.status).toBe(200);
    const c = created.body.id as string;
    const u = await member();
    const svc = (t.sql().query("SELECT id FROM services WHERE identifier = 'platform.city'").get() as { id: string }).id;
    const steps: [string, string][] = [
      ["PUT", `/api/corp/${c}`],
      ["POST", `/api/corp/${c}/user/${u.userId}`],
      ["DELETE", `/api/corp/${c}/user/${u.userId}`],
      ["DELETE", `/api/corp/${c}/service/${svc}`],
      ["POST", `/api/corp/${c}/service/${svc}`],
      ["POST", `/api/corp/${c}/block`],
      ["POST", `/api/corp/${c}/maintenance`],
      ["POST", `/api/corp/${c}/needs-update`],
      ["POST", `/api/corp/${c}/enable`],
      ["DELETE", `/api/corp/${c}`],
    ];
    for (const [method, path] of steps) {
      const body = method === "PUT" ? { auth_name: "audit-gamma", company_name: "Gamma 2" } : undefined;
      expect((await as(admin.token, method, path, body)).status, `${method} ${path}`).toBeLessThan(300);
    }
    const mine = allRows().filter((r) => r.corp_id === c);
    expect(mine.map((r) => [r.action, r.target])).toEqual([
      ["corp.create", c],
      ["corp.update", c],
      ["corp.user_add", `user=${u.userId}`],
      ["corp.user_remove", `user=${u.userId}`],
      ["corp.service_remove", `service=${svc}`],
      ["corp.service_add", `service=${svc}`],
      ["corp.status_change", "status=BLOCKED"],
      ["corp.status_change", "status=MAINTENANCE"],
      ["corp.status_change", "status=NEEDS_UPDATE"],
      ["corp.status_change", "status=ENABLED"],
      ["corp.delete", c],
    ]);
    for (const r of mine) expect(r).toMatchObject({ outcome: "success", actor_user_id: admin.userId });
    expect(mine[0].ip).toBe("192.0.2.50");
  });
});

describe("POST /api/externalapp; PUT|DELETE /api/externalapp/{id}; POST /api/externalapp/{id}/key: audit of external applications", () => {
  test("create, update, key rotation and delete are recorded; the keys are not", async () => {
    const manager = await member(["platform.externalapp"]);
    const created = await as(manager.token, "POST", "/api/externalapp", { name: "audit-erp" });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    secrets.push(created.body.api_key, created.body.api_key.split(".")[2]);
    expect((await as(manager.token, "PUT", `/api/externalapp/${id}`, { name: "audit-erp", status: false })).status).toBe(200);
    const rotated = await as(manager.token, "POST", `/api/externalapp/${id}/key`);
    expect(rotated.status).toBe(200);
    secrets.push(rotated.body.api_key, rotated.body.api_key.split(".")[2]);
    expect((await as(manager.token, "DELETE", `/api/externalapp/${id}`)).status).toBe(204);
    const mine = allRows().filter((r) => r.target === id);
    expect(mine.map((r) => r.action)).toEqual(["externalapp.create", "externalapp.update", "externalapp.key_rotate", "externalapp.delete"]);
    for (const r of mine) expect(r).toMatchObject({ outcome: "success", actor_user_id: manager.userId, corp_id: admin.corpId });
  });
});

describe("audit log: the whole log", () => {
  test("every row is also a JSON line, every action is dotted snake_case", () => {
    const rows = allRows();
    expect(rows.length).toBeGreaterThan(50);
    const logged = auditLines();
    expect(logged.map((l) => l.id).sort()).toEqual(rows.map((r) => r.id).sort());
    for (const r of rows) {
      expect(r.action).toMatch(/^[a-z]+(_[a-z]+)*\.[a-z]+(_[a-z]+)*$/);
      expect(["success", "failure", "requested"]).toContain(r.outcome);
      expect(logged.find((l) => l.id === r.id)).toMatchObject({ ...r, msg: "audit", level: "info" });
    }
  });

  test("no secret in any audit row or any log line (debug level included)", () => {
    const everything = JSON.stringify(allRows()) + "\n" + audit.lines.join("");
    expect(secrets.length).toBeGreaterThan(30);
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThanOrEqual(8);
      if (everything.includes(secret)) throw new Error(`a secret leaked: ${secret.slice(0, 6)}…`);
    }
    expect(codes.length).toBeGreaterThan(3);
    for (const c of codes) for (const form of [`"${c}"`, `:${Number(c)},`, `:${Number(c)}}`]) expect(everything).not.toContain(form);
  });
});
