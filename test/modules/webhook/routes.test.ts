// The 10 Webhook rows: success, 400 naming the field, 401, 403, 404 (unknown and other tenant).
import { beforeAll, describe, expect, test } from "bun:test";
import { EVENT_GROUPS } from "../../../src/core/events";
import { addCorp, addUser, adminIn, makeApp, startAndLogin, UNKNOWN_ID, openApp } from "../../support/helpers";
import { scenarios } from "../../support/scenario";
import { LOOPBACK_ALLOWED, receiver, verifyStandardWebhook, waitFor } from "../../support/webhooks";

const { t, admin } = await openApp();
let cityUser: { token: string };
let otherCorpHookId: string;

const body = (o: Record<string, unknown> = {}) => ({ name: "ERP", target: "https://erp.example.net/hooks", email: "ops@example.net", ...o });

beforeAll(async () => {
  cityUser = await addUser(t, admin.corpId, { services: ["platform.city"] });
  const other = await addCorp(t, "globex");
  otherCorpHookId = (await adminIn(t, other, "POST", "/api/webhook", body({ name: "theirs" }))).body.id;
});

async function create(o: Record<string, unknown> = {}) {
  const res = await t.req("POST", "/api/webhook", { token: admin.token, body: body(o) });
  expect(res.status).toBe(200);
  return res.body;
}

