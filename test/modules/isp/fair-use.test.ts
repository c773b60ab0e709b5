// Fair use, staged suspension and trust unblock through HTTP (routes.md, "Network operations
// additions"): the network policy, the contract's allowance and throttle speeds, Contract.network,
// what RADIUS authorize answers in each state (the layout renders contract.effective.*), the
// history of every state change and the ISP events delivered to a real webhook receiver.
// Accounting is sent as rlm_rest sends it; the FreeRADIUS end to end is fair-use-freeradius.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, startAndLogin, UNKNOWN_ID, type TestApp } from "../../support/helpers";
import { contractWith, must } from "../../support/isp";
import { LOOPBACK_ALLOWED, receiver, waitFor } from "../../support/webhooks";

const SECRET = "nas-secret-fair-use";
const NAS_IP = "192.0.2.40";
const basic = `Basic ${Buffer.from(`acme:${SECRET}`).toString("base64")}`;
let t: TestApp;
let admin: { token: string; corpId: string };
let hooks: ReturnType<typeof receiver>;

const get = (path: string) => t.req("GET", path, { token: admin.token });
const authorize = (username: string, password: string) =>
  t.req("GET", `/api/isp/radius/authorize?${new URLSearchParams({ username, password, nas_ip: NAS_IP })}`, { headers: { authorization: basic } });
async function acct(username: string, session: string, status: string, time: number, bytes: number) {
  const body = {
    "User-Name": username,
    "Acct-Session-Id": session,
    "NAS-IP-Address": NAS_IP,
    "Acct-Status-Type": status,
    "Event-Timestamp": Math.floor(Date.now() / 1000),
    "Acct-Session-Time": time,
    "Acct-Input-Octets": Math.floor(bytes / 2),
    "Acct-Output-Octets": bytes - Math.floor(bytes / 2),
  };
  const res = await t.req("POST", "/api/isp/radius/accounting", { body, headers: { authorization: basic } });
  if (res.status !== 204) throw new Error(`accounting: ${res.status} ${res.text}`);
}
/** Polls the contract until its network state is `state` (fair use checks within seconds). */
async function networkState(id: string, state: string) {
  let last: any;
  await waitFor(`network state ${state}`, async () => {
    last = (await get(`/api/contract/${id}`)).body;
    return last.network?.state === state;
  }, 20_000);
  return last;
}
const history = async (id: string) => (await get(`/api/history?target_id=${id}&limit=100`)).body.items as any[];
const setPolicy = (body: Record<string, unknown>) => t.req("PUT", "/api/isp/policy", { token: admin.token, body });
const status = async (id: string, contract_status: string) => {
  const c = (await get(`/api/contract/${id}`)).body;
  const res = await t.req("PUT", `/api/contract/${id}`, {
    token: admin.token,
    body: { customer_id: c.customer.id, number: c.number, start_date: "2025-01-01", total_value: 99.9, contract_status, address: { line1: c.address.line1, city_id: c.address.city.id } },
  });
  expect(res.status, res.text).toBe(200);
};
const rate = (res: { body: any }) => res.body["reply:Mikrotik-Rate-Limit"]?.value;
const pool = (res: { body: any }) => res.body["reply:Framed-Pool"]?.value;

let n = 0;
async function customer(config: Record<string, unknown> = {}) {
  const username = `fair-${++n}`;
  const c = await contractWith(t, admin.token, { username, password: "pw-123456", max_upload: "10M", max_download: "100M", pool_name_ipv4: "pppoe-v4", ...config });
  return { id: c.contract.id as string, username, city: c.city, customer: c.customer };
}

