// Housekeeping: exactly the rows past their use are deleted, on an injected clock; a pending
// delivery keeps its event; batches, the schedule, PRAGMA optimize, the WAL checkpoint, metrics.
// source-only: drives the housekeeping job in-process with an injected clock.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { AppOptions } from "../../../src/app";
import { ConfigError, loadConfig } from "../../../src/config";
import { Housekeeping, METRIC_PRUNED, METRIC_RUNS, uuidV7Floor, type HousekeepingOptions } from "../../../src/modules/retention/housekeeping";
import { addCorp, makeApp, startAndLogin, type TestApp } from "../../support/helpers";
import { TEST_BACKEND, testSqliteOnly } from "../../support/backend";
import { LOOPBACK_ALLOWED, receiver, waitFor } from "../../support/webhooks";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString().replace("Z", "+00:00");
/** A record id taken at `ms`, as the service takes them (UUID v7). */
const idAt = (ms: number) => Bun.randomUUIDv7("hex", ms);

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * An app whose own housekeeping has finished its start-up pass (so it does not race the rows a
 * test inserts; its next pass is an hour away) and whose dispatcher does not sweep by itself.
 */
async function setup(env: Record<string, string> = {}, options: AppOptions = {}) {
  const t = await makeApp({ env: { ...LOOPBACK_ALLOWED, ...env }, options: { dispatchTuning: { tickMs: 10, sweepMs: 3_600_000 }, ...options } });
  cleanups.push(() => t.close());
  const admin = await startAndLogin(t);
  await waitFor("the start-up pass", () => t.ctx.serviceMetrics.counter(METRIC_RUNS).get({ outcome: "ok" }) >= 1);
  const T0 = Date.now();
  const job = (at: number, o: HousekeepingOptions = {}) => new Housekeeping(t.ctx, { now: () => at, ...o });
  return { t, admin, T0, job };
}

const platformSql = (t: TestApp) => t.sqlWrite();
const tenantSql = (t: TestApp, corpId: string) => t.sqlWrite(corpId);
const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort();

describe("job housekeeping: platform tables", () => {
  test("sessions revoked or expired over a day ago, used or expired reset keys, expired devices, idle failure counters go; the rest stays", async () => {
    const { t, admin, T0, job } = await setup();
    const db = platformSql(t);
    const u = admin.userId;
    // A real logout: its session row is revoked now.
    const second = await t.req("POST", "/api/login", { body: { corp: "acme", login: "admin", password: "admin-password-1" } });
    expect((await t.req("DELETE", "/api/logout", { token: second.body.access_token })).status).toBe(204);
    const loggedOut = db.query<{ id: string }, []>("SELECT id FROM sessions WHERE revoked_at IS NOT NULL").get()!.id;
    const session = db.query("INSERT INTO sessions (id, user_id, corp_id, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)");
    const s = {
      expired2d: idAt(T0 - 3 * DAY),
      revoked2d: idAt(T0 - 3 * DAY),
      expired12h: idAt(T0 - DAY),
      revoked12h: idAt(T0 - DAY),
    };
    session.run(s.expired2d, u, admin.corpId, iso(T0 - 3 * DAY), iso(T0 - 2 * DAY), null);
    session.run(s.revoked2d, u, admin.corpId, iso(T0 - 3 * DAY), iso(T0 + HOUR), iso(T0 - 2 * DAY));
    session.run(s.expired12h, u, admin.corpId, iso(T0 - DAY), iso(T0 - 12 * HOUR), null);
    session.run(s.revoked12h, u, admin.corpId, iso(T0 - DAY), iso(T0 + HOUR), iso(T0 - 12 * HOUR));
    const liveBefore = ids(db.query<{ id: string }, []>("SELECT id FROM sessions").all());

    const key = db.query("INSERT INTO password_reset_keys (id, user_id, key_hash, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?)");
    const k = { used: idAt(T0), expired: idAt(T0), fresh: idAt(T0) };
    key.run(k.used, u, "h-used", iso(T0 - HOUR), iso(T0 + HOUR), iso(T0 - 30 * 60_000));
    key.run(k.expired, u, "h-expired", iso(T0 - 2 * HOUR), iso(T0 - HOUR), null);
    key.run(k.fresh, u, "h-fresh", iso(T0 - 10 * 60_000), iso(T0 + HOUR), null);

    const device = db.query("INSERT INTO remembered_devices (id, user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)");
    const d = { expired: idAt(T0), valid: idAt(T0) };
    device.run(d.expired, u, "d-expired", iso(T0 - 31 * DAY), iso(T0 - 60_000));
    device.run(d.valid, u, "d-valid", iso(T0 - DAY), iso(T0 + 29 * DAY));

    // A real failed login makes a fresh counter.
    expect((await t.req("POST", "/api/login", { body: { corp: "acme", login: "admin", password: "wrong-password-9" } })).status).toBe(403);
    const failure = db.query("INSERT INTO login_failures (corp_id, login, failures, locked_until, updated_at) VALUES (?, ?, ?, ?, ?)");
    failure.run(admin.corpId, "idle", 2, null, iso(T0 - 2 * DAY));
    failure.run(admin.corpId, "idle-lock-over", 5, iso(T0 - 2 * DAY + 15 * 60_000), iso(T0 - 2 * DAY));
    failure.run(admin.corpId, "recent", 3, null, iso(T0 - HOUR));
    // Not realistic with a 15-minute lock, but the rule is: a lock still in force is kept.
    failure.run(admin.corpId, "idle-still-locked", 5, iso(T0 + HOUR), iso(T0 - 2 * DAY));

    const report = await job(T0).runOnce();

    const sessionsLeft = ids(db.query<{ id: string }, []>("SELECT id FROM sessions").all());
    expect(sessionsLeft).toEqual(liveBefore.filter((id) => id !== s.expired2d && id !== s.revoked2d));
    expect(sessionsLeft).toContain(loggedOut);
    expect(sessionsLeft).toContain(s.expired12h);
    expect(sessionsLeft).toContain(s.revoked12h);
    expect(ids(db.query<{ id: string }, []>("SELECT id FROM password_reset_keys").all())).toEqual([k.fresh]);
    expect(ids(db.query<{ id: string }, []>("SELECT id FROM remembered_devices").all())).toEqual([d.valid]);
    const logins = db.query<{ login: string }, []>("SELECT login FROM login_failures ORDER BY login").all().map((r) => r.login);
    expect(logins).toEqual(["admin", "idle-still-locked", "recent"]);
    expect(report.pruned).toMatchObject({ sessions: 2, password_reset_keys: 2, remembered_devices: 1, login_failures: 2 });

    // The admin's token still works: live sessions are untouched.
    expect((await t.req("GET", "/api/city", { token: admin.token })).status).toBe(200);

    // Two days on, the logged-out session and the others past their day go as well.
    await job(T0 + 2 * DAY).runOnce();
    const later = ids(db.query<{ id: string }, []>("SELECT id FROM sessions").all());
    expect(later).not.toContain(loggedOut);
    expect(later).not.toContain(s.expired12h);
    expect(later).not.toContain(s.revoked12h);
  });
});

