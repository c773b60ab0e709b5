// source-only: moves the app's clock (options.now) past a NAS's quiet window and runs the
// nas-health job every 50 ms.
// NAS health (routes.md, "Network operations additions": Nas.last_accounting_at, online, health;
// ISP_AFTER_NAS_QUIET / ISP_AFTER_NAS_BACK), through HTTP: a NAS that sends a Start and falls
// silent turns quiet after two interim intervals, the event reaches a webhook receiver once, its
// session is not shown stale while it is quiet (its NOC address gets one e-mail), and its next
// record brings it back (one event).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, sourceOnly, startAndLogin, type TestApp } from "../../support/helpers";
import { must } from "../../support/isp";
import { startInbox } from "../../support/smtp";
import { FAST, LOOPBACK_ALLOWED, receiver, waitFor } from "../../support/webhooks";

const SECRET = "nas-health-secret";
const METRICS_TOKEN = "metrics-token-nas-health";
let t: TestApp;
let admin: { token: string; corpId: string };
let offset = 0;
const hooks = receiver();
let inbox: Awaited<ReturnType<typeof startInbox>>;

const basic = `Basic ${Buffer.from(`acme:${SECRET}`).toString("base64")}`;
const acct = (attrs: Record<string, string | number>) =>
  t.req("POST", "/api/isp/radius/accounting", { body: { "NAS-IP-Address": "192.0.2.20", ...attrs }, headers: { authorization: basic } });
const get = (path: string) => t.req("GET", path, { token: admin.token });
const events = () => hooks.requests.map((r) => JSON.parse(r.body) as { type: string; data: { id: string; health: string; online: number } });
const gauge = async () => {
  const text = (await t.req("GET", "/metrics", { token: METRICS_TOKEN })).text;
  return text.split("\n").filter((l) => l.startsWith("corpadmin_nas{"));
};

beforeAll(async () => {
  inbox = await startInbox();
  t = await makeApp({
    env: { ...LOOPBACK_ALLOWED, ...inbox.env, CORPADMIN_METRICS_TOKEN: METRICS_TOKEN },
    options: { now: () => Date.now() + offset, dispatchTuning: { ...FAST, nasHealthMs: 50 } },
  });
  admin = await startAndLogin(t);
  await must(t, admin.token, "POST", "/api/webhook", { name: "noc", target: hooks.url(), email: "noc@example.net", groups: ["ISP_AFTER_NAS_QUIET", "ISP_AFTER_NAS_BACK"] });
  // The corporation's NOC address is told too.
  await must(t, admin.token, "PUT", `/api/corp/${admin.corpId}`, { auth_name: "acme", company_name: "ACME Telecom", timezone: "America/Sao_Paulo", noc_email: "noc-desk@acme.example" });
});
afterAll(async () => {
  await t.close();
  hooks.stop();
  await inbox.stop();
});

