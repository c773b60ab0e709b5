// GET /api/isp/radius/authorize and GET /api/isp/layout/{id}/render/{contractId} through HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { addCorp, addUser, makeApp, startAndLogin, UNKNOWN_ID, type TestApp } from "../../support/helpers";
import { TEST_BACKEND } from "../../support/backend";
import { contractWith, mikrotikLayout, must } from "../../support/isp";

let t: TestApp;
let admin: { token: string; corpId: string };
let fx: Awaited<ReturnType<typeof mikrotikLayout>>;
let nas: any;
let active: Awaited<ReturnType<typeof contractWith>>;
const SECRET = "nas-secret-0001";
const NAS_IP = "192.0.2.10";
const basic = (corp: string, secret: string) => `Basic ${Buffer.from(`${corp}:${secret}`).toString("base64")}`;
const authorize = (q: Record<string, string>, headers: Record<string, string> = { authorization: basic("acme", SECRET) }) =>
  t.req("GET", `/api/isp/radius/authorize?${new URLSearchParams(q)}`, { headers });

beforeAll(async () => {
  t = await makeApp();
  admin = await startAndLogin(t);
  fx = await mikrotikLayout(t, admin.token);
  const pop = await must(t, admin.token, "POST", "/api/isp/pop", { name: "Centro" });
  nas = await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-centro", ip: NAS_IP, secret: SECRET, layout_id: fx.layout.id, pop_id: pop.id });
  active = await contractWith(t, admin.token, { username: "maria", password: "maria-pass", max_upload: "10M", max_download: "100M", pool_name_ipv4: "pppoe-v4" });
});
afterAll(() => t.close());