interface TenantFixture {
  webhookId: string;
  event(o: { at: number; dispatched: number | null }): string;
  delivery(o: { event: string; status: "pending" | "succeeded" | "failed"; created: number; updated: number; attempts?: number }): string;
  eventIds(): string[];
  deliveryIds(): string[];
}

async function tenantFixture(t: TestApp, token: string, corpId: string): Promise<TenantFixture> {
  // A webhook linked to no group: the dispatcher never queues anything for it by itself.
  const hook = await t.req("POST", "/api/webhook", { token, body: { name: "log", target: "https://hooks.example.net/x", email: "ops@example.net", log_enabled: true } });
  expect(hook.status).toBe(200);
  const db = tenantSql(t, corpId);
  const insertEvent = db.query("INSERT INTO events (id, type, record_id, payload, created_at, dispatched_at) VALUES (?, 'CITY_AFTER_INSERT', ?, '{}', ?, ?)");
  const insertDelivery = db.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, source_event_id, event_id, type, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'CITY_AFTER_INSERT', ?, ?, ?, ?, ?)`,
  );
  return {
    webhookId: hook.body.id,
    event({ at, dispatched }) {
      const id = idAt(at);
      insertEvent.run(id, id, iso(at), dispatched === null ? null : iso(dispatched));
      return id;
    },
    delivery({ event, status, created, updated, attempts }) {
      const id = idAt(created);
      // A pending retry is due in the far future: the dispatcher leaves it alone during the test.
      const next = status === "pending" ? iso(Date.now() + 100 * DAY) : null;
      insertDelivery.run(id, hook.body.id, event, `msg_${id}`, status, attempts ?? 1, next, iso(created), iso(updated));
      return id;
    },
    eventIds: () => ids(db.query<{ id: string }, []>("SELECT id FROM events").all()),
    deliveryIds: () => ids(db.query<{ id: string }, []>("SELECT id FROM webhook_deliveries").all()),
  };
}

describe("job housekeeping: corporation tables", () => {
  test("dispatched events past the retention go unless a pending delivery needs them; finished deliveries past it go; undispatched events stay", async () => {
    const { t, admin, T0, job } = await setup();
    const f = await tenantFixture(t, admin.token, admin.corpId);
    const before = f.eventIds();
    const e = {
      old: f.event({ at: T0 - 40 * DAY, dispatched: T0 - 40 * DAY }),
      retrying: f.event({ at: T0 - 40 * DAY, dispatched: T0 - 40 * DAY }),
      firstTry: f.event({ at: T0 - 35 * DAY, dispatched: T0 - 35 * DAY }),
      delivered: f.event({ at: T0 - 40 * DAY, dispatched: T0 - 40 * DAY }),
      failedRecently: f.event({ at: T0 - 40 * DAY, dispatched: T0 - 40 * DAY }),
      recent: f.event({ at: T0 - 29 * DAY, dispatched: T0 - 29 * DAY }),
      // Created long ago but dispatched within the retention (the service was down): kept.
      lateDispatch: f.event({ at: T0 - 60 * DAY, dispatched: T0 - 5 * DAY }),
      undispatched: f.event({ at: T0 - 100 * DAY, dispatched: null }),
    };
    const d = {
      retrying: f.delivery({ event: e.retrying, status: "pending", created: T0 - 40 * DAY, updated: T0 - 39 * DAY, attempts: 5 }),
      firstTry: f.delivery({ event: e.firstTry, status: "pending", created: T0 - 35 * DAY, updated: T0 - 35 * DAY, attempts: 0 }),
      succeeded: f.delivery({ event: e.delivered, status: "succeeded", created: T0 - 40 * DAY, updated: T0 - 40 * DAY }),
      failedOld: f.delivery({ event: e.retrying, status: "failed", created: T0 - 40 * DAY, updated: T0 - 31 * DAY, attempts: 8 }),
      failedRecently: f.delivery({ event: e.failedRecently, status: "failed", created: T0 - 40 * DAY, updated: T0 - 10 * DAY, attempts: 8 }),
      succeededRecently: f.delivery({ event: e.recent, status: "succeeded", created: T0 - 29 * DAY, updated: T0 - 29 * DAY }),
    };

    const report = await job(T0).runOnce();

    expect(f.eventIds()).toEqual(
      [...before, e.retrying, e.firstTry, e.recent, e.lateDispatch, e.undispatched].sort(),
    );
    expect(f.deliveryIds()).toEqual([d.retrying, d.firstTry, d.failedRecently, d.succeededRecently].sort());
    expect(report.pruned).toMatchObject({ events: 3, webhook_deliveries: 2 });
    // The undispatched event was really left undispatched (not saved by a dispatch meanwhile).
    const undispatched = tenantSql(t, admin.corpId).query<{ d: string | null }, [string]>("SELECT dispatched_at AS d FROM events WHERE id = ?").get(e.undispatched);
    expect(undispatched?.d).toBeNull();

    // Once its delivery has finished, the retried event goes at the next pass.
    tenantSql(t, admin.corpId).query("UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, updated_at = ? WHERE id IN (?, ?)").run(iso(T0), d.retrying, d.firstTry);
    await job(T0 + HOUR).runOnce();
    expect(f.eventIds()).not.toContain(e.retrying);
    expect(f.eventIds()).not.toContain(e.firstTry);
    expect(f.deliveryIds()).toContain(d.retrying);
  });

  test("through the API: a delivered event goes 31 days later, the event of a delivery still being retried stays, and so does its log row", async () => {
    const { t, admin, T0, job } = await setup();
    const ok = receiver();
    const down = receiver(() => new Response("down", { status: 500 }));
    cleanups.push(ok.stop, down.stop);
    const hook = async (name: string, target: string, group: string) => {
      const res = await t.req("POST", "/api/webhook", { token: admin.token, body: { name, target, email: "ops@example.net", groups: [group], log_enabled: true } });
      expect(res.status).toBe(200);
      return res.body.id as string;
    };
    const okHook = await hook("ok", ok.url(), "CITY_AFTER_INSERT");
    const downHook = await hook("down", down.url(), "PERSON_AFTER_INSERT");
    const city = await t.req("POST", "/api/city", { token: admin.token, body: { name: "Curitiba", state: "PR", country: "BR" } });
    expect(city.status).toBe(200);
    const person = await t.req("POST", "/api/person", { token: admin.token, body: { name: "Maria" } });
    expect(person.status).toBe(200);
    let token = admin.token;
    const log = async (id: string) => (await t.req("GET", `/api/webhook/${id}/deliveries`, { token })).body.items as { status: string; attempts: number }[];
    await waitFor("the successful delivery", async () => (await log(okHook))[0]?.status === "succeeded");
    await waitFor("the failed first attempt", async () => (await log(downHook))[0]?.attempts === 1);
    expect((await log(downHook))[0].status).toBe("pending");

    const db = tenantSql(t, admin.corpId);
    const eventOf = (type: string) => db.query<{ id: string }, [string]>("SELECT id FROM events WHERE type = ?").all(type);
    expect(eventOf("CITY_AFTER_INSERT")).toHaveLength(1);
    expect(eventOf("PERSON_AFTER_INSERT")).toHaveLength(1);

    // A day on, nothing is old enough.
    await job(T0 + DAY).runOnce();
    expect(eventOf("CITY_AFTER_INSERT")).toHaveLength(1);
    expect(await log(okHook)).toHaveLength(1);

    const report = await job(T0 + 31 * DAY).runOnce();
    expect(eventOf("CITY_AFTER_INSERT")).toHaveLength(0);
    // The admin's session expired a month ago on that clock and went too: log in again to look.
    const again = await t.req("POST", "/api/login", { body: { corp: "acme", login: "admin", password: "admin-password-1" } });
    token = again.body.access_token;
    expect(await log(okHook)).toHaveLength(0);
    expect(eventOf("PERSON_AFTER_INSERT")).toHaveLength(1);
    expect(await log(downHook)).toMatchObject([{ status: "pending", attempts: 1 }]);
    expect(report.pruned.events).toBe(1);
    expect(report.pruned.webhook_deliveries).toBe(1);
    // The city itself is registry data: untouched.
    expect((await t.req("GET", `/api/city/${city.body.id}`, { token })).status).toBe(200);
  });

  test("--event-retention-days sets the outbox retention", async () => {
    const { t, admin, T0, job } = await setup({ CORPADMIN_EVENT_RETENTION_DAYS: "5" });
    const f = await tenantFixture(t, admin.token, admin.corpId);
    const before = f.eventIds();
    const sixDays = f.event({ at: T0 - 6 * DAY, dispatched: T0 - 6 * DAY });
    const fourDays = f.event({ at: T0 - 4 * DAY, dispatched: T0 - 4 * DAY });
    await job(T0).runOnce();
    expect(f.eventIds()).toEqual([...before, fourDays].sort());
    expect(f.eventIds()).not.toContain(sixDays);
  });

  describe("RADIUS accounting", () => {
    const SECRET = "nas-secret-0001";
    async function withAccounting(env: Record<string, string> = {}) {
      const s = await setup(env);
      const nas = await s.t.req("POST", "/api/isp/nas", { token: s.admin.token, body: { name: "bng-1", ip: "192.0.2.10", secret: SECRET } });
      expect(nas.status).toBe(200);
      const live = await s.t.req("POST", "/api/isp/radius/accounting", {
        body: { "User-Name": "maria", "Acct-Session-Id": "live-1", "NAS-IP-Address": "192.0.2.10", "Acct-Status-Type": "Start" },
        headers: { authorization: `Basic ${Buffer.from(`acme:${SECRET}`).toString("base64")}` },
      });
      expect(live.status).toBe(204);
      const db = tenantSql(s.t, s.admin.corpId);
      const insert = db.query(
        `INSERT INTO isp_radius_accounting (id, nas_id, nas_ip, username, session_id, status_type, session_time, event_at, received_at, attributes)
         VALUES (?, ?, '192.0.2.10', 'maria', ?, 'Stop', 60, ?, ?, '{}')`,
      );
      const row = (receivedAgo: number, eventAgo = receivedAgo) => {
        const received = s.T0 - receivedAgo;
        const id = idAt(received);
        insert.run(id, nas.body.id, id, iso(s.T0 - eventAgo), iso(received));
        return id;
      };
      const sessions = () => db.query<{ session_id: string }, []>("SELECT session_id FROM isp_radius_accounting ORDER BY session_id").all().map((r) => r.session_id);
      return { ...s, row, sessions };
    }

    test("rows received over --accounting-retention-days ago (default 400) go; by corpadmin's receive time, not the NAS's clock", async () => {
      const { job, T0, row, sessions } = await withAccounting();
      const old = [row(401 * DAY), row(500 * DAY), row(400 * DAY + 60_000)];
      const kept = [row(399 * DAY), row(10 * DAY, 900 * DAY), row(400 * DAY - 60_000)];
      const report = await job(T0).runOnce();
      expect(sessions()).toEqual(["live-1", ...kept].sort());
      expect(sessions()).not.toContain(old[0]);
      expect(report.pruned.isp_radius_accounting).toBe(3);
    });

    test("sessions go with their accounting; authorize attempts after --radius-attempt-retention-days (default 30)", async () => {
      const { t, admin, job, T0 } = await withAccounting();
      const db = tenantSql(t, admin.corpId);
      const at = (ago: number) => iso(T0 - ago);
      const session = db.query(
        "INSERT INTO isp_radius_sessions (id, nas_id, acct_session_id, username, started_at, updated_at, open, stale_at, received_at, created_at) VALUES (?1, 'nas', ?1, 'maria', ?2, ?2, ?3, ?2, ?2, ?2)",
      );
      session.run("old-closed", at(401 * DAY), 0);
      session.run("old-stale", at(401 * DAY), 1);
      session.run("recent", at(10 * DAY), 0);
      const attempt = db.query("INSERT INTO isp_radius_attempts (id, at, username, nas_ip, outcome, reason) VALUES (?1, ?2, 'maria', '192.0.2.10', 'reject', 'bad-password')");
      attempt.run("a-31", at(31 * DAY));
      attempt.run("a-29", at(29 * DAY));
      const report = await job(T0).runOnce();
      const ids = (table: string) => (db.query(`SELECT id FROM ${table} ORDER BY id`).all() as { id: string }[]).map((r) => r.id);
      expect(ids("isp_radius_sessions")).not.toContain("old-closed");
      expect(ids("isp_radius_sessions")).not.toContain("old-stale");
      expect(ids("isp_radius_sessions")).toContain("recent");
      expect(ids("isp_radius_attempts")).toEqual(["a-29"]);
      expect(report.pruned.isp_radius_sessions).toBe(2);
      expect(report.pruned.isp_radius_attempts).toBe(1);
    });

    test("0 keeps accounting forever", async () => {
      const { job, T0, row, sessions } = await withAccounting({ CORPADMIN_ACCOUNTING_RETENTION_DAYS: "0" });
      const old = row(3000 * DAY);
      const report = await job(T0).runOnce();
      expect(sessions()).toEqual(["live-1", old].sort());
      expect(report.pruned.isp_radius_accounting).toBe(0);
    });
  });

  test("every ENABLED or BLOCKED corporation is pruned; MAINTENANCE ones and missing databases are left alone", async () => {
    // A corporation's database is a file on SQLite only (PostgreSQL: rows of the shared tables).
    const files = TEST_BACKEND === "sqlite";
    const { t, admin, T0, job } = await setup();
    const beta = await addCorp(t, "beta");
    const gamma = await addCorp(t, "gamma");
    const delta = await addCorp(t, "delta");
    const oldEvent = (corpId: string) => {
      const id = idAt(T0 - 40 * DAY);
      tenantSql(t, corpId)
        .query("INSERT INTO events (id, type, record_id, payload, created_at, dispatched_at) VALUES (?, 'CITY_AFTER_INSERT', ?, '{}', ?, ?)")
        .run(id, id, iso(T0 - 40 * DAY), iso(T0 - 40 * DAY));
      return id;
    };
    const has = (corpId: string, id: string) => !!tenantSql(t, corpId).query("SELECT 1 FROM events WHERE id = ?").get(id);
    const [a, b, g] = [oldEvent(admin.corpId), oldEvent(beta), oldEvent(gamma)];
    t.sqlWrite().query("UPDATE corporations SET status = 'BLOCKED' WHERE id = ?").run(beta);
    t.sqlWrite().query("UPDATE corporations SET status = 'MAINTENANCE' WHERE id = ?").run(gamma);
    t.ctx.corps.invalidate();
    // delta's database file is gone: housekeeping must not create an empty one.
    const deltaPath = files ? t.ctx.tenants.pathOf(delta) : "";
    if (files) {
      t.ctx.tenants.close(delta);
      for (const suffix of ["", "-wal", "-shm"]) rmSync(deltaPath + suffix, { force: true });
    }

    const report = await job(T0).runOnce();
    expect(has(admin.corpId, a)).toBe(false);
    expect(has(beta, b)).toBe(false);
    expect(has(gamma, g)).toBe(true);
    if (files) expect(existsSync(deltaPath)).toBe(false);
    expect(report.databases.map((d) => d.database).sort()).toEqual(files ? ["acme", "beta", "platform"] : ["acme", "beta", "delta", "platform"]);
    expect(report.databases.every((d) => !d.error)).toBe(true);
  });
});

/** Metrics, values, QR codes and their accesses written straight into a corporation's database, as the service writes them. */
function analyticsFixture(t: TestApp, corpId: string, T0: number) {
  const db = tenantSql(t, corpId);
  const count = (sql: string, ...args: string[]) => (db.query(sql).get(...args) as { n: number }).n;
  const insertMetric = db.query("INSERT INTO metrics (id, name, data_type, periodicity, start_date, created_at, updated_at) VALUES (?, ?, 'Int', '5m', ?, ?, ?)");
  const insertValue = db.query("INSERT INTO metric_values (metric_id, at, at_ms, value) VALUES (?, ?, ?, ?)");
  const insertCode = db.query("INSERT INTO qr_codes (id, name, kind, target, created_at, updated_at) VALUES (?, ?, 'dynamic', 'https://example.net/', ?, ?)");
  const insertAccess = db.query("INSERT INTO qr_accesses (id, qrcode_id, at, ip, user_agent, referer, bot, visitor) VALUES (?, ?, ?, '203.0.113.7', 'test', NULL, 0, 1)");
  const bump = db.query("UPDATE qr_codes SET scans = scans + 1 WHERE id = ?");
  return {
    metric(name: string) {
      const id = idAt(T0);
      insertMetric.run(id, name, iso(T0 - 3000 * DAY), iso(T0), iso(T0));
      return id;
    },
    value(metricId: string, at: number, value = 1) {
      insertValue.run(metricId, iso(at), at, value);
    },
    code(name: string) {
      const id = idAt(T0);
      insertCode.run(id, name, iso(T0), iso(T0));
      return id;
    },
    access(codeId: string, at: number) {
      db.transaction(() => {
        insertAccess.run(idAt(at), codeId, iso(at));
        bump.run(codeId);
      })();
    },
    values: (metricId?: string) => (metricId ? count("SELECT count(*) AS n FROM metric_values WHERE metric_id = ?", metricId) : count("SELECT count(*) AS n FROM metric_values")),
    accesses: (codeId?: string) => (codeId ? count("SELECT count(*) AS n FROM qr_accesses WHERE qrcode_id = ?", codeId) : count("SELECT count(*) AS n FROM qr_accesses")),
    scans: (codeId: string) => count("SELECT scans AS n FROM qr_codes WHERE id = ?", codeId),
  };
}

describe("job housekeeping: metric values and QR accesses", () => {
  const range = (from: number, to: number) => `from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(to))}`;

  test("values timed over --metric-value-retention-days ago (default 400) go, by their own `at` whatever order they came in; the history shows what is left", async () => {
    const { t, admin, T0, job } = await setup();
    const metric = async (name: string) => {
      const res = await t.req("POST", "/api/metric", { token: admin.token, body: { name, data_type: "Int", periodicity: "5m", start_date: iso(T0 - 3000 * DAY) } });
      expect(res.status).toBe(200);
      return res.body.id as string;
    };
    const post = async (id: string, value: number, at: number) => {
      expect((await t.req("POST", `/api/metric/${id}/value`, { token: admin.token, body: { value, at: iso(at) } })).status).toBe(200);
    };
    const a = await metric("temperature");
    const b = await metric("clients");
    // Newest first: the values' seq runs against their time.
    await post(a, 6, T0 + HOUR);
    await post(a, 5, T0 - 10 * DAY);
    await post(a, 4, T0 - 400 * DAY + 60_000);
    await post(a, 3, T0 - 400 * DAY - 60_000);
    await post(a, 2, T0 - 401 * DAY);
    await post(a, 1, T0 - 500 * DAY);
    await post(b, 11, T0 - DAY);
    await post(b, 10, T0 - 1000 * DAY);
    const all = range(T0 - 3000 * DAY, T0 + DAY);
    const history = async (id: string) => {
      const res = await t.req("GET", `/api/metric/${id}/history?${all}&limit=100`, { token: admin.token });
      expect(res.status).toBe(200);
      return { values: (res.body.items as { value: number }[]).map((i) => i.value), total: res.body.total as number };
    };
    expect(await history(a)).toEqual({ values: [1, 2, 3, 4, 5, 6], total: 6 });

    const report = await job(T0).runOnce();

    expect(report.pruned.metric_values).toBe(4);
    expect(await history(a)).toEqual({ values: [4, 5, 6], total: 3 });
    expect(await history(b)).toEqual({ values: [11], total: 1 });
    const buckets = await t.req("GET", `/api/metric/${a}/history?${all}&bucket=1d`, { token: admin.token });
    expect(buckets.status).toBe(200);
    const items = buckets.body.items as { count: number; min: number; sum: number }[];
    expect(items.reduce((n, i) => n + i.count, 0)).toBe(3);
    expect(Math.min(...items.map((i) => i.min))).toBe(4);
    // The metrics themselves are untouched.
    expect((await t.req("GET", `/api/metric/${b}`, { token: admin.token })).status).toBe(200);
  });

  test("accesses scanned over --qr-access-retention-days ago (default 400) go from the accesses and reports; the code's scans still counts every scan", async () => {
    let fixed: number | null = null;
    const { t, admin, T0, job } = await setup({}, { now: () => fixed ?? Date.now() });
    const dynamic = async (name: string) => {
      const res = await t.req("POST", "/api/qrcode", { token: admin.token, body: { name, kind: "dynamic", target: `https://example.net/${name}` } });
      expect(res.status).toBe(200);
      return res.body as { id: string; slug: string };
    };
    const a = await dynamic("flyer");
    const b = await dynamic("poster");
    const db = tenantSql(t, admin.corpId);
    const stored = () => (db.query("SELECT count(*) AS n FROM qr_accesses").get() as { n: number }).n;
    // Scanned through the public redirect on a clock moved back: the writer thread stores them.
    const scanAt = async (code: { slug: string }, at: number, n = 1) => {
      fixed = at;
      for (let i = 0; i < n; i++) expect((await t.req("GET", `/q/${code.slug}`, { ip: `198.51.100.${i + 1}`, headers: { "user-agent": "Mozilla/5.0 Firefox/130.0" } })).status).toBe(302);
      fixed = null;
    };
    await scanAt(a, T0 - 500 * DAY, 2);
    await scanAt(a, T0 - 401 * DAY);
    await scanAt(a, T0 - 399 * DAY);
    await scanAt(a, T0 - HOUR, 2);
    await scanAt(b, T0 - 450 * DAY);
    await scanAt(b, T0 - DAY);
    await waitFor("the scans to be written", () => stored() === 8);

    const get = async (path: string) => {
      const res = await t.req("GET", path, { token: admin.token });
      expect(res.status).toBe(200);
      return res.body;
    };
    const all = range(T0 - 600 * DAY, T0 + DAY);
    const state = async (code: { id: string }) => ({
      scans: (await get(`/api/qrcode/${code.id}`)).scans,
      accesses: (await get(`/api/qrcode/${code.id}/accesses?${all}`)).total,
      report: (await get(`/api/qrcode/${code.id}/report?${all}`)).total,
    });
    expect(await state(a)).toEqual({ scans: 6, accesses: 6, report: 6 });

    const report = await job(T0).runOnce();

    expect(report.pruned.qr_accesses).toBe(4);
    expect(await state(a)).toEqual({ scans: 6, accesses: 3, report: 3 });
    expect(await state(b)).toEqual({ scans: 2, accesses: 1, report: 1 });
    const overall = await get(`/api/qrcode/report?${all}`);
    expect(overall.total).toBe(4);
    expect(Object.fromEntries((overall.groups as { id: string; total: number }[]).map((g) => [g.id, g.total]))).toEqual({ [a.id]: 3, [b.id]: 1 });
    const left = (await get(`/api/qrcode/${a.id}/accesses?${all}&sort=at`)).items as { at: string }[];
    expect(left.map((x) => x.at)).toEqual([iso(T0 - 399 * DAY), iso(T0 - HOUR), iso(T0 - HOUR)]);

    // The counter goes on from there.
    await scanAt(a, T0);
    await waitFor("the new scan", () => stored() === 5);
    expect(await state(a)).toEqual({ scans: 7, accesses: 4, report: 4 });
  });

  test("0 keeps metric values and QR accesses forever", async () => {
    const { t, admin, T0, job } = await setup({ CORPADMIN_METRIC_VALUE_RETENTION_DAYS: "0", CORPADMIN_QR_ACCESS_RETENTION_DAYS: "0" });
    const f = analyticsFixture(t, admin.corpId, T0);
    const m = f.metric("old");
    const c = f.code("old");
    f.value(m, T0 - 3000 * DAY);
    f.value(m, T0 - 36_000 * DAY);
    f.access(c, T0 - 3000 * DAY);
    const report = await job(T0).runOnce();
    expect([f.values(m), f.accesses(c), f.scans(c)]).toEqual([2, 1, 1]);
    expect(report.pruned).toMatchObject({ metric_values: 0, qr_accesses: 0 });
  });

  test("shorter settings prune accordingly", async () => {
    const { t, admin, T0, job } = await setup({ CORPADMIN_METRIC_VALUE_RETENTION_DAYS: "7", CORPADMIN_QR_ACCESS_RETENTION_DAYS: "30" });
    const f = analyticsFixture(t, admin.corpId, T0);
    const m = f.metric("week");
    const c = f.code("month");
    for (const days of [8, 6, 29, 31]) {
      f.value(m, T0 - days * DAY);
      f.access(c, T0 - days * DAY);
    }
    const report = await job(T0).runOnce();
    expect(report.pruned).toMatchObject({ metric_values: 3, qr_accesses: 1 });
    expect([f.values(m), f.accesses(c), f.scans(c)]).toEqual([1, 3, 4]);
  });

  test("many rows go in batches, across metrics and codes; the codes' scans are not lowered", async () => {
    const { t, admin, T0, job } = await setup();
    const f = analyticsFixture(t, admin.corpId, T0);
    const metrics = [f.metric("m1"), f.metric("m2"), f.metric("m3")];
    const codes = [f.code("c1"), f.code("c2"), f.code("c3")];
    for (let i = 0; i < 23; i++) f.value(metrics[i % 3], T0 - (401 + i) * DAY, i);
    for (let i = 0; i < 17; i++) f.access(codes[i % 3], T0 - (401 + i) * DAY);
    f.value(metrics[0], T0 - DAY);
    f.value(metrics[2], T0);
    f.access(codes[1], T0 - DAY);
    const seenValues = new Set<number>();
    const seenAccesses = new Set<number>();
    let done = false;
    const pass = job(T0, { batchSize: 5 })
      .runOnce()
      .finally(() => (done = true));
    while (!done) {
      seenValues.add(f.values());
      seenAccesses.add(f.accesses());
      await new Promise((r) => setImmediate(r));
    }
    const report = await pass;
    expect(report.pruned).toMatchObject({ metric_values: 23, qr_accesses: 17 });
    for (const n of [20, 15, 10, 5]) expect(seenValues).toContain(n);
    for (const n of [13, 8, 3]) expect(seenAccesses).toContain(n);
    expect(metrics.map((m) => f.values(m))).toEqual([1, 0, 1]);
    expect(codes.map((c) => [f.accesses(c), f.scans(c)])).toEqual([
      [0, 6],
      [1, 7],
      [0, 5],
    ]);
    // On PostgreSQL each look above is a psql run (29–54 s in CI runs, 61 s once at load 16).
  }, 150_000);

  test("scans recorded while a pass prunes are all kept and counted", async () => {
    const { t, admin, T0, job } = await setup();
    const code = await t.req("POST", "/api/qrcode", { token: admin.token, body: { name: "busy", kind: "dynamic", target: "https://example.net/busy" } });
    expect(code.status).toBe(200);
    const f = analyticsFixture(t, admin.corpId, T0);
    const db = tenantSql(t, admin.corpId);
    db.transaction(() => {
      for (let i = 0; i < 3000; i++) f.access(code.body.id, T0 - 500 * DAY + i);
    })();
    let done = false;
    const pass = job(T0, { batchSize: 20 })
      .runOnce()
      .finally(() => (done = true));
    let scans = 0;
    // Requests run between the batches; the writer thread commits them on its own connection.
    while (!done || scans < 20) {
      expect((await t.req("GET", `/q/${code.body.slug}`, { ip: `192.0.2.${scans % 250}`, headers: { "user-agent": "Mozilla/5.0" } })).status).toBe(302);
      scans++;
      // A request is answered within microtasks: let the pass (and the writer's timer) have a turn.
      // On PostgreSQL each of the pass's 150 batches waits for the corporation's writer lock
      // behind the scan writer's transaction, so the pass takes seconds: scans come paced there
      // (≈ 1 a millisecond), or the flood would outgrow what the recorder keeps pending.
      await (TEST_BACKEND === "pg" ? Bun.sleep(1) : new Promise((r) => setImmediate(r)));
    }
    expect((await pass).pruned.qr_accesses).toBe(3000);
    await waitFor("the scans to be written", () => f.accesses(code.body.id) === scans);
    expect(f.scans(code.body.id)).toBe(3000 + scans);
    expect((await t.req("GET", `/api/qrcode/${code.body.id}`, { token: admin.token })).body.scans).toBe(3000 + scans);
  });

  test("every ENABLED or BLOCKED corporation is pruned, each on its own; MAINTENANCE and NEEDS_UPDATE ones are left alone", async () => {
    const { t, admin, T0, job } = await setup();
    const corps = { acme: admin.corpId, beta: await addCorp(t, "beta"), gamma: await addCorp(t, "gamma"), delta: await addCorp(t, "delta") };
    const fixtures = Object.fromEntries(
      Object.entries(corps).map(([name, id]) => {
        const f = analyticsFixture(t, id, T0);
        const m = f.metric(`${name}-metric`);
        const c = f.code(`${name}-code`);
        f.value(m, T0 - 500 * DAY);
        f.value(m, T0 - DAY);
        f.access(c, T0 - 500 * DAY);
        f.access(c, T0 - 500 * DAY);
        f.access(c, T0 - DAY);
        return [name, { f, m, c }];
      }),
    );
    const status = t.sqlWrite().query("UPDATE corporations SET status = ? WHERE id = ?");
    status.run("BLOCKED", corps.beta);
    status.run("MAINTENANCE", corps.gamma);
    status.run("NEEDS_UPDATE", corps.delta);
    t.ctx.corps.invalidate();

    const report = await job(T0).runOnce();

    const left = (name: string) => {
      const { f, m, c } = fixtures[name];
      return [f.values(m), f.accesses(c), f.scans(c)];
    };
    expect(left("acme")).toEqual([1, 1, 3]);
    expect(left("beta")).toEqual([1, 1, 3]);
    expect(left("gamma")).toEqual([2, 3, 3]);
    expect(left("delta")).toEqual([2, 3, 3]);
    const pruned = Object.fromEntries(report.databases.map((d) => [d.database, d.pruned]));
    expect(Object.keys(pruned).sort()).toEqual(["acme", "beta", "platform"]);
    expect(pruned.acme).toMatchObject({ metric_values: 1, qr_accesses: 2 });
    expect(pruned.beta).toMatchObject({ metric_values: 1, qr_accesses: 2 });
    expect(report.pruned).toMatchObject({ metric_values: 2, qr_accesses: 4 });
  });
});

