// source-only: drives the dispatcher's clock and retry timings (options.now, dispatchTuning).
// Webhook replay (routes.md, Operator additions): resend one delivery, recover the failed ones
// since an instant, send a test event; against real receivers on 127.0.0.1.
import { afterEach, describe, expect, test } from "bun:test";
import { addCorp, addUser, makeApp, startAndLogin, UNKNOWN_ID } from "../../support/helpers";
import { emit, FAST, LOOPBACK_ALLOWED, manualClock, receiver, verifyStandardWebhook, waitFor } from "../../support/webhooks";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const clock = manualClock();
  const t = await makeApp({ env: LOOPBACK_ALLOWED, options: { now: clock.now, dispatchTuning: { ...FAST, deliveryTimeoutMs: 15_000 } } });
  cleanups.push(() => t.close());
  const admin = await startAndLogin(t);
  const r = receiver();
  cleanups.push(() => r.stop());
  const hook = async (more: Record<string, unknown> = {}) => {
    const res = await t.req("POST", "/api/webhook", {
      token: admin.token,
      body: { name: "receiver", target: r.url(), email: "ops@example.net", groups: ["CITY_AFTER_INSERT"], log_enabled: true, ...more },
    });
    if (res.status !== 200) throw new Error(res.text);
    return res.body as { id: string; secret: string };
  };
  const deliveries = async (id: string) => (await t.req("GET", `/api/webhook/${id}/deliveries?sort=id`, { token: admin.token })).body.items as any[];
  return { t, admin, clock, r, hook, deliveries };
}

describe("POST /api/webhook/{id}/deliveries/{deliveryId}/resend: resend one delivery", () => {
  test("same webhook-id, same signing, a new attempt; 409 while pending and while the webhook is inactive", async () => {
    const { t, admin, clock, r, hook, deliveries } = await setup();
    const h = await hook();
    // 410 Gone fails the delivery at once and makes the webhook inactive.
    r.set(() => new Response("gone", { status: 410 }));
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "Curitiba" });
    const [failed] = await waitFor("the failed delivery", async () => {
      const d = await deliveries(h.id);
      return (d[0]?.status === "failed" && d) as any[] | false;
    }) as any[];
    expect(failed).toMatchObject({ attempts: 1, response_status: 410 });
    const url = `/api/webhook/${h.id}/deliveries/${failed.id}/resend`;

    const inactive = await t.req("POST", url, { token: admin.token });
    expect(inactive.status).toBe(409);
    expect(inactive.body.detail).toContain("inactive");
    expect((await t.req("PUT", `/api/webhook/${h.id}/active`, { token: admin.token })).status).toBe(200);

    // The receiver holds the resend until the test lets it go: meanwhile the delivery is pending.
    let release!: () => void;
    const held = new Promise<void>((res) => (release = res));
    r.set(async () => {
      await held;
      return new Response("ok");
    });
    const resent = await t.req("POST", url, { token: admin.token });
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ id: failed.id, event_id: failed.event_id, status: "pending", attempts: 1 });
    expect((await t.req("POST", url, { token: admin.token })).status).toBe(409);
    await waitFor("the resent request", () => r.requests.length === 2);
    release();
    const [done] = await waitFor("the resent delivery", async () => {
      const d = await deliveries(h.id);
      return (d[0]?.status === "succeeded" && d) as any[] | false;
    }) as any[];
    expect(done).toMatchObject({ attempts: 2, response_status: 200, error: null });
    const [first, second] = r.requests;
    expect(second.headers["webhook-id"]).toBe(first.headers["webhook-id"]);
    expect(second.headers["webhook-id"]).toBe(failed.event_id);
    expect(second.body).toBe(first.body);
    expect(await verifyStandardWebhook(h.secret, second.headers, second.body, clock.now())).toBe(true);
    // A succeeded delivery may be sent again too.
    expect((await t.req("POST", url, { token: admin.token })).status).toBe(200);
    await waitFor("the third request", () => r.requests.length === 3);
  });

  test("404 unknown webhook, unknown delivery, another webhook's delivery, malformed id; 401; 403; other corporation", async () => {
    const { t, admin, hook, deliveries } = await setup();
    const a = await hook();
    const b = await hook({ name: "other" });
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "Curitiba" });
    const [d] = await waitFor("a delivery", async () => {
      const rows = await deliveries(a.id);
      return (rows[0]?.status === "succeeded" && rows) as any[] | false;
    }) as any[];
    const post = (path: string, token?: string) => t.req("POST", path, { token });
    expect((await post(`/api/webhook/${UNKNOWN_ID}/deliveries/${d.id}/resend`, admin.token)).status).toBe(404);
    expect((await post(`/api/webhook/${a.id}/deliveries/${UNKNOWN_ID}/resend`, admin.token)).status).toBe(404);
    expect((await post(`/api/webhook/${b.id}/deliveries/${d.id}/resend`, admin.token)).status).toBe(404);
    expect((await post(`/api/webhook/${a.id}/deliveries/not-a-uuid/resend`, admin.token)).status).toBe(404);
    expect((await post(`/api/webhook/${a.id}/deliveries/${d.id}/resend`)).status).toBe(401);
    const clerk = await addUser(t, admin.corpId, { services: ["platform.city"] });
    expect((await post(`/api/webhook/${a.id}/deliveries/${d.id}/resend`, clerk.token)).status).toBe(403);
    const otherCorp = await addCorp(t, "beta");
    const stranger = await addUser(t, otherCorp, { services: ["platform.webhook"] });
    expect((await post(`/api/webhook/${a.id}/deliveries/${d.id}/resend`, stranger.token)).status).toBe(404);
  });

  test("with logging off a finished delivery leaves nothing to resend", async () => {
    const { t, admin, r, hook } = await setup();
    const h = await hook({ log_enabled: false });
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "Curitiba" });
    await waitFor("the delivery", () => r.requests.length === 1);
    const row = await waitFor("the finished row to go", () => {
      const rows = t.sql(admin.corpId).query("SELECT id FROM webhook_deliveries").all();
      return rows.length === 0 && rows;
    });
    expect(row).toEqual([]);
    expect((await t.req("POST", `/api/webhook/${h.id}/deliveries/${UNKNOWN_ID}/resend`, { token: admin.token })).status).toBe(404);
  });
});