beforeAll(async () => {
  hooks = receiver();
  t = await makeApp({ env: LOOPBACK_ALLOWED });
  admin = await startAndLogin(t);
  const vendor = await must(t, admin.token, "POST", "/api/isp/manufacturer", { name: "MikroTik" });
  const rateAttr = await must(t, admin.token, "POST", "/api/isp/radius-attribute", { name: "Mikrotik-Rate-Limit", manufacturer_id: vendor.id, type: "string" });
  const poolAttr = await must(t, admin.token, "POST", "/api/isp/radius-attribute", { name: "Framed-Pool", type: "string" });
  const layout = await must(t, admin.token, "POST", "/api/isp/layout", { name: "MikroTik effective", manufacturer_id: vendor.id });
  await must(t, admin.token, "POST", `/api/isp/layout/${layout.id}/attribute`, { attribute_id: rateAttr.id, operator: ":=", value: "{{contract.effective.max_upload}}/{{contract.effective.max_download}}" });
  await must(t, admin.token, "POST", `/api/isp/layout/${layout.id}/attribute`, { attribute_id: poolAttr.id, operator: ":=", value: "{{contract.effective.pool_name_ipv4}}" });
  await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-fair", ip: NAS_IP, secret: SECRET, layout_id: layout.id });
  await must(t, admin.token, "POST", "/api/webhook", { name: "network", target: hooks.url(), email: "noc@example.net", log_enabled: true, groups: ["ISP_AFTER_THROTTLE", "ISP_AFTER_RESTORE", "ISP_AFTER_TRUST_UNBLOCK"] });
});
afterAll(async () => {
  await t.close();
  hooks.stop();
});

describe("GET/PUT /api/isp/policy: the network policy", () => {
  test("defaults until set; PUT replaces every field; reduce needs speeds, redirect a pool; bounds are 400 naming the field", async () => {
    const first = await get("/api/isp/policy");
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ usage_cycle_day: 1, suspended_mode: "reject", suspended_max_upload: null, suspended_max_download: null, suspended_pool_ipv4: null, trust_unblock_days: 0, trust_unblock_every_days: 30, updated_at: null });
    for (const [body, field] of [
      [{ suspended_mode: "reduce", suspended_max_upload: "1M" }, "suspended_max_download"],
      [{ suspended_mode: "redirect" }, "suspended_pool_ipv4"],
      [{ usage_cycle_day: 29 }, "usage_cycle_day"],
      [{ trust_unblock_days: 16 }, "trust_unblock_days"],
      [{ suspended_mode: "block" }, "suspended_mode"],
      [{ suspended_mode: "reduce", suspended_max_upload: "fast", suspended_max_download: "1M" }, "suspended_max_upload"],
    ] as const) {
      const res = await setPolicy(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.map((e: any) => e.path)).toContain(field);
    }
    expect((await get("/api/isp/policy")).body.updated_at).toBeNull();
    const set = await setPolicy({ usage_cycle_day: 5, suspended_mode: "reduce", suspended_max_upload: "512k", suspended_max_download: "1M", trust_unblock_days: 3 });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toMatchObject({ usage_cycle_day: 5, suspended_mode: "reduce", suspended_max_upload: "512k", suspended_max_download: "1M", suspended_pool_ipv4: null, trust_unblock_days: 3, trust_unblock_every_days: 30 });
    expect(set.body.updated_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await get("/api/isp/policy")).body).toEqual(set.body);
    // Left out: its default.
    const again = await setPolicy({ suspended_mode: "reject" });
    expect(again.body).toMatchObject({ usage_cycle_day: 1, suspended_mode: "reject", suspended_max_upload: null, trust_unblock_days: 0 });
    const changes = (await get("/api/history?target_type=policy")).body.items;
    expect(changes.map((c: any) => c.action)).toEqual(["update", "create"]);
    expect(changes[0].changes).toContainEqual({ field: "suspended_mode", before: "reduce", after: "reject" });
  });

  test("the usage cycle follows the policy's day", async () => {
    expect((await setPolicy({ usage_cycle_day: 1 })).status).toBe(200);
    const c = await customer();
    const view = (await get(`/api/contract/${c.id}`)).body.network;
    expect(view.cycle.start).toMatch(/-01T00:00:00\.000-03:00$/);
    expect((await setPolicy({ usage_cycle_day: 28 })).status).toBe(200);
    const moved = (await get(`/api/contract/${c.id}`)).body.network;
    expect(moved.cycle.start).toMatch(/-28T00:00:00\.000-03:00$/);
    expect(moved.cycle.end).toMatch(/-28T00:00:00\.000-03:00$/);
    const usage = (await get(`/api/contract/${c.id}/usage`)).body;
    expect(usage.cycle.start).toBe(moved.cycle.start);
    expect((await setPolicy({})).status).toBe(200);
  });
});

