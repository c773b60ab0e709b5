// source-only: moves the app's clock (options.now) to make sessions stale and shortens the CoA retry interval.
// RADIUS sessions from accounting, RFC 5176 disconnect/CoA to a NAS stand-in on loopback (which
// decodes with the codec test/isp/rfc5176.test.ts proves against FreeRADIUS), pool usage and the
// authorize attempt log, all through HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addUser, makeApp, startAndLogin, UNKNOWN_ID, type TestApp } from "../../support/helpers";
import { testSqliteOnly } from "../../support/backend";
import { startResponder, type Answer } from "../../support/coa-harness";
import { contractWith, mikrotikLayout, must } from "../../support/isp";
import { decodeRequest, encodeResponse, type Packet } from "../../../src/modules/isp/rfc5176";
import { DEADLINE_MS } from "../../support/wait";

const SECRET = "nas-secret-0001";
let t: TestApp;
let admin: { token: string; corpId: string };
let clockOffset = 0;
let answer: (p: Packet) => Answer = () => ({ code: "Disconnect-ACK" });
let nas: Awaited<ReturnType<typeof startResponder>>;
let nasId: string;
let contractId: string;

const basic = `Basic ${Buffer.from(`acme:${SECRET}`).toString("base64")}`;
const acct = (attrs: Record<string, string | number>) =>
  t.req("POST", "/api/isp/radius/accounting", { body: { "NAS-IP-Address": "127.0.0.1", ...attrs }, headers: { authorization: basic } });
const get = (path: string, token = admin.token) => t.req("GET", path, { token });
const post = (path: string, token = admin.token) => t.req("POST", path, { token });
let n = 0;
/** Starts a session for `username` and returns its id. */
async function start(username: string, extra: Record<string, string | number> = {}) {
  const sid = `s-${++n}`;
  expect((await acct({ "Acct-Status-Type": "Start", "User-Name": username, "Acct-Session-Id": sid, ...extra })).status).toBe(204);
  const list = await get(`/api/isp/session?acct_session_id=${sid}`);
  return { sid, id: list.body.items[0].id as string };
}
async function until<T>(fn: () => T | undefined, ms = DEADLINE_MS): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await Bun.sleep(10);
  }
}
const auditRows = (action: string) =>
  t.sql().query("SELECT * FROM audit_log WHERE action = ? ORDER BY at, rowid").all(action) as { outcome: string; target: string; reason: string | null; actor_user_id: string | null }[];

