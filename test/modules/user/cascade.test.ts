// source-only: deletes rows past the API to check the database's own cascades.
import { expect, test } from "bun:test";
import { addCorp, addUser, openApp } from "../../support/helpers";

const { t, admin } = await openApp();

const count = (table: string, where = "1 = 1", ...args: string[]) =>
  (t.sql().query(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).get(...args) as { n: number }).n;

test("deleting a corporation removes its safe IP ranges and failure counters", async () => {
  const corpId = await addCorp(t, "short-lived");
  expect((await t.req("POST", "/api/auth/safe-ip/short-lived", { token: admin.token, body: { range: "10.0.0.0/8" } })).status).toBe(200);
  await t.req("POST", "/api/login", { body: { corp: "short-lived", login: "someone", password: "wrong" } });
  expect(count("safe_ip_ranges", "corp_id = ?", corpId)).toBe(1);
  expect(count("login_failures", "corp_id = ?", corpId)).toBe(1);
  t.sqlWrite().query("DELETE FROM corporations WHERE id = ?").run(corpId);
  expect(count("safe_ip_ranges", "corp_id = ?", corpId)).toBe(0);
  expect(count("login_failures", "corp_id = ?", corpId)).toBe(0);
});

test("deleting a user removes their external identities, remembered devices and reset keys", async () => {
  const u = await addUser(t, admin.corpId, { login: "leaves-traces", services: ["platform.user"] });
  const now = new Date().toISOString();
  const later = new Date(Date.now() + 3600_000).toISOString();
  const sql = t.sqlWrite();
  sql.query("INSERT INTO external_identities (id, provider, subject, email, user_id, created_at, updated_at) VALUES (?, 'google', 's-1', NULL, ?, ?, ?)").run(crypto.randomUUID(), u.userId, now, now);
  sql.query("INSERT INTO remembered_devices (id, user_id, token_hash, created_at, expires_at) VALUES (?, ?, 'h-1', ?, ?)").run(crypto.randomUUID(), u.userId, now, later);
  sql.query("INSERT INTO password_reset_keys (id, user_id, key_hash, created_at, expires_at) VALUES (?, ?, 'k-1', ?, ?)").run(crypto.randomUUID(), u.userId, now, later);
  expect((await t.req("DELETE", `/api/user/${u.userId}`, { token: admin.token })).status).toBe(204);
  expect(count("external_identities", "user_id = ?", u.userId)).toBe(0);
  expect(count("remembered_devices", "user_id = ?", u.userId)).toBe(0);
  expect(count("password_reset_keys", "user_id = ?", u.userId)).toBe(0);
  expect(count("corp_members", "user_id = ?", u.userId)).toBe(0);
  expect(count("workgroup_members", "user_id = ?", u.userId)).toBe(0);
});
