// The realtime socket over a real listening server and the WebSocket client: tickets, handshake,
// permission filtering, and the 4401 close when the session ends.
// source-only: moves the app's clock and listens with the in-process app.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addUser, makeApp, startAndLogin, type TestApp } from "../../support/helpers";
import { emit, FAST, manualClock, waitFor } from "../../support/webhooks";
import { SocketHub } from "../../../src/modules/socket/hub";

let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
let port: number;
const clock = manualClock();

beforeAll(async () => {
  t = await makeApp({ env: { CORPADMIN_PUBLIC_URL: "https://admin.example.net" }, options: { now: clock.now, dispatchTuning: FAST } });
  admin = await startAndLogin(t);
  t.app.listen({ port: 0, hostname: "127.0.0.1" });
  port = t.app.server!.port!;
});
afterAll(async () => {
  await t.app.stop(true);
  await t.close();
});

async function ticketOf(token: string): Promise<string> {
  const res = await t.req("GET", "/api/user/socket", { token });
  expect(res.status).toBe(200);
  return res.body.ticket;
}

interface Open {
  ws: WebSocket;
  messages: string[];
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens a socket; rejects when the handshake is refused. */
function connect(ticket: string): Promise<Open> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/socket?ticket=${encodeURIComponent(ticket)}`);
    const messages: string[] = [];
    let opened = false;
    const closed = new Promise<{ code: number; reason: string }>((res) => {
      ws.onclose = (e) => {
        res({ code: e.code, reason: e.reason });
        if (!opened) reject(new Error(`refused (${e.code})`));
      };
    });
    ws.onmessage = (e) => messages.push(String(e.data));
    ws.onopen = () => {
      opened = true;
      resolve({ ws, messages, closed });
    };
  });
}

/** The handshake as raw HTTP, to read the status a refused upgrade answers with. */
async function handshakeStatus(ticket: string | null): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/api/socket${ticket === null ? "" : `?ticket=${encodeURIComponent(ticket)}`}`, {
    headers: { upgrade: "websocket", connection: "Upgrade", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13" },
  });
  await res.body?.cancel();
  return res.status;
}

