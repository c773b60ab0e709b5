// Fair use and staged suspension on the wire (issue 33): radclient plays the NAS towards Debian's
// FreeRADIUS 3.2 (rlm_rest → corpadmin, test/support/freeradius-harness.ts), and a second FreeRADIUS
// is that NAS's RFC 5176 listener (test/support/coa-harness.ts), logging every CoA-Request and
// Disconnect-Request corpadmin sends it. The layout renders the values in force
// (`contract.effective.*`), so throttle, restore, reduce, redirect and trust unblock reach the NAS.
// What needs the clock moved (a grace's end, the next cycle) is in fair-use-freeradius-clock.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { inProcessOnly, makeApp, startAndLogin, type TestApp } from "../../support/helpers";
import { contractWith, must } from "../../support/isp";
import { FREERADIUS_MISSING, radclient, startFreeradius, type RunningFreeradius } from "../../support/freeradius-harness";
import { startFreeradiusCoa, type CoaListener } from "../../support/coa-harness";
import { fairUseLayout, wireLines } from "../../support/fair-use";

if (FREERADIUS_MISSING) console.warn(`skipping the fair-use FreeRADIUS end-to-end tests: ${FREERADIUS_MISSING}`);

const SECRET = "fair-use-secret-01";
// The NAS is on loopback: FreeRADIUS's CoA listener stands at its address.
const NAS_IP = "127.0.0.1";
const FRAMED_IP = "100.64.0.9";

