import { beforeAll, describe, expect, test } from "bun:test";
import { addCorp, addUser, adminIn, UNKNOWN_ID, openApp } from "../../support/helpers";

const { t, admin } = await openApp();
let svc: { id: string; identifier: string };
let read: { id: string };
let write: { id: string };

beforeAll(async () => {
  svc = (await admin.req("POST", "/api/service", { identifier: "ext.docs", name: "Docs" })).body;
  await admin.req("POST", `/api/corp/${admin.corpId}/service/${svc.id}`);
  const up = await admin.req("POST", `/api/service/${svc.id}/features`, {
    features: [
      { name: "read", actions: [{ action: "localhost:80/api/doc/GET" }, { action: "localhost:80/api/doc/{id}/GET" }] },
      { name: "write", actions: [{ action: "localhost:80/api/doc/POST" }] },
    ],
  });
  [read, write] = up.body.items;
});

type Node = { id: string; name: string; allowed: boolean; actions: { action: string }[]; children: Node[] };
const find = (nodes: Node[], name: string): Node | undefined => {
  for (const n of nodes) {
    if (n.name === name) return n;
    const inner = find(n.children, name);
    if (inner) return inner;
  }
};

describe("POST /api/menu", () => {
  test("creates (Location) and replaces by id", async () => {
    const res = await admin.req("POST", "/api/menu", { name: "Documents", icon: "folder", url: "/docs", position: 3, feature_id: read.id });
    expect(res.status).toBe(200);
    expect(res.headers.get("location")).toBe(`/api/menu/${res.body.id}`);
    expect(res.body).toMatchObject({ parent_id: null, name: "Documents", icon: "folder", url: "/docs", position: 3, feature_id: read.id });
    expect(Object.keys(res.body).sort()).toEqual(["created_at", "feature_id", "icon", "id", "name", "parent_id", "position", "updated_at", "url"]);
    const upd = await admin.req("POST", "/api/menu", { id: res.body.id, name: "Docs" });
    expect(upd.status).toBe(200);
    expect(upd.headers.get("location")).toBeNull();
    expect(upd.body).toMatchObject({ id: res.body.id, name: "Docs", icon: null, url: null, position: 0, feature_id: null });
  });

  test("404 unknown id; 400 unknown parent_id or feature_id, or a cycle", async () => {
    expect((await admin.req("POST", "/api/menu", { id: UNKNOWN_ID, name: "X" })).status).toBe(404);
    const parent = await admin.req("POST", "/api/menu", { name: "X", parent_id: UNKNOWN_ID });
    expect(parent.status).toBe(400);
    expect(parent.body.errors[0].path).toBe("parent_id");
    const feature = await admin.req("POST", "/api/menu", { name: "X", feature_id: UNKNOWN_ID });
    expect(feature.status).toBe(400);
    expect(feature.body.errors[0].path).toBe("feature_id");
    expect((await admin.req("POST", "/api/menu", { name: "" })).body.errors[0].path).toBe("name");

    const a = (await admin.req("POST", "/api/menu", { name: "cyc-a" })).body;
    const b = (await admin.req("POST", "/api/menu", { name: "cyc-b", parent_id: a.id })).body;
    const c = (await admin.req("POST", "/api/menu", { name: "cyc-c", parent_id: b.id })).body;
    const self = await admin.req("POST", "/api/menu", { id: a.id, name: "cyc-a", parent_id: a.id });
    expect(self.status).toBe(400);
    expect(self.body.errors[0].path).toBe("parent_id");
    expect((await admin.req("POST", "/api/menu", { id: a.id, name: "cyc-a", parent_id: c.id })).status).toBe(400);
    // moving a leaf elsewhere is fine
    expect((await admin.req("POST", "/api/menu", { id: c.id, name: "cyc-c", parent_id: a.id })).status).toBe(200);
  });

  test("401, 403 for anyone but `*`", async () => {
    const u = await addUser(t, admin.corpId, { services: ["platform.service"] });
    expect((await t.req("POST", "/api/menu", { body: { name: "X" } })).status).toBe(401);
    expect((await t.req("POST", "/api/menu", { token: u.token, body: { name: "X" } })).status).toBe(403);
  });
});

describe("GET /api/menu/tree", () => {
  test("roots and children by position, each with its feature's actions and `allowed` for the caller", async () => {
    const root = (await admin.req("POST", "/api/menu", { name: "Tree root", position: -100 })).body;
    await admin.req("POST", "/api/menu", { name: "Tree write", parent_id: root.id, position: 2, feature_id: write.id });
    await admin.req("POST", "/api/menu", { name: "Tree read", parent_id: root.id, position: 1, feature_id: read.id });
    await admin.req("POST", "/api/menu", { name: "Tree plain", parent_id: root.id, position: 3 });

    const reader = await addUser(t, admin.corpId, { actions: ["localhost:80/api/doc/GET", "localhost:80/api/doc/{id}/GET"] });
    const partial = await addUser(t, admin.corpId, { actions: ["localhost:80/api/doc/GET"] });
    const serviceAdmin = await addUser(t, admin.corpId, { services: ["ext.docs"] });
    const nobody = await addUser(t, admin.corpId);

    const res = await t.req("GET", "/api/menu/tree", { token: reader.token });
    expect(res.status).toBe(200);
    expect(res.body.items[0].name).toBe("Tree root");
    const tree = res.body.items as Node[];
    const r = find(tree, "Tree root")!;
    expect(r.children.map((c) => c.name)).toEqual(["Tree read", "Tree write", "Tree plain"]);
    expect(r.allowed).toBe(true);
    expect(r.actions).toEqual([]);
    expect(find(tree, "Tree read")!.actions.map((a) => a.action)).toEqual(["localhost:80/api/doc/GET", "localhost:80/api/doc/{id}/GET"]);
    const allowed = async (token: string) => {
      const nodes = (await t.req("GET", "/api/menu/tree", { token })).body.items as Node[];
      return ["Tree read", "Tree write", "Tree plain"].map((n) => find(nodes, n)!.allowed);
    };
    expect(await allowed(reader.token)).toEqual([true, false, true]);
    expect(await allowed(partial.token)).toEqual([false, false, true]);
    expect(await allowed(serviceAdmin.token)).toEqual([true, true, true]);
    expect(await allowed(nobody.token)).toEqual([false, false, true]);
    expect(await allowed(admin.token)).toEqual([true, true, true]);
    expect((await t.req("GET", "/api/menu/tree")).status).toBe(401);
  });

  test("a deleted feature leaves its menus without one", async () => {
    const f = (await admin.req("POST", "/api/feature", { service_id: svc.id, name: "temporary" })).body;
    const m = (await admin.req("POST", "/api/menu", { name: "Temporary", feature_id: f.id })).body;
    expect((await admin.req("DELETE", `/api/feature/${f.id}`)).status).toBe(204);
    const node = find((await admin.req("GET", "/api/menu/tree")).body.items, "Temporary")!;
    expect(node.id).toBe(m.id);
    expect((node as unknown as { feature_id: string | null }).feature_id).toBeNull();
    expect(node.allowed).toBe(true);
  });
});