describe("GET /api/user/socket", () => {
  test("any valid token gets a 30 s ticket and the ws(s) URL of the socket", async () => {
    const u = await addUser(t, admin.corpId);
    const res = await t.req("GET", "/api/user/socket", { token: u.token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["expires_in", "ticket", "url"]);
    expect(res.body.expires_in).toBe(30);
    expect(res.body.ticket.length).toBeGreaterThanOrEqual(32);
    expect(res.body.url).toBe(`wss://admin.example.net/api/socket?ticket=${res.body.ticket}`);
    const again = await t.req("GET", "/api/user/socket", { token: u.token });
    expect(again.body.ticket).not.toBe(res.body.ticket);
  });

  test("401 without a token", async () => {
    expect((await t.req("GET", "/api/user/socket")).status).toBe(401);
  });
});

describe("GET /api/socket", () => {
  test("streams the corporation's events as {type, timestamp, data}, from the moment it opens", async () => {
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { before: true });
    await Bun.sleep(50);
    const s = await connect(await ticketOf(admin.token));
    const city = await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "Recife" });
    await emit(t, admin.corpId, "QRCODE_AFTER_DELETE", { name: "flyer" });
    await waitFor("two messages", () => s.messages.length >= 2, 20_000);
    expect(s.messages).toHaveLength(2);
    const [first, second] = s.messages.map((m) => JSON.parse(m));
    expect(Object.keys(first).sort()).toEqual(["data", "timestamp", "type"]);
    expect(first).toMatchObject({ type: "CITY_AFTER_INSERT", data: { id: city, name: "Recife" } });
    expect(second.type).toBe("QRCODE_AFTER_DELETE");
    s.ws.close();
  });

  test("another corporation's events never arrive", async () => {
    const { addCorp } = await import("../../support/helpers");
    const other = await addCorp(t, "initech");
    const s = await connect(await ticketOf(admin.token));
    await emit(t, other, "CITY_AFTER_INSERT", { theirs: true });
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { ours: true });
    await waitFor("our event", () => s.messages.length >= 1, 20_000);
    await Bun.sleep(100);
    expect(s.messages.map((m) => JSON.parse(m).data)).toEqual([expect.objectContaining({ ours: true })]);
    s.ws.close();
  });

  test("only the areas the user's permission covers: service in admin, or the area's list route in allow", async () => {
    const u = await addUser(t, admin.corpId, { services: ["platform.city"], actions: [`127.0.0.1:${port}/api/person/GET`, `127.0.0.1:${port}/api/product/{id}/GET`] });
    const s = await connect(await ticketOf(u.token));
    for (const type of ["PRODUCT_AFTER_INSERT", "CITY_AFTER_UPDATE", "CONTRACT_AFTER_INSERT", "PERSON_AFTER_DELETE", "QRCODE_AFTER_INSERT", "METRIC_AFTER_UPDATE", "EXTERNALAPP_AFTER_INSERT", "CITY_AFTER_DELETE"] as const) {
      await emit(t, admin.corpId, type, { type });
    }
    await waitFor("the last allowed event", () => s.messages.some((m) => JSON.parse(m).type === "CITY_AFTER_DELETE"), 20_000);
    expect(s.messages.map((m) => JSON.parse(m).type)).toEqual(["CITY_AFTER_UPDATE", "PERSON_AFTER_DELETE", "CITY_AFTER_DELETE"]);
    s.ws.close();
  });

  test("a RADIUS session's Start, Interim-Update and Stop, and a NAS restart, arrive as ISP_SESSION_* to those who may list sessions, once committed", async () => {
    const secret = "nas-secret-socket-1";
    expect((await t.req("POST", "/api/isp/nas", { token: admin.token, body: { name: "bng-socket", ip: "192.0.2.77", secret } })).status).toBe(200);
    const sessionReader = await addUser(t, admin.corpId, { actions: [`127.0.0.1:${port}/api/isp/session/GET`] });
    const cityReader = await addUser(t, admin.corpId, { services: ["platform.city"] });
    const [all, reader, other] = await Promise.all([admin.token, sessionReader.token, cityReader.token].map(async (token) => connect(await ticketOf(token))));
    const basic = `Basic ${Buffer.from(`acme:${secret}`).toString("base64")}`;
    const base = { "User-Name": "socket.user", "Acct-Session-Id": "sock-1", "NAS-IP-Address": "192.0.2.77" };
    for (const [status, time] of [["Start", 0], ["Interim-Update", 60], ["Stop", 120]] as const) {
      const res = await t.req("POST", "/api/isp/radius/accounting", { body: { ...base, "Acct-Status-Type": status, "Acct-Session-Time": time }, headers: { authorization: basic } });
      expect(res.status).toBe(204);
    }
    const sessionTypes = (o: Open) => o.messages.map((m) => JSON.parse(m)).filter((m) => m.type.startsWith("ISP_SESSION_"));
    await waitFor("the Stop on both sockets", () => [all, reader].every((o) => sessionTypes(o).some((m) => m.type === "ISP_SESSION_STOP")), 20_000);
    for (const o of [all, reader]) {
      expect(sessionTypes(o).map((m) => m.type)).toEqual(["ISP_SESSION_START", "ISP_SESSION_UPDATE", "ISP_SESSION_STOP"]);
      expect(sessionTypes(o)[0].data).toEqual({ nas_id: expect.any(String), acct_session_id: "sock-1", username: "socket.user", contract_id: null });
    }
    // The NAS restarts (Accounting-On): its open sessions are closed, and the sockets told so.
    const again = { ...base, "Acct-Session-Id": "sock-2" };
    expect((await t.req("POST", "/api/isp/radius/accounting", { body: { ...again, "Acct-Status-Type": "Start" }, headers: { authorization: basic } })).status).toBe(204);
    expect((await t.req("POST", "/api/isp/radius/accounting", { body: { "NAS-IP-Address": "192.0.2.77", "Acct-Status-Type": "Accounting-On" }, headers: { authorization: basic } })).status).toBe(204);
    await waitFor("the restart", () => sessionTypes(reader).some((m) => m.type === "ISP_SESSION_NAS_RESTART"), 20_000);
    expect(sessionTypes(reader).at(-1)).toMatchObject({ type: "ISP_SESSION_NAS_RESTART", data: { nas_id: sessionTypes(reader)[0].data.nas_id } });
    await Bun.sleep(100);
    expect(sessionTypes(other)).toEqual([]);
    for (const o of [all, reader, other]) o.ws.close();
  });

  test("a ticket is single use", async () => {
    const ticket = await ticketOf(admin.token);
    const s = await connect(ticket);
    expect(await handshakeStatus(ticket)).toBe(401);
    await expect(connect(ticket)).rejects.toThrow("refused");
    s.ws.close();
  });

  test("a ticket expires after 30 s", async () => {
    const fresh = await ticketOf(admin.token);
    const stale = await ticketOf(admin.token);
    clock.advance(29_000);
    const s = await connect(fresh);
    clock.advance(1_000);
    expect(await handshakeStatus(stale)).toBe(401);
    s.ws.close();
  });

  test("unknown or missing tickets are 401 before the upgrade", async () => {
    expect(await handshakeStatus("not-a-ticket")).toBe(401);
    expect(await handshakeStatus(null)).toBe(401);
    // A tampered ticket is not accepted either.
    const ticket = await ticketOf(admin.token);
    expect(await handshakeStatus(ticket.slice(0, -1) + (ticket.endsWith("A") ? "B" : "A"))).toBe(401);
  });

  test("a plain GET (no upgrade) is 426 and does not use the ticket up", async () => {
    const ticket = await ticketOf(admin.token);
    const plain = await fetch(`http://127.0.0.1:${port}/api/socket?ticket=${ticket}`);
    expect(plain.status).toBe(426);
    expect((await fetch(`http://127.0.0.1:${port}/api/socket?ticket=nope`)).status).toBe(401);
    const s = await connect(ticket);
    s.ws.close();
  });

  test("logout closes the socket with 4401; a ticket of a revoked session is refused", async () => {
    const u = await addUser(t, admin.corpId, { services: ["platform.city"] });
    const s = await connect(await ticketOf(u.token));
    const spare = await ticketOf(u.token);
    expect((await t.req("DELETE", "/api/logout", { token: u.token })).status).toBe(204);
    const closed = await Promise.race([s.closed, Bun.sleep(20_000).then(() => null)]);
    expect(closed?.code).toBe(4401);
    expect(await handshakeStatus(spare)).toBe(401);
  });

  test("the socket routes are in the OpenAPI document", async () => {
    const doc = (await (await fetch(`http://127.0.0.1:${port}/api/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    expect(doc.paths["/api/socket"]?.get).toBeDefined();
    expect(doc.paths["/api/user/socket"]?.get).toBeDefined();
  });
});

describe("GET /api/socket: an event between redeem and subscribe", () => {
  test("reaches the new socket although another socket of the corporation streamed it meanwhile", async () => {
    const a = await connect(await ticketOf(admin.token));
    // Forces the order: the event commits, and socket A's stream moves past it, after B's ticket
    // is redeemed (its `since` read) and before B's socket subscribes.
    const original = SocketHub.prototype.redeem;
    SocketHub.prototype.redeem = async function (this: SocketHub, ...args: Parameters<SocketHub["redeem"]>) {
      const client = await original.apply(this, args);
      await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "between-redeem-and-subscribe" });
      await waitFor("socket A to get the event", () => a.messages.some((m) => m.includes("between-redeem-and-subscribe")));
      return client;
    };
    let b: Open;
    try {
      b = await connect(await ticketOf(admin.token));
    } finally {
      SocketHub.prototype.redeem = original;
    }
    await waitFor("socket B to get the event", () => b.messages.some((m) => m.includes("between-redeem-and-subscribe")));
    // Socket A got it once.
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "after" });
    await waitFor("both to get the next", () => a.messages.some((m) => m.includes('"after"')) && b.messages.some((m) => m.includes('"after"')));
    expect(a.messages.filter((m) => m.includes("between-redeem-and-subscribe"))).toHaveLength(1);
    expect(b.messages.filter((m) => m.includes("between-redeem-and-subscribe"))).toHaveLength(1);
    a.ws.close();
    b.ws.close();
  });
});