sourceOnly("NAS health", () => {
  test("unknown, ok, quiet (announced once; its sessions held online), back to ok on its next record (announced once)", async () => {
    const nas = await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-quiet", ip: "192.0.2.20", secret: SECRET });
    expect(nas).toMatchObject({ last_accounting_at: null, online: 0, health: "unknown" });
    await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-never", ip: "192.0.2.21", secret: SECRET });

    // An interim interval of 60 s: quiet after 120 s of silence, a session stale after 180 s.
    expect((await acct({ "Acct-Status-Type": "Start", "User-Name": "ana", "Acct-Session-Id": "q-1", "Acct-Interim-Interval": 60 })).status).toBe(204);
    expect((await acct({ "Acct-Status-Type": "Start", "User-Name": "bia", "Acct-Session-Id": "q-2", "Acct-Interim-Interval": 60 })).status).toBe(204);
    expect((await acct({ "Acct-Status-Type": "Stop", "User-Name": "bia", "Acct-Session-Id": "q-2", "Acct-Session-Time": 3, "Acct-Interim-Interval": 60 })).status).toBe(204);
    let view = (await get(`/api/isp/nas/${nas.id}`)).body;
    expect(view).toMatchObject({ online: 1, health: "ok" });
    expect(Date.now() - Date.parse(view.last_accounting_at)).toBeLessThan(10_000);
    const session = (await get(`/api/isp/nas/${nas.id}/sessions`)).body.items[0];
    expect(session).toMatchObject({ username: "ana", state: "online" });
    // The list answers health and online, filters and sorts by them.
    expect((await get("/api/isp/nas?health=ok")).body.items.map((n: { name: string }) => n.name)).toEqual(["bng-quiet"]);
    expect((await get("/api/isp/nas?health=unknown")).body.items.map((n: { name: string }) => n.name)).toEqual(["bng-never"]);
    expect((await get("/api/isp/nas?sort=-online")).body.items[0].name).toBe("bng-quiet");
    expect((await get("/api/isp/nas?health=bad")).status).toBe(400);
    await waitFor("the gauge", async () => (await gauge()).includes('corpadmin_nas{corp="acme",health="ok"} 1'));
    expect(await gauge()).toContain('corpadmin_nas{corp="acme",health="unknown"} 1');

    offset = 100_000;
    await Bun.sleep(200);
    expect((await get(`/api/isp/nas/${nas.id}`)).body.health).toBe("ok");
    expect(events()).toEqual([]);

    // 150 s of silence: quiet, and announced once however many passes run.
    offset = 150_000;
    expect((await get(`/api/isp/nas/${nas.id}`)).body.health).toBe("quiet");
    await waitFor("ISP_AFTER_NAS_QUIET", () => hooks.requests.length >= 1);
    // Past the session's own stale window (180 s): still online, the NAS is the one silent.
    offset = 400_000;
    await Bun.sleep(300);
    expect(events().map((e) => e.type)).toEqual(["ISP_AFTER_NAS_QUIET"]);
    expect(events()[0].data).toMatchObject({ id: nas.id, name: "bng-quiet", health: "quiet", online: 1 });
    const mail = await inbox.message(1);
    expect(mail.to).toEqual(["noc-desk@acme.example"]);
    expect(mail.text).toContain("NAS quiet: bng-quiet");
    // Quoted-printable: soft line breaks undone.
    expect(mail.text.replace(/=\r\n/g, "")).toContain("bng-quiet (192.0.2.20): 1 online sessions");
    expect((await get(`/api/isp/session/${session.id}`)).body.state).toBe("online");
    expect((await get(`/api/isp/nas/${nas.id}/sessions`)).body.total).toBe(1);
    expect((await get("/api/isp/session?state=stale")).body.total).toBe(0);
    expect((await get("/api/isp/nas?health=quiet")).body.total).toBe(1);
    await waitFor("the gauge", async () => (await gauge()).includes('corpadmin_nas{corp="acme",health="quiet"} 1'));

    // It speaks again (time goes on from the record's arrival): ok, announced once.
    offset = 0;
    expect((await acct({ "Acct-Status-Type": "Interim-Update", "User-Name": "ana", "Acct-Session-Id": "q-1", "Acct-Session-Time": 400, "Acct-Interim-Interval": 60 })).status).toBe(204);
    view = (await get(`/api/isp/nas/${nas.id}`)).body;
    expect(view).toMatchObject({ health: "ok", online: 1 });
    await waitFor("ISP_AFTER_NAS_BACK", () => hooks.requests.length >= 2);
    await Bun.sleep(300);
    expect(events().map((e) => e.type)).toEqual(["ISP_AFTER_NAS_QUIET", "ISP_AFTER_NAS_BACK"]);
    expect(inbox.messages.length).toBe(1);
    expect(events()[1].data).toMatchObject({ id: nas.id, health: "ok" });
    // Its sessions have a stale window again.
    offset = 200_000;
    expect((await get(`/api/isp/session/${session.id}`)).body.state).toBe("stale");
    offset = 0;
  });

  test("Accounting-On (the NAS restarted): no open session left, online 0, ok", async () => {
    const nas = (await get("/api/isp/nas?name=bng-quiet")).body.items[0];
    expect((await acct({ "Acct-Status-Type": "Start", "User-Name": "caio", "Acct-Session-Id": "q-3" })).status).toBe(204);
    expect((await get(`/api/isp/nas/${nas.id}`)).body.online).toBe(2);
    expect((await acct({ "Acct-Status-Type": "Accounting-On" })).status).toBe(204);
    expect((await get(`/api/isp/nas/${nas.id}`)).body).toMatchObject({ online: 0, health: "ok" });
    // Without sessions silence is no sign of trouble: never quiet.
    offset = 7_200_000;
    expect((await get(`/api/isp/nas/${nas.id}`)).body.health).toBe("ok");
    offset = 0;
  });

  test("the webhook groups are known: a webhook links them, an unknown ISP group is 400", async () => {
    const hook = await must(t, admin.token, "POST", "/api/webhook", { name: "isp-groups", target: hooks.url("/other"), email: "x@example.net" });
    expect((await t.req("POST", `/api/webhook/${hook.id}/group/ISP_AFTER_NAS_BACK`, { token: admin.token })).status).toBe(200);
    expect((await t.req("POST", `/api/webhook/${hook.id}/group/ISP_AFTER_NAS_GONE`, { token: admin.token })).status).toBe(400);
  });
});
