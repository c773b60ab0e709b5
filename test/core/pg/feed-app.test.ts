// source-only: node B's socket sweep is slowed through an in-process option, so that only the change feed can wake it.
// Two app nodes over one PostgreSQL database (cluster mode, issue 19): what node A commits reaches
// node B's caches and sockets through the change feed (src/core/pg/feed.ts, core/changes.ts), and a
// socket ticket issued on A opens on B; a session ended on A (logout, revocation, user inactivated
// or deleted) is refused on B, and super_admin changed on A holds on B. Each test first has B cache the old state, so that B
// answering the new one shows it was told; after their LISTEN connections are killed, B's caches
// resync (a change committed meanwhile is not notified to it). A burst of RADIUS accounting records
// through A reaches a socket on B as one ISP_SESSION_* each (their changes travel a few a NOTIFY).
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { addCorp, addUser, adminIn, type TestApp } from "../../support/helpers";
import { twoNodes } from "../../support/one-database";
import { waitFor } from "../../support/wait";

const { db, a, b, admin } = await twoNodes({ b: { options: { dispatchTuning: { socketCheckMs: 600_000 } } } });

/** Polls node B until `req` answers `status` (the feed is asynchronous: within a few ms normally). */
async function onB(status: number, req: () => ReturnType<TestApp["req"]>) {
  let last = 0;
  await waitFor(`node B to answer ${status} (last ${last})`, async () => (last = (await req()).status) === status);
}

describe("POST /api/corp/{id}/block: across nodes", () => {
  test("a corporation blocked on node A is refused on node B", async () => {
    const corpId = await addCorp(a, "feed-block");
    const u = await addUser(a, corpId, { services: ["platform.city"] });
    expect((await b.req("GET", "/api/city", { token: u.token })).status).toBe(200);
    expect((await a.req("POST", `/api/corp/${corpId}/block`, { token: admin.token })).status).toBe(200);
    // Read-your-writes on the writing node: no wait.
    expect((await a.req("GET", "/api/city", { token: u.token })).status).toBe(403);
    await onB(403, () => b.req("GET", "/api/city", { token: u.token }));
    expect((await b.req("GET", "/api/city", { token: u.token })).body.type).toBe("urn:corpadmin:problem:corp-blocked");
    expect((await a.req("POST", `/api/corp/${corpId}/enable`, { token: admin.token })).status).toBe(200);
    await onB(200, () => b.req("GET", "/api/city", { token: u.token }));
  });
});

describe("POST /api/corp/{id}/block: across nodes, the nodes' LISTEN connections killed", () => {
  test("a block committed before the nodes listen again reaches node B: its caches resync (or it was notified, had it listened again first)", async () => {
    const corpId = await addCorp(a, "feed-relisten");
    const u = await addUser(a, corpId, { services: ["platform.city"] });
    expect((await b.req("GET", "/api/city", { token: u.token })).status).toBe(200);
    const su = new SQL({ url: db.superuser, max: 1 });
    try {
      const killed = await su`SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`;
      expect(killed.length).toBeGreaterThanOrEqual(2);
    } finally {
      await su.close();
    }
    expect((await a.req("POST", `/api/corp/${corpId}/block`, { token: admin.token })).status).toBe(200);
    await onB(403, () => b.req("GET", "/api/city", { token: u.token }));
  }, 30_000);
});

describe("DELETE /api/workgroup/{id}/service/{serviceId}: across nodes", () => {
  test("a permission revoked on node A is refused on node B", async () => {
    const corpId = await addCorp(a, "feed-perm");
    const u = await addUser(a, corpId, { login: "feed-perm-user", services: ["platform.city"] });
    expect((await b.req("GET", "/api/city", { token: u.token })).status).toBe(200);
    const wg = (await adminIn(a, corpId, "GET", "/api/workgroup?name=wg-feed-perm-user")).body.items[0].id as string;
    const svc = (await adminIn(a, corpId, "GET", "/api/service?identifier=platform.city")).body.items[0].id as string;
    await adminIn(a, corpId, "DELETE", `/api/workgroup/${wg}/service/${svc}`);
    expect((await a.req("GET", "/api/city", { token: u.token })).status).toBe(403);
    await onB(403, () => b.req("GET", "/api/city", { token: u.token }));
  });
});