describe("GET /api/isp/radius/authorize", () => {
  test("an active contract with the right password gets its rendered layout", async () => {
    const res = await authorize({ username: "maria", password: "maria-pass", nas_ip: NAS_IP });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      "reply:Mikrotik-Rate-Limit": { op: ":=", value: "10M/100M", do_xlat: false },
      "reply:Framed-Pool": { op: ":=", value: "pppoe-v4", do_xlat: false },
    });
  });

  test("without a password (CHAP) the clear password goes to control:Cleartext-Password", async () => {
    for (const q of [{ username: "maria", nas_ip: NAS_IP }, { username: "maria", password: "", nas_ip: NAS_IP }] as Record<string, string>[]) {
      const res = await authorize(q);
      expect(res.status).toBe(200);
      expect(res.body["control:Cleartext-Password"]).toEqual({ op: ":=", value: "maria-pass", do_xlat: false });
      expect(res.body["reply:Mikrotik-Rate-Limit"].value).toBe("10M/100M");
    }
  });

  test("a wrong password is 401; an unknown user name is 404", async () => {
    const wrong = await authorize({ username: "maria", password: "maria-pasS", nas_ip: NAS_IP });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("content-type")).toContain("application/problem+json");
    expect((await authorize({ username: "nobody", password: "x", nas_ip: NAS_IP })).status).toBe(404);
  });

  test("a contract that is not ACTIVE is 401, and authorized again once active", async () => {
    const c = await contractWith(t, admin.token, { username: "joao", password: "joao-pass", max_upload: "1M", max_download: "2M" });
    expect((await authorize({ username: "joao", password: "joao-pass", nas_ip: NAS_IP })).status).toBe(200);
    await must(t, admin.token, "PUT", `/api/contract/${c.contract.id}/inactive`);
    const res = await authorize({ username: "joao", password: "joao-pass", nas_ip: NAS_IP });
    expect(res.status).toBe(401);
    expect(res.body.detail).toContain("not active");
    await must(t, admin.token, "PUT", `/api/contract/${c.contract.id}/active`);
    expect((await authorize({ username: "joao", password: "joao-pass", nas_ip: NAS_IP })).status).toBe(200);
  });

  test("an inactive NAS, an inactive layout or a NAS without one is 401", async () => {
    const q = { username: "maria", password: "maria-pass", nas_ip: NAS_IP };
    await must(t, admin.token, "PUT", `/api/isp/nas/${nas.id}/inactive`);
    expect((await authorize(q)).status).toBe(401);
    await must(t, admin.token, "PUT", `/api/isp/nas/${nas.id}/active`);
    await must(t, admin.token, "PUT", `/api/isp/layout/${fx.layout.id}/inactive`);
    const off = await authorize(q);
    expect(off.status).toBe(401);
    expect(off.body.detail).toContain("layout");
    await must(t, admin.token, "PUT", `/api/isp/layout/${fx.layout.id}/active`);
    const bare = await must(t, admin.token, "POST", "/api/isp/nas", { name: "no-layout", ip: "192.0.2.11", secret: SECRET });
    expect((await authorize({ ...q, nas_ip: "192.0.2.11" })).status).toBe(401);
    await t.req("DELETE", `/api/isp/nas/${bare.id}`, { token: admin.token });
    expect((await authorize(q)).status).toBe(200);
  });

  test("a change committed by another connection (a second process) applies at once", async () => {
    const q = { username: "maria", password: "maria-pass", nas_ip: NAS_IP };
    expect((await authorize(q)).status).toBe(200);
    // PostgreSQL: t.sqlWrite is itself another connection (another node's).
    const other = TEST_BACKEND === "pg" ? t.sqlWrite(admin.corpId) : new Database(t.sql(admin.corpId).filename);
    // As a real second process would: wait for the service's own write (an authorize records its
    // attempt) rather than fail at once with SQLITE_BUSY.
    if (TEST_BACKEND !== "pg") other.run("PRAGMA busy_timeout = 5000");
    try {
      other.run("UPDATE isp_nas SET status = 0 WHERE id = ?", [nas.id]);
      expect((await authorize(q)).status).toBe(401);
      other.run("UPDATE isp_nas SET status = 1 WHERE id = ?", [nas.id]);
      expect((await authorize(q)).status).toBe(200);
      other.run("UPDATE isp_layout_attributes SET value = 'x-{{contract.config.max_upload}}' WHERE layout_id = ? AND attribute_id = ?", [fx.layout.id, fx.rate.id]);
      expect((await authorize(q)).body["reply:Mikrotik-Rate-Limit"].value).toBe("x-10M");
      other.run("UPDATE isp_layout_attributes SET value = '{{contract.config.max_upload}}/{{contract.config.max_download}}' WHERE layout_id = ? AND attribute_id = ?", [fx.layout.id, fx.rate.id]);
      expect((await authorize(q)).body["reply:Mikrotik-Rate-Limit"].value).toBe("10M/100M");
    } finally {
      other.close();
    }
  });

  test("an inactive RADIUS attribute is left out; an attribute rendering empty or half-filled too", async () => {
    const half = await contractWith(t, admin.token, { username: "rui", password: "rui-pass", max_upload: "5M" });
    expect((await authorize({ username: "rui", password: "rui-pass", nas_ip: NAS_IP })).body).toEqual({});
    expect(half.contract.id).toBeTruthy();
    const c = await contractWith(t, admin.token, { username: "ana", password: "ana-pass", max_upload: "5M", max_download: "50M" });
    const res = await authorize({ username: "ana", password: "ana-pass", nas_ip: NAS_IP });
    // no pool_name_ipv4: Framed-Pool renders empty and is left out
    expect(Object.keys(res.body)).toEqual(["reply:Mikrotik-Rate-Limit"]);
    await must(t, admin.token, "PUT", `/api/isp/radius-attribute/${fx.rate.id}/inactive`);
    const none = await authorize({ username: "ana", password: "ana-pass", nas_ip: NAS_IP });
    expect(none.status).toBe(200);
    expect(none.body).toEqual({});
    await must(t, admin.token, "PUT", `/api/isp/radius-attribute/${fx.rate.id}/active`);
    expect(c.contract.id).toBeTruthy();
  });

  test("401 for a missing credential, a user token, a wrong secret or corporation, an unknown NAS", async () => {
    const q = { username: "maria", password: "maria-pass", nas_ip: NAS_IP };
    expect((await authorize(q, {})).status).toBe(401);
    expect((await authorize(q, { authorization: `Bearer ${admin.token}` })).status).toBe(401);
    expect((await authorize(q, { authorization: basic("acme", "not-the-secret") })).status).toBe(401);
    expect((await authorize(q, { authorization: basic("ghost-corp", SECRET) })).status).toBe(401);
    expect((await authorize({ ...q, nas_ip: "192.0.2.200" })).status).toBe(401);
    expect((await authorize({ ...q, nas_ip: "not-an-ip" })).status).toBe(401);
    // without a credential it is 401 even when the query is invalid
    expect((await authorize({}, {})).status).toBe(401);
  });

  test("a BLOCKED corporation is 403 (rlm_rest: userlock), under maintenance 503 (fail)", async () => {
    const q = { username: "maria", password: "maria-pass", nas_ip: NAS_IP };
    const setStatus = async (status: "block" | "maintenance" | "enable") => {
      expect((await t.req("POST", `/api/corp/${admin.corpId}/${status}`, { token: admin.token })).status).toBe(200);
    };
    try {
      await setStatus("block");
      expect((await authorize(q)).status).toBe(403);
      await setStatus("maintenance");
      expect((await authorize(q)).status).toBe(503);
    } finally {
      await setStatus("enable");
    }
    expect((await authorize(q)).status).toBe(200);
  });

  test("a missing username or nas_ip is 400 naming it", async () => {
    const res = await authorize({ password: "x", nas_ip: NAS_IP });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("username");
    expect((await authorize({ username: "maria" })).body.errors[0].path).toBe("nas_ip");
  });

  test("an active external app's X-Api-Key works instead of the NAS secret; an inactive app's does not", async () => {
    const app = await must(t, admin.token, "POST", "/api/externalapp", { name: "radius-proxy" });
    const q = { username: "maria", password: "maria-pass", nas_ip: NAS_IP };
    const ok = await authorize(q, { "x-api-key": app.api_key });
    expect(ok.status).toBe(200);
    expect(ok.body["reply:Mikrotik-Rate-Limit"].value).toBe("10M/100M");
    expect((await authorize(q, { "x-api-key": `${app.api_key}x` })).status).toBe(401);
    expect((await authorize(q, { "x-api-key": `${app.api_key}.extra` })).status).toBe(401);
    await must(t, admin.token, "PUT", `/api/externalapp/${app.id}`, { name: "radius-proxy", status: false });
    expect((await authorize(q, { "x-api-key": app.api_key })).status).toBe(401);
  });

  test("a user name and a credential of another corporation never cross over", async () => {
    const beta = await addCorp(t, "beta-radius");
    const u = await addUser(t, beta, { services: ["platform.isp", "platform.contract", "platform.city", "platform.person"] });
    const fxb = await mikrotikLayout(t, u.token);
    await must(t, u.token, "POST", "/api/isp/nas", { name: "beta-bng", ip: NAS_IP, secret: "beta-secret-1", layout_id: fxb.layout.id });
    await contractWith(t, u.token, { username: "beto", password: "beto-pass", max_upload: "3M", max_download: "30M" });
    // acme's NAS credential does not find beta's user; beta's does not find acme's
    expect((await authorize({ username: "beto", password: "beto-pass", nas_ip: NAS_IP })).status).toBe(404);
    const betaAuth = { authorization: basic("beta-radius", "beta-secret-1") };
    expect((await authorize({ username: "maria", password: "maria-pass", nas_ip: NAS_IP }, betaAuth)).status).toBe(404);
    expect((await authorize({ username: "beto", password: "beto-pass", nas_ip: NAS_IP }, betaAuth)).body["reply:Mikrotik-Rate-Limit"].value).toBe("3M/30M");
  });
});

