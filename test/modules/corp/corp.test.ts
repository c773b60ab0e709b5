import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { addCorp, addUser, adminIn, makeApp, startAndLogin, TARGET, tempDir, UNKNOWN_ID, openApp, type User } from "../../support/helpers";
import { TEST_BACKEND } from "../../support/backend";

/** A corporation's database is a file (SQLite); on PostgreSQL it is its rows of the shared tables. */
const FILES = TEST_BACKEND === "sqlite";

const { t, admin } = await openApp();
/** A member of acme granted platform.corp: still not `*`, so every `*` row is 403 for them. */
let corpAdmin: User;

beforeAll(async () => {
  corpAdmin = await addUser(t, admin.corpId, { login: "corp-admin", services: ["platform.corp", "platform.workgroup"] });
});

const builtinServer = () => (t.sql().query("SELECT id FROM servers WHERE builtin = 1").get() as { id: string }).id;
const serviceId = (identifier: string) =>
  (t.sql().query("SELECT id FROM services WHERE identifier = ?").get(identifier) as { id: string }).id;

describe("POST /api/corp", () => {
  test("creates the corporation, its database on the built-in server, every built-in service enabled", async () => {
    const res = await admin.req("POST", "/api/corp", { auth_name: "beta-net", company_name: "Beta Net", trade_name: "Beta", timezone: "Europe/Lisbon", email: "ops@beta.example" });
    expect(res.status).toBe(200);
    expect(res.headers.get("location")).toBe(`/api/corp/${res.body.id}`);
    expect(res.body).toMatchObject({
      auth_name: "beta-net",
      company_name: "Beta Net",
      trade_name: "Beta",
      doc_identity: null,
      email: "ops@beta.example",
      phone: null,
      timezone: "Europe/Lisbon",
      server_id: builtinServer(),
      status: "ENABLED",
    });
    if (FILES) expect(existsSync(join(t.dir, "corps", `${res.body.id}.db`))).toBe(true);
    const tables = t.sql(res.body.id).query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    expect(tables.map((r) => r.name)).toContain("notes");
    const tree = await admin.req("GET", `/api/corp/${res.body.id}/tree`);
    expect(tree.body.services.map((s: { identifier: string }) => s.identifier)).toHaveLength(16);
  });

  test("timezone defaults to UTC", async () => {
    const res = await admin.req("POST", "/api/corp", { auth_name: "utc-corp", company_name: "UTC" });
    expect(res.status).toBe(200);
    expect(res.body.timezone).toBe("UTC");
  });

  test("400 names each bad field", async () => {
    const res = await admin.req("POST", "/api/corp", { auth_name: "Bad Name", email: "not-an-email" });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["auth_name", "company_name", "email"]);
    const tz = await admin.req("POST", "/api/corp", { auth_name: "tz-corp", company_name: "TZ", timezone: "Mars/Olympus" });
    expect(tz.status).toBe(400);
    expect(tz.body.errors[0].path).toBe("timezone");
    const server = await admin.req("POST", "/api/corp", { auth_name: "srv-corp", company_name: "S", server_id: UNKNOWN_ID });
    expect(server.status).toBe(400);
    expect(server.body.errors[0].path).toBe("server_id");
  });

  test("409 when the auth_name is taken", async () => {
    const res = await admin.req("POST", "/api/corp", { auth_name: "acme", company_name: "Again" });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe("urn:corpadmin:problem:conflict");
  });

  test("401 without a token, 403 for anyone but `*`", async () => {
    expect((await t.req("POST", "/api/corp", { body: { auth_name: "x-corp", company_name: "X" } })).status).toBe(401);
    const res = await t.req("POST", "/api/corp", { token: corpAdmin.token, body: { auth_name: "x-corp", company_name: "X" } });
    expect(res.status).toBe(403);
  });
});

