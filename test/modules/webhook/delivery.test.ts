// Delivery of outbox events to real HTTP receivers on 127.0.0.1: signing, body, retries on an
// injected clock, 410, redirects, timeouts, Retry-After, disabling with e-mail, egress, fairness.
// source-only: shortens the dispatcher's timings (options.dispatchTuning).
import { afterEach, describe, expect, test } from "bun:test";
import { startInbox } from "../../support/smtp";
import { PER_WEBHOOK_CONCURRENCY } from "../../../src/modules/webhook/jobs";
import { makeApp, startAndLogin } from "../../support/helpers";
import { emit, FAST, LOOPBACK_ALLOWED, manualClock, receiver, verifyStandardWebhook, waitFor } from "../../support/webhooks";
import { clientOf, rowLock } from "../../../src/db/rows";
import { toIso } from "../../../src/lib/time";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(o: { env?: Record<string, string>; timeoutMs?: number } = {}) {
  const clock = manualClock();
  const t = await makeApp({
    env: { ...LOOPBACK_ALLOWED, ...o.env },
    options: { now: clock.now, dispatchTuning: { ...FAST, deliveryTimeoutMs: o.timeoutMs ?? 15_000 } },
  });
  cleanups.push(() => t.close());
  const admin = await startAndLogin(t);
  const hook = async (target: string, more: Record<string, unknown> = {}) => {
    const res = await t.req("POST", "/api/webhook", {
      token: admin.token,
      body: { name: "receiver", target, email: "ops@example.net", groups: ["CITY_AFTER_INSERT"], log_enabled: true, ...more },
    });
    if (res.status !== 200) throw new Error(res.text);
    return res.body as { id: string; secret: string };
  };
  const deliveries = async (id: string) => (await t.req("GET", `/api/webhook/${id}/deliveries`, { token: admin.token })).body.items;
  const webhook = async (id: string) => (await t.req("GET", `/api/webhook/${id}`, { token: admin.token })).body;
  return { t, admin, clock, hook, deliveries, webhook };
}

function startReceiver(answer?: Parameters<typeof receiver>[0]) {
  const r = receiver(answer);
  cleanups.push(() => r.stop());
  return r;
}

/** The schedule of routes.md, written out here so that the test checks the code against it. */
const RETRY_DELAYS_MS = [30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000];
const MAX_ATTEMPTS = 8;

/** Long enough for several dispatcher ticks: a request that was going to be made has been. */
const settle = () => Bun.sleep(150);