describe("ContractConfig allowance_gb and throttle speeds", () => {
  test("an allowance needs both throttle speeds; bounds and patterns are 400; a partial body keeps them", async () => {
    const c = await customer();
    const post = (body: Record<string, unknown>) => t.req("POST", `/api/contract/${c.id}/config`, { token: admin.token, body });
    for (const [body, field] of [
      [{ allowance_gb: 100 }, "throttle_max_upload"],
      [{ allowance_gb: 100, throttle_max_upload: "1M" }, "throttle_max_download"],
      [{ allowance_gb: 0, throttle_max_upload: "1M", throttle_max_download: "2M" }, "allowance_gb"],
      [{ allowance_gb: -1, throttle_max_upload: "1M", throttle_max_download: "2M" }, "allowance_gb"],
      [{ throttle_max_upload: "1 Mbps" }, "throttle_max_upload"],
    ] as const) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.map((e: any) => e.path)).toContain(field);
    }
    const ok = await post({ allowance_gb: 150.5, throttle_max_upload: "1M", throttle_max_download: "2M" });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.config).toMatchObject({ allowance_gb: 150.5, throttle_max_upload: "1M", throttle_max_download: "2M", max_upload: "10M" });
    expect(ok.body.network).toMatchObject({ state: "normal", since: null, until: null });
    expect(ok.body.network.cycle).toMatchObject({ used_bytes: 0, allowance_bytes: 150_500_000_000 });
    expect((await post({ max_upload: "20M" })).body.config.allowance_gb).toBe(150.5);
    const cleared = await post({ allowance_gb: null });
    expect(cleared.body.config).toMatchObject({ allowance_gb: null, throttle_max_upload: "1M" });
    expect(cleared.body.network.cycle.allowance_bytes).toBeNull();
  });
});

describe("fair use: throttled past the allowance, restored when it is raised", () => {
  test("accounting that crosses the allowance throttles within seconds: state, authorize, usage, history, event; raising it restores", async () => {
    const c = await customer({ allowance_gb: 0.000001, throttle_max_upload: "1M", throttle_max_download: "2M" });
    expect(rate(await authorize(c.username, "pw-123456"))).toBe("10M/100M");
    await acct(c.username, `s-${c.username}`, "Start", 0, 0);
    await acct(c.username, `s-${c.username}`, "Interim-Update", 60, 600);
    // Under the allowance (1,000 bytes): nothing changes.
    await Bun.sleep(300);
    expect((await get(`/api/contract/${c.id}`)).body.network.state).toBe("normal");
    await acct(c.username, `s-${c.username}`, "Interim-Update", 120, 2_000);
    const throttled = await networkState(c.id, "throttled");
    expect(throttled.network.since).toMatch(/\+00:00$/);
    expect(throttled.network.cycle).toMatchObject({ used_bytes: 2_000, allowance_bytes: 1_000 });
    expect(rate(await authorize(c.username, "pw-123456"))).toBe("1M/2M");
    expect(pool(await authorize(c.username, "pw-123456"))).toBe("pppoe-v4");
    const usage = (await get(`/api/contract/${c.id}/usage`)).body;
    expect(usage.cycle).toMatchObject({ used_bytes: 2_000, allowance_bytes: 1_000 });
    const throttle = (await history(c.id)).find((h) => h.action === "throttle");
    expect(throttle).toMatchObject({ actor: "system:fair-use", actor_user_id: null, target_type: "contract" });
    expect(throttle.changes).toContainEqual({ field: "network.state", before: "normal", after: "throttled" });
    await waitFor("ISP_AFTER_THROTTLE delivered", () => hooks.requests.some((r) => JSON.parse(r.body).type === "ISP_AFTER_THROTTLE" && JSON.parse(r.body).data.id === c.id), 20_000);
    const event = JSON.parse(hooks.requests.find((r) => JSON.parse(r.body).type === "ISP_AFTER_THROTTLE")!.body);
    expect(event.data.network.state).toBe("throttled");
    // More traffic while throttled changes nothing more.
    await acct(c.username, `s-${c.username}`, "Interim-Update", 180, 3_000);
    await Bun.sleep(300);
    expect((await history(c.id)).filter((h) => h.action === "throttle")).toHaveLength(1);

    expect((await t.req("POST", `/api/contract/${c.id}/config`, { token: admin.token, body: { allowance_gb: 1 } })).status).toBe(200);
    const restored = await networkState(c.id, "normal");
    expect(restored.network.since).toBeNull();
    expect(rate(await authorize(c.username, "pw-123456"))).toBe("10M/100M");
    const restore = (await history(c.id)).find((h) => h.action === "restore");
    expect(restore).toMatchObject({ actor: "system:fair-use" });
    expect(restore.changes).toContainEqual({ field: "network.state", before: "throttled", after: "normal" });
    await waitFor("ISP_AFTER_RESTORE delivered", () => hooks.requests.some((r) => JSON.parse(r.body).type === "ISP_AFTER_RESTORE" && JSON.parse(r.body).data.id === c.id), 20_000);
  });
});