describe("job housekeeping: the job", () => {
  test("deletes in batches of the given size until nothing is left", async () => {
    const { t, admin, T0, job } = await setup();
    const device = platformSql(t).query("INSERT INTO remembered_devices (id, user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)");
    for (let i = 0; i < 23; i++) device.run(idAt(T0), admin.userId, `old-${i}`, iso(T0 - 2 * DAY), iso(T0 - DAY));
    device.run(idAt(T0), admin.userId, "valid", iso(T0), iso(T0 + DAY));
    const left = () => (platformSql(t).query("SELECT count(*) AS n FROM remembered_devices").get() as { n: number }).n;
    // Watch the table from the event loop while the pass runs: each batch is its own commit and
    // the pass lets other work run between them.
    const seen = new Set<number>();
    let done = false;
    const pass = job(T0, { batchSize: 5 })
      .runOnce()
      .finally(() => (done = true));
    while (!done) {
      seen.add(left());
      await new Promise((r) => setImmediate(r));
    }
    const report = await pass;
    expect(report.pruned.remembered_devices).toBe(23);
    expect(platformSql(t).query<{ token_hash: string }, []>("SELECT token_hash FROM remembered_devices").all()).toEqual([{ token_hash: "valid" }]);
    for (const n of [19, 14, 9, 4]) expect(seen).toContain(n);
  });

  test("passes follow the injected clock: at start, then when an hour has passed on it", async () => {
    const { t, admin, T0 } = await setup();
    let clock = T0;
    const hk = new Housekeeping(t.ctx, { now: () => clock, tickMs: 10 });
    const stop = hk.start();
    cleanups.push(stop);
    const db = platformSql(t);
    const device = (hash: string, expires: number) =>
      db.query("INSERT INTO remembered_devices (id, user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)").run(idAt(T0), admin.userId, hash, iso(T0), iso(expires));
    const present = (hash: string) => !!db.query("SELECT 1 FROM remembered_devices WHERE token_hash = ?").get(hash);
    device("at-start", T0 - 1);
    await waitFor("the first pass", () => !present("at-start"));
    device("later", T0 + 10 * 60_000);
    clock = T0 + 30 * 60_000;
    await Bun.sleep(100);
    // Expired on the clock, but the next pass is not due yet.
    expect(present("later")).toBe(true);
    clock = T0 + HOUR + 1;
    await waitFor("the hourly pass", () => !present("later"));
    await stop();
  });

  // SQLite's own maintenance (PostgreSQL's autovacuum and checkpointer need none from us).
  testSqliteOnly("PRAGMA optimize once a day per database; a heavy prune truncates the WAL", async () => {
    const { t, admin, T0, job } = await setup();
    const hk = job(T0, { heavyPruneRows: 50 });
    let clock = T0;
    const moving = new Housekeeping(t.ctx, { now: () => clock, heavyPruneRows: 50 });
    const first = await moving.runOnce();
    expect(first.databases.map((d) => [d.database, d.optimized])).toEqual([
      ["platform", true],
      ["acme", true],
    ]);
    clock += HOUR;
    expect((await moving.runOnce()).databases.every((d) => !d.optimized)).toBe(true);
    clock += DAY;
    expect((await moving.runOnce()).databases.every((d) => d.optimized)).toBe(true);

    const db = platformSql(t);
    const device = db.query("INSERT INTO remembered_devices (id, user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)");
    db.transaction(() => {
      for (let i = 0; i < 60; i++) device.run(idAt(T0), admin.userId, `bulk-${i}-${"x".repeat(200)}`, iso(T0 - DAY), iso(T0 - 1));
    })();
    const wal = join(t.dir, "platform.db-wal");
    expect(statSync(wal).size).toBeGreaterThan(0);
    const heavy = await hk.runOnce();
    expect(heavy.databases.find((d) => d.database === "platform")).toMatchObject({ checkpointed: true, pruned: { remembered_devices: 60 } });
    expect(statSync(wal).size).toBe(0);
    expect(heavy.databases.find((d) => d.database === "acme")?.checkpointed).toBe(false);
  });

  test("rows pruned per table are counted in the service metrics", async () => {
    const { t, admin, T0, job } = await setup();
    const counter = t.ctx.serviceMetrics.counter(METRIC_PRUNED);
    const before = counter.get({ table: "events" });
    const f = await tenantFixture(t, admin.token, admin.corpId);
    f.event({ at: T0 - 40 * DAY, dispatched: T0 - 40 * DAY });
    f.event({ at: T0 - 40 * DAY, dispatched: T0 - 40 * DAY });
    await job(T0).runOnce();
    expect(counter.get({ table: "events" }) - before).toBe(2);
    const text = t.ctx.serviceMetrics.render();
    expect(text).toContain(`# TYPE ${METRIC_PRUNED} counter`);
    for (const table of ["sessions", "password_reset_keys", "remembered_devices", "login_failures", "events", "webhook_deliveries", "isp_radius_accounting", "metric_values", "qr_accesses"]) {
      expect(text).toMatch(new RegExp(`^${METRIC_PRUNED}\\{table="${table}"\\} \\d+$`, "m"));
    }
    expect(text).toMatch(new RegExp(`^${METRIC_RUNS}\\{outcome="ok"\\} [1-9]`, "m"));
  });

  test("a pass in progress ends at its next batch when the app closes", async () => {
    const { t, admin, T0 } = await setup();
    const device = platformSql(t).query("INSERT INTO remembered_devices (id, user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)");
    for (let i = 0; i < 400; i++) device.run(idAt(T0), admin.userId, `old-${i}`, iso(T0 - 2 * DAY), iso(T0 - DAY));
    const hk = new Housekeeping(t.ctx, { now: () => T0, batchSize: 2, tickMs: 3_600_000 });
    const left = () => (platformSql(t).query("SELECT count(*) AS n FROM remembered_devices").get() as { n: number }).n;
    // Registered as the module registers its own job: the app's close waits for it.
    t.ctx.onClose(hk.start());
    while (left() === 400) await new Promise((r) => setImmediate(r));
    await t.close(false);
    // The pass stopped at a batch boundary before the databases closed: some rows went, far from
    // all (200 batches; the close stops the other jobs first, which on PostgreSQL lets a few more
    // batches through: 5 were seen in CI).
    const n = (t.sql().query("SELECT count(*) AS n FROM remembered_devices").get() as { n: number }).n;
    expect(n).toBeLessThan(400);
    expect(n % 2).toBe(0);
    expect(n).toBeGreaterThan(300);
  });
});

