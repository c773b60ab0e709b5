// source-only: moves the app's clock (options.now) past a cycle's end and a grace's end, and holds
// the marks back (dispatchTuning) so that only the fair-use job can see a contract.
// The fair-use job (isp/fair-use.ts FairUseJob): what the marks missed, the restore at a cycle's
// start, and the end of a trust unblock's grace, each a Change of actor system:fair-use.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, startAndLogin, type TestApp } from "../../support/helpers";
import { contractWith, must } from "../../support/isp";

const SECRET = "nas-secret-fair-job";
const NAS_IP = "192.0.2.41";
const basic = `Basic ${Buffer.from(`acme:${SECRET}`).toString("base64")}`;
const DAY = 86_400_000;
let t: TestApp;
let admin: { token: string; corpId: string };
let offset = 0;

const get = (path: string) => t.req("GET", path, { token: admin.token });
const authorize = (username: string) => t.req("GET", `/api/isp/radius/authorize?${new URLSearchParams({ username, password: "pw-123456", nas_ip: NAS_IP })}`, { headers: { authorization: basic } });
async function acct(username: string, status: string, time: number, bytes: number) {
  const body = {
    "User-Name": username,
    "Acct-Session-Id": `s-${username}`,
    "NAS-IP-Address": NAS_IP,
    "Acct-Status-Type": status,
    "Event-Timestamp": Math.floor(Date.now() / 1000),
    "Acct-Session-Time": time,
    "Acct-Input-Octets": bytes,
  };
  const res = await t.req("POST", "/api/isp/radius/accounting", { body, headers: { authorization: basic } });
  if (res.status !== 204) throw new Error(`accounting: ${res.status} ${res.text}`);
}
/** One pass of the job, awaited. */
const sweep = () => t.ctx.jobs.get("fair-use")!.runOnce();
const state = async (id: string) => (await get(`/api/contract/${id}`)).body.network.state as string;
const changes = async (id: string, action: string) => ((await get(`/api/history?target_id=${id}&limit=100`)).body.items as any[]).filter((h) => h.action === action);

let n = 0;
async function customer(config: Record<string, unknown> = {}) {
  const username = `job-${++n}`;
  const c = await contractWith(t, admin.token, { username, password: "pw-123456", max_upload: "10M", max_download: "100M", ...config });
  return { id: c.contract.id as string, username, city: c.city };
}

beforeAll(async () => {
  t = await makeApp({ options: { now: () => Date.now() + offset, dispatchTuning: { fairUseCheckMs: 3_600_000, fairUseSweepMs: 3_600_000 } } });
  admin = await startAndLogin(t);
  const vendor = await must(t, admin.token, "POST", "/api/isp/manufacturer", { name: "MikroTik" });
  const rate = await must(t, admin.token, "POST", "/api/isp/radius-attribute", { name: "Mikrotik-Rate-Limit", manufacturer_id: vendor.id, type: "string" });
  const layout = await must(t, admin.token, "POST", "/api/isp/layout", { name: "effective", manufacturer_id: vendor.id });
  await must(t, admin.token, "POST", `/api/isp/layout/${layout.id}/attribute`, { attribute_id: rate.id, operator: ":=", value: "{{contract.effective.max_upload}}/{{contract.effective.max_download}}" });
  await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-job", ip: NAS_IP, secret: SECRET, layout_id: layout.id });
});
afterAll(() => t.close());

describe("the fair-use job", () => {
  test("finds a contract over its allowance that no mark announced, and restores it when the next cycle starts", async () => {
    const c = await customer({ allowance_gb: 0.000001, throttle_max_upload: "1M", throttle_max_download: "2M" });
    await acct(c.username, "Start", 0, 0);
    await acct(c.username, "Interim-Update", 60, 5_000);
    await Bun.sleep(200);
    // The marks wait an hour here: only the job can see it.
    expect(await state(c.id)).toBe("normal");
    await sweep();
    expect(await state(c.id)).toBe("throttled");
    expect((await authorize(c.username)).body["reply:Mikrotik-Rate-Limit"].value).toBe("1M/2M");
    expect(await changes(c.id, "throttle")).toHaveLength(1);
    // A second pass changes nothing.
    await sweep();
    expect(await changes(c.id, "throttle")).toHaveLength(1);

    // The next cycle starts (at most 31 days on): the usage is the new cycle's, none yet.
    offset = 32 * DAY;
    await sweep();
    const restored = await changes(c.id, "restore");
    expect(restored).toHaveLength(1);
    expect(restored[0]).toMatchObject({ actor: "system:fair-use", actor_user_id: null });
    expect((await authorize(c.username)).body["reply:Mikrotik-Rate-Limit"].value).toBe("10M/100M");
    offset = 0;
  });

  test("ends a trust unblock's grace: the contract is suspended again, a Change of system:fair-use", async () => {
    expect((await t.req("PUT", "/api/isp/policy", { token: admin.token, body: { suspended_mode: "reduce", suspended_max_upload: "256k", suspended_max_download: "512k", trust_unblock_days: 2 } })).status).toBe(200);
    const c = await customer();
    const view = (await get(`/api/contract/${c.id}`)).body;
    const suspend = await t.req("PUT", `/api/contract/${c.id}`, {
      token: admin.token,
      body: { customer_id: view.customer.id, number: view.number, start_date: "2025-01-01", total_value: 1, contract_status: "SUSPENDED", address: { line1: "Rua 1", city_id: c.city.id } },
    });
    expect(suspend.status).toBe(200);
    expect((await authorize(c.username)).body["reply:Mikrotik-Rate-Limit"].value).toBe("256k/512k");
    const given = await t.req("POST", `/api/contract/${c.id}/trust-unblock`, { token: admin.token });
    expect(given.status, given.text).toBe(200);
    expect((await authorize(c.username)).body["reply:Mikrotik-Rate-Limit"].value).toBe("10M/100M");
    // Still in the grace: the job leaves it.
    offset = DAY;
    await sweep();
    expect(await changes(c.id, "trust-end")).toHaveLength(0);
    offset = 3 * DAY;
    await sweep();
    const ended = await changes(c.id, "trust-end");
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ actor: "system:fair-use" });
    expect(ended[0].changes).toContainEqual({ field: "network.state", before: "trusted", after: "suspended" });
    offset = 0;
    expect(await state(c.id)).toBe("suspended");
    expect((await authorize(c.username)).body["reply:Mikrotik-Rate-Limit"].value).toBe("256k/512k");
    // Once per period (30 days by default): 3 days after, still refused.
    const again = await t.req("POST", `/api/contract/${c.id}/trust-unblock`, { token: admin.token });
    expect(again.status).toBe(409);
    expect((await t.req("PUT", "/api/isp/policy", { token: admin.token, body: {} })).status).toBe(200);
  });
});
