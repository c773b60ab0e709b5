// A NAS's online sessions and its RFC 5176 test (routes.md, "Network operations additions"):
// POST /api/isp/nas/{id}/test against FreeRADIUS acting as the NAS (test/support/coa-harness.ts),
// which NAKs with Error-Cause 503 a session it does not have and drops what another secret signed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN, addCorp, addUser, inProcessOnly, makeApp, startAndLogin, UNKNOWN_ID, type TestApp } from "../../support/helpers";
import { FREERADIUS_MISSING, startFreeradiusCoa, type CoaListener } from "../../support/coa-harness";
import { must } from "../../support/isp";

const SECRET = "nas-test-secret-01";
if (FREERADIUS_MISSING) console.warn(`skipping the NAS test against FreeRADIUS: ${FREERADIUS_MISSING}`);

let t: TestApp;
let admin: { token: string; corpId: string };
let fr: CoaListener | null = null;

const basic = (secret: string) => `Basic ${Buffer.from(`acme:${secret}`).toString("base64")}`;
const acct = (ip: string, attrs: Record<string, string | number>) =>
  t.req("POST", "/api/isp/radius/accounting", { body: { "NAS-IP-Address": ip, ...attrs }, headers: { authorization: basic(SECRET) } });

/** The super-admin working in a second corporation. */
async function otherCorpToken(): Promise<string> {
  const corpId = await addCorp(t, `other-${Date.now()}`);
  const res = await t.req("POST", "/api/login", { body: { corp: corpId, login: ADMIN.login, password: ADMIN.password } });
  return res.body.access_token;
}

beforeAll(async () => {
  if (!FREERADIUS_MISSING) fr = await startFreeradiusCoa(SECRET);
  // Retries 1 s apart: FreeRADIUS answers the first attempt well within it; silence costs 3 s.
  t = await makeApp({ options: inProcessOnly({ dispatchTuning: { coaRetryMs: 1_000 } }) });
  admin = await startAndLogin(t);
});
afterAll(async () => {
  await t.close();
  fr?.stop();
});

describe("GET /api/isp/nas/{id}/sessions", () => {
  test("the NAS's online sessions only, newest first; another NAS's and closed ones left out; list conventions", async () => {
    const a = await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-a", ip: "192.0.2.10", secret: SECRET });
    await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-b", ip: "192.0.2.11", secret: SECRET });
    for (const [ip, sid, user] of [
      ["192.0.2.10", "a-1", "ana"],
      ["192.0.2.10", "a-2", "bia"],
      ["192.0.2.10", "a-3", "caio"],
      ["192.0.2.11", "b-1", "davi"],
    ]) {
      expect((await acct(ip, { "Acct-Status-Type": "Start", "User-Name": user, "Acct-Session-Id": sid })).status).toBe(204);
      await Bun.sleep(2);
    }
    expect((await acct("192.0.2.10", { "Acct-Status-Type": "Stop", "User-Name": "bia", "Acct-Session-Id": "a-2", "Acct-Session-Time": 5 })).status).toBe(204);
    const res = await t.req("GET", `/api/isp/nas/${a.id}/sessions`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ page: 1, limit: 50, total: 2 });
    expect(res.body.items.map((s: { username: string; state: string; nas_name: string }) => [s.username, s.state, s.nas_name])).toEqual([
      ["caio", "online", "bng-a"],
      ["ana", "online", "bng-a"],
    ]);
    // ?state cannot widen it: the route lists online sessions.
    expect((await t.req("GET", `/api/isp/nas/${a.id}/sessions?state=closed`, { token: admin.token })).body.total).toBe(2);
    expect((await t.req("GET", `/api/isp/nas/${a.id}/sessions?sort=username&limit=1`, { token: admin.token })).body.items.map((s: { username: string }) => s.username)).toEqual(["ana"]);
    expect((await t.req("GET", `/api/isp/nas/${a.id}/sessions?q=cai`, { token: admin.token })).body.total).toBe(1);
    expect((await t.req("GET", `/api/isp/nas/${a.id}/sessions?username=ana`, { token: admin.token })).body.total).toBe(1);
    for (const bad of ["sort=nope", "limit=0", "limit=501"]) {
      const r = await t.req("GET", `/api/isp/nas/${a.id}/sessions?${bad}`, { token: admin.token });
      expect(r.status).toBe(400);
      expect(r.body.type).toBe("urn:corpadmin:problem:validation");
    }
    expect((await t.req("GET", `/api/isp/nas/${UNKNOWN_ID}/sessions`, { token: admin.token })).status).toBe(404);
    expect((await t.req("GET", `/api/isp/nas/${a.id}/sessions`)).status).toBe(401);
    const clerk = await addUser(t, admin.corpId, { login: "clerk-sessions" });
    expect((await t.req("GET", `/api/isp/nas/${a.id}/sessions`, { token: clerk.token })).status).toBe(403);
    // Another corporation's NAS is not there.
    const other = await otherCorpToken();
    expect((await t.req("GET", `/api/isp/nas/${a.id}/sessions`, { token: other })).status).toBe(404);
    expect((await t.req("POST", `/api/isp/nas/${a.id}/test`, { token: other })).status).toBe(404);
  });
});