beforeAll(async () => {
  nas = await startResponder(SECRET, (p) => answer(p));
  t = await makeApp({ options: { now: () => Date.now() + clockOffset, dispatchTuning: { coaRetryMs: 40 } } });
  admin = await startAndLogin(t);
  const { layout } = await mikrotikLayout(t, admin.token);
  nasId = (await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-1", ip: "127.0.0.1", secret: SECRET, coa_port: nas.port, layout_id: layout.id })).id;
  const c = await contractWith(t, admin.token, { username: "maria", password: "maria-pass", max_upload: "10M", max_download: "20M", pool_name_ipv4: "pool-a", ipv4: "100.64.0.3" });
  contractId = c.contract.id;
});
afterAll(async () => {
  await t.close();
  nas.stop();
});

describe("GET /api/isp/session; GET /api/isp/session/{id}: RADIUS sessions", () => {
  test("Start, Interim-Update and Stop make one session: online, then closed, 64-bit counters", async () => {
    const { sid, id } = await start("maria", { "Framed-IP-Address": "100.64.0.7", "Calling-Station-Id": "AA:BB:CC:00:11:22" });
    const online = await get(`/api/isp/session/${id}`);
    expect(online.status).toBe(200);
    expect(online.body).toMatchObject({ nas_id: nasId, nas_name: "bng-1", acct_session_id: sid, username: "maria", contract_id: contractId, framed_ip: "100.64.0.7", state: "online", stopped_at: null });
    await acct({ "Acct-Status-Type": "Interim-Update", "User-Name": "maria", "Acct-Session-Id": sid, "Acct-Session-Time": 300, "Acct-Input-Octets": 10, "Acct-Input-Gigawords": 1, "Acct-Output-Packets": 9 });
    expect((await get(`/api/isp/session/${id}`)).body).toMatchObject({ state: "online", session_time: 300, input_bytes: 2 ** 32 + 10, output_packets: 9 });
    await acct({ "Acct-Status-Type": "Stop", "User-Name": "maria", "Acct-Session-Id": sid, "Acct-Session-Time": 600, "Acct-Output-Octets": 77, "Acct-Terminate-Cause": "User-Request" });
    const closed = (await get(`/api/isp/session/${id}`)).body;
    expect(closed).toMatchObject({ state: "closed", session_time: 600, output_bytes: 77, input_bytes: 2 ** 32 + 10, terminate_cause: "User-Request" });
    expect(closed.stopped_at).not.toBeNull();
    expect(closed).not.toHaveProperty("stale_at");
    // A late Interim-Update after the Stop reopens nothing.
    await acct({ "Acct-Status-Type": "Interim-Update", "User-Name": "maria", "Acct-Session-Id": sid, "Acct-Session-Time": 450 });
    expect((await get(`/api/isp/session/${id}`)).body.state).toBe("closed");
  });

  test("Accounting-On (the NAS restarted) closes its open sessions; an id it reuses afterwards is a new session", async () => {
    const sid = `reused-${++n}`;
    const T = 1767225600; // 2026-01-01T00:00:00Z
    await acct({ "Acct-Status-Type": "Start", "User-Name": "reuse", "Acct-Session-Id": sid, "Event-Timestamp": T });
    await acct({ "Acct-Status-Type": "Interim-Update", "User-Name": "reuse", "Acct-Session-Id": sid, "Acct-Session-Time": 600, "Event-Timestamp": T + 600 });
    const other = await start("reuse-2");
    expect((await acct({ "Acct-Status-Type": "Accounting-On", "Event-Timestamp": T + 1000 })).status).toBe(204);
    const closed = (await get(`/api/isp/session?acct_session_id=${sid}`)).body.items[0];
    expect(closed).toMatchObject({ state: "closed", stopped_at: "2026-01-01T00:16:40.000+00:00", terminate_cause: "NAS-Reboot" });
    expect((await get(`/api/isp/session/${other.id}`)).body.state).toBe("closed");
    // After the reboot the NAS numbers sessions from the start again: its Start (session time 0, as
    // the old one's) began after the old session's Stop, so it opens a new session.
    await acct({ "Acct-Status-Type": "Start", "User-Name": "reuse", "Acct-Session-Id": sid, "Event-Timestamp": T + 2000 });
    expect((await get(`/api/isp/session?acct_session_id=${sid}`)).body.items.map((s: { state: string }) => s.state)).toEqual(["online", "closed"]);
    await acct({ "Acct-Status-Type": "Interim-Update", "User-Name": "reuse", "Acct-Session-Id": sid, "Acct-Session-Time": 300, "Event-Timestamp": T + 2300 });
    // A late retransmission of the first session's Interim-Update (its start is before the reboot) is not a new session.
    await acct({ "Acct-Status-Type": "Interim-Update", "User-Name": "reuse", "Acct-Session-Id": sid, "Acct-Session-Time": 240, "Acct-Delay-Time": 900, "Event-Timestamp": T + 240 });
    const list = (await get(`/api/isp/session?acct_session_id=${sid}`)).body.items;
    expect(list.map((s: { state: string; session_time: number; started_at: string }) => [s.state, s.session_time, s.started_at])).toEqual([
      ["online", 300, "2026-01-01T00:33:20.000+00:00"],
      ["closed", 600, "2026-01-01T00:00:00.000+00:00"],
    ]);
  });

  test("a session whose Start was lost is opened by its Interim-Update, dated back by its session time", async () => {
    const sid = `lost-${++n}`;
    await acct({ "Acct-Status-Type": "Interim-Update", "User-Name": "joao", "Acct-Session-Id": sid, "Acct-Session-Time": 3600, "Event-Timestamp": 1767229200 });
    const s = (await get(`/api/isp/session?acct_session_id=${sid}`)).body.items[0];
    expect(s).toMatchObject({ started_at: "2026-01-01T00:00:00.000+00:00", state: "online", contract_id: null });
  });

  test("stale: after 15 minutes without a record, or 3 interim intervals when the NAS sent one", async () => {
    const plain = await start("stale-a");
    const timed = await start("stale-b", { "Acct-Interim-Interval": 60 });
    clockOffset = 4 * 60_000;
    expect((await get(`/api/isp/session/${plain.id}`)).body.state).toBe("online");
    expect((await get(`/api/isp/session/${timed.id}`)).body.state).toBe("stale");
    clockOffset = 16 * 60_000;
    expect((await get(`/api/isp/session/${plain.id}`)).body.state).toBe("stale");
    const stale = (await get("/api/isp/session?state=stale&limit=500")).body.items.map((s: { id: string }) => s.id);
    expect(stale).toContain(plain.id);
    clockOffset = 0;
  });

  test("a layout that hands out Acct-Interim-Interval sets the stale window of its NAS's sessions", async () => {
    const attr = await must(t, admin.token, "POST", "/api/isp/radius-attribute", { name: "Acct-Interim-Interval", type: "integer" });
    const layout = await must(t, admin.token, "POST", "/api/isp/layout", { name: "interim-120" });
    await must(t, admin.token, "POST", `/api/isp/layout/${layout.id}/attribute`, { attribute_id: attr.id, operator: ":=", value: "120" });
    await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-interim", ip: "127.0.0.2", secret: SECRET, layout_id: layout.id });
    expect((await acct({ "NAS-IP-Address": "127.0.0.2", "Acct-Status-Type": "Start", "User-Name": "interim-user", "Acct-Session-Id": "int-1" })).status).toBe(204);
    const s = (await get("/api/isp/session?acct_session_id=int-1")).body.items[0];
    clockOffset = 5 * 60_000;
    expect((await get(`/api/isp/session/${s.id}`)).body.state).toBe("online");
    clockOffset = 7 * 60_000;
    expect((await get(`/api/isp/session/${s.id}`)).body.state).toBe("stale");
    clockOffset = 0;
  });

  test("list: filters by state, contract, NAS, username, time; default sort -started_at; bad input 400", async () => {
    const a = await start("lister");
    await Bun.sleep(2);
    const b = await start("lister");
    const list = await get("/api/isp/session?username=lister");
    expect(list.status).toBe(200);
    expect(list.body.items.map((s: { id: string }) => s.id)).toEqual([b.id, a.id]);
    expect((await get(`/api/isp/session?contract_id=${contractId}&nas_id=${nasId}`)).body.items.every((s: { username: string }) => s.username === "maria")).toBe(true);
    expect((await get("/api/isp/session?state=online&username=lister")).body.total).toBe(2);
    expect((await get("/api/isp/session?state=closed&username=lister")).body.total).toBe(0);
    expect((await get("/api/isp/session?q=liste")).body.total).toBe(2);
    expect((await get("/api/isp/session?username=lister&from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z")).body.total).toBe(0);
    expect((await get(`/api/isp/session?username=lister&from=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}`)).body.total).toBe(2);
    for (const bad of ["state=gone", "from=yesterday", "sort=nope", "from=2001-01-01T00:00:00Z&to=2000-01-01T00:00:00Z"]) {
      const res = await get(`/api/isp/session?${bad}`);
      expect(res.status).toBe(400);
      expect(res.body.type).toBe("urn:corpadmin:problem:validation");
    }
    expect((await get(`/api/isp/session/${UNKNOWN_ID}`)).status).toBe(404);
    expect((await t.req("GET", "/api/isp/session")).status).toBe(401);
  });

  test("list: pop_id keeps the sessions of its NAS, pool_id the open ones with an address in its network; malformed ids 400", async () => {
    const pop = await must(t, admin.token, "POST", "/api/isp/pop", { name: "POP Sul" });
    await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-sul", ip: "127.0.0.9", secret: SECRET, pop_id: pop.id });
    const pool = await must(t, admin.token, "POST", "/api/isp/pool", { name: "place-pool", version: 4, cidr: "100.70.0.0/30" });
    const south = await start("place-south", { "NAS-IP-Address": "127.0.0.9", "Framed-IP-Address": "100.70.0.2" });
    const north = await start("place-north", { "Framed-IP-Address": "100.70.0.9" });
    const ids = async (q: string) => (await get(`/api/isp/session?q=place&${q}`)).body.items.map((s: { id: string }) => s.id);
    expect(await ids(`pop_id=${pop.id}`)).toEqual([south.id]);
    expect(await ids(`pool_id=${pool.id}`)).toEqual([south.id]);
    expect(await ids(`pool_id=${pool.id}&pop_id=${pop.id}&state=online`)).toEqual([south.id]);
    expect(await ids(`pool_id=${UNKNOWN_ID}`)).toEqual([]);
    expect(await ids(`pop_id=${UNKNOWN_ID}`)).toEqual([]);
    expect((await ids("")).sort()).toEqual([south.id, north.id].sort());
    // A stopped session leaves the pool (its address is no longer in use).
    await acct({ "Acct-Status-Type": "Stop", "NAS-IP-Address": "127.0.0.9", "User-Name": "place-south", "Acct-Session-Id": south.sid, "Acct-Session-Time": 1 });
    expect(await ids(`pool_id=${pool.id}`)).toEqual([]);
    expect(await ids(`pop_id=${pop.id}`)).toEqual([south.id]);
    for (const bad of ["pop_id=nope", "pool_id=123"]) {
      const res = await get(`/api/isp/session?${bad}`);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.errors)).toContain(bad.split("=")[0]);
    }
    const doc = (await t.req("GET", "/api/openapi.json")).body;
    const params = doc.paths["/api/isp/session"].get.parameters.map((p: { name: string }) => p.name);
    expect(params).toEqual(expect.arrayContaining(["pop_id", "pool_id"]));
  });

  // SQLite-only: SQLite's query plan.
  testSqliteOnly("'online now' over 100,000 accounting records and sessions is an index search", async () => {
    const sqlite = t.sqlWrite(admin.corpId);
    const old = new Date(Date.now() - 86_400_000).toISOString();
    sqlite.transaction(() => {
      const a = sqlite.prepare(
        "INSERT INTO isp_radius_accounting (id, nas_id, nas_ip, username, session_id, status_type, session_time, event_at, received_at, attributes) VALUES (?, ?, '127.0.0.1', ?, ?, 'Stop', 60, ?, ?, '{}')",
      );
      const s = sqlite.prepare(
        "INSERT INTO isp_radius_sessions (id, nas_id, acct_session_id, username, started_at, updated_at, stopped_at, open, stale_at, received_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)",
      );
      for (let i = 0; i < 100_000; i++) {
        const id = `0190${String(i).padStart(8, "0")}-0000-7000-8000-000000000000`;
        a.run(id, nasId, `bulk-${i % 3000}`, `bulk-${i}`, old, old);
        s.run(id, nasId, `bulk-${i}`, `bulk-${i % 3000}`, old, old, old, old, old, old);
      }
    })();
    const plan = sqlite
      .query("EXPLAIN QUERY PLAN SELECT * FROM isp_radius_sessions WHERE open = 1 AND stale_at >= ? ORDER BY started_at DESC, id ASC LIMIT 50")
      .all(new Date().toISOString()) as { detail: string }[];
    expect(plan.map((p) => p.detail).join("\n")).toContain("USING INDEX isp_radius_sessions_open (open=? AND stale_at>?)");
    const online = await get("/api/isp/session?state=online&limit=500");
    expect(online.status).toBe(200);
    expect(online.body.items.every((s: { username: string }) => !s.username.startsWith("bulk-"))).toBe(true);
  });
});