/**
 * Node B refuses `token` with 401 once A's NOTIFY dropped its kept session (normally within a few ms;
 * core/sessions.ts; nothing else would), having answered 200 first: so it had kept it.
 */
/** A socket opened on node B with `ticket`, open, and the messages it receives. */
async function socketOnB(ticket: string): Promise<{ ws: WebSocket; messages: string[] }> {
  const messages: string[] = [];
  const ws = new WebSocket(`${b.listen().replace(/^http/, "ws")}/api/socket?ticket=${encodeURIComponent(ticket)}`);
  ws.onmessage = (e) => messages.push(String(e.data));
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onclose = (e) => reject(new Error(`refused (${e.code})`));
  });
  return { ws, messages };
}

async function sessionEndsOnB(token: string, end: () => Promise<unknown>) {
  expect((await b.req("GET", "/api/city", { token })).status).toBe(200);
  await end();
  // Read-your-writes on the writing node: no wait.
  expect((await a.req("GET", "/api/city", { token })).status).toBe(401);
  let last = 0;
  await waitFor(`node B to refuse the session (last ${last})`, async () => (last = (await b.req("GET", "/api/city", { token })).status) === 401);
}

describe("DELETE /api/logout: across nodes", () => {
  test("a session logged out on node A is refused on node B", async () => {
    const u = await addUser(a, admin.corpId, { services: ["platform.city"] });
    await sessionEndsOnB(u.token, async () => expect((await a.req("DELETE", "/api/logout", { token: u.token })).status).toBe(204));
  });
});

describe("DELETE /api/user/{id}/sessions/{sessionId}: across nodes", () => {
  test("a session revoked on node A is refused on node B", async () => {
    const u = await addUser(a, admin.corpId, { services: ["platform.city"] });
    const sessionId = JSON.parse(Buffer.from(u.token.split(".")[1], "base64url").toString()).jti as string;
    await sessionEndsOnB(u.token, async () => expect((await a.req("DELETE", `/api/user/${u.userId}/sessions/${sessionId}`, { token: admin.token })).status).toBe(204));
  });
});

describe("PUT /api/user/{id}/inactive; DELETE /api/user/{id}: across nodes", () => {
  test("a user inactivated or deleted on node A is refused on node B", async () => {
    const off = await addUser(a, admin.corpId, { services: ["platform.city"] });
    await sessionEndsOnB(off.token, async () => expect((await a.req("PUT", `/api/user/${off.userId}/inactive`, { token: admin.token })).status).toBe(200));
    const gone = await addUser(a, admin.corpId, { services: ["platform.city"] });
    await sessionEndsOnB(gone.token, async () => expect((await a.req("DELETE", `/api/user/${gone.userId}`, { token: admin.token })).status).toBe(204));
  });
});

describe("PUT /api/user/{id}: across nodes", () => {
  test("super_admin granted and taken back on node A holds on node B", async () => {
    const u = await addUser(a, admin.corpId, { services: ["platform.city"] });
    const as = (superAdmin: boolean) => ({ name: u.login, email: `${u.login}@example.com`, login: u.login, super_admin: superAdmin });
    expect((await b.req("GET", "/api/corp", { token: u.token })).status).toBe(403);
    expect((await a.req("PUT", `/api/user/${u.userId}`, { token: admin.token, body: as(true) })).status).toBe(200);
    await waitFor("node B to see the grant", async () => (await b.req("GET", "/api/corp", { token: u.token })).status === 200);
    expect((await a.req("PUT", `/api/user/${u.userId}`, { token: admin.token, body: as(false) })).status).toBe(200);
    expect((await a.req("GET", "/api/corp", { token: u.token })).status).toBe(403);
    await waitFor("node B to see the revocation", async () => (await b.req("GET", "/api/corp", { token: u.token })).status === 403);
  });
});

describe("POST /api/auth/safe-ip/{domain}: across nodes", () => {
  test("a range added on node A fences the corporation's tokens on node B", async () => {
    const corpId = await addCorp(a, "feed-fenced");
    const u = await addUser(a, corpId, { services: ["platform.city"] });
    const outside = () => b.req("GET", "/api/city", { token: u.token, ip: "203.0.113.9" });
    expect((await outside()).status).toBe(200);
    expect((await a.req("POST", "/api/auth/safe-ip/feed-fenced", { token: admin.token, body: { range: "10.0.0.0/8" } })).status).toBe(200);
    await onB(403, outside);
    expect((await b.req("GET", "/api/city", { token: u.token, ip: "10.1.2.3" })).status).toBe(200);
  });
});