describe("POST /api/webhook", () => {
  test("creates with its groups and returns the secret this once", async () => {
    const res = await t.req("POST", "/api/webhook", { token: admin.token, body: body({ groups: ["CONTRACT_AFTER_INSERT", "CITY_AFTER_DELETE", "CONTRACT_AFTER_INSERT"], log_enabled: true, body_content: '{"n":"{{data.number}}"}' }) });
    expect(res.status).toBe(200);
    expect(res.headers.get("location")).toBe(`/api/webhook/${res.body.id}`);
    expect(Object.keys(res.body).sort()).toEqual(["body_content", "created_at", "email", "groups", "id", "log_enabled", "name", "secret", "status", "target", "updated_at"]);
    expect(res.body).toMatchObject({ name: "ERP", target: "https://erp.example.net/hooks", email: "ops@example.net", log_enabled: true, status: true, body_content: '{"n":"{{data.number}}"}' });
    expect(res.body.groups).toEqual(["CITY_AFTER_DELETE", "CONTRACT_AFTER_INSERT"]);
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(res.body.secret.slice(6), "base64").length).toBe(24);
    const shown = await t.req("GET", `/api/webhook/${res.body.id}`, { token: admin.token });
    expect(shown.status).toBe(200);
    expect(shown.body.secret).toBeUndefined();
    expect(shown.text).not.toContain(res.body.secret.slice(6));
  });

  test("defaults: no groups, log off, body_content null, active", async () => {
    const w = await create();
    expect(w).toMatchObject({ groups: [], log_enabled: false, body_content: null, status: true });
  });

  test.each([
    ["unknown group", { groups: ["CITY_AFTER_INSERT", "CITY_BEFORE_INSERT"] }, "groups.1"],
    ["target not a URL", { target: "not a url" }, "target"],
    ["target not http(s)", { target: "ftp://example.net/x" }, "target"],
    ["email malformed", { email: "nope" }, "email"],
    ["name missing", { name: undefined }, "name"],
  ])("%s is 400 naming %s", async (_n, o, path) => {
    const res = await t.req("POST", "/api/webhook", { token: admin.token, body: body(o) });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  test("every group is accepted: the 21 of the record areas and the ISP ones", async () => {
    const w = await create({ groups: EVENT_GROUPS });
    expect(EVENT_GROUPS.filter((g) => !g.startsWith("ISP_")).length).toBe(21);
    expect([...w.groups].sort()).toEqual([...EVENT_GROUPS].sort());
  });
});

describe("GET /api/webhook; GET /api/webhook/{id}", () => {
  test("lists with q, filters and paging; another corporation's webhooks are not there", async () => {
    await create({ name: "Billing sink", target: "https://billing.example.org/in" });
    const all = await t.req("GET", "/api/webhook?limit=500", { token: admin.token });
    expect(all.status).toBe(200);
    expect(all.body.items.some((w: { name: string }) => w.name === "theirs")).toBe(false);
    for (const w of all.body.items) expect(w.secret).toBeUndefined();
    const q = await t.req("GET", "/api/webhook?q=BILLING", { token: admin.token });
    expect(q.body.items.map((w: { name: string }) => w.name)).toEqual(["Billing sink"]);
    const f = await t.req("GET", "/api/webhook?status=true&limit=1", { token: admin.token });
    expect(f.body.limit).toBe(1);
    expect(f.body.items.length).toBe(1);
    expect(f.body.total).toBe(all.body.total);
    expect((await t.req("GET", "/api/webhook?sort=secret", { token: admin.token })).status).toBe(400);
    expect((await t.req("GET", "/api/webhook?secret=x", { token: admin.token })).status).toBe(400);
  });

  test("a user allowed only the list route may list but not show", async () => {
    const u = await addUser(t, admin.corpId, { actions: ["localhost:80/api/webhook/GET"] });
    expect((await t.req("GET", "/api/webhook", { token: u.token })).status).toBe(200);
    const w = await create();
    expect((await t.req("GET", `/api/webhook/${w.id}`, { token: u.token })).status).toBe(403);
  });
});

describe("PUT /api/webhook/{id}", () => {
  test("replaces the writable fields; groups and status unchanged; left-out optionals reset", async () => {
    const w = await create({ groups: ["PERSON_AFTER_UPDATE"], body_content: "{{type}}", log_enabled: true });
    await t.req("PUT", `/api/webhook/${w.id}/inactive`, { token: admin.token });
    const res = await t.req("PUT", `/api/webhook/${w.id}`, { token: admin.token, body: { name: "Renamed", target: "http://10.0.0.5:8080/x", email: "new@example.net" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: w.id, name: "Renamed", target: "http://10.0.0.5:8080/x", email: "new@example.net", body_content: null, log_enabled: false, groups: ["PERSON_AFTER_UPDATE"], status: false });
    expect(res.body.secret).toBeUndefined();
  });
});

describe("POST|DELETE /api/webhook/{id}/group/{group}: group links", () => {
  test("link (twice is fine), unlink, unlink again 404; unknown group 400", async () => {
    const w = await create();
    const a = await t.req("POST", `/api/webhook/${w.id}/group/CONTRACT_AFTER_INSERT`, { token: admin.token });
    expect(a.status).toBe(200);
    expect(a.body.groups).toEqual(["CONTRACT_AFTER_INSERT"]);
    const again = await t.req("POST", `/api/webhook/${w.id}/group/CONTRACT_AFTER_INSERT`, { token: admin.token });
    expect(again.body.groups).toEqual(["CONTRACT_AFTER_INSERT"]);
    await t.req("POST", `/api/webhook/${w.id}/group/QRCODE_AFTER_DELETE`, { token: admin.token });
    const un = await t.req("DELETE", `/api/webhook/${w.id}/group/CONTRACT_AFTER_INSERT`, { token: admin.token });
    expect(un.status).toBe(200);
    expect(un.body.groups).toEqual(["QRCODE_AFTER_DELETE"]);
    expect((await t.req("DELETE", `/api/webhook/${w.id}/group/CONTRACT_AFTER_INSERT`, { token: admin.token })).status).toBe(404);
    const unknown = await t.req("POST", `/api/webhook/${w.id}/group/CONTRACT_BEFORE_INSERT`, { token: admin.token });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].path).toBe("group");
    expect((await t.req("DELETE", `/api/webhook/${w.id}/group/nope`, { token: admin.token })).status).toBe(400);
  });
});

describe("PUT /api/webhook/{id}/active|inactive; DELETE /api/webhook/{id}", () => {
  test("inactive then active", async () => {
    const w = await create();
    const off = await t.req("PUT", `/api/webhook/${w.id}/inactive`, { token: admin.token });
    expect(off.status).toBe(200);
    expect(off.body.status).toBe(false);
    const on = await t.req("PUT", `/api/webhook/${w.id}/active`, { token: admin.token });
    expect(on.body.status).toBe(true);
  });

  test("delete is 204, then 404", async () => {
    const w = await create();
    const res = await t.req("DELETE", `/api/webhook/${w.id}`, { token: admin.token });
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect((await t.req("GET", `/api/webhook/${w.id}`, { token: admin.token })).status).toBe(404);
    expect((await t.req("DELETE", `/api/webhook/${w.id}`, { token: admin.token })).status).toBe(404);
  });
});