describe("POST /api/isp/session/{id}/disconnect; POST /api/contract/{id}/disconnect: RFC 5176 disconnect", () => {
  test("ACK: the NAS gets NAS-IP-Address, User-Name, Acct-Session-Id and Framed-IP-Address; audited", async () => {
    answer = () => ({ code: "Disconnect-ACK" });
    const { sid, id } = await start("maria", { "Framed-IP-Address": "100.64.0.9" });
    const before = nas.received.length;
    const res = await post(`/api/isp/session/${id}/disconnect`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ session_id: id, kind: "disconnect", outcome: "ack", error_cause: null, attempts: 1 });
    const p = nas.received[before];
    expect(p.code).toBe("Disconnect-Request");
    expect(p.messageAuthenticator).toBe("valid");
    expect(p.attributes).toEqual([
      { name: "NAS-IP-Address", value: "127.0.0.1" },
      { name: "User-Name", value: "maria" },
      { name: "Acct-Session-Id", value: sid },
      { name: "Framed-IP-Address", value: "100.64.0.9" },
    ]);
    const audit = auditRows("isp.disconnect").at(-1)!;
    expect(audit).toMatchObject({ outcome: "success" });
    expect(audit.target).toContain(`session:${id}`);
    expect(audit.actor_user_id).not.toBeNull();
  });

  test("NAK keeps its Error-Cause; silence is a timeout after 3 attempts; both audited as failures", async () => {
    const { id } = await start("maria");
    answer = () => ({ code: "Disconnect-NAK", attributes: [{ name: "Error-Cause", value: 503 }] });
    const nak = await post(`/api/isp/session/${id}/disconnect`);
    expect(nak.body).toMatchObject({ outcome: "nak", error_cause: 503, attempts: 1 });
    expect(auditRows("isp.disconnect").at(-1)).toMatchObject({ outcome: "failure", reason: "nak Error-Cause 503 (Session-Context-Not-Found)" });
    answer = () => "silence";
    const before = nas.received.length;
    const timeout = await post(`/api/isp/session/${id}/disconnect`);
    expect(timeout.body).toMatchObject({ outcome: "timeout", error_cause: null, attempts: 3 });
    expect(nas.received.length - before).toBe(3);
    // A retransmission is the same packet (same Identifier and authenticator).
    expect(nas.received[before + 2].authenticator.equals(nas.received[before].authenticator)).toBe(true);
    expect(auditRows("isp.disconnect").at(-1)).toMatchObject({ outcome: "failure", reason: "timeout after 3 attempts" });
    answer = () => ({ code: "Disconnect-ACK" });
  });

  test("409 for a stopped session, 404 for an unknown one, 400 when the NAS has no secret stored", async () => {
    const { sid, id } = await start("maria");
    await acct({ "Acct-Status-Type": "Stop", "User-Name": "maria", "Acct-Session-Id": sid, "Acct-Session-Time": 5 });
    expect((await post(`/api/isp/session/${id}/disconnect`)).status).toBe(409);
    expect((await post(`/api/isp/session/${UNKNOWN_ID}/disconnect`)).status).toBe(404);
    expect((await post(`/api/isp/session/${UNKNOWN_ID}/disconnect`, "not-a-token")).status).toBe(401);

    // A NAS registered before secrets were kept encrypted: only its hash is there.
    const old = await must(t, admin.token, "POST", "/api/isp/nas", { name: "old-bng", ip: "192.0.2.77", secret: "old-secret-1" });
    t.sqlWrite(admin.corpId).query("UPDATE isp_nas SET secret_enc = NULL WHERE id = ?").run(old.id);
    await t.req("POST", "/api/isp/radius/accounting", {
      body: { "NAS-IP-Address": "192.0.2.77", "Acct-Status-Type": "Start", "User-Name": "on-old", "Acct-Session-Id": "old-1" },
      headers: { authorization: `Basic ${Buffer.from("acme:old-secret-1").toString("base64")}` },
    });
    const s = (await get("/api/isp/session?username=on-old")).body.items[0];
    const res = await post(`/api/isp/session/${s.id}/disconnect`);
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain("no secret stored; set it again");
    // Setting it again makes it usable (its secret is never in a response).
    const put = await t.req("PUT", `/api/isp/nas/${old.id}`, { token: admin.token, body: { name: "old-bng", ip: "192.0.2.77", secret: "old-secret-1" } });
    expect(put.body).not.toHaveProperty("secret_enc");
    expect(put.body.coa_port).toBe(3799);
    expect(JSON.stringify((await get(`/api/isp/nas/${old.id}`)).body)).not.toContain("old-secret-1");
    const enc = t.sql(admin.corpId).query("SELECT secret_enc FROM isp_nas WHERE id = ?").get(old.id) as { secret_enc: string };
    expect(enc.secret_enc).toStartWith("v1:");
    expect(enc.secret_enc).not.toContain("old-secret-1");
  });

  test("POST /api/contract/{id}/disconnect disconnects every open session of the contract", async () => {
    answer = () => ({ code: "Disconnect-ACK" });
    const c = await contractWith(t, admin.token, { username: "multi" });
    const a = await start("multi");
    const b = await start("multi");
    const res = await post(`/api/contract/${c.contract.id}/disconnect`);
    expect(res.status).toBe(200);
    expect(res.body.items.map((r: { session_id: string }) => r.session_id).sort()).toEqual([a.id, b.id].sort());
    expect(res.body.items.every((r: { outcome: string }) => r.outcome === "ack")).toBe(true);
    expect((await post(`/api/contract/${UNKNOWN_ID}/disconnect`)).status).toBe(404);
    const none = await contractWith(t, admin.token, { username: "offline" });
    expect((await post(`/api/contract/${none.contract.id}/disconnect`)).body).toEqual({ items: [] });
    const ispOnly = await addUser(t, admin.corpId, { services: ["platform.isp"] });
    expect((await post(`/api/contract/${c.contract.id}/disconnect`, ispOnly.token)).status).toBe(403);
  });

  test("at most 64 requests are in flight: the 65th waits for a slot", async () => {
    // A NAS that holds every request unanswered until the test lets it go, so the limit is seen by
    // what arrives, not by timing: 64 first attempts, then nothing until one is answered. Ports
    // are the requests' own sockets; the long retry interval keeps retransmissions out of the way.
    const held = new Map<number, Packet>();
    const answered = new Set<number>();
    let answerAll = false;
    const ack = (s: { send(b: Buffer, port: number, host: string): unknown }, port: number, p: Packet) => {
      answered.add(port);
      s.send(encodeResponse("Disconnect-ACK", p.identifier, [], SECRET, p.authenticator), port, "127.0.0.1");
    };
    const holding = await Bun.udpSocket({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        data(s, buf, port) {
          const p = decodeRequest(Buffer.from(buf), SECRET);
          if (!held.has(port)) held.set(port, p);
          if (answerAll || answered.has(port)) ack(s, port, p);
        },
      },
    });
    const slow = await makeApp({ options: { dispatchTuning: { coaRetryMs: 20_000 } } });
    try {
      const a = await startAndLogin(slow);
      await must(slow, a.token, "POST", "/api/isp/nas", { name: "holding", ip: "127.0.0.1", secret: SECRET, coa_port: holding.port });
      const c = await contractWith(slow, a.token, { username: "many" });
      for (let i = 0; i < 70; i++) {
        const res = await slow.req("POST", "/api/isp/radius/accounting", { body: { "NAS-IP-Address": "127.0.0.1", "Acct-Status-Type": "Start", "User-Name": "many", "Acct-Session-Id": `m-${i}` }, headers: { authorization: basic } });
        expect(res.status).toBe(204);
      }
      const pending = slow.req("POST", `/api/contract/${c.contract.id}/disconnect`, { token: a.token });
      await until(() => (held.size >= 64 ? true : undefined));
      await Bun.sleep(500);
      expect(held.size).toBe(64);

      const [firstPort, firstPacket] = [...held][0]!;
      ack(holding, firstPort, firstPacket);
      await until(() => (held.size >= 65 ? true : undefined));
      await Bun.sleep(200);
      expect(held.size).toBe(65);

      answerAll = true;
      for (const [port, p] of held) if (!answered.has(port)) ack(holding, port, p);
      const res = await pending;
      expect(res.status).toBe(200);
      expect(res.body.items).toHaveLength(70);
      expect(res.body.items.every((r: { outcome: string }) => r.outcome === "ack")).toBe(true);
      expect(held.size).toBe(70);
    } finally {
      await slow.close();
      holding.close();
    }
  }, 60_000);

  test("a contract made inactive has its sessions disconnected by the service", async () => {
    answer = () => ({ code: "Disconnect-ACK" });
    const c = await contractWith(t, admin.token, { username: "goes-inactive" });
    const { sid } = await start("goes-inactive");
    const res = await t.req("PUT", `/api/contract/${c.contract.id}/inactive`, { token: admin.token });
    expect(res.status).toBe(200);
    const p = await until(() => nas.received.find((r) => r.attributes.some((a) => a.value === sid)));
    expect(p.code).toBe("Disconnect-Request");
    await until(() => auditRows("isp.disconnect").find((r) => r.reason === "contract INACTIVE" && r.target.includes("goes-inactive")));
  });

  test("an alter to SUSPENDED, and an external app's upsert to CANCELLED, disconnect too", async () => {
    answer = () => ({ code: "Disconnect-ACK" });
    const c = await contractWith(t, admin.token, { username: "altered" });
    const { sid } = await start("altered");
    const body = { customer_id: c.customer.id, number: c.contract.number, start_date: "2025-01-01", total_value: 99.9, contract_status: "SUSPENDED", address: { line1: "Rua 1", city_id: c.city.id } };
    expect((await t.req("PUT", `/api/contract/${c.contract.id}`, { token: admin.token, body })).status).toBe(200);
    expect((await until(() => nas.received.find((r) => r.attributes.some((a) => a.value === sid)))).code).toBe("Disconnect-Request");

    const app = await must(t, admin.token, "POST", "/api/externalapp", { name: "erp-radius" });
    const city = { identity: "C-1", name: "Campinas", state: "SP", country: "BR" };
    const doc = (status: string) => ({
      identity: "EXT-1",
      customer: { identity: "P-1", name: "Ext Customer", address: { line1: "Rua 9", city } },
      number: "EXT-0001",
      start_date: "2025-01-01",
      total_value: 10,
      contract_status: status,
      address: { line1: "Rua 9", city },
    });
    const created = await t.req("POST", "/api/contract/create/externalapp/name/erp-radius", { apiKey: app.api_key, body: doc("ACTIVE") });
    expect(created.status).toBe(200);
    await must(t, admin.token, "POST", `/api/contract/${created.body.id}/config`, { username: "from-erp" });
    const ext = await start("from-erp");
    expect((await t.req("POST", "/api/contract/create/externalapp/name/erp-radius", { apiKey: app.api_key, body: doc("CANCELLED") })).status).toBe(200);
    expect((await until(() => nas.received.find((r) => r.attributes.some((a) => a.value === ext.sid)))).code).toBe("Disconnect-Request");
    // No actor for a change an external app made; the cause says why.
    await until(() => auditRows("isp.disconnect").find((r) => r.reason === "contract CANCELLED" && r.actor_user_id === null));
  });

  test("a speed change sends a CoA-Request with the re-rendered layout; a password change sends nothing", async () => {
    answer = (p) => ({ code: p.code === "CoA-Request" ? "CoA-ACK" : "Disconnect-ACK" });
    const c = await contractWith(t, admin.token, { username: "gets-faster", password: "pass-0001", max_upload: "5M", max_download: "10M", pool_name_ipv4: "pool-a" });
    const { sid } = await start("gets-faster", { "Framed-IP-Address": "100.64.0.5" });
    const config = { username: "gets-faster", max_upload: "50M", max_download: "100M", pool_name_ipv4: "pool-a" };
    expect((await t.req("POST", `/api/contract/${c.contract.id}/config`, { token: admin.token, body: config })).status).toBe(200);
    // The CoA carrying the new rate: the reconcile of the contract's first config may still be on
    // its way when the session starts (seen on PostgreSQL in CI) and send the first rate.
    const coa = await until(() => nas.received.find((r) => r.code === "CoA-Request" && r.attributes.some((a) => a.value === sid) && r.attributes.some((a) => a.value === "50M/100M")));
    expect(coa.attributes).toEqual([
      { name: "NAS-IP-Address", value: "127.0.0.1" },
      { name: "User-Name", value: "gets-faster" },
      { name: "Acct-Session-Id", value: sid },
      { name: "Framed-IP-Address", value: "100.64.0.5" },
      { name: "Mikrotik-Rate-Limit", value: "50M/100M" },
      { name: "Framed-Pool", value: "pool-a" },
    ]);
    await until(() => auditRows("isp.coa").find((r) => r.outcome === "success" && r.target.includes("gets-faster")));
    const count = nas.received.length;
    expect((await t.req("POST", `/api/contract/${c.contract.id}/config`, { token: admin.token, body: { ...config, password: "pass-0002" } })).status).toBe(200);
    await Bun.sleep(200);
    expect(nas.received.length).toBe(count);
  });

  test("a partial config (one speed) keeps the other settings, and its CoA-Request carries the whole rate (issue 29)", async () => {
    answer = (p) => ({ code: p.code === "CoA-Request" ? "CoA-ACK" : "Disconnect-ACK" });
    const c = await contractWith(t, admin.token, { username: "partial-speed", password: "pass-0001", max_upload: "5M", max_download: "10M", pool_name_ipv4: "pool-a" });
    const { sid } = await start("partial-speed", { "Framed-IP-Address": "100.64.0.9" });
    const res = await t.req("POST", `/api/contract/${c.contract.id}/config`, { token: admin.token, body: { max_download: "200M" } });
    expect(res.status).toBe(200);
    expect(res.body.config).toMatchObject({ max_upload: "5M", max_download: "200M", pool_name_ipv4: "pool-a" });
    const coa = await until(() => nas.received.find((r) => r.code === "CoA-Request" && r.attributes.some((a) => a.value === sid) && r.attributes.some((a) => a.value === "5M/200M")));
    expect(coa.attributes).toContainEqual({ name: "Mikrotik-Rate-Limit", value: "5M/200M" });
    expect(coa.attributes).toContainEqual({ name: "Framed-Pool", value: "pool-a" });
  });
});

