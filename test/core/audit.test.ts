// The audit log: security events of the auth rows as platform rows and JSON lines, retention,
// and no secrets anywhere.
// source-only: captures the in-process logger and drives the audit log with a clock.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { AuditLog } from "../../src/core/audit";
import { ADMIN, addCorp, addUser, makeApp, startAndLogin, tempDir, type TestApp } from "../support/helpers";
import { auditedApp as auditedAppOf } from "../support/audit";
import { waitFor } from "../support/webhooks";

const apps: TestApp[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const a of apps) await a.close();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

async function auditedApp() {
  const a = await auditedAppOf();
  apps.push(a.t);
  return a;
}

test("login success and failure (with the problem slug), logout, refresh and corp change are recorded in the table and on stdout", async () => {
  const { t, rows, logged, lines } = await auditedApp();
  const { token, corpId, userId } = await startAndLogin(t);
  const beta = await addCorp(t, "beta");
  const wrongPassword = "not-the-password-xyz";
  expect((await t.req("POST", "/api/login", { body: { corp: "acme", login: ADMIN.login, password: wrongPassword }, ip: "203.0.113.7" })).status).toBe(403);
  expect((await t.req("POST", "/api/login", { body: { corp: "nowhere", login: "ghost", password: wrongPassword } })).status).toBe(403);
  const refreshed = await t.req("GET", "/api/auth/refresh", { token, ip: "198.51.100.2" });
  expect(refreshed.status).toBe(200);
  const changed = await t.req("POST", "/api/auth/corp", { token: refreshed.body.access_token, body: { corp: "beta" } });
  expect(changed.status).toBe(200);
  expect((await t.req("DELETE", "/api/logout", { token: changed.body.access_token })).status).toBe(204);

  const r = rows();
  const pick = (action: string, outcome: string) => r.filter((x) => x.action === action && x.outcome === outcome);
  expect(pick("auth.login", "success")[0]).toMatchObject({ actor_user_id: userId, corp_id: corpId, target: ADMIN.login });
  const failures = pick("auth.login", "failure");
  expect(failures).toHaveLength(2);
  expect(failures[0]).toMatchObject({ actor_user_id: null, corp_id: corpId, target: ADMIN.login, ip: "203.0.113.7", reason: "invalid-credentials" });
  expect(failures[1]).toMatchObject({ corp_id: null, target: "ghost", reason: "invalid-credentials" });
  expect(pick("auth.refresh", "success")[0]).toMatchObject({ actor_user_id: userId, corp_id: corpId, ip: "198.51.100.2" });
  expect(pick("auth.corp_change", "success")[0]).toMatchObject({ actor_user_id: userId, corp_id: corpId, target: beta });
  expect(pick("auth.logout", "success")[0]).toMatchObject({ actor_user_id: userId, corp_id: beta });
  for (const x of r) expect(x.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);

  // The same events as JSON lines, field for field.
  const l = logged();
  expect(l.map((x) => x.id).sort()).toEqual(r.map((x) => x.id).sort());
  const line = l.find((x) => x.action === "auth.login" && x.outcome === "failure")!;
  expect(line).toMatchObject({ level: "info", msg: "audit", reason: "invalid-credentials", target: ADMIN.login });

  // Never a secret: no password, no token, anywhere in the table or the log.
  const everything = JSON.stringify(r) + lines.join("");
  for (const secret of [wrongPassword, ADMIN.password, token, refreshed.body.access_token, changed.body.access_token]) expect(everything).not.toContain(secret);
});

test("failed refresh and corp change carry the reason: another corporation, a blocked corporation", async () => {
  const { t, rows } = await auditedApp();
  await startAndLogin(t);
  const beta = await addCorp(t, "beta");
  const acme = (await t.ctx.corps.find("acme"))!.id;
  const member = await addUser(t, acme);
  expect((await t.req("POST", "/api/auth/corp", { token: member.token, body: { corp: "beta" } })).status).toBe(403);
  t.sqlWrite().run("UPDATE corporations SET status = 'BLOCKED' WHERE id = ?", [acme]);
  t.ctx.corps.invalidate();
  const refresh = await t.req("GET", "/api/auth/refresh", { token: member.token });
  const r = rows();
  expect(r.find((x) => x.action === "auth.corp_change")).toMatchObject({ outcome: "failure", actor_user_id: member.userId, corp_id: acme, target: beta, reason: "forbidden" });
  // Platform rows are not gated, so the refresh handler itself refuses the blocked corporation.
  expect(refresh.status).toBe(403);
  expect(r.find((x) => x.action === "auth.refresh")).toMatchObject({ outcome: "failure", actor_user_id: member.userId, corp_id: acme, reason: "corp-blocked" });
});

test("retention: entries older than the setting are pruned at start and by pruneExpired; long values are cut", async () => {
  const dir = tempDir();
  dirs.push(dir);
  const first = await makeApp({ dir, env: { CORPADMIN_AUDIT_RETENTION_DAYS: "30" } });
  const day = 86_400_000;
  let now = Date.now();
  const log = new AuditLog(first.ctx.store.platform, first.ctx.logger, 30, () => now);
  now = Date.now() - 31 * day;
  await log.record({ action: "test.old", outcome: "success" });
  now = Date.now() - 29 * day;
  await log.record({ action: "test.recent", outcome: "success", target: "x".repeat(1000) });
  now = Date.now();
  await first.close(false);

  // Started again on the same directory: the 31-day-old entry is gone, the 29-day-old one stays.
  const t = await makeApp({ dir, env: { CORPADMIN_AUDIT_RETENTION_DAYS: "30" } });
  apps.push(t);
  const actions = () => (t.sql().query("SELECT action, target FROM audit_log").all() as { action: string; target: string }[]);
  // The pruning runs as a job of the app, started just after start-up.
  await waitFor("the start-up prune", () => !actions().some((a) => a.action === "test.old"));
  expect(actions().map((a) => a.action)).toEqual(["test.recent"]);
  expect(actions()[0].target.length).toBe(200);

  const clocked = new AuditLog(t.ctx.store.platform, t.ctx.logger, 30, () => Date.now() + 2 * day);
  expect(await clocked.pruneExpired()).toBe(1);
  expect(actions()).toEqual([]);
});

test("the retention setting is validated", async () => {
  await expect(makeApp({ env: { CORPADMIN_AUDIT_RETENTION_DAYS: "0" } })).rejects.toThrow("--audit-retention-days");
  await expect(makeApp({ env: { CORPADMIN_BACKUP_CRON: "not a cron" } })).rejects.toThrow("--backup-cron");
  await expect(makeApp({ env: { CORPADMIN_METRICS_LOOPBACK: "maybe" } })).rejects.toThrow("--metrics-loopback-only");
});