describe.skipIf(FREERADIUS_MISSING !== null)("POST /api/isp/nas/{id}/test against FreeRADIUS as the NAS", () => {
  test("the right secret: NAK, Error-Cause 503 (the session does not exist), with its time; audited", async () => {
    const nas = await must(t, admin.token, "POST", "/api/isp/nas", { name: "fr-right", ip: "127.0.0.1", secret: SECRET, coa_port: fr!.port });
    const res = await t.req("POST", `/api/isp/nas/${nas.id}/test`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: "nak", error_cause: 503 });
    expect(res.body.ms).toBeGreaterThanOrEqual(0);
    expect(res.body.ms).toBeLessThan(1_000);
    // FreeRADIUS checked the signature and read the request: a made-up session of that NAS.
    expect(fr!.requests().some((l) => /^Disconnect-Request corpadmin-nas-test corpadmin-test-[0-9a-f]{16} 127\.0\.0\.1 /.test(l))).toBe(true);
    const rows = t.sql().query("SELECT outcome, target, reason FROM audit_log WHERE action = 'isp.nas_test' ORDER BY at, rowid").all() as { outcome: string; target: string; reason: string }[];
    expect(rows.at(-1)).toMatchObject({ outcome: "success", target: `nas:${nas.id}` });
    expect(rows.at(-1)!.reason).toStartWith("nak Error-Cause 503 (Session-Context-Not-Found)");
  });

  test("a wrong secret: FreeRADIUS drops the request, the test times out; audited as a failure", async () => {
    const nas = await must(t, admin.token, "POST", "/api/isp/nas", { name: "fr-wrong", ip: "127.0.0.2", secret: "not-the-nas-secret", coa_port: fr!.port });
    const res = await t.req("POST", `/api/isp/nas/${nas.id}/test`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: "timeout", error_cause: null });
    expect(res.body.ms).toBeGreaterThanOrEqual(2_900);
    const row = t.sql().query("SELECT outcome, reason FROM audit_log WHERE action = 'isp.nas_test' AND target = ?").get(`nas:${nas.id}`) as { outcome: string; reason: string };
    expect(row).toEqual({ outcome: "failure", reason: "timeout after 3 attempts" });
  });
});

describe("POST /api/isp/nas/{id}/test: errors", () => {
  test("400 when no secret is stored (set before secrets were kept); 404, 401, 403", async () => {
    const nas = await must(t, admin.token, "POST", "/api/isp/nas", { name: "no-secret", ip: "192.0.2.99", secret: SECRET });
    // A NAS whose secret predates sealed secrets: what an upgraded database holds.
    t.sqlWrite(admin.corpId).query("UPDATE isp_nas SET secret_enc = NULL WHERE id = ?").run(nas.id);
    const res = await t.req("POST", `/api/isp/nas/${nas.id}/test`, { token: admin.token });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("secret");
    expect((await t.req("POST", `/api/isp/nas/${UNKNOWN_ID}/test`, { token: admin.token })).status).toBe(404);
    expect((await t.req("POST", `/api/isp/nas/${nas.id}/test`)).status).toBe(401);
    const clerk = await addUser(t, admin.corpId, { login: "clerk-test" });
    expect((await t.req("POST", `/api/isp/nas/${nas.id}/test`, { token: clerk.token })).status).toBe(403);
  });
});
