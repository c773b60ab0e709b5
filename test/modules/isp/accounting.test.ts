// POST /api/isp/radius/accounting through HTTP, as rlm_rest calls it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addCorp, addUser, makeApp, startAndLogin, type TestApp } from "../../support/helpers";

let t: TestApp;
let admin: { token: string; corpId: string };
let nasId: string;
const SECRET = "nas-secret-0001";
const basic = (corp: string, secret: string) => `Basic ${Buffer.from(`${corp}:${secret}`).toString("base64")}`;
const acct = (body: unknown, authorization = basic("acme", SECRET), headers: Record<string, string> = {}) =>
  t.req("POST", "/api/isp/radius/accounting", { body, headers: { authorization, ...headers } });
const typed = (attrs: Record<string, string | number>) =>
  Object.fromEntries(Object.entries(attrs).map(([k, v]) => [k, { type: typeof v === "number" ? "integer" : "string", value: [v] }]));
const rows = (sessionId: string) =>
  t.sql(admin.corpId).query("SELECT * FROM isp_radius_accounting WHERE session_id = ? ORDER BY received_at, rowid").all(sessionId) as any[];

beforeAll(async () => {
  t = await makeApp();
  admin = await startAndLogin(t);
  const res = await t.req("POST", "/api/isp/nas", { token: admin.token, body: { name: "bng-1", ip: "192.0.2.10", secret: SECRET } });
  nasId = res.body.id;
});
afterAll(() => t.close());