describe("every webhook route: 400 naming the field, 401, 403, 404 unknown, malformed and other-tenant ids, each changing nothing", () => {
  const target = () => ({ t, corpId: admin.corpId, historyToken: admin.token });
  const token = () => admin.token;
  const city = () => cityUser.token;
  const refused = { expectEvents: [], expectHistory: [] };
  let hook = "";
  const mine = (path = "") => () => `/api/webhook/${hook}${path}`;
  const theirs = (path = "") => () => `/api/webhook/${otherCorpHookId}${path}`;
  scenarios(target, [
    { name: "arrange: a webhook (one Change, no event)", method: "POST", url: "/api/webhook", token, body: body(), expectStatus: 200, expectEvents: [], expectHistory: [{ target_type: "webhook", action: "create" }], check: (res) => (hook = res.body.id) },
    { name: "POST /api/webhook without a token: 401", method: "POST", url: "/api/webhook", body: body(), expectStatus: 401, ...refused },
    { name: "POST /api/webhook without platform.webhook: 403", method: "POST", url: "/api/webhook", token: city, body: body(), expectStatus: 403, ...refused },
    { name: "GET /api/webhook/{id} without a token: 401", method: "GET", url: mine(), expectStatus: 401 },
    { name: "GET /api/webhook/{id} without platform.webhook: 403", method: "GET", url: mine(), token: city, expectStatus: 403 },
    { name: "GET /api/webhook/{id} unknown: 404", method: "GET", url: `/api/webhook/${UNKNOWN_ID}`, token, expectStatus: 404 },
    { name: "GET /api/webhook/{id} malformed: 404", method: "GET", url: "/api/webhook/not-a-uuid", token, expectStatus: 404 },
    { name: "GET /api/webhook/{id} another tenant's: 404", method: "GET", url: theirs(), token, expectStatus: 404 },
    { name: "PUT /api/webhook/{id} with a bad field: 400 naming it", method: "PUT", url: mine(), token, body: body({ log_enabled: "yes" }), expectStatus: 400, expectErrorPaths: ["log_enabled"], ...refused },
    { name: "PUT /api/webhook/{id} without a token: 401", method: "PUT", url: mine(), body: body(), expectStatus: 401, ...refused },
    { name: "PUT /api/webhook/{id} without platform.webhook: 403", method: "PUT", url: mine(), token: city, body: body(), expectStatus: 403, ...refused },
    { name: "PUT /api/webhook/{id} unknown: 404", method: "PUT", url: `/api/webhook/${UNKNOWN_ID}`, token, body: body(), expectStatus: 404, ...refused },
    { name: "PUT /api/webhook/{id} another tenant's: 404", method: "PUT", url: theirs(), token, body: body(), expectStatus: 404, ...refused },
    { name: "POST …/group/{group} without a token: 401", method: "POST", url: mine("/group/CITY_AFTER_INSERT"), expectStatus: 401, ...refused },
    { name: "POST …/group/{group} without platform.webhook: 403", method: "POST", url: mine("/group/CITY_AFTER_INSERT"), token: city, expectStatus: 403, ...refused },
    { name: "DELETE …/group/{group} without platform.webhook: 403", method: "DELETE", url: mine("/group/CITY_AFTER_INSERT"), token: city, expectStatus: 403, ...refused },
    { name: "POST …/group/{group} of an unknown webhook: 404", method: "POST", url: `/api/webhook/${UNKNOWN_ID}/group/CITY_AFTER_INSERT`, token, expectStatus: 404, ...refused },
    { name: "POST …/group/{group} of another tenant's: 404", method: "POST", url: theirs("/group/CITY_AFTER_INSERT"), token, expectStatus: 404, ...refused },
    { name: "DELETE …/group/{group} of another tenant's: 404", method: "DELETE", url: theirs("/group/CITY_AFTER_INSERT"), token, expectStatus: 404, ...refused },
    ...(["active", "inactive"] as const).flatMap((p) => [
      { name: `PUT …/${p} without a token: 401`, method: "PUT", url: mine(`/${p}`), expectStatus: 401, ...refused },
      { name: `PUT …/${p} without platform.webhook: 403`, method: "PUT", url: mine(`/${p}`), token: city, expectStatus: 403, ...refused },
      { name: `PUT …/${p} unknown: 404`, method: "PUT", url: `/api/webhook/${UNKNOWN_ID}/${p}`, token, expectStatus: 404, ...refused },
      { name: `PUT …/${p} another tenant's: 404`, method: "PUT", url: theirs(`/${p}`), token, expectStatus: 404, ...refused },
    ]),
    { name: "DELETE /api/webhook/{id} without a token: 401", method: "DELETE", url: mine(), expectStatus: 401, ...refused },
    { name: "DELETE /api/webhook/{id} without platform.webhook: 403", method: "DELETE", url: mine(), token: city, expectStatus: 403, ...refused },
    { name: "DELETE /api/webhook/{id} another tenant's: 404", method: "DELETE", url: theirs(), token, expectStatus: 404, ...refused },
    { name: "GET …/deliveries with an unknown filter: 400", method: "GET", url: mine("/deliveries?webhook_id=x"), token, expectStatus: 400 },
    { name: "GET …/deliveries without a token: 401", method: "GET", url: mine("/deliveries"), expectStatus: 401 },
    { name: "GET …/deliveries without platform.webhook: 403", method: "GET", url: mine("/deliveries"), token: city, expectStatus: 403 },
    { name: "GET …/deliveries of an unknown webhook: 404", method: "GET", url: `/api/webhook/${UNKNOWN_ID}/deliveries`, token, expectStatus: 404 },
    { name: "GET …/deliveries of another tenant's: 404", method: "GET", url: theirs("/deliveries"), token, expectStatus: 404 },
    { name: "the webhook is as it was", method: "GET", url: mine(), token, expectStatus: 200, expectBody: { name: "ERP", status: true, groups: [] } },
  ]);
});