describe("webhook dispatcher: delivery", () => {
  test("signed POST of {type, timestamp, data} to the active webhooks linked to the group, and to no other", async () => {
    const { t, admin, clock, hook, deliveries } = await setup();
    const a = startReceiver();
    const other = startReceiver();
    const wa = await hook(a.url());
    await hook(other.url(), { groups: ["PERSON_AFTER_INSERT"] });
    const off = await hook(other.url());
    await t.req("PUT", `/api/webhook/${off.id}/inactive`, { token: admin.token });

    const id = await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "Curitiba", state: "PR", country: "BR", note: 'quote " and ü' });
    await waitFor("the delivery", () => a.requests.length === 1);
    const r = a.requests[0];
    expect(r.headers["content-type"]).toBe("application/json");
    expect(r.headers["webhook-id"]).toMatch(/^msg_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(r.headers["webhook-timestamp"]).toBe(String(Math.floor(clock.now() / 1000)));
    expect(await verifyStandardWebhook(wa.secret, r.headers, r.body, clock.now())).toBe(true);
    // A tampered body or another secret fails the same check: the check is not vacuous.
    expect(await verifyStandardWebhook(wa.secret, r.headers, r.body.replace("Curitiba", "Curitibá"), clock.now())).toBe(false);
    expect(await verifyStandardWebhook(`whsec_${Buffer.alloc(24, 1).toString("base64")}`, r.headers, r.body, clock.now())).toBe(false);
    const payload = JSON.parse(r.body);
    expect(Object.keys(payload).sort()).toEqual(["data", "timestamp", "type"]);
    expect(payload.type).toBe("CITY_AFTER_INSERT");
    expect(payload.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/);
    expect(payload.data).toEqual({ id, name: "Curitiba", state: "PR", country: "BR", note: 'quote " and ü' });

    await settle();
    expect(other.requests.length).toBe(0);
    const log = await waitFor("the log row", async () => {
      const d = await deliveries(wa.id);
      return d[0]?.status === "succeeded" && d;
    });
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ event_id: r.headers["webhook-id"], type: "CITY_AFTER_INSERT", status: "succeeded", attempts: 1, response_status: 200, error: null, next_attempt_at: null });
  });

  test("body_content is a template over the payload; the signature covers the rendered body", async () => {
    const { t, admin, clock, hook } = await setup();
    const a = startReceiver();
    const template = '{"kind":"{{type}}","city":"{{data.name}}","n":{{data.n}},"ok":{{data.ok}},"obj":{{data.nested}},"gone":"{{data.missing.deep}}"}';
    const w = await hook(a.url(), { body_content: template });
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: 'São "Paulo"\n', n: 42, ok: true, nested: { a: [1, "x"] } });
    await waitFor("the delivery", () => a.requests.length === 1);
    const r = a.requests[0];
    expect(JSON.parse(r.body)).toEqual({ kind: "CITY_AFTER_INSERT", city: 'São "Paulo"\n', n: 42, ok: true, obj: { a: [1, "x"] }, gone: "" });
    expect(r.headers["content-type"]).toBe("application/json");
    expect(await verifyStandardWebhook(w.secret, r.headers, r.body, clock.now())).toBe(true);
  });

  test("retries at 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h with the same webhook-id, then failed", async () => {
    const { t, admin, clock, hook, deliveries } = await setup();
    const a = startReceiver(() => new Response("down", { status: 500 }));
    const w = await hook(a.url());
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "x" });
    await waitFor("attempt 1", () => a.requests.length === 1);
    for (let i = 0; i < RETRY_DELAYS_MS.length; i++) {
      const [row] = await waitFor("the retry to be recorded", async () => {
        const d = await deliveries(w.id);
        return d[0]?.attempts === i + 1 && d;
      });
      expect(row).toMatchObject({ status: "pending", response_status: 500, error: "HTTP 500: down" });
      expect(Date.parse(row.next_attempt_at)).toBe(clock.now() + RETRY_DELAYS_MS[i]);
      clock.advance(RETRY_DELAYS_MS[i] - 1000);
      await settle();
      expect(a.requests.length).toBe(i + 1);
      clock.advance(1000);
      await waitFor(`attempt ${i + 2}`, () => a.requests.length === i + 2);
    }
    expect(a.requests.length).toBe(MAX_ATTEMPTS);
    const [final] = await waitFor("the final failure", async () => {
      const d = await deliveries(w.id);
      return d[0]?.status === "failed" && d;
    });
    expect(final).toMatchObject({ attempts: 8, next_attempt_at: null, response_status: 500 });
    clock.advance(48 * 3_600_000);
    await settle();
    expect(a.requests.length).toBe(8);
    expect(new Set(a.requests.map((r) => r.headers["webhook-id"])).size).toBe(1);
    // Each attempt is signed afresh with its own timestamp.
    expect(new Set(a.requests.map((r) => r.headers["webhook-timestamp"])).size).toBe(8);
    expect(a.requests.every((r) => r.body === a.requests[0].body)).toBe(true);
  });

  test("Retry-After on 429 and 503 is honoured", async () => {
    const { t, admin, clock, hook, deliveries } = await setup();
    const a = startReceiver((_r, n) => (n === 1 ? new Response("", { status: 429, headers: { "retry-after": "600" } }) : n === 2 ? new Response("", { status: 503, headers: { "retry-after": "5" } }) : new Response("ok")));
    const w = await hook(a.url());
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "x" });
    await waitFor("attempt 1", () => a.requests.length === 1);
    const [row] = await waitFor("the retry", async () => {
      const d = await deliveries(w.id);
      return d[0]?.attempts === 1 && d;
    });
    expect(Date.parse(row.next_attempt_at)).toBe(clock.now() + 600_000);
    clock.advance(RETRY_DELAYS_MS[0]);
    await settle();
    expect(a.requests.length).toBe(1);
    clock.advance(600_000 - RETRY_DELAYS_MS[0]);
    await waitFor("attempt 2", () => a.requests.length === 2);
    // A Retry-After shorter than the schedule does not bring the retry forward.
    const [row2] = await waitFor("the second retry", async () => {
      const d = await deliveries(w.id);
      return d[0]?.attempts === 2 && d;
    });
    expect(Date.parse(row2.next_attempt_at)).toBe(clock.now() + RETRY_DELAYS_MS[1]);
    clock.advance(RETRY_DELAYS_MS[1]);
    await waitFor("attempt 3", () => a.requests.length === 3);
    await waitFor("success", async () => (await deliveries(w.id))[0]?.status === "succeeded");
  });

  test("410 Gone disables the webhook at once; later events are not queued for it", async () => {
    const { t, admin, clock, hook, webhook, deliveries } = await setup();
    const a = startReceiver(() => new Response("", { status: 410 }));
    const w = await hook(a.url());
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "x" });
    await waitFor("attempt 1", () => a.requests.length === 1);
    await waitFor("the webhook to be inactive", async () => (await webhook(w.id)).status === false);
    expect((await deliveries(w.id))[0]).toMatchObject({ status: "failed", attempts: 1, response_status: 410 });
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "y" });
    clock.advance(24 * 3_600_000);
    await settle();
    expect(a.requests.length).toBe(1);
    expect(await deliveries(w.id)).toHaveLength(1);
  });

  test("410 with two deliveries in flight: both attempts are logged with status and the receiver's words (issue 29)", async () => {
    const { t, admin, hook, webhook, deliveries } = await setup();
    // Both requests are held until both arrived, then both answered 410: the first answer makes the
    // webhook inactive and cancels the other delivery while its attempt is still in flight.
    let release!: () => void;
    const bothIn = new Promise<void>((r) => (release = r));
    const a = startReceiver(async (_r, n) => {
      if (n === 2) release();
      await bothIn;
      return new Response("Gone:\n this endpoint\twas removed", { status: 410 });
    });
    const w = await hook(a.url());
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "x" });
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "y" });
    await waitFor("both attempts", () => a.requests.length === 2);
    await waitFor("the webhook to be inactive", async () => (await webhook(w.id)).status === false);
    const rows = await waitFor("both attempts recorded", async () => {
      const d = await deliveries(w.id);
      return d.length === 2 && d.every((x: any) => x.attempts === 1) && d;
    });
    for (const row of rows) {
      expect(row).toMatchObject({ status: "failed", attempts: 1, response_status: 410 });
      expect(row.error).toStartWith("HTTP 410: Gone: this endpoint was removed");
    }
  });

  test("a redirect is not followed and counts as a failure", async () => {
    const { t, admin, hook, deliveries } = await setup();
    const a = startReceiver((r) => (r.path === "/hook" ? new Response("", { status: 302, headers: { location: "/elsewhere" } }) : new Response("ok")));
    const w = await hook(a.url());
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "x" });
    const [row] = await waitFor("the failed attempt", async () => {
      const d = await deliveries(w.id);
      return d[0]?.attempts === 1 && d;
    });
    expect(row).toMatchObject({ status: "pending", response_status: 302 });
    expect(row.error).toContain("redirect");
    expect(a.requests.map((r) => r.path)).toEqual(["/hook"]);
  });

  test("no answer within the timeout is a failure (15 s in production, shortened here)", async () => {
    const { t, admin, hook, deliveries } = await setup({ timeoutMs: 300 });
    // The receiver answers only once the test has seen the attempt recorded: only the timeout can
    // have ended it, however late a loaded machine runs the dispatcher.
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    cleanups.push(() => answer());
    const a = startReceiver(async () => {
      await held;
      return new Response("too late");
    });
    const w = await hook(a.url());
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { name: "x" });
    const [row] = await waitFor("the timed-out attempt", async () => {
      const d = await deliveries(w.id);
      return d[0]?.attempts === 1 && d;
    });
    // One attempt at most reached the receiver: on a loaded machine the 0.3 s can run out before
    // the request arrives (seen in CI), which is the same timeout.
    expect(a.requests.length).toBeLessThanOrEqual(1);
    expect(row).toMatchObject({ status: "pending", response_status: null });
    expect(row.error).toContain("no answer within 0.3 s");
  });

  test("10 consecutive finally-failed events make the webhook inactive and e-mail its address", async () => {
    const inbox = await startInbox();
    cleanups.push(inbox.stop);
    const mails = inbox.messages;
    const { t, admin, clock, hook, webhook } = await setup({ env: inbox.env });
    const a = startReceiver(() => new Response("", { status: 500 }));
    const w = await hook(a.url(), { email: "alerts@example.net", log_enabled: false });
    // The queue (kept whether or not the log is on): after attempt n every one of the events is
    // pending with n attempts recorded, and after the last none is pending.
    const pending = () =>
      t.sql(admin.corpId).query("SELECT attempts FROM webhook_deliveries WHERE webhook_id = ? AND status = 'pending'").all(w.id) as { attempts: number }[];
    const recorded = (events: number, attempt: number) => {
      const rows = pending();
      return attempt < MAX_ATTEMPTS ? rows.length === events && rows.every((r) => r.attempts === attempt) : rows.length === 0;
    };
    // Nine finally-failed events, then a success, reset the count: the webhook stays active.
    const failFinally = async (events: number) => {
      const before = a.requests.length;
      for (let i = 0; i < events; i++) await emit(t, admin.corpId, "CITY_AFTER_INSERT", { i });
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        await waitFor(`attempt ${attempt}`, () => a.requests.length === before + events * attempt);
        // The outcomes are recorded before time moves on (a busy machine can take its time).
        await waitFor(`the outcomes of attempt ${attempt}`, () => recorded(events, attempt));
        clock.advance(RETRY_DELAYS_MS[RETRY_DELAYS_MS.length - 1]);
      }
    };
    await failFinally(9);
    a.set(() => new Response("ok"));
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { ok: true });
    await waitFor("the success", () => a.requests.length === 9 * 8 + 1);
    a.set(() => new Response("", { status: 500 }));
    await failFinally(9);
    await settle();
    expect((await webhook(w.id)).status).toBe(true);
    expect(mails).toHaveLength(0);
    await failFinally(1);
    await waitFor("the webhook to be inactive", async () => (await webhook(w.id)).status === false);
    await waitFor("the e-mail", () => mails.length === 1);
    expect(mails[0].to).toEqual(["alerts@example.net"]);
    expect(mails[0].text).toContain("receiver");
    // Activating resets the count: one more final failure does not disable it again.
    await t.req("PUT", `/api/webhook/${w.id}/active`, { token: admin.token });
    await failFinally(1);
    await settle();
    expect((await webhook(w.id)).status).toBe(true);
  }, 60_000);

  test("a slow receiver holds at most its own slots; other webhooks are served meanwhile", async () => {
    const { t, admin, hook } = await setup();
    let release!: () => void;
    const gate = new Promise<void>((res) => (release = res));
    const slow = startReceiver(async () => {
      await gate;
      return new Response("ok");
    });
    const fast = startReceiver();
    await hook(slow.url());
    await hook(fast.url());
    const events = PER_WEBHOOK_CONCURRENCY * 2 + 5;
    for (let i = 0; i < events; i++) await emit(t, admin.corpId, "CITY_AFTER_INSERT", { i });
    await waitFor("the fast receiver to get every event", () => fast.requests.length === events);
    await settle();
    expect(slow.requests.length).toBe(PER_WEBHOOK_CONCURRENCY);
    release();
    await waitFor("the slow receiver to catch up", () => slow.requests.length === events);
    expect(slow.maxInFlight).toBe(PER_WEBHOOK_CONCURRENCY);
  });

  test("a success frees its slot at the answer, before its outcome is committed; nothing is sent twice meanwhile", async () => {
    const { t, admin, clock, hook, deliveries } = await setup();
    let open!: () => void;
    const gate = new Promise<void>((res) => (open = res));
    const a = startReceiver(async () => {
      await gate;
      return new Response("ok");
    });
    const w = await hook(a.url());
    const events = PER_WEBHOOK_CONCURRENCY * 2 + 5;
    for (let i = 0; i < events; i++) await emit(t, admin.corpId, "CITY_AFTER_INSERT", { i });
    await waitFor("every event queued", async () => (await deliveries(w.id)).length === events);
    await waitFor("every slot taken", () => a.requests.length === PER_WEBHOOK_CONCURRENCY);
    // No outcome can be committed while this write lasts: it holds the corporation's writer
    // (SQLite) and the rows of the deliveries in flight, the claimed ones (PostgreSQL).
    let unlock!: () => void;
    let locked!: () => void;
    const isLocked = new Promise<void>((res) => (locked = res));
    const holding = t.ctx.store.tenant(admin.corpId).write(async (tx) => {
      await clientOf(tx)
        .query(`SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > ?1${rowLock(tx, "FOR UPDATE")}`)
        .all(toIso(clock.now()));
      locked();
      await new Promise<void>((res) => (unlock = res));
    });
    await isLocked;
    open();
    try {
      await waitFor("every event sent while no outcome could be committed", () => a.requests.length === events);
      expect((await deliveries(w.id)).filter((d: any) => d.status === "pending")).toHaveLength(events);
    } finally {
      unlock();
      await holding;
    }
    await waitFor("every outcome recorded", async () => (await deliveries(w.id)).every((d: any) => d.status === "succeeded" && d.attempts === 1));
    await settle();
    expect(new Set(a.requests.map((r) => r.headers["webhook-id"])).size).toBe(events);
    expect(a.requests).toHaveLength(events);
    expect(a.maxInFlight).toBe(PER_WEBHOOK_CONCURRENCY);
  });

  test("the log holds rows only while log_enabled; the queue works either way", async () => {
    const { t, admin, hook, deliveries } = await setup();
    const a = startReceiver();
    const w = await hook(a.url(), { log_enabled: false });
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { n: 1 });
    await waitFor("delivery 1", () => a.requests.length === 1);
    await settle();
    expect(await deliveries(w.id)).toEqual([]);
    const put = (log: boolean) => t.req("PUT", `/api/webhook/${w.id}`, { token: admin.token, body: { name: "receiver", target: a.url(), email: "ops@example.net", log_enabled: log } });
    await put(true);
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { n: 2 });
    await waitFor("delivery 2", () => a.requests.length === 2);
    const logged = await waitFor("the log row", async () => {
      const d = await deliveries(w.id);
      return d.length === 1 && d[0].status === "succeeded" && d;
    });
    expect(logged[0].event_id).toBe(a.requests[1].headers["webhook-id"]);
    await put(false);
    expect(await deliveries(w.id)).toEqual([]);
    await put(true);
    expect(await deliveries(w.id)).toEqual([]);
  });

  test("making a webhook inactive drops its queue; while inactive nothing is queued", async () => {
    const { t, admin, clock, hook, deliveries } = await setup();
    const a = startReceiver(() => new Response("", { status: 500 }));
    const w = await hook(a.url());
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { n: 1 });
    await waitFor("attempt 1", async () => (await deliveries(w.id))[0]?.attempts === 1);
    await t.req("PUT", `/api/webhook/${w.id}/inactive`, { token: admin.token });
    expect((await deliveries(w.id))[0]).toMatchObject({ status: "failed", next_attempt_at: null });
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { n: 2 });
    clock.advance(3_600_000);
    await settle();
    expect(a.requests.length).toBe(1);
    a.set(() => new Response("ok"));
    await t.req("PUT", `/api/webhook/${w.id}/active`, { token: admin.token });
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { n: 3 });
    await waitFor("the new event", () => a.requests.length === 2);
    expect(JSON.parse(a.requests[1].body).data.n).toBe(3);
  });

  test("an event committed without a wake-up is found by the periodic sweep", async () => {
    const { t, admin, hook } = await setup();
    const a = startReceiver();
    await hook(a.url());
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { quiet: true }, false);
    await waitFor("the swept delivery", () => a.requests.length === 1);
    expect(JSON.parse(a.requests[0].body).data.quiet).toBe(true);
  });
});

describe("webhook dispatcher: egress policy", () => {
  test("loopback is refused when not allowed, by address, by IPv6 forms embedding it and by a name resolving to it", async () => {
    const { t, admin, hook, deliveries } = await setup({ env: { CORPADMIN_EGRESS_ALLOW: "" } });
    const a = startReceiver();
    const byIp = await hook(a.url());
    const byName = await hook(`http://localhost:${a.server.port}/hook`);
    // IPv6 spellings of 127.0.0.1: IPv4-compatible, IPv4-mapped, NAT64
    const embedded = [];
    for (const host of ["[::127.0.0.1]", "[::ffff:7f00:1]", "[64:ff9b::7f00:1]"]) embedded.push(await hook(`http://${host}:${a.server.port}/hook`));
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { n: 1 });
    for (const w of [byIp, byName, ...embedded]) {
      const [row] = await waitFor("the refused attempt", async () => {
        const d = await deliveries(w.id);
        return d[0]?.attempts === 1 && d;
      });
      expect(row).toMatchObject({ status: "pending", response_status: null });
      expect(row.error).toContain("egress policy");
    }
    await settle();
    expect(a.requests.length).toBe(0);
  });
});