describe("POST /api/webhook/{id}/recover: recover failed deliveries", () => {
  test("re-queues the failed ones since the instant, with their webhook-ids; 409 inactive; 400 bad instant", async () => {
    const { t, admin, clock, r, hook, deliveries } = await setup();
    const h = await hook();
    const before = new Date(clock.now() - 1000).toISOString();
    // The first answer is 410: that delivery fails, the webhook goes inactive and its other
    // pending delivery is failed with it.
    r.set((_req, n) => new Response(null, { status: n === 1 ? 410 : 200 }));
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "A" }, false);
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "B" });
    const failed = await waitFor("two failed deliveries", async () => {
      const d = await deliveries(h.id);
      return (d.length === 2 && d.every((x) => x.status === "failed") && d) as any[] | false;
    }) as any[];
    const recover = (since: unknown, token: string | undefined = admin.token) => t.req("POST", `/api/webhook/${h.id}/recover`, { token, body: { since } });

    const inactive = await recover(before);
    expect(inactive.status).toBe(409);
    expect((await t.req("PUT", `/api/webhook/${h.id}/active`, { token: admin.token })).status).toBe(200);

    expect((await recover(new Date(clock.now() + 60_000).toISOString())).body).toEqual({ queued: 0 });
    const sent = r.requests.length;
    const res = await recover(before.replace("Z", "+00:00"));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ queued: 2 });
    await waitFor("both resent", () => r.requests.length === sent + 2);
    const ids = r.requests.slice(sent).map((x) => x.headers["webhook-id"]).sort();
    expect(ids).toEqual(failed.map((d) => d.event_id).sort());
    for (const x of r.requests.slice(sent)) expect(await verifyStandardWebhook(h.secret, x.headers, x.body, clock.now())).toBe(true);
    await waitFor("both succeeded", async () => (await deliveries(h.id)).every((d) => d.status === "succeeded"));
    // Nothing failed any more.
    expect((await recover(before)).body).toEqual({ queued: 0 });

    for (const bad of ["2026-03-01T12:00:00", "yesterday", null, 5]) {
      const r400 = await recover(bad);
      expect(r400.status).toBe(400);
      expect(r400.body.errors[0].path).toBe("since");
    }
    expect((await t.req("POST", `/api/webhook/${h.id}/recover`, { token: admin.token, body: {} })).status).toBe(400);
    expect((await recover(before, "")).status).toBe(401);
    const clerk = await addUser(t, admin.corpId, { services: ["platform.city"] });
    expect((await recover(before, clerk.token)).status).toBe(403);
    expect((await t.req("POST", `/api/webhook/${UNKNOWN_ID}/recover`, { token: admin.token, body: { since: before } })).status).toBe(404);
  });
});