describe("GET /api/isp/pool/{id}/usage: pool usage", () => {
  test("size counts every IPv4 address; used counts online sessions' and contracts' addresses inside it", async () => {
    const pool = await must(t, admin.token, "POST", "/api/isp/pool", { name: "cgnat-a", version: 4, cidr: "100.64.0.0/29" });
    expect(pool).toMatchObject({ size: 8 });
    const { sid } = await start("pool-user", { "Framed-IP-Address": "100.64.0.6" });
    const usage = await get(`/api/isp/pool/${pool.id}/usage`);
    expect(usage.status).toBe(200);
    expect(usage.body.size).toBe(8);
    const items = usage.body.items as { address: string; source: string; id: string }[];
    expect(items).toContainEqual(expect.objectContaining({ address: "100.64.0.6", source: "session" }));
    expect(items).toContainEqual({ address: "100.64.0.3", source: "contract", id: contractId });
    expect(items.some((i) => i.address === "100.64.0.200")).toBe(false);
    expect(usage.body.used).toBe(new Set(items.map((i) => i.address)).size);
    expect((await get(`/api/isp/pool/${pool.id}`)).body.used).toBe(usage.body.used);
    await acct({ "Acct-Status-Type": "Stop", "User-Name": "pool-user", "Acct-Session-Id": sid, "Acct-Session-Time": 1 });
    expect((await get(`/api/isp/pool/${pool.id}/usage`)).body.items.some((i: { address: string }) => i.address === "100.64.0.6")).toBe(false);
    const v6 = await must(t, admin.token, "POST", "/api/isp/pool", { name: "v6-a", version: 6, cidr: "2001:db8::/48" });
    expect(v6).toMatchObject({ size: null, used: 0 });
    expect((await get(`/api/isp/pool/${UNKNOWN_ID}/usage`)).status).toBe(404);
  });
});