test("settings: defaults, environment, flags and bounds", () => {
  const base = { CORPADMIN_DATA_DIR: "/tmp/x" };
  const days = (c: ReturnType<typeof loadConfig>) => [c.eventRetentionDays, c.accountingRetentionDays, c.metricValueRetentionDays, c.qrAccessRetentionDays];
  expect(days(loadConfig(new Map(), base))).toEqual([30, 400, 400, 400]);
  const env = {
    ...base,
    CORPADMIN_EVENT_RETENTION_DAYS: "7",
    CORPADMIN_ACCOUNTING_RETENTION_DAYS: "0",
    CORPADMIN_METRIC_VALUE_RETENTION_DAYS: "0",
    CORPADMIN_QR_ACCESS_RETENTION_DAYS: "36500",
  };
  expect(days(loadConfig(new Map(), env))).toEqual([7, 0, 0, 36_500]);
  const flags = new Map([
    ["event-retention-days", "90"],
    ["accounting-retention-days", "730"],
    ["metric-value-retention-days", "31"],
    ["qr-access-retention-days", "0"],
  ]);
  expect(days(loadConfig(flags, env))).toEqual([90, 730, 31, 0]);
  expect(() => loadConfig(new Map([["event-retention-days", "0"]]), base)).toThrow(ConfigError);
  for (const flag of ["accounting-retention-days", "metric-value-retention-days", "qr-access-retention-days"]) {
    expect(() => loadConfig(new Map([[flag, "-1"]]), base)).toThrow(ConfigError);
    expect(() => loadConfig(new Map([[flag, "36501"]]), base)).toThrow(ConfigError);
    expect(() => loadConfig(new Map([[flag, "x"]]), base)).toThrow(ConfigError);
  }
});

test("uuidV7Floor orders below every id of its millisecond and above every earlier one", () => {
  const t = Date.parse("2026-05-01T10:00:00.000Z");
  const floor = uuidV7Floor(t);
  for (let i = 0; i < 50; i++) {
    expect(idAt(t - 1) < floor).toBe(true);
    expect(idAt(t) < floor).toBe(false);
  }
});
