import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addUser, tempDir, UNKNOWN_ID, openApp } from "../../support/helpers";
import { TEST_BACKEND, testSqliteOnly } from "../../support/backend";

const { t, admin } = await openApp();
let root: string;

beforeAll(async () => {
  root = tempDir("corpadmin-servers-");
});
const builtinId = () => (t.sql().query("SELECT id FROM servers WHERE builtin = 1").get() as { id: string }).id;

describe("GET|POST /api/server; GET|PUT|DELETE /api/server/{id}: servers", () => {
  test("the built-in server is DATA_DIR/corps and holds the first corporation", async () => {
    const res = await admin.req("GET", "/api/server");
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(1);
    expect(res.body.items[0]).toMatchObject({ id: builtinId(), path: join(t.dir, "corps"), builtin: true, corp_count: 1 });
    expect(Object.keys(res.body.items[0]).sort()).toEqual(["builtin", "corp_count", "created_at", "description", "id", "name", "path", "updated_at"]);
  });

  test("create makes the directory when missing and normalises the path", async () => {
    const dir = join(root, "a", "b");
    expect(existsSync(dir)).toBe(false);
    const res = await admin.req("POST", "/api/server", { name: "disk-a", path: `${dir}/../b/`, description: "second disk" });
    expect(res.status).toBe(200);
    expect(res.headers.get("location")).toBe(`/api/server/${res.body.id}`);
    expect(res.body).toMatchObject({ name: "disk-a", path: dir, description: "second disk", builtin: false, corp_count: 0 });
    expect(statSync(dir).isDirectory()).toBe(true);
    expect((await admin.req("GET", `/api/server/${res.body.id}`)).body.path).toBe(dir);
    expect((await admin.req("GET", "/api/server?q=disk-a")).body.total).toBe(1);
    expect((await admin.req("GET", "/api/server?builtin=false")).body.items.map((s: { name: string }) => s.name)).toContain("disk-a");
  });

  test("400 path not absolute or not a writable directory", async () => {
    const rel = await admin.req("POST", "/api/server", { name: "rel", path: "relative/dir" });
    expect(rel.status).toBe(400);
    expect(rel.body.errors[0].path).toBe("path");
    const file = join(root, "a-file");
    writeFileSync(file, "x");
    const onFile = await admin.req("POST", "/api/server", { name: "on-file", path: file });
    expect(onFile.status).toBe(400);
    expect(onFile.body.errors[0].path).toBe("path");
    const under = await admin.req("POST", "/api/server", { name: "under-file", path: join(file, "sub") });
    expect(under.status).toBe(400);
    const proc = await admin.req("POST", "/api/server", { name: "proc", path: "/proc/corpadmin-test" });
    expect(proc.status).toBe(400);
    const missing = await admin.req("POST", "/api/server", { path: join(root, "x") });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].path).toBe("name");
    expect((await admin.req("GET", "/api/server?name=proc")).body.total).toBe(0);
  });

  test("409 name or path taken", async () => {
    const dir = join(root, "taken");
    expect((await admin.req("POST", "/api/server", { name: "taken", path: dir })).status).toBe(200);
    expect((await admin.req("POST", "/api/server", { name: "taken", path: join(root, "other") })).status).toBe(409);
    expect((await admin.req("POST", "/api/server", { name: "taken-2", path: `${dir}/` })).status).toBe(409);
    expect((await admin.req("POST", "/api/server", { name: "builtin-copy", path: join(t.dir, "corps") })).status).toBe(409);
  });

  test("update: name, description and path of an empty server; 409 name or path taken", async () => {
    const s = (await admin.req("POST", "/api/server", { name: "movable", path: join(root, "movable") })).body;
    const moved = await admin.req("PUT", `/api/server/${s.id}`, { name: "moved", path: join(root, "moved-here") });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ name: "moved", path: join(root, "moved-here"), description: null });
    expect(existsSync(join(root, "moved-here"))).toBe(true);
    await admin.req("POST", "/api/server", { name: "neighbour", path: join(root, "neighbour") });
    expect((await admin.req("PUT", `/api/server/${s.id}`, { name: "neighbour", path: join(root, "moved-here") })).status).toBe(409);
    expect((await admin.req("PUT", `/api/server/${s.id}`, { name: "moved", path: join(root, "neighbour") })).status).toBe(409);
    const bad = await admin.req("PUT", `/api/server/${s.id}`, { name: "moved", path: "nope" });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("path");
  });

  test("409 path changed on the built-in server or on one holding corporations; other fields may change", async () => {
    const builtin = builtinId();
    expect((await admin.req("PUT", `/api/server/${builtin}`, { name: "builtin", path: join(root, "elsewhere") })).status).toBe(409);
    const renamed = await admin.req("PUT", `/api/server/${builtin}`, { name: "main", path: join(t.dir, "corps"), description: "main disk" });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: "main", builtin: true, description: "main disk" });

    const s = (await admin.req("POST", "/api/server", { name: "holding", path: join(root, "holding") })).body;
    const corp = await admin.req("POST", "/api/corp", { auth_name: "held-corp", company_name: "Held", server_id: s.id });
    expect(corp.status).toBe(200);
    // On PostgreSQL a corporation's database is its rows of the shared tables, in no directory.
    if (TEST_BACKEND === "sqlite") expect(existsSync(join(root, "holding", `${corp.body.id}.db`))).toBe(true);
    expect((await admin.req("PUT", `/api/server/${s.id}`, { name: "holding", path: join(root, "holding-2") })).status).toBe(409);
    expect((await admin.req("PUT", `/api/server/${s.id}`, { name: "holding-renamed", path: join(root, "holding") })).body.corp_count).toBe(1);
    // deleting is refused while it holds corporations, allowed once they are gone
    expect((await admin.req("DELETE", `/api/server/${s.id}`)).status).toBe(409);
    expect((await admin.req("DELETE", `/api/corp/${corp.body.id}`)).status).toBe(204);
    expect((await admin.req("DELETE", `/api/server/${s.id}`)).status).toBe(204);
    expect((await admin.req("GET", `/api/server/${s.id}`)).status).toBe(404);
  });

  // SQLite: the corporation's file cannot be created; on PostgreSQL nothing is written there.
  testSqliteOnly("a server whose directory became unusable: creating a corporation there is 409 and leaves nothing behind", async () => {
    const dir = join(root, "vanishing");
    const s = (await admin.req("POST", "/api/server", { name: "vanishing", path: dir })).body;
    rmSync(dir, { recursive: true });
    writeFileSync(dir, "now a file");
    const res = await admin.req("POST", "/api/corp", { auth_name: "lost-corp", company_name: "Lost", server_id: s.id });
    expect(res.status).toBe(409);
    expect((await admin.req("GET", "/api/corp/authname/lost-corp")).status).toBe(404);
    expect((await admin.req("GET", `/api/server/${s.id}`)).body.corp_count).toBe(0);
  });

  test("the built-in server cannot be deleted", async () => {
    const res = await admin.req("DELETE", `/api/server/${builtinId()}`);
    expect(res.status).toBe(409);
    expect((await admin.req("GET", `/api/server/${builtinId()}`)).status).toBe(200);
  });

  test("401, 403 (platform.server is not `*`), 404", async () => {
    const u = await addUser(t, admin.corpId, { services: ["platform.server"] });
    const id = builtinId();
    for (const [m, p, b] of [
      ["GET", "/api/server"],
      ["POST", "/api/server", { name: "n", path: join(root, "n") }],
      ["GET", `/api/server/${id}`],
      ["PUT", `/api/server/${id}`, { name: "n", path: join(root, "n") }],
      ["DELETE", `/api/server/${id}`],
    ] as [string, string, unknown?][]) {
      expect((await t.req(m, p, { body: b })).status).toBe(401);
      expect((await t.req(m, p, { token: u.token, body: b })).status).toBe(403);
    }
    expect(existsSync(join(root, "n"))).toBe(false);
    expect((await admin.req("GET", `/api/server/${UNKNOWN_ID}`)).status).toBe(404);
    expect((await admin.req("PUT", `/api/server/${UNKNOWN_ID}`, { name: "n", path: join(root, "n") })).status).toBe(404);
    expect((await admin.req("DELETE", `/api/server/${UNKNOWN_ID}`)).status).toBe(404);
  });
});