describe("GET /api/corp; GET /api/corp/{id}; GET /api/corp/authname/{authName}", () => {
  test("lists with q, filters and sort", async () => {
    await addCorp(t, "zeta-fiber");
    const all = await admin.req("GET", "/api/corp?limit=500");
    expect(all.status).toBe(200);
    expect(all.body.items.map((c: { auth_name: string }) => c.auth_name)).toContain("zeta-fiber");
    const q = await admin.req("GET", "/api/corp?q=ZETA");
    expect(q.body.items.map((c: { auth_name: string }) => c.auth_name)).toEqual(["zeta-fiber"]);
    const filtered = await admin.req("GET", "/api/corp?auth_name=acme");
    expect(filtered.body.total).toBe(1);
    const sorted = await admin.req("GET", "/api/corp?sort=-auth_name&limit=1");
    expect(sorted.body.items[0].auth_name).toBe("zeta-fiber");
    expect((await admin.req("GET", "/api/corp?sort=nope")).status).toBe(400);
    expect((await admin.req("GET", "/api/corp?limit=501")).status).toBe(400);
    expect((await t.req("GET", "/api/corp")).status).toBe(401);
    expect((await t.req("GET", "/api/corp", { token: corpAdmin.token })).status).toBe(403);
  });

  test("shows by id and by auth name; unknown and malformed ids are 404", async () => {
    const res = await admin.req("GET", `/api/corp/${admin.corpId}`);
    expect(res.status).toBe(200);
    expect(res.body.auth_name).toBe("acme");
    const byName = await admin.req("GET", "/api/corp/authname/acme");
    expect(byName.status).toBe(200);
    expect(byName.body.id).toBe(admin.corpId);
    expect((await admin.req("GET", `/api/corp/${UNKNOWN_ID}`)).status).toBe(404);
    expect((await admin.req("GET", "/api/corp/not-a-uuid")).status).toBe(404);
    expect((await admin.req("GET", "/api/corp/authname/nobody-here")).status).toBe(404);
    expect((await t.req("GET", `/api/corp/${admin.corpId}`, { token: corpAdmin.token })).status).toBe(403);
    expect((await t.req("GET", "/api/corp/authname/acme", { token: corpAdmin.token })).status).toBe(403);
    expect((await t.req("GET", "/api/corp/authname/acme")).status).toBe(401);
  });
});

describe("PUT /api/corp/{id}", () => {
  test("replaces every writable field; left out optional fields become null, timezone UTC", async () => {
    const id = await addCorp(t, "put-corp", "America/Sao_Paulo");
    const full = await admin.req("PUT", `/api/corp/${id}`, { auth_name: "put-corp-2", company_name: "Put 2", phone: "+55 11 5555", timezone: "Asia/Tokyo" });
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ auth_name: "put-corp-2", company_name: "Put 2", phone: "+55 11 5555", timezone: "Asia/Tokyo", server_id: builtinServer() });
    const bare = await admin.req("PUT", `/api/corp/${id}`, { auth_name: "put-corp-2", company_name: "Put 2" });
    expect(bare.body).toMatchObject({ phone: null, timezone: "UTC" });
    // the corporation cache sees the change at once: login by the new auth_name works
    const u = await addUser(t, id, { login: "put-corp-user" });
    expect((await t.req("POST", "/api/login", { body: { corp: "put-corp-2", login: u.login, password: u.password } })).status).toBe(200);
  });

  test("409 auth_name taken, 409 server_id changed, same server_id accepted", async () => {
    const id = await addCorp(t, "put-clash");
    expect((await admin.req("PUT", `/api/corp/${id}`, { auth_name: "acme", company_name: "C" })).status).toBe(409);
    const other = (await admin.req("POST", "/api/server", { name: "put-clash-srv", path: join(tempDir(), "srv") })).body;
    const moved = await admin.req("PUT", `/api/corp/${id}`, { auth_name: "put-clash", company_name: "C", server_id: other.id });
    expect(moved.status).toBe(409);
    const same = await admin.req("PUT", `/api/corp/${id}`, { auth_name: "put-clash", company_name: "C", server_id: builtinServer() });
    expect(same.status).toBe(200);
  });

  test("400, 401, 403, 404", async () => {
    expect((await admin.req("PUT", `/api/corp/${admin.corpId}`, { auth_name: "acme" })).body.errors[0].path).toBe("company_name");
    expect((await t.req("PUT", `/api/corp/${admin.corpId}`, { body: { auth_name: "acme", company_name: "A" } })).status).toBe(401);
    expect((await t.req("PUT", `/api/corp/${admin.corpId}`, { token: corpAdmin.token, body: { auth_name: "acme", company_name: "A" } })).status).toBe(403);
    expect((await admin.req("PUT", `/api/corp/${UNKNOWN_ID}`, { auth_name: "ghost-corp", company_name: "A" })).status).toBe(404);
  });
});

