// End to end with the real thing: Debian's FreeRADIUS 3.2 started with the generated configuration,
// its rlm_rest module calling this app over loopback HTTP, radclient playing the NAS.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, startAndLogin, type TestApp } from "../helpers";
import { FREERADIUS_MISSING, radclient, startFreeradius, type RunningFreeradius } from "./freeradius-harness";

if (FREERADIUS_MISSING) console.warn(`skipping the FreeRADIUS end-to-end tests: ${FREERADIUS_MISSING}`);

const RADIUS_SECRET = "shared-secret-42";
const NAS_IP = "192.0.2.10";

describe.skipIf(FREERADIUS_MISSING !== null)("FreeRADIUS rlm_rest → corpadmin", () => {
  let t: TestApp;
  let admin: { token: string; corpId: string };
  let radius: RunningFreeradius;

  beforeAll(async () => {
    t = await makeApp();
    admin = await startAndLogin(t);
    t.app.listen({ hostname: "127.0.0.1", port: 0 });
    const port = t.app.server!.port;
    // The NAS is registered with its RADIUS shared secret, which FreeRADIUS forwards as the NAS secret.
    const nas = await t.req("POST", "/api/isp/nas", { token: admin.token, body: { name: "bng-e2e", ip: NAS_IP, secret: RADIUS_SECRET } });
    expect(nas.status).toBe(200);
    radius = await startFreeradius({
      baseUrl: `http://127.0.0.1:${port}`,
      credential: { kind: "basic", corp: "acme" },
      clients: [{ name: "nas_e2e", ipaddr: "127.0.0.1", secret: RADIUS_SECRET }],
    });
  });
  afterAll(async () => {
    await radius?.stop();
    await t.app.stop();
    await t.close();
  });

  const rows = (sessionId: string) =>
    t.ctx.tenants.get(admin.corpId).$client.query("SELECT status_type, username, session_time, input_octets FROM isp_radius_accounting WHERE session_id = ? ORDER BY rowid").all(sessionId);

  test("Accounting-Request Start and Stop are answered and stored once each", async () => {
    const base = { "User-Name": "maria", "Acct-Session-Id": "81000001", "NAS-IP-Address": NAS_IP };
    const start = await radclient(radius.acctPort, "acct", RADIUS_SECRET, { ...base, "Acct-Status-Type": "Start" });
    expect(start.code).toBe("Accounting-Response");
    const stop = await radclient(radius.acctPort, "acct", RADIUS_SECRET, { ...base, "Acct-Status-Type": "Stop", "Acct-Session-Time": 42, "Acct-Input-Octets": 10, "Acct-Input-Gigawords": 1 });
    expect(stop.code).toBe("Accounting-Response");
    // a retransmission with a grown Acct-Delay-Time changes nothing
    await radclient(radius.acctPort, "acct", RADIUS_SECRET, { ...base, "Acct-Status-Type": "Stop", "Acct-Session-Time": 42, "Acct-Input-Octets": 10, "Acct-Input-Gigawords": 1, "Acct-Delay-Time": 5 });
    expect(rows("81000001")).toEqual([
      { status_type: "Start", username: "maria", session_time: 0, input_octets: null },
      { status_type: "Stop", username: "maria", session_time: 42, input_octets: 2 ** 32 + 10 },
    ]);
  });

  test("accounting through an unknown NAS gets no answer (the NAS would retry) and stores nothing", async () => {
    const res = await radclient(radius.acctPort, "acct", RADIUS_SECRET, { "User-Name": "x", "Acct-Session-Id": "81000002", "NAS-IP-Address": "192.0.2.77", "Acct-Status-Type": "Start" }, 1);
    expect(res.code).toBeNull();
    expect(rows("81000002")).toEqual([]);
  });
});
