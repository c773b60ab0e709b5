// Maintenance (routes.md, Core): versions, and the databases checked and updated.
import { describe, expect, test } from "bun:test";
import { existsSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { migrationsOf, type Migration } from "../../../src/db/migrations";
import { sha256Hex } from "../../../src/lib/ids";
import pkg from "../../../package.json";
import { addCorp, addUser, makeApp, startAndLogin, testSourceOnly, UNKNOWN_ID, openApp } from "../../support/helpers";
import { TEST_BACKEND } from "../../support/backend";

const { t, admin } = await openApp();

/** In-process and on SQLite's files: simulates a release's migrations over them, or moves them. */
const testSqliteSourceOnly = TEST_BACKEND === "pg" ? test.skip : testSourceOnly;
/** On PostgreSQL one migration set covers the platform's tables and the corporations' (shared). */
const platformSet = () => migrationsOf(TEST_BACKEND === "pg" ? "pg" : "platform");
const tenantSet = () => migrationsOf(TEST_BACKEND === "pg" ? "pg" : "tenant");

describe("GET /api/core/versions", () => {
  test("api, schema versions and runtime, for any token", async () => {
    const u = await addUser(t, admin.corpId);
    const res = await t.req("GET", "/api/core/versions", { token: u.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      api: pkg.version,
      platform_schema: platformSet().length,
      tenant_schema: tenantSet().length,
      runtime: `bun ${Bun.version}`,
    });
    expect(res.body.tenant_schema).toBeGreaterThanOrEqual(2);
    expect((await t.req("GET", "/api/core/versions")).status).toBe(401);
  });
});

/** A migration newer than every embedded one; `statements` run in order inside its transaction. */
function extraMigration(tag: string, statements: string[], offset = 1): Migration {
  const last = migrationsOf("tenant").at(-1)!.folderMillis;
  const text = statements.join("\n--> statement-breakpoint\n");
  return { tag, sql: statements, bps: true, folderMillis: last + offset, hash: sha256Hex(text) };
}

describe("GET /api/core/database; POST /api/core/database/update; POST /api/core/database/update/{corpId}: database maintenance", () => {
  // In-process: simulates a newer release's migrations (SQLite's per-corporation sets).
  testSqliteSourceOnly("check, then update all: a failing corporation is rolled back and set NEEDS_UPDATE, the others go on", async () => {
    const d = await makeApp();
    try {
      const a = await startAndLogin(d);
      const good = (await d.req("POST", "/api/corp", { token: a.token, body: { auth_name: "good-corp", company_name: "Good" } })).body.id;
      const bad = (await d.req("POST", "/api/corp", { token: a.token, body: { auth_name: "bad-corp", company_name: "Bad" } })).body.id;
      const member = await addUser(d, bad, { login: "bad-member" });
      const embedded = migrationsOf("tenant");

      const clean = await d.req("GET", "/api/core/database", { token: a.token });
      expect(clean.status).toBe(200);
      expect(clean.body.platform).toEqual({ version: migrationsOf("platform").length, latest: migrationsOf("platform").length, pending: [] });
      expect(clean.body.corps).toHaveLength(3);
      expect(clean.body.corps.find((c: { corp_id: string }) => c.corp_id === good)).toEqual({
        corp_id: good, auth_name: "good-corp", server_id: d.ctx.builtinServerId, status: "ENABLED", version: embedded.length, latest: embedded.length, pending: [],
      });

      // A new release: its migration creates two tables, and `bad-corp` already has the second
      // one (say, created by hand), so the migration fails there halfway.
      d.sqlWrite(bad).exec("CREATE TABLE release_two (x INTEGER)");
      d.ctx.tenants.migrations = [
        ...embedded,
        extraMigration("9000_release", ["CREATE TABLE release_one (x INTEGER)", "CREATE TABLE release_two (x INTEGER)"]),
      ];
      const pending = await d.req("GET", "/api/core/database", { token: a.token });
      for (const c of pending.body.corps) expect(c).toMatchObject({ version: embedded.length, latest: embedded.length + 1, pending: ["9000_release"] });

      const res = await d.req("POST", "/api/core/database/update", { token: a.token });
      expect(res.status).toBe(200);
      expect(res.body.platform).toEqual({ from: migrationsOf("platform").length, to: migrationsOf("platform").length, applied: [] });
      const byId = Object.fromEntries(res.body.corps.map((c: { corp_id: string }) => [c.corp_id, c]));
      expect(byId[good]).toEqual({ corp_id: good, from: embedded.length, to: embedded.length + 1, applied: ["9000_release"], error: null });
      expect(byId[a.corpId].error).toBeNull();
      expect(byId[bad]).toMatchObject({ corp_id: bad, from: embedded.length, to: embedded.length, applied: [] });
      expect(byId[bad].error).toContain("release_two");
      // rolled back: the first table of the failed migration is not there
      const tables = (id: string) => (d.sql(id).query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);
      expect(tables(bad)).not.toContain("release_one");
      expect(tables(good)).toContain("release_one");

      // NEEDS_UPDATE: its sessions get 503 on tenant rows, logins 503
      expect((await d.req("GET", `/api/corp/${bad}`, { token: a.token })).body.status).toBe("NEEDS_UPDATE");
      expect((await d.req("GET", "/api/notepad", { token: member.token })).status).toBe(503);
      expect((await d.req("POST", "/api/login", { body: { corp: "bad-corp", login: member.login, password: member.password } })).status).toBe(503);
      expect((await d.req("GET", `/api/corp/${good}`, { token: a.token })).body.status).toBe("ENABLED");
      const after = await d.req("GET", "/api/core/database", { token: a.token });
      expect(after.body.corps.find((c: { corp_id: string }) => c.corp_id === bad)).toMatchObject({ status: "NEEDS_UPDATE", pending: ["9000_release"] });

      // one corporation, still failing: 409, still NEEDS_UPDATE
      const again = await d.req("POST", `/api/core/database/update/${bad}`, { token: a.token });
      expect(again.status).toBe(409);
      expect(again.body.detail).toContain("NEEDS_UPDATE");
      expect((await d.req("GET", `/api/corp/${bad}`, { token: a.token })).body.status).toBe("NEEDS_UPDATE");

      // the operator fixes the database; the update succeeds and the corporation is ENABLED again
      d.sqlWrite(bad).exec("DROP TABLE release_two");
      const fixed = await d.req("POST", `/api/core/database/update/${bad}`, { token: a.token });
      expect(fixed.status).toBe(200);
      expect(fixed.body).toEqual({ corp_id: bad, from: embedded.length, to: embedded.length + 1, applied: ["9000_release"] });
      expect((await d.req("GET", `/api/corp/${bad}`, { token: a.token })).body.status).toBe("ENABLED");
      expect((await d.req("GET", "/api/notepad", { token: member.token })).status).toBe(200);
      // nothing left to do: applied is empty
      expect((await d.req("POST", `/api/core/database/update/${bad}`, { token: a.token })).body.applied).toEqual([]);
    } finally {
      await d.close();
    }
  });

  test("update of one corporation: success on NEEDS_UPDATE sets ENABLED; a MAINTENANCE one keeps its status", async () => {
    const id = await addCorp(t, "maint-db");
    await admin.req("POST", `/api/corp/${id}/needs-update`);
    const res = await admin.req("POST", `/api/core/database/update/${id}`);
    expect(res.status).toBe(200);
    expect(res.body.applied).toEqual([]);
    expect((await admin.req("GET", `/api/corp/${id}`)).body.status).toBe("ENABLED");
    await admin.req("POST", `/api/corp/${id}/maintenance`);
    expect((await admin.req("POST", `/api/core/database/update/${id}`)).status).toBe(200);
    expect((await admin.req("GET", `/api/corp/${id}`)).body.status).toBe("MAINTENANCE");
  });

  // In-process: closes the app's handle of the file.
  testSqliteSourceOnly("tables: creates a missing database file with every table; idempotent", async () => {
    const id = await addCorp(t, "tables-corp");
    const file = join(t.dir, "corps", `${id}.db`);
    const first = await admin.req("POST", `/api/core/database/tables/${id}`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ corp_id: id, created: [], version: migrationsOf("tenant").length });

    // the file disappears (an operator moved it away); check reports version 0 without creating it
    t.ctx.tenants.close(id);
    renameSync(file, `${file}.moved`);
    rmSync(`${file}-wal`, { force: true });
    rmSync(`${file}-shm`, { force: true });
    const check = await admin.req("GET", "/api/core/database");
    expect(check.body.corps.find((c: { corp_id: string }) => c.corp_id === id)).toMatchObject({ version: 0, pending: migrationsOf("tenant").map((m) => m.tag) });
    expect(existsSync(file)).toBe(false);

    const created = await admin.req("POST", `/api/core/database/tables/${id}`);
    expect(created.status).toBe(200);
    expect(created.body.version).toBe(migrationsOf("tenant").length);
    expect(created.body.created).toContain("notes");
    expect(created.body.created).toContain("events");
    expect(existsSync(file)).toBe(true);
    const again = await admin.req("POST", `/api/core/database/tables/${id}`);
    expect(again.body).toEqual({ corp_id: id, created: [], version: migrationsOf("tenant").length });
    // the corporation works on its new, empty database
    const u = await addUser(t, id);
    expect((await t.req("POST", "/api/notepad", { token: u.token, body: { content: "fresh" } })).status).toBe(200);
  });

  testSqliteSourceOnly("tables: a file removed while its handle is cached is recreated on disk", async () => {
    const id = await addCorp(t, "tables-cached");
    const file = join(t.dir, "corps", `${id}.db`);
    t.ctx.store.tenant(id);
    for (const s of ["", "-wal", "-shm"]) rmSync(file + s, { force: true });
    const res = await admin.req("POST", `/api/core/database/tables/${id}`);
    expect(res.status).toBe(200);
    expect(res.body.created).toContain("notes");
    expect(existsSync(file)).toBe(true);
  });

  (TEST_BACKEND === "pg" ? test : test.skip)("on PostgreSQL: the platform and every corporation report the shared set; tables creates nothing", async () => {
    const id = await addCorp(t, "shared-set");
    const shared = { version: platformSet().length, latest: platformSet().length, pending: [] };
    const check = await admin.req("GET", "/api/core/database");
    expect(check.status).toBe(200);
    expect(check.body.platform).toEqual(shared);
    expect(check.body.corps.find((c: { corp_id: string }) => c.corp_id === id)).toMatchObject(shared);
    const tables = await admin.req("POST", `/api/core/database/tables/${id}`);
    expect([tables.status, tables.body]).toEqual([200, { corp_id: id, created: [], version: platformSet().length }]);
    const update = await admin.req("POST", "/api/core/database/update");
    expect(update.body.platform).toEqual({ from: platformSet().length, to: platformSet().length, applied: [] });
  });

  test("401, 403 (platform.core is not `*`), 404", async () => {
    const u = await addUser(t, admin.corpId, { services: ["platform.core"] });
    for (const [m, p] of [
      ["GET", "/api/core/database"],
      ["POST", "/api/core/database/update"],
      ["POST", `/api/core/database/update/${admin.corpId}`],
      ["POST", `/api/core/database/tables/${admin.corpId}`],
    ]) {
      expect((await t.req(m, p)).status).toBe(401);
      expect((await t.req(m, p, { token: u.token })).status).toBe(403);
    }
    expect((await admin.req("POST", `/api/core/database/update/${UNKNOWN_ID}`)).status).toBe(404);
    expect((await admin.req("POST", `/api/core/database/tables/${UNKNOWN_ID}`)).status).toBe(404);
    expect((await admin.req("POST", "/api/core/database/tables/not-a-uuid")).status).toBe(404);
  });
});