describe("GET /api/isp/layout/{id}/render/{contractId}", () => {
  test("renders the layout for the contract; nas_id fills nas.* and pop.*", async () => {
    const extra = await must(t, admin.token, "POST", "/api/isp/radius-attribute", { name: "NAS-Identifier", type: "string" });
    const secret = await must(t, admin.token, "POST", "/api/isp/radius-attribute", { name: "Cleartext-Password", type: "string" });
    const who = await must(t, admin.token, "POST", "/api/isp/radius-attribute", { name: "Reply-Message", type: "string" });
    const layout = await must(t, admin.token, "POST", "/api/isp/layout", { name: "render-test" });
    await must(t, admin.token, "POST", `/api/isp/layout/${layout.id}/attribute`, { attribute_id: fx.rate.id, value: "{{contract.config.max_upload}}/{{contract.config.max_download}}" });
    await must(t, admin.token, "POST", `/api/isp/layout/${layout.id}/attribute`, { attribute_id: extra.id, operator: "=", value: "{{nas.name}}@{{pop.name}} ({{nas.ip}})" });
    await must(t, admin.token, "POST", `/api/isp/layout/${layout.id}/attribute`, { attribute_id: secret.id, value: "{{contract.config.password}}" });
    await must(t, admin.token, "POST", `/api/isp/layout/${layout.id}/attribute`, { attribute_id: who.id, value: "Hello {{customer.display_name}}, contract {{contract.number}} is {{contract.contract_status}}" });
    await must(t, admin.token, "POST", `/api/isp/layout/${layout.id}/attribute`, { attribute_id: fx.pool.id, value: "{{contract.config.ipv6}}" });
    const res = await t.req("GET", `/api/isp/layout/${layout.id}/render/${active.contract.id}?nas_id=${nas.id}`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      layout_id: layout.id,
      contract_id: active.contract.id,
      attributes: [
        { name: "Mikrotik-Rate-Limit", operator: ":=", value: "10M/100M" },
        { name: "NAS-Identifier", operator: "=", value: `bng-centro@Centro (${NAS_IP})` },
        // the password is never shown outside the response that set it
        { name: "Cleartext-Password", operator: ":=", value: "********" },
        { name: "Reply-Message", operator: ":=", value: `Hello ${active.customer.display_name}, contract ${active.contract.number} is ACTIVE` },
        // contract.config.ipv6 is empty: left out
      ],
    });
    const noNas = await t.req("GET", `/api/isp/layout/${layout.id}/render/${active.contract.id}`, { token: admin.token });
    // without a NAS, nas.* and pop.* have no value: the attribute using them is left out
    expect(noNas.body.attributes.map((a: any) => a.name)).toEqual(["Mikrotik-Rate-Limit", "Cleartext-Password", "Reply-Message"]);
  });

  test("404 for an unknown layout or contract, 400 for an unknown nas_id, 401 and 403", async () => {
    const base = `/api/isp/layout/${fx.layout.id}/render/${active.contract.id}`;
    expect((await t.req("GET", `/api/isp/layout/${UNKNOWN_ID}/render/${active.contract.id}`, { token: admin.token })).status).toBe(404);
    expect((await t.req("GET", `/api/isp/layout/${fx.layout.id}/render/${UNKNOWN_ID}`, { token: admin.token })).status).toBe(404);
    const badNas = await t.req("GET", `${base}?nas_id=${UNKNOWN_ID}`, { token: admin.token });
    expect(badNas.status).toBe(400);
    expect(badNas.body.errors[0].path).toBe("nas_id");
    expect((await t.req("GET", `${base}?nas_id=nope`, { token: admin.token })).status).toBe(400);
    expect((await t.req("GET", base)).status).toBe(401);
    const plain = await addUser(t, admin.corpId, { services: ["platform.contract"] });
    expect((await t.req("GET", base, { token: plain.token })).status).toBe(403);
    const other = await addUser(t, await addCorp(t, "gamma-render"), { services: ["platform.isp"] });
    expect((await t.req("GET", base, { token: other.token })).status).toBe(404);
  });
});