describe.skipIf(FREERADIUS_MISSING !== null)("fair use and suspension modes through FreeRADIUS, CoA and Disconnect to FreeRADIUS as the NAS", () => {
  let t: TestApp;
  let admin: { token: string; corpId: string };
  let radius: RunningFreeradius;
  let nas: CoaListener;
  let c: Awaited<ReturnType<typeof contractWith>>;
  let wire: ReturnType<typeof wireLines>;

  beforeAll(async () => {
    nas = await startFreeradiusCoa(SECRET);
    wire = wireLines(nas);
    // The binary checks marked contracts 2 s after their accounting, as in production.
    t = await makeApp({ options: inProcessOnly({ dispatchTuning: { fairUseCheckMs: 200 } }) });
    admin = await startAndLogin(t);
    const layout = await fairUseLayout(t, admin.token);
    await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-fair-use", ip: NAS_IP, secret: SECRET, coa_port: nas.port, layout_id: layout.id });
    c = await contractWith(t, admin.token, {
      username: "ana",
      password: "ana-pass-1",
      max_upload: "10M",
      max_download: "100M",
      pool_name_ipv4: "pppoe-v4",
      // 1,000,000 bytes a cycle
      allowance_gb: 0.001,
      throttle_max_upload: "1M",
      throttle_max_download: "2M",
    });
    radius = await startFreeradius({ baseUrl: t.listen(), credential: { kind: "basic", corp: "acme" }, clients: [{ name: "nas_fair_use", ipaddr: "127.0.0.1", secret: SECRET }] });
  });
  afterAll(async () => {
    await radius?.stop();
    await t?.close();
    await nas?.stop();
  });

  const access = () => radclient(radius.authPort, "auth", SECRET, { "NAS-IP-Address": NAS_IP, "User-Name": "ana", "User-Password": "ana-pass-1" });
  const accounting = (attrs: Record<string, string | number>) =>
    radclient(radius.acctPort, "acct", SECRET, { "NAS-IP-Address": NAS_IP, "User-Name": "ana", "Framed-IP-Address": FRAMED_IP, ...attrs });
  const contract = async () => (await must(t, admin.token, "GET", `/api/contract/${c.contract.id}`)) as { network: { state: string; since: string | null; until: string | null; cycle: { used_bytes: number; allowance_bytes: number | null } } };
  const history = async () =>
    ((await must(t, admin.token, "GET", `/api/history?target_id=${c.contract.id}&limit=500`)).items as { actor: string; action: string; changes: { field: string; before: unknown; after: unknown }[] }[]);
  const setStatus = (contract_status: string) =>
    must(t, admin.token, "PUT", `/api/contract/${c.contract.id}`, {
      customer_id: c.customer.id,
      number: c.contract.number,
      start_date: "2025-01-01",
      total_value: 99.9,
      contract_status,
      address: { line1: "Rua 1", city_id: c.city.id },
    });
  const setPolicy = (policy: Record<string, unknown>) => must(t, admin.token, "PUT", "/api/isp/policy", policy);
  /** A request as the NAS logged it; a CoA-Request carries the pool and the state (the address list) too. */
  const lineOf = (user: string, kind: string, session: string, rate: string, pool?: [string, string]) =>
    `${kind} ${user} ${session} ${NAS_IP} ${FRAMED_IP} ${rate}${pool ? ` Framed-Pool=${pool[0]} Mikrotik-Address-List=${pool[1]}` : ""}`;
  const line = (kind: string, session: string, rate: string, pool?: [string, string]) => lineOf("ana", kind, session, rate, pool);

  test("Access-Request: Access-Accept with the contract's own rate and pool (contract.effective.*)", async () => {
    const res = await access();
    expect(res.code).toBe("Access-Accept");
    expect(res.attributes["Mikrotik-Rate-Limit"]).toEqual(["10M/100M"]);
    expect(res.attributes["Framed-Pool"]).toEqual(["pppoe-v4"]);
    expect(res.attributes["Mikrotik-Address-List"]).toEqual(["normal"]);
    expect((await contract()).network).toMatchObject({ state: "normal", since: null, until: null, cycle: { used_bytes: 0, allowance_bytes: 1_000_000 } });
  });

  test("accounting through FreeRADIUS that crosses the allowance: CoA-Request with the throttle rate, state throttled, by system:fair-use", async () => {
    const mark = wire.mark();
    expect((await accounting({ "Acct-Status-Type": "Start", "Acct-Session-Id": "fu-1" })).code).toBe("Accounting-Response");
    expect((await accounting({ "Acct-Status-Type": "Interim-Update", "Acct-Session-Id": "fu-1", "Acct-Session-Time": 60, "Acct-Input-Octets": 300_000, "Acct-Output-Octets": 400_000 })).code).toBe(
      "Accounting-Response",
    );
    // 700,000 bytes: under the allowance, nothing goes to the NAS
    expect((await contract()).network).toMatchObject({ state: "normal", cycle: { used_bytes: 700_000 } });
    expect((await accounting({ "Acct-Status-Type": "Interim-Update", "Acct-Session-Id": "fu-1", "Acct-Session-Time": 120, "Acct-Input-Octets": 500_000, "Acct-Output-Octets": 700_000 })).code).toBe(
      "Accounting-Response",
    );
    await wire.next(mark, line("CoA-Request", "fu-1", "1M/2M", ["pppoe-v4", "throttled"]));
    expect(wire.since(mark)).toEqual([line("CoA-Request", "fu-1", "1M/2M", ["pppoe-v4", "throttled"])]);
    const network = (await contract()).network;
    expect(network).toMatchObject({ state: "throttled", until: null, cycle: { used_bytes: 1_200_000, allowance_bytes: 1_000_000 } });
    expect(network.since).not.toBeNull();
    // A reconnect gets the same
    const again = await access();
    expect(again.attributes["Mikrotik-Rate-Limit"]).toEqual(["1M/2M"]);
    expect(again.attributes["Mikrotik-Address-List"]).toEqual(["throttled"]);
    const throttle = (await history()).find((h) => h.action === "throttle");
    expect(throttle).toMatchObject({ actor: "system:fair-use", changes: expect.arrayContaining([{ field: "network.state", before: "normal", after: "throttled" }]) });
  });

  test("a raised allowance restores: CoA-Request with the original rate, state normal, by system:fair-use", async () => {
    const mark = wire.mark();
    await must(t, admin.token, "POST", `/api/contract/${c.contract.id}/config`, { allowance_gb: 1 });
    await wire.next(mark, line("CoA-Request", "fu-1", "10M/100M", ["pppoe-v4", "normal"]));
    expect(wire.since(mark)).toEqual([line("CoA-Request", "fu-1", "10M/100M", ["pppoe-v4", "normal"])]);
    expect((await contract()).network).toMatchObject({ state: "normal", since: null, cycle: { used_bytes: 1_200_000, allowance_bytes: 1_000_000_000 } });
    expect((await access()).attributes["Mikrotik-Rate-Limit"]).toEqual(["10M/100M"]);
    const restore = (await history()).find((h) => h.action === "restore");
    expect(restore).toMatchObject({ actor: "system:fair-use", changes: expect.arrayContaining([{ field: "network.state", before: "throttled", after: "normal" }]) });
  });

  test("policy reduce, contract SUSPENDED: CoA-Request with the policy's reduced rate (no Disconnect); Access-Accept at that rate", async () => {
    const mark = wire.mark();
    // Nobody online is SUSPENDED yet: the policy alone sends nothing.
    await setPolicy({ suspended_mode: "reduce", suspended_max_upload: "256k", suspended_max_download: "512k", trust_unblock_days: 2 });
    await setStatus("SUSPENDED");
    await wire.next(mark, line("CoA-Request", "fu-1", "256k/512k", ["pppoe-v4", "suspended"]));
    expect(wire.since(mark)).toEqual([line("CoA-Request", "fu-1", "256k/512k", ["pppoe-v4", "suspended"])]);
    expect((await contract()).network.state).toBe("suspended");
    const res = await access();
    expect(res.code).toBe("Access-Accept");
    expect(res.attributes["Mikrotik-Rate-Limit"]).toEqual(["256k/512k"]);
    expect(res.attributes["Framed-Pool"]).toEqual(["pppoe-v4"]);
    expect(res.attributes["Mikrotik-Address-List"]).toEqual(["suspended"]);
  });

  test("policy redirect: CoA-Request carrying Framed-Pool = the notice pool and the contract's own rate; Access-Accept with that pool", async () => {
    const mark = wire.mark();
    await setPolicy({ suspended_mode: "redirect", suspended_pool_ipv4: "notice-v4", trust_unblock_days: 2 });
    await wire.next(mark, line("CoA-Request", "fu-1", "10M/100M", ["notice-v4", "suspended"]));
    expect(wire.since(mark)).toEqual([line("CoA-Request", "fu-1", "10M/100M", ["notice-v4", "suspended"])]);
    const res = await access();
    expect(res.code).toBe("Access-Accept");
    expect(res.attributes["Framed-Pool"]).toEqual(["notice-v4"]);
    expect(res.attributes["Mikrotik-Rate-Limit"]).toEqual(["10M/100M"]);
  });

  test("policy reject: Disconnect-Request for the session, and Access-Reject", async () => {
    const mark = wire.mark();
    await setPolicy({ suspended_mode: "reject", trust_unblock_days: 2 });
    await wire.next(mark, line("Disconnect-Request", "fu-1", ""));
    expect(wire.since(mark)).toEqual([line("Disconnect-Request", "fu-1", "")]);
    const res = await access();
    expect(res.code).toBe("Access-Reject");
    expect(res.attributes).toEqual({});
    // The NAS hung up and says so.
    expect((await accounting({ "Acct-Status-Type": "Stop", "Acct-Session-Id": "fu-1", "Acct-Session-Time": 180, "Acct-Input-Octets": 500_000, "Acct-Output-Octets": 700_000 })).code).toBe(
      "Accounting-Response",
    );
  });

  test("trust unblock (the ERP's key) under reduce: CoA-Request with the contract's own rate, state trusted for 2 days, once per period", async () => {
    await setPolicy({ suspended_mode: "reduce", suspended_max_upload: "256k", suspended_max_download: "512k", trust_unblock_days: 2 });
    // The customer dials again: admitted at the reduced rate.
    const reduced = await access();
    expect(reduced.code).toBe("Access-Accept");
    expect(reduced.attributes["Mikrotik-Rate-Limit"]).toEqual(["256k/512k"]);
    expect((await accounting({ "Acct-Status-Type": "Start", "Acct-Session-Id": "fu-2" })).code).toBe("Accounting-Response");
    const erp = await must(t, admin.token, "POST", "/api/externalapp", { name: "erp-fair-use" });
    const mark = wire.mark();
    const before = Date.now();
    const res = await t.req("POST", `/api/contract/${c.contract.id}/trust-unblock`, { apiKey: erp.api_key });
    expect(res.status).toBe(200);
    expect(res.body.network.state).toBe("trusted");
    const until = Date.parse(res.body.network.until);
    expect(until).toBeGreaterThanOrEqual(before + 2 * 86_400_000 - 1_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 2 * 86_400_000 + 1_000);
    await wire.next(mark, line("CoA-Request", "fu-2", "10M/100M", ["pppoe-v4", "trusted"]));
    expect(wire.since(mark)).toEqual([line("CoA-Request", "fu-2", "10M/100M", ["pppoe-v4", "trusted"])]);
    expect((await contract()).network).toMatchObject({ state: "trusted", until: res.body.network.until });
    const trusted = await access();
    expect(trusted.attributes["Mikrotik-Rate-Limit"]).toEqual(["10M/100M"]);
    expect(trusted.attributes["Mikrotik-Address-List"]).toEqual(["trusted"]);
    // once per trust_unblock_every_days (30)
    const again = await t.req("POST", `/api/contract/${c.contract.id}/trust-unblock`, { apiKey: erp.api_key });
    expect(again.status).toBe(409);
    expect((await history()).find((h) => h.action === "trust-unblock")).toMatchObject({ actor: "erp-fair-use", changes: expect.arrayContaining([{ field: "network.state", before: "suspended", after: "trusted" }]) });
    // Paid: ACTIVE again, the grace no longer matters.
    await setStatus("ACTIVE");
    expect((await contract()).network).toMatchObject({ state: "normal", until: null });
  });

  test("the ERP's upsert suspends under reduce: CoA-Request with the reduced rate, no Disconnect; ACTIVE again: the own rate", async () => {
    const erp = await must(t, admin.token, "POST", "/api/externalapp", { name: "erp-upsert" });
    const upsert = (contract_status: string) =>
      t.req("POST", "/api/contract/create/externalapp/name/erp-upsert", {
        apiKey: erp.api_key,
        body: {
          identity: "CT-9001",
          customer: { identity: "CUS-9001", name: "Davi" },
          number: "CT-9001",
          start_date: "2025-01-01",
          total_value: 99.9,
          contract_status,
          address: { line1: "Rua 2", city: { identity: "CITY-1", name: "Campinas", state: "SP", country: "BR" } },
        },
      });
    const created = await upsert("ACTIVE");
    expect(created.status).toBe(200);
    await must(t, admin.token, "POST", `/api/contract/${created.body.id}/config`, { username: "davi", password: "davi-pass-1", max_upload: "20M", max_download: "200M", pool_name_ipv4: "pppoe-v4" });
    expect((await radclient(radius.authPort, "auth", SECRET, { "NAS-IP-Address": NAS_IP, "User-Name": "davi", "User-Password": "davi-pass-1" })).attributes["Mikrotik-Rate-Limit"]).toEqual(["20M/200M"]);
    await accounting({ "User-Name": "davi", "Acct-Status-Type": "Start", "Acct-Session-Id": "fu-3" });
    let mark = wire.mark();
    expect((await upsert("SUSPENDED")).status).toBe(200);
    await wire.next(mark, lineOf("davi", "CoA-Request", "fu-3", "256k/512k", ["pppoe-v4", "suspended"]));
    expect(wire.since(mark)).toEqual([lineOf("davi", "CoA-Request", "fu-3", "256k/512k", ["pppoe-v4", "suspended"])]);
    mark = wire.mark();
    expect((await upsert("ACTIVE")).status).toBe(200);
    await wire.next(mark, lineOf("davi", "CoA-Request", "fu-3", "20M/200M", ["pppoe-v4", "normal"]));
    expect(wire.since(mark)).toEqual([lineOf("davi", "CoA-Request", "fu-3", "20M/200M", ["pppoe-v4", "normal"])]);
  });
});