describe("GET /api/isp/radius/attempts: RADIUS authorize attempts", () => {
  const authorize = (username: string, password: string, nasIp = "127.0.0.1") =>
    t.req("GET", `/api/isp/radius/authorize?username=${username}&password=${password}&nas_ip=${nasIp}`, { headers: { authorization: basic } });

  test("accept, reject (with its reason) and notfound are listed newest first; no password is kept", async () => {
    expect((await authorize("maria", "maria-pass")).status).toBe(200);
    expect((await authorize("maria", "wrong-pass-77")).status).toBe(401);
    expect((await authorize("nobody-here", "x")).status).toBe(404);
    expect((await authorize("maria", "maria-pass", "192.0.2.99")).status).toBe(401);
    const list = await get("/api/isp/radius/attempts");
    expect(list.status).toBe(200);
    expect(list.body.items.slice(0, 4).map((a: { outcome: string; reason: string }) => [a.outcome, a.reason])).toEqual([
      ["reject", "nas-unknown"],
      ["notfound", "user-unknown"],
      ["reject", "bad-password"],
      ["accept", "ok"],
    ]);
    expect(list.body.items[2]).toMatchObject({ username: "maria", nas_id: nasId, nas_ip: "127.0.0.1" });
    expect(list.body.items[0].nas_id).toBeNull();
    expect((await get("/api/isp/radius/attempts?outcome=notfound")).body.items.every((a: { outcome: string }) => a.outcome === "notfound")).toBe(true);
    expect((await get("/api/isp/radius/attempts?username=maria&outcome=reject")).body.total).toBe(2);
    expect((await get(`/api/isp/radius/attempts?username=maria&outcome=reject&nas_id=${nasId}`)).body.total).toBe(1);
    expect((await get("/api/isp/radius/attempts?from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z")).body.total).toBe(0);
    const dump = JSON.stringify(t.sql(admin.corpId).query("SELECT * FROM isp_radius_attempts").all());
    expect(dump).not.toContain("wrong-pass-77");
    expect(dump).not.toContain("maria-pass");
    for (const bad of ["outcome=maybe", "from=soon", "sort=password"]) expect((await get(`/api/isp/radius/attempts?${bad}`)).status).toBe(400);
    expect((await t.req("GET", "/api/isp/radius/attempts")).status).toBe(401);
    const noIsp = await addUser(t, admin.corpId, { services: ["platform.city"] });
    expect((await get("/api/isp/radius/attempts", noIsp.token)).status).toBe(403);
  });
});