describe("POST /api/webhook/{id}/test: test event", () => {
  test("WEBHOOK_TEST with {webhook_id, name}, signed, sent at once even while inactive, logged", async () => {
    const { t, admin, clock, r, hook, deliveries } = await setup();
    const h = await hook({ name: "billing" });
    expect((await t.req("PUT", `/api/webhook/${h.id}/inactive`, { token: admin.token })).status).toBe(200);
    const res = await t.req("POST", `/api/webhook/${h.id}/test`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: "WEBHOOK_TEST", status: "succeeded", attempts: 1, response_status: 200, error: null, next_attempt_at: null });
    expect(r.requests).toHaveLength(1);
    const req = r.requests[0];
    expect(req.headers["webhook-id"]).toBe(res.body.event_id);
    expect(await verifyStandardWebhook(h.secret, req.headers, req.body, clock.now())).toBe(true);
    const payload = JSON.parse(req.body);
    expect(payload).toMatchObject({ type: "WEBHOOK_TEST", data: { webhook_id: h.id, name: "billing" } });
    expect((await deliveries(h.id)).map((d) => d.id)).toEqual([res.body.id]);
    // A failed test is still 200, with its outcome; a test delivery is not resent.
    r.set(() => new Response("no", { status: 500 }));
    const failed = await t.req("POST", `/api/webhook/${h.id}/test`, { token: admin.token });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ status: "failed", response_status: 500, error: "HTTP 500: no" });
    await t.req("PUT", `/api/webhook/${h.id}/active`, { token: admin.token });
    expect((await t.req("POST", `/api/webhook/${h.id}/deliveries/${failed.body.id}/resend`, { token: admin.token })).status).toBe(409);
    // Recover leaves test deliveries alone.
    expect((await t.req("POST", `/api/webhook/${h.id}/recover`, { token: admin.token, body: { since: "2000-01-01T00:00:00Z" } })).body).toEqual({ queued: 0 });
  });

  test("401, 403, 404 unknown and other corporation's webhook", async () => {
    const { t, admin, hook, r } = await setup();
    const h = await hook();
    expect((await t.req("POST", `/api/webhook/${h.id}/test`)).status).toBe(401);
    const clerk = await addUser(t, admin.corpId, { services: ["platform.city"] });
    expect((await t.req("POST", `/api/webhook/${h.id}/test`, { token: clerk.token })).status).toBe(403);
    expect((await t.req("POST", `/api/webhook/${UNKNOWN_ID}/test`, { token: admin.token })).status).toBe(404);
    const otherCorp = await addCorp(t, "beta");
    const stranger = await addUser(t, otherCorp, { services: ["platform.webhook"] });
    expect((await t.req("POST", `/api/webhook/${h.id}/test`, { token: stranger.token })).status).toBe(404);
    expect(r.requests).toHaveLength(0);
  });
});

describe("POST /api/webhook/{id}/deliveries/{deliveryId}/resend, /recover, /test: the audit log", () => {
  test("each replay is audited with its actor, corporation and target; a failed test as a failure with its error", async () => {
    const { t, admin, r, hook, deliveries } = await setup();
    const h = await hook();
    r.set(() => new Response("no", { status: 500 }));
    const failed = await t.req("POST", `/api/webhook/${h.id}/test`, { token: admin.token, headers: { "x-request-id": "req-hook-test" } });
    expect(failed.body.status).toBe("failed");
    r.set(() => new Response("ok"));
    expect((await t.req("POST", `/api/webhook/${h.id}/test`, { token: admin.token })).body.status).toBe("succeeded");
    r.set(() => new Response("gone", { status: 410 }));
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "Curitiba" });
    const [gone] = (await waitFor("the failed delivery", async () => {
      const d = (await deliveries(h.id)).filter((x) => x.type !== "WEBHOOK_TEST");
      return (d[0]?.status === "failed" && d) as any[] | false;
    })) as any[];
    // Answered 200 from now on: a resend failing with 410 again would make the webhook inactive.
    r.set(() => new Response("ok"));
    expect((await t.req("PUT", `/api/webhook/${h.id}/active`, { token: admin.token })).status).toBe(200);
    expect((await t.req("POST", `/api/webhook/${h.id}/deliveries/${gone.id}/resend`, { token: admin.token })).status).toBe(200);
    expect((await t.req("POST", `/api/webhook/${h.id}/recover`, { token: admin.token, body: { since: "2000-01-01T00:00:00Z" } })).status).toBe(200);
    // Refused: not audited.
    expect((await t.req("POST", `/api/webhook/${h.id}/deliveries/${UNKNOWN_ID}/resend`, { token: admin.token })).status).toBe(404);

    const audit = (await t.req("GET", "/api/audit?q=webhook.&sort=at", { token: admin.token })).body.items as any[];
    const who = { actor_user_id: admin.userId, corp_id: admin.corpId };
    expect(audit.map((e) => [e.action, e.outcome, e.target, e.reason])).toEqual([
      ["webhook.test", "failure", h.id, "HTTP 500: no"],
      ["webhook.test", "success", h.id, null],
      ["webhook.delivery_resend", "success", gone.id, null],
      ["webhook.recover", "success", h.id, null],
    ]);
    expect(audit.every((e) => e.actor_user_id === who.actor_user_id && e.corp_id === who.corp_id)).toBe(true);
    expect(audit[0].request_id).toBe("req-hook-test");
  });
});