describe("POST /api/isp/radius/accounting", () => {
  test("Start, a retransmitted Start, Interim-Update and Stop: three rows, 64-bit counters", async () => {
    const base = { "User-Name": "maria", "Acct-Session-Id": "sess-1", "NAS-IP-Address": "192.0.2.10", "Framed-IP-Address": "100.64.0.7" };
    const start = await acct(typed({ ...base, "Acct-Status-Type": "Start" }));
    expect(start.status).toBe(204);
    expect(start.text).toBe("");
    const again = await acct(typed({ ...base, "Acct-Status-Type": "Start", "Acct-Delay-Time": 3 }));
    expect(again.status).toBe(204);
    expect(rows("sess-1")).toHaveLength(1);
    await acct(typed({ ...base, "Acct-Status-Type": "Interim-Update", "Acct-Session-Time": 300, "Acct-Input-Octets": 1000, "Acct-Output-Octets": 2000 }));
    const stop = await acct(
      typed({ ...base, "Acct-Status-Type": "Stop", "Acct-Session-Time": 600, "Acct-Input-Octets": 5, "Acct-Input-Gigawords": 2, "Acct-Output-Octets": 7, "Acct-Terminate-Cause": "User-Request" }),
    );
    expect(stop.status).toBe(204);
    const r = rows("sess-1");
    expect(r.map((x) => x.status_type)).toEqual(["Start", "Interim-Update", "Stop"]);
    expect(r[0]).toMatchObject({ nas_id: nasId, nas_ip: "192.0.2.10", username: "maria", session_time: 0, framed_ip: "100.64.0.7" });
    expect(r[1]).toMatchObject({ session_time: 300, input_octets: 1000, output_octets: 2000 });
    expect(r[2]).toMatchObject({ session_time: 600, input_octets: 2 * 2 ** 32 + 5, output_octets: 7, terminate_cause: "User-Request" });
    expect(JSON.parse(r[2].attributes)["Acct-Input-Gigawords"]).toEqual([2]);
  });

  test("flat attributes and numeric status types are understood", async () => {
    const res = await acct({ "User-Name": "jo", "Acct-Session-Id": "flat-1", "NAS-IP-Address": "192.0.2.10", "Acct-Status-Type": 1, "Event-Timestamp": 1767225600 });
    expect(res.status).toBe(204);
    expect(rows("flat-1")[0]).toMatchObject({ status_type: "Start", event_at: "2026-01-01T00:00:00.000+00:00" });
  });

  test("Accounting-On is acknowledged and not stored", async () => {
    const res = await acct(typed({ "Acct-Status-Type": "Accounting-On", "NAS-IP-Address": "192.0.2.10" }));
    expect(res.status).toBe(204);
    const n = t.sql(admin.corpId).query("SELECT count(*) AS n FROM isp_radius_accounting WHERE status_type NOT IN ('Start','Stop','Interim-Update')").get() as { n: number };
    expect(n.n).toBe(0);
  });

  test("a record without User-Name or Acct-Session-Id is 400 naming them", async () => {
    const res = await acct(typed({ "Acct-Status-Type": "Start", "NAS-IP-Address": "192.0.2.10" }));
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: any) => e.path)).toEqual(["User-Name", "Acct-Session-Id"]);
    const noStatus = await acct(typed({ "User-Name": "x", "Acct-Session-Id": "y", "NAS-IP-Address": "192.0.2.10" }));
    expect(noStatus.body.errors[0].path).toBe("Acct-Status-Type");
    const arr = await acct([1, 2]);
    expect(arr.status).toBe(400);
  });

  test("401 without a credential, with a user token, a wrong secret, an unknown corporation or NAS, an inactive NAS", async () => {
    const body = typed({ "User-Name": "x", "Acct-Session-Id": "denied", "Acct-Status-Type": "Start", "NAS-IP-Address": "192.0.2.10" });
    expect((await t.req("POST", "/api/isp/radius/accounting", { body })).status).toBe(401);
    expect((await t.req("POST", "/api/isp/radius/accounting", { body, token: admin.token })).status).toBe(401);
    expect((await acct(body, basic("acme", "wrong-secret"))).status).toBe(401);
    expect((await acct(body, basic("nowhere", SECRET))).status).toBe(401);
    expect((await acct(body, "Basic !!!")).status).toBe(401);
    expect((await acct({ ...body, "NAS-IP-Address": { type: "ipaddr", value: ["192.0.2.99"] } })).status).toBe(401);
    await t.req("PUT", `/api/isp/nas/${nasId}/inactive`, { token: admin.token });
    const inactive = await acct(body);
    expect(inactive.status).toBe(401);
    expect(inactive.body.detail).toContain("inactive");
    await t.req("PUT", `/api/isp/nas/${nasId}/active`, { token: admin.token });
    expect(rows("denied")).toHaveLength(0);
  });

  test("another corporation's credential cannot write through this corporation's NAS", async () => {
    const beta = await addCorp(t, "beta-isp");
    const u = await addUser(t, beta, { services: ["platform.isp"] });
    // beta registers a NAS at the same address with its own secret
    expect((await t.req("POST", "/api/isp/nas", { token: u.token, body: { name: "beta-bng", ip: "192.0.2.10", secret: "beta-secret-1" } })).status).toBe(200);
    const body = typed({ "User-Name": "x", "Acct-Session-Id": "cross", "Acct-Status-Type": "Start", "NAS-IP-Address": "192.0.2.10" });
    expect((await acct(body, basic("beta-isp", SECRET))).status).toBe(401);
    expect((await acct(body, basic("acme", "beta-secret-1"))).status).toBe(401);
    expect((await acct(body, basic("beta-isp", "beta-secret-1"))).status).toBe(204);
    expect(rows("cross")).toHaveLength(0);
    const betaRows = t.sql(beta).query("SELECT count(*) AS n FROM isp_radius_accounting WHERE session_id = 'cross'").get() as { n: number };
    expect(betaRows.n).toBe(1);
  });

  test("a NAS that reuses an Acct-Session-Id after a restart: every record of both sessions is stored, retransmissions of either once", async () => {
    const T = 1767225600; // 2026-01-01T00:00:00Z
    const base = { "User-Name": "rita", "Acct-Session-Id": "81a00001", "NAS-IP-Address": "192.0.2.10" };
    const send = async (status: string, at: number, time?: number, extra: Record<string, string | number> = {}) =>
      expect((await acct(typed({ ...base, "Acct-Status-Type": status, "Event-Timestamp": at, ...(time === undefined ? {} : { "Acct-Session-Time": time }), ...extra }))).status).toBe(204);
    // The first session: Start, two interims, Stop.
    await send("Start", T);
    await send("Interim-Update", T + 300, 300);
    await send("Interim-Update", T + 600, 600);
    await send("Stop", T + 700, 700, { "Acct-Terminate-Cause": "Lost-Carrier" });
    // The NAS restarts and numbers its sessions from the same point: the same id, the same session times.
    await send("Start", T + 5000);
    await send("Start", T + 5000, undefined, { "Acct-Delay-Time": 5 }); // a retransmission of the new Start
    await send("Interim-Update", T + 5300, 300);
    await send("Interim-Update", T + 5300, 300, { "Acct-Delay-Time": 2 }); // and of its interim
    await send("Interim-Update", T + 600, 600, { "Acct-Delay-Time": 4400 }); // a late retransmission of the first session's
    await send("Stop", T + 5700, 700, { "Acct-Terminate-Cause": "User-Request" });
    const r = rows("81a00001");
    expect(r.map((x) => [x.status_type, x.session_time, x.event_at.slice(11, 19)])).toEqual([
      ["Start", 0, "00:00:00"],
      ["Interim-Update", 300, "00:05:00"],
      ["Interim-Update", 600, "00:10:00"],
      ["Stop", 700, "00:11:40"],
      ["Start", 0, "01:23:20"],
      ["Interim-Update", 300, "01:28:20"],
      ["Stop", 700, "01:35:00"],
    ]);
    const sessions = (await t.req("GET", "/api/isp/session?acct_session_id=81a00001&sort=started_at", { token: admin.token })).body.items;
    expect(sessions.map((s: any) => [s.state, s.started_at, s.stopped_at, s.session_time, s.terminate_cause])).toEqual([
      ["closed", "2026-01-01T00:00:00.000+00:00", "2026-01-01T00:11:40.000+00:00", 700, "Lost-Carrier"],
      ["closed", "2026-01-01T01:23:20.000+00:00", "2026-01-01T01:35:00.000+00:00", 700, "User-Request"],
    ]);
    // Each record names its session.
    expect(r.map((x) => x.radius_session_id)).toEqual([...Array(4).fill(sessions[0].id), ...Array(3).fill(sessions[1].id)]);
  });

  test("records arriving together are all stored", async () => {
    const sends = Array.from({ length: 20 }, (_, i) =>
      acct(typed({ "User-Name": `u${i}`, "Acct-Session-Id": "burst", "Acct-Status-Type": "Interim-Update", "Acct-Session-Time": i, "NAS-IP-Address": "192.0.2.10" })),
    );
    const statuses = (await Promise.all(sends)).map((r) => r.status);
    expect(new Set(statuses)).toEqual(new Set([204]));
    expect(rows("burst")).toHaveLength(20);
  });

  test("records of several sessions arriving together (one batch): each session folded in its order, a retransmission among them once, the NAS's count right", async () => {
    const sessions = ["b-1", "b-2", "b-3", "b-4", "b-5"];
    const base = (sid: string) => ({ "User-Name": "maria", "Acct-Session-Id": sid, "NAS-IP-Address": "192.0.2.10" });
    const interim = (sid: string) => ({ ...base(sid), "Acct-Status-Type": "Interim-Update", "Acct-Session-Time": 300, "Acct-Input-Octets": 100, "Event-Timestamp": 1767225900 });
    const bodies = sessions.flatMap((sid) => [
      { ...base(sid), "Acct-Status-Type": "Start", "Event-Timestamp": 1767225600 },
      interim(sid),
      interim(sid),
      { ...base(sid), "Acct-Status-Type": "Stop", "Acct-Session-Time": 600, "Acct-Input-Octets": 250, "Event-Timestamp": 1767226200 },
    ]);
    // One session left open, in the same batch.
    bodies.push({ ...base("b-open"), "Acct-Status-Type": "Start", "Event-Timestamp": 1767225600 });
    const online = async () => (await t.req("GET", `/api/isp/nas/${nasId}`, { token: admin.token })).body.online;
    const before = await online();
    const answers = await Promise.all(bodies.map((b) => acct(typed(b))));
    expect(answers.map((a) => a.status)).toEqual(bodies.map(() => 204));
    for (const sid of sessions) {
      expect(rows(sid).map((r) => r.status_type).sort()).toEqual(["Interim-Update", "Start", "Stop"]);
      const s = t.sql(admin.corpId).query("SELECT open, session_time, input_bytes FROM isp_radius_sessions WHERE acct_session_id = ?").all(sid);
      expect(s).toEqual([{ open: 0, session_time: 600, input_bytes: 250 }]);
    }
    expect(await online()).toBe(before + 1);
  });

  test("a record refused inside a batch fails alone: the records that arrived with it are stored", async () => {
    const base = { "User-Name": "ana", "NAS-IP-Address": "192.0.2.10", "Acct-Status-Type": "Start" };
    // PostgreSQL's text cannot hold U+0000 (a 400 there, its batch stored again record by record); SQLite's can.
    const bodies = [...["ok-1", "ok-2"].map((sid) => ({ ...base, "Acct-Session-Id": sid })), { ...base, "Acct-Session-Id": "nul\u0000" }, { ...base, "Acct-Session-Id": "ok-3" }];
    const answers = await Promise.all(bodies.map((b) => acct(typed(b))));
    expect([answers[0].status, answers[1].status, answers[3].status]).toEqual([204, 204, 204]);
    expect([204, 400]).toContain(answers[2].status);
    for (const sid of ["ok-1", "ok-2", "ok-3"]) expect(rows(sid)).toHaveLength(1);
  });

  test("extreme and non-finite numbers in any attribute are never a 500 (an Event-Timestamp outside the calendar gives way to the arrival time)", async () => {
    const failures: string[] = [];
    let n = 0;
    for (const attr of ["Event-Timestamp", "Acct-Session-Time", "Acct-Input-Octets", "Acct-Input-Gigawords", "Acct-Output-Packets", "Acct-Status-Type", "Framed-IP-Address"]) {
      for (const literal of ["1e308", "-1e308", "1e400", "-1e400", "-0", "9007199254740993", "123456789012345678901234567890", "1e-400"]) {
        const session = `extreme-${n++}`;
        const base = JSON.stringify({ "User-Name": "x", "Acct-Session-Id": session, "NAS-IP-Address": "192.0.2.10", "Acct-Status-Type": "Start", [attr]: 0 });
        const res = await t.req("POST", "/api/isp/radius/accounting", { raw: base.replace(`"${attr}":0`, `"${attr}":${literal}`), headers: { authorization: basic("acme", SECRET) } });
        if (res.status >= 500 || (res.status !== 204 && res.status !== 400)) failures.push(`${attr}=${literal}: ${res.status} ${res.text.slice(0, 120)}`);
        const outside = !(Number(literal) >= 0 && Number(literal) <= 253402300799);
        if (attr === "Event-Timestamp" && outside && res.status === 204 && rows(session)[0]?.event_at !== rows(session)[0]?.received_at) failures.push(`${attr}=${literal}: event_at ${rows(session)[0]?.event_at}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
