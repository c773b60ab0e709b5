// source-only: restarts the app in-process over one data directory, with a corporation file made unreadable in between.
// The dispatcher's index of corporations with webhooks (webhook/service.ts): start-up and the
// hourly sweep visit only the corporations it names, and it is rebuilt when its marker is missing.
import { afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, rmSync, writeFileSync } from "node:fs";
import type { WebhookDispatcher } from "../../../src/modules/webhook/jobs";
import { addCorp, adminIn, makeApp, startAndLogin, tempDir, type TestApp } from "../../support/helpers";
import { testSqliteOnly } from "../../support/backend";
import { FAST, LOOPBACK_ALLOWED, manualClock, receiver, waitFor } from "../../support/webhooks";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Logged {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

const clock = manualClock();

async function start(dir: string) {
  const logs: Logged[] = [];
  const at = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => void logs.push({ level, msg, fields });
  const logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  const t = await makeApp({ dir, env: LOOPBACK_ALLOWED, options: { logger, now: clock.now, dispatchTuning: FAST } });
  return { t, logs };
}

const indexKeys = (t: TestApp) =>
  (t.sql().query("SELECT key FROM settings WHERE key LIKE 'webhook-dispatcher:%' ORDER BY key").all() as { key: string }[]).map((r) => r.key);
/** The corporations the dispatcher logged trouble with. */
const troubled = (logs: Logged[]) => logs.filter((l) => l.level !== "debug" && l.level !== "info" && l.fields.corp_id).map((l) => l.fields.corp_id);

describe("POST /api/webhook, DELETE /api/webhook/{id}: the dispatcher's index of corporations", () => {
  // SQLite-only: it proves a corporation's file is never opened by making it unreadable.
  testSqliteOnly("start-up never opens a corporation without webhooks, still delivers a pending retry, and rebuilds the index without its marker", async () => {
    const dir = tempDir();
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    let answers = 0;
    const rec = receiver(() => new Response("", { status: answers++ === 0 ? 500 : 200 }));
    cleanups.push(() => rec.stop());

    const first = await start(dir);
    const admin = await startAndLogin(first.t);
    const idle = await addCorp(first.t, "idle-isp");
    const hook = await first.t.req("POST", "/api/webhook", {
      token: admin.token,
      body: { name: "r", target: rec.url(), email: "ops@example.net", groups: ["CITY_AFTER_INSERT"], log_enabled: true },
    });
    expect(hook.status).toBe(200);
    expect(indexKeys(first.t)).toEqual([`webhook-dispatcher:corp:${admin.corpId}`, "webhook-dispatcher:indexed"]);
    expect((await first.t.req("POST", "/api/city", { token: admin.token, body: { name: "Curitiba", state: "PR", country: "BR" } })).status).toBe(200);
    // The first attempt fails: a retry is due in 30 s, pending across the restart.
    await waitFor("the failed first attempt", () => first.t.sql(admin.corpId).query("SELECT 1 FROM webhook_deliveries WHERE attempts = 1 AND status = 'pending'").get());
    await first.t.close(false);

    // The corporation without webhooks gets an unreadable file: opening it would be logged.
    const idleFile = `${dir}/corps/${idle}.db`;
    for (const suffix of ["-wal", "-shm"]) rmSync(idleFile + suffix, { force: true });
    copyFileSync(idleFile, `${idleFile}.kept`);
    writeFileSync(idleFile, "not a database ".repeat(512));
    clock.advance(60_000);
    const second = await start(dir);
    await waitFor("the retry after the restart", () => rec.requests.length === 2);
    await waitFor("the delivery done", () => second.t.sql(admin.corpId).query("SELECT 1 FROM webhook_deliveries WHERE status = 'succeeded'").get());
    expect(rec.requests[0].headers["webhook-id"]).toBe(rec.requests[1].headers["webhook-id"]);
    // The hourly sweep (run by hand) does not open it either.
    await second.t.ctx.jobs.get<WebhookDispatcher>("webhook-dispatcher")!.sweep(true);
    await Bun.sleep(100);
    expect(troubled(second.logs)).toEqual([]);
    await second.t.close(false);

    // Without the marker (a restored backup) start-up reads every corporation: the unreadable one
    // keeps the index incomplete, and is said.
    const dropIndex = () => {
      const raw = new Database(`${dir}/platform.db`);
      raw.exec("DELETE FROM settings WHERE key LIKE 'webhook-dispatcher:%'");
      raw.close();
    };
    dropIndex();
    const third = await start(dir);
    await waitFor("the index rebuilt", () => indexKeys(third.t).length === 1);
    expect(indexKeys(third.t)).toEqual([`webhook-dispatcher:corp:${admin.corpId}`]);
    expect(troubled(third.logs)).toContain(idle);
    await third.t.close(false);

    // Readable again: the rebuild completes.
    copyFileSync(`${idleFile}.kept`, idleFile);
    dropIndex();
    const fourth = await start(dir);
    await waitFor("the index complete", () => indexKeys(fourth.t).includes("webhook-dispatcher:indexed"));
    expect(indexKeys(fourth.t)).toEqual([`webhook-dispatcher:corp:${admin.corpId}`, "webhook-dispatcher:indexed"]);
    expect(troubled(fourth.logs)).toEqual([]);

    // Deleting the last webhook drops the corporation from the index.
    expect((await adminIn(fourth.t, admin.corpId, "DELETE", `/api/webhook/${(hook.body as { id: string }).id}`)).status).toBe(204);
    await waitFor("the key dropped", () => indexKeys(fourth.t).length === 1);
    expect(indexKeys(fourth.t)).toEqual(["webhook-dispatcher:indexed"]);
    await fourth.t.close(false);
  }, 30_000);

  test("events raised before a corporation's first webhook are not sent to it, even those a crash left undispatched", async () => {
    const dir = tempDir();
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const rec = receiver();
    cleanups.push(() => rec.stop());
    const { t } = await start(dir);
    cleanups.push(() => t.close(false));
    const admin = await startAndLogin(t);
    const { emit } = await import("../../support/webhooks");
    // Committed with no wake-up, as a crash before the dispatcher's pass would leave it.
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { before: true }, false);
    const hook = await t.req("POST", "/api/webhook", { token: admin.token, body: { name: "r", target: rec.url(), email: "ops@example.net", groups: ["CITY_AFTER_INSERT"] } });
    expect(hook.status).toBe(200);
    await emit(t, admin.corpId, "CITY_AFTER_INSERT", { after: true });
    await waitFor("the later event", () => rec.requests.length === 1);
    await Bun.sleep(150);
    expect(rec.requests.map((r) => JSON.parse(r.body).data)).toMatchObject([{ after: true }]);
  });
});