describe("a SUSPENDED contract by the policy's mode", () => {
  test("reject refuses it; reduce serves it at the policy's speeds; redirect hands it the notice pool", async () => {
    const c = await customer();
    await status(c.id, "SUSPENDED");
    expect((await setPolicy({ suspended_mode: "reject" })).status).toBe(200);
    expect((await get(`/api/contract/${c.id}`)).body.network).toMatchObject({ state: "suspended", until: null });
    expect((await authorize(c.username, "pw-123456")).status).toBe(401);
    expect((await setPolicy({ suspended_mode: "reduce", suspended_max_upload: "256k", suspended_max_download: "512k" })).status).toBe(200);
    const reduced = await authorize(c.username, "pw-123456");
    expect(reduced.status).toBe(200);
    expect(rate(reduced)).toBe("256k/512k");
    expect(pool(reduced)).toBe("pppoe-v4");
    expect((await setPolicy({ suspended_mode: "redirect", suspended_pool_ipv4: "notice-v4" })).status).toBe(200);
    const redirected = await authorize(c.username, "pw-123456");
    expect(rate(redirected)).toBe("10M/100M");
    expect(pool(redirected)).toBe("notice-v4");
    // INACTIVE and CANCELLED are refused whatever the policy says.
    await status(c.id, "INACTIVE");
    expect((await authorize(c.username, "pw-123456")).status).toBe(401);
    expect((await setPolicy({})).status).toBe(200);
  });
});

describe("doctor: layouts that ignore the values in force", () => {
  test("with a reduce policy, a NAS whose layout renders contract.config.* speeds is a warning naming it", async () => {
    const check = async () => ((await get("/api/system/doctor")).body.checks as any[]).find((c) => c.name === "network-layouts");
    expect((await setPolicy({})).status).toBe(200);
    const plain = await must(t, admin.token, "POST", "/api/isp/layout", { name: "plain rates" });
    const attr = (await get("/api/isp/radius-attribute?name=Mikrotik-Rate-Limit")).body.items[0];
    await must(t, admin.token, "POST", `/api/isp/layout/${plain.id}/attribute`, { attribute_id: attr.id, operator: ":=", value: "{{contract.config.max_upload}}/{{contract.config.max_download}}" });
    const nas = await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-plain", ip: "192.0.2.49", secret: "plain-secret", layout_id: plain.id });
    expect((await setPolicy({ suspended_mode: "reduce", suspended_max_upload: "1M", suspended_max_download: "1M" })).status).toBe(200);
    const warned = await check();
    expect(warned.status).toBe("warn");
    expect(warned.detail).toContain("NAS bng-plain (layout plain rates)");
    expect(warned.detail).not.toContain("bng-fair");
    expect((await t.req("DELETE", `/api/isp/nas/${nas.id}`, { token: admin.token })).status).toBe(204);
    expect((await check()).status).toBe("ok");
    expect((await setPolicy({})).status).toBe(200);
  });
});