describe("DELETE /api/corp/{id}", () => {
  test("removes memberships, workgroups and sessions, and moves the database file to DATA_DIR/deleted", async () => {
    const id = await addCorp(t, "doomed");
    const member = await addUser(t, id, { login: "doomed-user", services: ["platform.core"] });
    // write something so the file (and its WAL) hold data
    expect((await t.req("POST", "/api/notepad", { token: member.token, body: { content: "keep me" } })).status).toBe(200);
    const dbFile = join(t.dir, "corps", `${id}.db`);
    if (FILES) expect(existsSync(dbFile)).toBe(true);

    const res = await admin.req("DELETE", `/api/corp/${id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect((await admin.req("GET", `/api/corp/${id}`)).status).toBe(404);
    const count = (sql: string) => (t.sql().query(sql).get(id) as { n: number }).n;
    expect(count("SELECT count(*) AS n FROM corp_members WHERE corp_id = ?")).toBe(0);
    expect(count("SELECT count(*) AS n FROM workgroups WHERE corp_id = ?")).toBe(0);
    expect(count("SELECT count(*) AS n FROM corp_services WHERE corp_id = ?")).toBe(0);
    expect(count("SELECT count(*) AS n FROM sessions WHERE corp_id = ? AND revoked_at IS NULL")).toBe(0);
    expect((await t.req("GET", "/api/auth/credentials", { token: member.token })).status).toBe(401);
    if (!FILES) {
      // PostgreSQL: the corporation's rows are deleted from every shared table.
      expect(t.sql(id).query("SELECT count(*) AS n FROM notes").get()).toEqual({ n: 0 });
      expect((await admin.req("POST", "/api/corp", { auth_name: "doomed", company_name: "Doomed again" })).status).toBe(200);
      return;
    }
    if (TARGET === "source") expect(t.ctx.tenants.isOpen(id)).toBe(false);

    expect(existsSync(dbFile)).toBe(false);
    const moved = readdirSync(join(t.dir, "deleted")).filter((f) => f.startsWith(`${id}-`) && f.endsWith(".db"));
    expect(moved).toHaveLength(1);
    expect(moved[0]).toMatch(new RegExp(`^${id}-\\d{8}T\\d{9}Z\\.db$`));
    // the moved file is a whole database: the note is still there
    const { Database } = await import("bun:sqlite");
    const copy = new Database(join(t.dir, "deleted", moved[0]), { readonly: true });
    expect((copy.query("SELECT content FROM notes").get() as { content: string }).content).toBe("keep me");
    copy.close();
    // the auth_name is free again
    expect((await admin.req("POST", "/api/corp", { auth_name: "doomed", company_name: "Doomed again" })).status).toBe(200);
  });

  test("the user stays (only the membership goes)", async () => {
    const id = await addCorp(t, "doomed-two");
    const member = await addUser(t, id, { login: "doomed-two-user" });
    expect((await admin.req("DELETE", `/api/corp/${id}`)).status).toBe(204);
    expect(t.sql().query("SELECT id FROM users WHERE id = ?").get(member.userId)).not.toBeNull();
  });

  test("401, 403, 404", async () => {
    const id = await addCorp(t, "survivor");
    expect((await t.req("DELETE", `/api/corp/${id}`)).status).toBe(401);
    expect((await t.req("DELETE", `/api/corp/${id}`, { token: corpAdmin.token })).status).toBe(403);
    expect((await admin.req("DELETE", `/api/corp/${UNKNOWN_ID}`)).status).toBe(404);
    expect((await admin.req("GET", `/api/corp/${id}`)).status).toBe(200);
  });
});

describe("GET /api/corp/{id}/user; POST|DELETE /api/corp/{id}/user/{userId}: users of a corporation", () => {
  test("lists members as User resources, with q", async () => {
    const id = await addCorp(t, "members-corp");
    const a = await addUser(t, id, { login: "member-alpha" });
    await addUser(t, id, { login: "member-beta" });
    const res = await admin.req("GET", `/api/corp/${id}/user`);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(2);
    const first = res.body.items.find((u: { id: string }) => u.id === a.userId);
    expect(Object.keys(first).sort()).toEqual(["builtin", "corps", "created_at", "email", "id", "login", "name", "status", "super_admin", "two_factor_required", "updated_at"]);
    expect(first.corps).toEqual({ "members-corp": { id, company_name: "MEMBERS-CORP" } });
    const q = await admin.req("GET", `/api/corp/${id}/user?q=ALPHA`);
    expect(q.body.items.map((u: { login: string }) => u.login)).toEqual(["member-alpha"]);
    expect((await admin.req("GET", `/api/corp/${id}/user?password_hash=x`)).status).toBe(400);
    expect((await admin.req("GET", `/api/corp/${UNKNOWN_ID}/user`)).status).toBe(404);
    expect((await t.req("GET", `/api/corp/${id}/user`, { token: corpAdmin.token })).status).toBe(403);
    expect((await t.req("GET", `/api/corp/${id}/user`)).status).toBe(401);
  });

  test("adds a user (again: unchanged), who can then log in there", async () => {
    const id = await addCorp(t, "join-corp");
    const u = await addUser(t, admin.corpId, { login: "joiner" });
    const login = () => t.req("POST", "/api/login", { body: { corp: "join-corp", login: u.login, password: u.password } });
    expect((await login()).status).toBe(403);
    const res = await admin.req("POST", `/api/corp/${id}/user/${u.userId}`);
    expect(res.status).toBe(204);
    expect((await admin.req("POST", `/api/corp/${id}/user/${u.userId}`)).status).toBe(204);
    expect((await admin.req("GET", `/api/corp/${id}/user`)).body.total).toBe(1);
    expect((await login()).status).toBe(200);
    expect((await admin.req("POST", `/api/corp/${id}/user/${UNKNOWN_ID}`)).status).toBe(404);
    expect((await admin.req("POST", `/api/corp/${UNKNOWN_ID}/user/${u.userId}`)).status).toBe(404);
    expect((await t.req("POST", `/api/corp/${id}/user/${u.userId}`, { token: corpAdmin.token })).status).toBe(403);
    expect((await t.req("POST", `/api/corp/${id}/user/${u.userId}`)).status).toBe(401);
  });

  test("removing a user takes them out of the corporation's workgroups and revokes their sessions there only", async () => {
    const id = await addCorp(t, "leave-corp");
    const u = await addUser(t, id, { login: "leaver", services: ["platform.city"] });
    // also a member of acme, with a session there
    expect((await admin.req("POST", `/api/corp/${admin.corpId}/user/${u.userId}`)).status).toBe(204);
    const acmeLogin = await t.req("POST", "/api/login", { body: { corp: "acme", login: u.login, password: u.password } });
    expect(acmeLogin.status).toBe(200);
    const acmeWg = (await admin.req("POST", "/api/workgroup", { name: "acme-leavers" })).body.id;
    expect((await admin.req("POST", `/api/workgroup/${acmeWg}/user/${u.userId}`)).status).toBe(204);

    const res = await admin.req("DELETE", `/api/corp/${id}/user/${u.userId}`);
    expect(res.status).toBe(204);
    // out of the corporation's workgroups, still in acme's
    expect(t.sql().query("SELECT workgroup_id FROM workgroup_members WHERE user_id = ?").all(u.userId)).toEqual([{ workgroup_id: acmeWg }]);
    expect((await t.req("GET", "/api/auth/credentials", { token: u.token })).status).toBe(401);
    expect((await t.req("GET", "/api/auth/credentials", { token: acmeLogin.body.access_token })).status).toBe(200);
    expect((await t.req("POST", "/api/login", { body: { corp: "leave-corp", login: u.login, password: u.password } })).status).toBe(403);
    // not a member any more: 404
    expect((await admin.req("DELETE", `/api/corp/${id}/user/${u.userId}`)).status).toBe(404);
    expect((await admin.req("DELETE", `/api/corp/${id}/user/${UNKNOWN_ID}`)).status).toBe(404);
    expect((await t.req("DELETE", `/api/corp/${id}/user/${u.userId}`, { token: corpAdmin.token })).status).toBe(403);
    expect((await t.req("DELETE", `/api/corp/${id}/user/${u.userId}`)).status).toBe(401);
  });
});

describe("POST|DELETE /api/corp/{id}/service/{serviceId}: services of a corporation", () => {
  test("removing a service drops it from the tree and its grants to the corporation's workgroups only", async () => {
    const id = await addCorp(t, "svc-corp");
    const city = serviceId("platform.city");
    const u = await addUser(t, id, { login: "svc-user", services: ["platform.city"] });
    const other = await addUser(t, admin.corpId, { login: "svc-other", services: ["platform.city"] });
    const perms = async (token: string) => (await t.req("GET", "/api/auth/credentials", { token })).body.credentials.permission.admin;
    expect(await perms(u.token)).toEqual(["platform.city"]);

    expect((await admin.req("DELETE", `/api/corp/${id}/service/${city}`)).status).toBe(204);
    expect(await perms(u.token)).toEqual([]);
    expect(await perms(other.token)).toEqual(["platform.city"]);
    const grants = t
      .sql()
      .query("SELECT count(*) AS n FROM workgroup_services ws JOIN workgroups w ON w.id = ws.workgroup_id WHERE w.corp_id = ?")
      .get(id) as { n: number };
    expect(grants.n).toBe(0);
    const tree = await admin.req("GET", `/api/corp/${id}/tree`);
    expect(tree.body.services.map((s: { identifier: string }) => s.identifier)).not.toContain("platform.city");
    // removing what is not there: 404
    expect((await admin.req("DELETE", `/api/corp/${id}/service/${city}`)).status).toBe(404);

    // adding it back (twice: unchanged) restores the tree, not the grants
    expect((await admin.req("POST", `/api/corp/${id}/service/${city}`)).status).toBe(204);
    expect((await admin.req("POST", `/api/corp/${id}/service/${city}`)).status).toBe(204);
    expect((await admin.req("GET", `/api/corp/${id}/tree`)).body.services.map((s: { identifier: string }) => s.identifier)).toContain("platform.city");
    expect(await perms(u.token)).toEqual([]);
  });

  test("feature grants of the removed service go too", async () => {
    const id = await addCorp(t, "svc-feat");
    const svc = (await admin.req("POST", "/api/service", { identifier: "ext.billing", name: "Billing" })).body;
    const feat = (await admin.req("POST", "/api/feature", { service_id: svc.id, name: "invoices" })).body;
    await admin.req("POST", `/api/feature/${feat.id}/action`, { action: "localhost:80/api/invoice/GET" });
    expect((await admin.req("POST", `/api/corp/${id}/service/${svc.id}`)).status).toBe(204);
    const u = await addUser(t, id, { login: "svc-feat-user" });
    const wg = (await adminIn(t, id, "POST", "/api/workgroup", { name: "billing" })).body as { id: string };
    await adminIn(t, id, "POST", `/api/workgroup/${wg.id}/user/${u.userId}`);
    await adminIn(t, id, "POST", `/api/workgroup/${wg.id}/feature/${feat.id}`);
    const allow = async () => (await t.req("GET", "/api/auth/credentials", { token: u.token })).body.credentials.permission.allow;
    expect(await allow()).toEqual(["localhost:80/api/invoice/GET"]);
    expect((await admin.req("DELETE", `/api/corp/${id}/service/${svc.id}`)).status).toBe(204);
    expect(await allow()).toEqual([]);
    expect(t.sql().query("SELECT * FROM workgroup_features WHERE workgroup_id = ?").all(wg.id)).toEqual([]);
  });

  test("401, 403, 404", async () => {
    const city = serviceId("platform.city");
    expect((await t.req("POST", `/api/corp/${admin.corpId}/service/${city}`)).status).toBe(401);
    expect((await t.req("POST", `/api/corp/${admin.corpId}/service/${city}`, { token: corpAdmin.token })).status).toBe(403);
    expect((await t.req("DELETE", `/api/corp/${admin.corpId}/service/${city}`, { token: corpAdmin.token })).status).toBe(403);
    expect((await admin.req("POST", `/api/corp/${admin.corpId}/service/${UNKNOWN_ID}`)).status).toBe(404);
    expect((await admin.req("POST", `/api/corp/${UNKNOWN_ID}/service/${city}`)).status).toBe(404);
    expect((await admin.req("DELETE", `/api/corp/${admin.corpId}/service/${UNKNOWN_ID}`)).status).toBe(404);
  });
});

describe("GET /api/corp/{id}/tree", () => {
  test("services enabled for the corporation with features and actions", async () => {
    const svc = (await admin.req("POST", "/api/service", { identifier: "ext.tree", name: "Tree" })).body;
    await admin.req("POST", `/api/service/${svc.id}/features`, {
      features: [{ name: "read", actions: [{ action: "localhost:80/api/thing/GET", name: "list" }, { action: "localhost:80/api/thing/{id}/GET" }] }],
    });
    const id = await addCorp(t, "tree-corp");
    const before = await admin.req("GET", `/api/corp/${id}/tree`);
    expect(before.body.services.find((s: { id: string }) => s.id === svc.id)).toBeUndefined();
    await admin.req("POST", `/api/corp/${id}/service/${svc.id}`);
    const res = await admin.req("GET", `/api/corp/${id}/tree`);
    expect(res.status).toBe(200);
    const node = res.body.services.find((s: { id: string }) => s.id === svc.id);
    expect(Object.keys(node).sort()).toEqual(["features", "id", "identifier", "name"]);
    expect(node.features).toHaveLength(1);
    expect(Object.keys(node.features[0]).sort()).toEqual(["actions", "id", "name"]);
    expect(node.features[0].actions.map((a: { action: string }) => a.action)).toEqual(["localhost:80/api/thing/GET", "localhost:80/api/thing/{id}/GET"]);
    expect(node.features[0].actions[0].name).toBe("list");
  });

  test("platform.workgroup may see the working corporation's tree only; others 403", async () => {
    const res = await t.req("GET", `/api/corp/${admin.corpId}/tree`, { token: corpAdmin.token });
    expect(res.status).toBe(200);
    const other = await addCorp(t, "tree-other");
    expect((await t.req("GET", `/api/corp/${other}/tree`, { token: corpAdmin.token })).status).toBe(403);
    const plain = await addUser(t, admin.corpId, { login: "tree-plain" });
    expect((await t.req("GET", `/api/corp/${admin.corpId}/tree`, { token: plain.token })).status).toBe(403);
    const byAction = await addUser(t, admin.corpId, { login: "tree-action", actions: ["localhost:80/api/corp/{id}/tree/GET"] });
    expect((await t.req("GET", `/api/corp/${admin.corpId}/tree`, { token: byAction.token })).status).toBe(200);
    expect((await t.req("GET", `/api/corp/${admin.corpId}/tree`)).status).toBe(401);
    expect((await admin.req("GET", `/api/corp/${UNKNOWN_ID}/tree`)).status).toBe(404);
  });
});

describe("POST /api/corp/check", () => {
  test("answers for known and unknown names, public", async () => {
    const known = await t.req("POST", "/api/corp/check", { body: { auth_name: "acme" } });
    expect(known.status).toBe(200);
    expect(known.body).toEqual({ auth_name: "acme", exists: true, status: "ENABLED", usable: true });
    const unknown = await t.req("POST", "/api/corp/check", { body: { auth_name: "no-such-corp" } });
    expect(unknown.body).toEqual({ auth_name: "no-such-corp", exists: false, status: null, usable: false });
    const id = await addCorp(t, "check-blocked");
    await admin.req("POST", `/api/corp/${id}/block`);
    const blocked = await t.req("POST", "/api/corp/check", { body: { auth_name: "check-blocked" } });
    expect(blocked.body).toEqual({ auth_name: "check-blocked", exists: true, status: "BLOCKED", usable: false });
    const bad = await t.req("POST", "/api/corp/check", { body: {} });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("auth_name");
  });

  test("is rate-limited per client IP, counted before validation", async () => {
    const r = await makeApp({ options: { publicAuthLimit: 60 } });
    try {
      await startAndLogin(r);
      for (let i = 0; i < 60; i++) {
        const res = await r.req("POST", "/api/corp/check", { body: i % 2 ? {} : { auth_name: "acme" }, ip: "198.51.100.9" });
        expect(res.status).toBe(i % 2 ? 400 : 200);
      }
      const limited = await r.req("POST", "/api/corp/check", { body: { auth_name: "acme" }, ip: "198.51.100.9" });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await r.req("POST", "/api/corp/check", { body: { auth_name: "acme" }, ip: "198.51.100.10" })).status).toBe(200);
    } finally {
      await r.close();
    }
  });
});

describe("POST /api/corp: servers", () => {
  test("a corporation created on a second server keeps its database in that server's directory", async () => {
    const dir = join(tempDir(), "second", "server");
    const srv = await admin.req("POST", "/api/server", { name: "second", path: dir });
    expect(srv.status).toBe(200);
    const res = await admin.req("POST", "/api/corp", { auth_name: "far-corp", company_name: "Far", server_id: srv.body.id });
    expect(res.status).toBe(200);
    expect(res.body.server_id).toBe(srv.body.id);
    if (FILES) expect(existsSync(join(dir, `${res.body.id}.db`))).toBe(true);
    expect(existsSync(join(t.dir, "corps", `${res.body.id}.db`))).toBe(false);
    const u = await addUser(t, res.body.id, { login: "far-user" });
    expect((await t.req("POST", "/api/notepad", { token: u.token, body: { content: "far away" } })).status).toBe(200);
    expect((await admin.req("GET", `/api/server/${srv.body.id}`)).body.corp_count).toBe(1);
    // deleting it moves the file from that directory to DATA_DIR/deleted
    expect((await admin.req("DELETE", `/api/corp/${res.body.id}`)).status).toBe(204);
    if (!FILES) return;
    expect(existsSync(join(dir, `${res.body.id}.db`))).toBe(false);
    expect(readdirSync(join(t.dir, "deleted")).some((f) => f.startsWith(`${res.body.id}-`))).toBe(true);
  });
});