describe("POST /api/menu/{id}/workgroup/{workgroupId}", () => {
  async function workgroup(corpId: string, userId?: string) {
    const id = (await adminIn(t, corpId, "POST", "/api/workgroup", { name: `wg-${crypto.randomUUID()}`, description: "desc" })).body.id as string;
    if (userId) await adminIn(t, corpId, "POST", `/api/workgroup/${id}/user/${userId}`);
    return id;
  }

  test("grants the features of the menu and its descendants; the members' permission follows at once", async () => {
    const top = (await admin.req("POST", "/api/menu", { name: "Assign top" })).body;
    const mid = (await admin.req("POST", "/api/menu", { name: "Assign mid", parent_id: top.id, feature_id: read.id })).body;
    await admin.req("POST", "/api/menu", { name: "Assign leaf", parent_id: mid.id, feature_id: write.id });
    const u = await addUser(t, admin.corpId);
    const wg = await workgroup(admin.corpId, u.userId);

    const res = await admin.req("POST", `/api/menu/${top.id}/workgroup/${wg}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["corp_id", "created_at", "description", "feature_ids", "id", "name", "service_ids", "updated_at", "user_ids"]);
    expect(res.body).toMatchObject({ id: wg, corp_id: admin.corpId, description: "desc", user_ids: [u.userId], service_ids: [] });
    expect(res.body.feature_ids.sort()).toEqual([read.id, write.id].sort());
    const allow = (await t.req("GET", "/api/auth/credentials", { token: u.token })).body.credentials.permission.allow;
    expect(allow).toEqual(["localhost:80/api/doc/GET", "localhost:80/api/doc/POST", "localhost:80/api/doc/{id}/GET"]);
    // again: unchanged
    const again = await admin.req("POST", `/api/menu/${top.id}/workgroup/${wg}`);
    expect(again.body.feature_ids).toHaveLength(2);
    // a subtree grants only its own part
    const wg2 = await workgroup(admin.corpId);
    const leafOnly = (await admin.req("POST", "/api/menu", { name: "Assign lone", feature_id: write.id })).body;
    expect((await admin.req("POST", `/api/menu/${leafOnly.id}/workgroup/${wg2}`)).body.feature_ids).toEqual([write.id]);
  });

  test("409 when a feature's service is not enabled for the workgroup's corporation; nothing granted", async () => {
    const corp = await addCorp(t, "no-docs");
    const wg = await workgroup(corp);
    const plainFeature = (await admin.req("POST", "/api/feature", { service_id: (t.sql().query("SELECT id FROM services WHERE identifier = 'platform.city'").get() as { id: string }).id, name: "city-read" })).body;
    const top = (await admin.req("POST", "/api/menu", { name: "Mixed", feature_id: plainFeature.id })).body;
    await admin.req("POST", "/api/menu", { name: "Mixed child", parent_id: top.id, feature_id: read.id });
    const res = await admin.req("POST", `/api/menu/${top.id}/workgroup/${wg}`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain("ext.docs");
    expect(t.sql().query("SELECT * FROM workgroup_features WHERE workgroup_id = ?").all(wg)).toEqual([]);
    // once enabled, it works
    await admin.req("POST", `/api/corp/${corp}/service/${svc.id}`);
    expect((await admin.req("POST", `/api/menu/${top.id}/workgroup/${wg}`)).body.feature_ids).toHaveLength(2);
  });

  test("401, 403, 404", async () => {
    const m = (await admin.req("POST", "/api/menu", { name: "Guarded" })).body;
    const wg = await workgroup(admin.corpId);
    const u = await addUser(t, admin.corpId, { services: ["platform.service", "platform.workgroup"] });
    expect((await t.req("POST", `/api/menu/${m.id}/workgroup/${wg}`)).status).toBe(401);
    expect((await t.req("POST", `/api/menu/${m.id}/workgroup/${wg}`, { token: u.token })).status).toBe(403);
    expect((await admin.req("POST", `/api/menu/${UNKNOWN_ID}/workgroup/${wg}`)).status).toBe(404);
    expect((await admin.req("POST", `/api/menu/${m.id}/workgroup/${UNKNOWN_ID}`)).status).toBe(404);
    expect((await admin.req("POST", `/api/menu/${m.id}/workgroup/${wg}`)).status).toBe(200);
  });
});