describe("GET /api/webhook/{id}/deliveries", () => {
  test("empty list shape", async () => {
    const w = await create({ log_enabled: true });
    const res = await t.req("GET", `/api/webhook/${w.id}/deliveries`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ items: [], page: 1, limit: 50, total: 0 });
  });
});

// The socket on a real connection with the service's own timings (socket.test.ts moves an in-process clock).
describe("GET /api/user/socket: then the socket", () => {
  test("a ticket opens the socket, which streams a write made through the API", async () => {
    const ticket = (await t.req("GET", "/api/user/socket", { token: admin.token })).body.ticket as string;
    const ws = new WebSocket(`${t.listen().replace("http:", "ws:")}/api/socket?ticket=${encodeURIComponent(ticket)}`);
    const messages: { type: string; data: { id: string } }[] = [];
    ws.onmessage = (e) => messages.push(JSON.parse(String(e.data)));
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onclose = (e) => reject(new Error(`refused (${e.code})`));
    });
    try {
      const city = (await t.req("POST", "/api/city", { token: admin.token, body: { name: "Socket City", state: "PE", country: "BR" } })).body;
      const got = await waitFor("the event on the socket", () => messages.find((m) => m.data?.id === city.id));
      expect(got.type).toBe("CITY_AFTER_INSERT");
    } finally {
      ws.close();
    }
  });
});

// A delivery with the service's own timings (delivery.test.ts shortens them in-process).
describe("POST /api/city: a write through the API reaches a webhook", () => {
  test("signed POST of the event to a receiver on loopback (allowed by --egress-allow)", async () => {
    const app = await makeApp({ env: LOOPBACK_ALLOWED });
    const r = receiver();
    try {
      const owner = await startAndLogin(app);
      const hook = (await app.req("POST", "/api/webhook", { token: owner.token, body: body({ target: r.url(), groups: ["CITY_AFTER_INSERT"] }) })).body;
      const city = (await app.req("POST", "/api/city", { token: owner.token, body: { name: "Hooked", state: "SP", country: "BR" } })).body;
      await waitFor("the delivery", () => r.requests.length === 1);
      const got = r.requests[0];
      expect(JSON.parse(got.body)).toMatchObject({ type: "CITY_AFTER_INSERT", data: { id: city.id, name: "Hooked" } });
      expect(await verifyStandardWebhook(hook.secret, got.headers, got.body, Date.now())).toBe(true);
    } finally {
      r.stop();
      await app.close();
    }
  });
});

describe("POST /api/webhook/{id}/test against a target the egress policy refuses", () => {
  test("loopback without --egress-allow: 200 with a failed delivery naming the policy; nothing reaches the receiver", async () => {
    const r = receiver();
    try {
      for (const target of [r.url(), r.url().replace("127.0.0.1", "localhost"), r.url().replace("127.0.0.1", "[::ffff:127.0.0.1]")]) {
        const hook = await create({ name: `loopback ${target}`, target });
        const res = await t.req("POST", `/api/webhook/${hook.id}/test`, { token: admin.token });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ type: "WEBHOOK_TEST", status: "failed", response_status: null });
        expect(res.body.error).toContain("egress policy");
        expect(JSON.stringify(res.body)).not.toContain(hook.secret);
      }
      await Bun.sleep(100);
      expect(r.requests).toHaveLength(0);
    } finally {
      r.stop();
    }
  });
});