describe("PUT /api/qrcode/{id}; PUT /api/qrcode/{id}/inactive; GET /q/{slug}: across nodes", () => {
  test("a dynamic code changed on node A redirects to its new target on node B, and answers 410 once inactive", async () => {
    const body = { name: "flyer", kind: "dynamic", target: "https://example.com/old", slug: "feed-flyer" };
    const code = (await a.req("POST", "/api/qrcode", { token: admin.token, body })).body;
    const scan = () => b.req("GET", "/q/feed-flyer", { ip: "198.51.100.7" });
    const first = await scan();
    expect(first.status).toBe(302);
    expect(first.headers.get("location")).toBe("https://example.com/old");
    expect((await a.req("PUT", `/api/qrcode/${code.id}`, { token: admin.token, body: { ...body, target: "https://example.com/new" } })).status).toBe(200);
    await waitFor("the new target on node B", async () => (await scan()).headers.get("location") === "https://example.com/new");
    expect((await a.req("PUT", `/api/qrcode/${code.id}/inactive`, { token: admin.token })).status).toBe(200);
    await onB(410, scan);
  });
});

describe("GET /api/user/socket; GET /api/socket: across nodes", () => {
  test("a ticket node A issued opens a socket on node B, once; the socket streams an event written through node A", async () => {
    const ticket = (await a.req("GET", "/api/user/socket", { token: admin.token })).body.ticket as string;
    const { ws, messages } = await socketOnB(ticket);
    try {
      // Used on B: refused on A as on B.
      expect((await a.fetch(`/api/socket?ticket=${encodeURIComponent(ticket)}`)).status).toBe(401);
      // Past the hub's first look at the outbox (it reads its starting point when the socket opens and
      // looks once more after it): from then on, only a wake-up streams.
      await Bun.sleep(300);
      const city = (await a.req("POST", "/api/city", { token: admin.token, body: { name: "Recife", state: "PE", country: "BR" } })).body;
      await waitFor("the event on node B's socket", () => messages.length >= 1);
      expect(JSON.parse(messages[0])).toMatchObject({ type: "CITY_AFTER_INSERT", data: { id: city.id, name: "Recife" } });
    } finally {
      // Left open, it would keep the server's stop waiting.
      ws.close();
    }
  });
});

describe("POST /api/isp/radius/accounting; GET /api/socket: across nodes", () => {
  test("a burst of accounting records through node A (stored in batches) reaches a socket on node B as one ISP_SESSION_* per record", async () => {
    const secret = "nas-secret-feed-1";
    expect((await a.req("POST", "/api/isp/nas", { token: admin.token, body: { name: "bng-feed", ip: "192.0.2.90", secret } })).status).toBe(200);
    const { ws, messages } = await socketOnB((await b.req("GET", "/api/user/socket", { token: admin.token })).body.ticket as string);
    try {
      await Bun.sleep(300);
      const headers = { authorization: `Basic ${Buffer.from(`acme:${secret}`).toString("base64")}` };
      const ids = Array.from({ length: 120 }, (_, i) => `feed-burst-${i}`);
      // Sent at once: the records of a turn are one write, their changes a few NOTIFYs.
      const answers = await Promise.all(
        ids.map((id, i) =>
          a.req("POST", "/api/isp/radius/accounting", {
            body: { "User-Name": `feed.user.${i % 7}`, "Acct-Session-Id": id, "NAS-IP-Address": "192.0.2.90", "Acct-Status-Type": "Start", "Acct-Session-Time": 0 },
            headers,
          }),
        ),
      );
      expect(answers.map((r) => r.status)).toEqual(ids.map(() => 204));
      const starts = () => messages.map((m) => JSON.parse(m)).filter((m) => m.type === "ISP_SESSION_START");
      await waitFor("every Start on node B's socket", () => starts().length >= ids.length);
      await Bun.sleep(200);
      expect(starts().map((m) => m.data.acct_session_id).sort()).toEqual([...ids].sort());
      expect(starts()[0].data).toEqual({ nas_id: expect.any(String), acct_session_id: expect.any(String), username: expect.stringMatching(/^feed\.user\.\d$/), contract_id: null });
    } finally {
      ws.close();
    }
  });
});
