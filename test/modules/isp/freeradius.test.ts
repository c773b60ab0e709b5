// End to end with the real thing: Debian's FreeRADIUS 3.2 started with the generated configuration,
// its rlm_rest module calling this app over loopback HTTP, radclient playing the NAS.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, startAndLogin, type TestApp } from "../../support/helpers";
import { contractWith, mikrotikLayout, must } from "../../support/isp";
import { FREERADIUS_MISSING, radclient, startFreeradius, type RunningFreeradius } from "../../support/freeradius-harness";

if (FREERADIUS_MISSING) console.warn(`skipping the FreeRADIUS end-to-end tests: ${FREERADIUS_MISSING}`);

const RADIUS_SECRET = "shared-secret-42";
const NAS_IP = "192.0.2.10";

describe.skipIf(FREERADIUS_MISSING !== null)("GET /api/isp/radius/authorize; POST /api/isp/radius/accounting: FreeRADIUS rlm_rest → corpadmin", () => {
  let t: TestApp;
  let admin: { token: string; corpId: string };
  let radius: RunningFreeradius;
  let nasId: string;
  let layoutId: string;
  let inactiveContract: string;

  beforeAll(async () => {
    t = await makeApp();
    admin = await startAndLogin(t);
    const baseUrl = t.listen();
    const fx = await mikrotikLayout(t, admin.token);
    layoutId = fx.layout.id;
    // The NAS is registered with its RADIUS shared secret, which FreeRADIUS forwards as the NAS secret.
    const nas = await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-e2e", ip: NAS_IP, secret: RADIUS_SECRET, layout_id: layoutId });
    nasId = nas.id;
    await contractWith(t, admin.token, { username: "maria@isp", password: "maria-pass", max_upload: "10M", max_download: "100M", pool_name_ipv4: "pppoe-v4" });
    const off = await contractWith(t, admin.token, { username: "joao", password: "joao-pass", max_upload: "1M", max_download: "2M" }, "INACTIVE");
    inactiveContract = off.contract.id;
    radius = await startFreeradius({
      baseUrl,
      credential: { kind: "basic", corp: "acme" },
      clients: [{ name: "nas_e2e", ipaddr: "127.0.0.1", secret: RADIUS_SECRET }],
    });
  });
  afterAll(async () => {
    await radius?.stop();
    await t.close();
  });

  const access = (attrs: Record<string, string>) => radclient(radius.authPort, "auth", RADIUS_SECRET, { "NAS-IP-Address": NAS_IP, ...attrs });

  test("Access-Request (PAP) of an active contract with the right password: Access-Accept with the rendered attributes", async () => {
    const res = await access({ "User-Name": "maria@isp", "User-Password": "maria-pass" });
    expect(res.code).toBe("Access-Accept");
    expect(res.attributes["Mikrotik-Rate-Limit"]).toEqual(["10M/100M"]);
    expect(res.attributes["Framed-Pool"]).toEqual(["pppoe-v4"]);
  });

  test("CHAP: corpadmin hands FreeRADIUS the password and FreeRADIUS checks it", async () => {
    const ok = await access({ "User-Name": "maria@isp", "CHAP-Password": "maria-pass" });
    expect(ok.code).toBe("Access-Accept");
    expect(ok.attributes["Mikrotik-Rate-Limit"]).toEqual(["10M/100M"]);
    const bad = await access({ "User-Name": "maria@isp", "CHAP-Password": "wrong-pass" });
    expect(bad.code).toBe("Access-Reject");
    expect(bad.attributes).toEqual({});
  });

  test("a wrong password, an unknown user and an inactive contract get Access-Reject with no attributes", async () => {
    for (const attrs of [
      { "User-Name": "maria@isp", "User-Password": "maria-wrong" },
      { "User-Name": "nobody", "User-Password": "x" },
      { "User-Name": "joao", "User-Password": "joao-pass" },
    ]) {
      const res = await access(attrs);
      expect(res.code).toBe("Access-Reject");
      expect(res.attributes).toEqual({});
    }
    // ... and the inactive contract gets in once it is active
    await must(t, admin.token, "PUT", `/api/contract/${inactiveContract}/active`);
    expect((await access({ "User-Name": "joao", "User-Password": "joao-pass" })).code).toBe("Access-Accept");
  });

  test("an inactive NAS and a NAS whose layout is inactive get Access-Reject", async () => {
    const creds = { "User-Name": "maria@isp", "User-Password": "maria-pass" };
    await must(t, admin.token, "PUT", `/api/isp/nas/${nasId}/inactive`);
    expect((await access(creds)).code).toBe("Access-Reject");
    await must(t, admin.token, "PUT", `/api/isp/nas/${nasId}/active`);
    await must(t, admin.token, "PUT", `/api/isp/layout/${layoutId}/inactive`);
    expect((await access(creds)).code).toBe("Access-Reject");
    await must(t, admin.token, "PUT", `/api/isp/layout/${layoutId}/active`);
    expect((await access(creds)).code).toBe("Access-Accept");
    // a NAS address corpadmin does not know
    expect((await access({ ...creds, "NAS-IP-Address": "192.0.2.99" })).code).toBe("Access-Reject");
  });

  test("a contract whose settings fill no attribute: Access-Accept with none", async () => {
    await contractWith(t, admin.token, { username: "bare", password: "bare-pass" });
    const res = await access({ "User-Name": "bare", "User-Password": "bare-pass" });
    expect(res.code).toBe("Access-Accept");
    expect(res.attributes).toEqual({});
  });

  test("FreeRADIUS configured with an external app's X-Api-Key instead of the NAS secret", async () => {
    const app = await must(t, admin.token, "POST", "/api/externalapp", { name: "freeradius" });
    const keyed = await startFreeradius({
      baseUrl: t.listen(),
      credential: { kind: "api-key", key: app.api_key },
      clients: [{ name: "nas_key", ipaddr: "127.0.0.1", secret: "other-radius-secret" }],
    });
    try {
      const ok = await radclient(keyed.authPort, "auth", "other-radius-secret", { "NAS-IP-Address": NAS_IP, "User-Name": "maria@isp", "User-Password": "maria-pass" });
      expect(ok.code).toBe("Access-Accept");
      expect(ok.attributes["Mikrotik-Rate-Limit"]).toEqual(["10M/100M"]);
      const acct = await radclient(keyed.acctPort, "acct", "other-radius-secret", { "NAS-IP-Address": NAS_IP, "User-Name": "maria@isp", "Acct-Session-Id": "key-1", "Acct-Status-Type": "Start" });
      expect(acct.code).toBe("Accounting-Response");
      expect(rows("key-1")).toHaveLength(1);
      await must(t, admin.token, "PUT", `/api/externalapp/${app.id}`, { name: "freeradius", status: false });
      const off = await radclient(keyed.authPort, "auth", "other-radius-secret", { "NAS-IP-Address": NAS_IP, "User-Name": "maria@isp", "User-Password": "maria-pass" });
      expect(off.code).toBe("Access-Reject");
    } finally {
      await keyed.stop();
    }
  });

  const rows = (sessionId: string) =>
    t.sql(admin.corpId).query("SELECT status_type, username, session_time, input_octets, contract_id IS NOT NULL AS linked FROM isp_radius_accounting WHERE session_id = ? ORDER BY rowid").all(sessionId);

  test("Accounting-Request Start and Stop are answered and stored once each", async () => {
    const base = { "User-Name": "maria@isp", "Acct-Session-Id": "81000001", "NAS-IP-Address": NAS_IP };
    const start = await radclient(radius.acctPort, "acct", RADIUS_SECRET, { ...base, "Acct-Status-Type": "Start" });
    expect(start.code).toBe("Accounting-Response");
    const stop = await radclient(radius.acctPort, "acct", RADIUS_SECRET, { ...base, "Acct-Status-Type": "Stop", "Acct-Session-Time": 42, "Acct-Input-Octets": 10, "Acct-Input-Gigawords": 1 });
    expect(stop.code).toBe("Accounting-Response");
    // a retransmission with a grown Acct-Delay-Time changes nothing
    await radclient(radius.acctPort, "acct", RADIUS_SECRET, { ...base, "Acct-Status-Type": "Stop", "Acct-Session-Time": 42, "Acct-Input-Octets": 10, "Acct-Input-Gigawords": 1, "Acct-Delay-Time": 5 });
    expect(rows("81000001")).toEqual([
      { status_type: "Start", username: "maria@isp", session_time: 0, input_octets: null, linked: 1 },
      { status_type: "Stop", username: "maria@isp", session_time: 42, input_octets: 2 ** 32 + 10, linked: 1 },
    ]);
  });

  test("accounting through an unknown NAS gets no answer (the NAS would retry) and stores nothing", async () => {
    const res = await radclient(radius.acctPort, "acct", RADIUS_SECRET, { "User-Name": "x", "Acct-Session-Id": "81000002", "NAS-IP-Address": "192.0.2.77", "Acct-Status-Type": "Start" }, 1);
    expect(res.code).toBeNull();
    expect(rows("81000002")).toEqual([]);
  });
});