describe("POST /api/contract/{id}/trust-unblock", () => {
  test("409 unless SUSPENDED and the policy gives days; then trusted until the grace ends, served as ACTIVE; once per period", async () => {
    const c = await customer();
    const unblock = () => t.req("POST", `/api/contract/${c.id}/trust-unblock`, { token: admin.token });
    expect((await t.req("POST", `/api/contract/${UNKNOWN_ID}/trust-unblock`, { token: admin.token })).status).toBe(404);
    const active = await unblock();
    expect(active.status).toBe(409);
    expect(active.body.detail).toBe("The contract is not suspended: trust unblock is for SUSPENDED contracts");
    await status(c.id, "SUSPENDED");
    expect((await setPolicy({ suspended_mode: "reject" })).status).toBe(200);
    const off = await unblock();
    expect(off.status).toBe(409);
    expect(off.body.detail).toBe("Trust unblock is off in the network policy (trust_unblock_days is 0)");
    expect((await authorize(c.username, "pw-123456")).status).toBe(401);

    expect((await setPolicy({ trust_unblock_days: 3, trust_unblock_every_days: 30 })).status).toBe(200);
    const before = Date.now();
    const res = await unblock();
    expect(res.status, res.text).toBe(200);
    expect(res.body.contract_status).toBe("SUSPENDED");
    expect(res.body.network.state).toBe("trusted");
    const until = Date.parse(res.body.network.until);
    expect(until).toBeGreaterThanOrEqual(before + 3 * 86_400_000 - 1_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3 * 86_400_000 + 1_000);
    expect((await get(`/api/contract/${c.id}`)).body.network.state).toBe("trusted");
    const served = await authorize(c.username, "pw-123456");
    expect(served.status).toBe(200);
    expect(rate(served)).toBe("10M/100M");

    const twice = await unblock();
    expect(twice.status).toBe(409);
    expect(twice.body.detail).toMatch(/^The contract's trust unblock was already used on \d{4}-\d\d-\d\d; it can be given again from \d{4}-\d\d-\d\d$/);
    const change = (await history(c.id)).find((h) => h.action === "trust-unblock");
    expect(change).toMatchObject({ actor_user_id: expect.any(String) });
    expect(change.changes).toContainEqual({ field: "network.state", before: "suspended", after: "trusted" });
    await waitFor("ISP_AFTER_TRUST_UNBLOCK delivered", () => hooks.requests.some((r) => JSON.parse(r.body).type === "ISP_AFTER_TRUST_UNBLOCK" && JSON.parse(r.body).data.id === c.id), 20_000);

    // Paid: ACTIVE again, the grace no longer matters.
    await status(c.id, "ACTIVE");
    expect((await get(`/api/contract/${c.id}`)).body.network.state).toBe("normal");
    expect((await setPolicy({})).status).toBe(200);
  });

  test("an external app's key may give it (the ERP, when the customer promises to pay)", async () => {
    const app = await must(t, admin.token, "POST", "/api/externalapp", { name: "erp-trust" });
    const c = await customer();
    await status(c.id, "SUSPENDED");
    expect((await setPolicy({ trust_unblock_days: 1 })).status).toBe(200);
    const res = await t.req("POST", `/api/contract/${c.id}/trust-unblock`, { apiKey: app.api_key });
    expect(res.status, res.text).toBe(200);
    expect(res.body.network.state).toBe("trusted");
    const change = (await history(c.id)).find((h) => h.action === "trust-unblock");
    expect(change).toMatchObject({ actor: "erp-trust", actor_app_id: app.id });
    expect((await setPolicy({})).status).toBe(200);
  });
});
