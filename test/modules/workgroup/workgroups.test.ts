import { beforeAll, describe, expect, test } from "bun:test";
import { addUser, UNKNOWN_ID, openApp, serviceRoles, type User } from "../../support/helpers";

const { t, admin } = await openApp();
let manager: User, plain: User, outsider: User, otherCorp: string;
let foreignWg: string;
let cityService: string;
let cityFeature: string;

beforeAll(async () => {
  ({ manager, plain, otherCorp, outsider } = await serviceRoles(t, admin.corpId, "platform.workgroup", "wg-"));
  foreignWg = (await t.req("POST", "/api/workgroup", { token: outsider.token, body: { name: "Foreign" } })).body.id;
  cityService = serviceId("platform.city");
  cityFeature = (await t.req("POST", "/api/feature", { token: admin.token, body: { service_id: cityService, name: "City reader" } })).body.id;
  expect((await t.req("POST", `/api/feature/${cityFeature}/action`, { token: admin.token, body: { action: "localhost:80/api/city/GET" } })).status).toBe(200);
});

const serviceId = (identifier: string) => (t.sql().query("SELECT id FROM services WHERE identifier = ?").get(identifier) as { id: string }).id;

const credentialsOf = async (token: string) => (await t.req("GET", "/api/auth/credentials", { token })).body.credentials.permission;

describe("GET|POST /api/workgroup; GET|PUT|DELETE /api/workgroup/{id}: workgroup CRUD", () => {
  test("create, show, list, update, delete", async () => {
    const res = await t.req("POST", "/api/workgroup", { token: manager.token, body: { name: "Support", description: "First line" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("location")).toBe(`/api/workgroup/${res.body.id}`);
    expect(res.body).toMatchObject({ name: "Support", description: "First line", corp_id: admin.corpId, user_ids: [], service_ids: [], feature_ids: [] });
    const id = res.body.id;
    expect((await t.req("GET", `/api/workgroup/${id}`, { token: manager.token })).body.name).toBe("Support");
    const list = await t.req("GET", "/api/workgroup?q=supp", { token: manager.token });
    expect(list.body.items.map((w: { id: string }) => w.id)).toEqual([id]);
    const all = await t.req("GET", "/api/workgroup?limit=500", { token: admin.token });
    expect(all.body.items.map((w: { id: string }) => w.id)).not.toContain(foreignWg);
    const upd = await t.req("PUT", `/api/workgroup/${id}`, { token: manager.token, body: { name: "Support 2" } });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ name: "Support 2", description: null });
    expect((await t.req("DELETE", `/api/workgroup/${id}`, { token: manager.token })).status).toBe(204);
    expect((await t.req("GET", `/api/workgroup/${id}`, { token: manager.token })).status).toBe(404);
  });

  test("409 name taken in the corporation (another corporation may use it)", async () => {
    await t.req("POST", "/api/workgroup", { token: manager.token, body: { name: "Billing" } });
    expect((await t.req("POST", "/api/workgroup", { token: manager.token, body: { name: "Billing" } })).status).toBe(409);
    const other = await t.req("POST", "/api/workgroup", { token: manager.token, body: { name: "Billing 2" } });
    expect((await t.req("PUT", `/api/workgroup/${other.body.id}`, { token: manager.token, body: { name: "Billing" } })).status).toBe(409);
    expect((await t.req("POST", "/api/workgroup", { token: manager.token, body: { name: "Foreign" } })).status).toBe(200);
  });

  test("400, 401, 403, 404 (unknown and another corporation's)", async () => {
    const bad = await t.req("POST", "/api/workgroup", { token: manager.token, body: { name: "" } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("name");
    expect((await t.req("GET", "/api/workgroup")).status).toBe(401);
    expect((await t.req("GET", "/api/workgroup", { token: plain.token })).status).toBe(403);
    expect((await t.req("POST", "/api/workgroup", { token: plain.token, body: { name: "X" } })).status).toBe(403);
    expect((await t.req("GET", `/api/workgroup/${UNKNOWN_ID}`, { token: manager.token })).status).toBe(404);
    expect((await t.req("GET", `/api/workgroup/${foreignWg}`, { token: manager.token })).status).toBe(404);
    expect((await t.req("PUT", `/api/workgroup/${foreignWg}`, { token: manager.token, body: { name: "Mine" } })).status).toBe(404);
    expect((await t.req("DELETE", `/api/workgroup/${foreignWg}`, { token: manager.token })).status).toBe(404);
    expect((await t.req("GET", `/api/workgroup/${foreignWg}`, { token: admin.token })).status).toBe(200);
  });
});

describe("POST|DELETE /api/workgroup/{id}/user/{userId}, /service/{serviceId}, /feature/{featureId}: members and grants", () => {
  test("a service grant shows in the member's credentials and permission check on the next request", async () => {
    const u = await addUser(t, admin.corpId, { login: "grantee" });
    const wg = (await t.req("POST", "/api/workgroup", { token: manager.token, body: { name: "Grants" } })).body.id;
    expect((await t.req("GET", "/api/user", { token: u.token })).status).toBe(403);
    expect((await t.req("POST", `/api/workgroup/${wg}/user/${u.userId}`, { token: manager.token })).status).toBe(204);
    expect((await t.req("POST", `/api/workgroup/${wg}/user/${u.userId}`, { token: manager.token })).status).toBe(204);
    const userService = serviceId("platform.user");
    expect((await t.req("POST", `/api/workgroup/${wg}/service/${userService}`, { token: manager.token })).status).toBe(204);
    expect((await t.req("GET", "/api/user", { token: u.token })).status).toBe(200);
    expect((await credentialsOf(u.token)).admin).toEqual(["platform.user"]);
    const shown = await t.req("GET", `/api/workgroup/${wg}`, { token: manager.token });
    expect(shown.body.user_ids).toEqual([u.userId]);
    expect(shown.body.service_ids).toEqual([userService]);
    expect((await t.req("DELETE", `/api/workgroup/${wg}/service/${userService}`, { token: manager.token })).status).toBe(204);
    expect((await t.req("GET", "/api/user", { token: u.token })).status).toBe(403);
    expect((await t.req("DELETE", `/api/workgroup/${wg}/service/${userService}`, { token: manager.token })).status).toBe(404);
  });

  test("a feature grant adds its actions to allow; removing the member takes them away", async () => {
    const u = await addUser(t, admin.corpId, { login: "feature-grantee" });
    const wg = (await t.req("POST", "/api/workgroup", { token: manager.token, body: { name: "Features" } })).body.id;
    await t.req("POST", `/api/workgroup/${wg}/user/${u.userId}`, { token: manager.token });
    expect((await t.req("POST", `/api/workgroup/${wg}/feature/${cityFeature}`, { token: manager.token })).status).toBe(204);
    expect((await credentialsOf(u.token)).allow).toEqual(["localhost:80/api/city/GET"]);
    expect((await t.req("GET", `/api/workgroup/${wg}`, { token: manager.token })).body.feature_ids).toEqual([cityFeature]);
    expect((await t.req("DELETE", `/api/workgroup/${wg}/user/${u.userId}`, { token: manager.token })).status).toBe(204);
    expect((await credentialsOf(u.token)).allow).toEqual([]);
    expect((await t.req("DELETE", `/api/workgroup/${wg}/user/${u.userId}`, { token: manager.token })).status).toBe(404);
    await t.req("POST", `/api/workgroup/${wg}/user/${u.userId}`, { token: manager.token });
    expect((await credentialsOf(u.token)).allow).toEqual(["localhost:80/api/city/GET"]);
    expect((await t.req("DELETE", `/api/workgroup/${wg}/feature/${cityFeature}`, { token: manager.token })).status).toBe(204);
    expect((await credentialsOf(u.token)).allow).toEqual([]);
    expect((await t.req("DELETE", `/api/workgroup/${wg}/feature/${cityFeature}`, { token: manager.token })).status).toBe(404);
  });

  test("deleting a workgroup takes its grants away at once", async () => {
    const u = await addUser(t, admin.corpId, { login: "wg-deleted" });
    const wg = (await t.req("POST", "/api/workgroup", { token: manager.token, body: { name: "Short-lived" } })).body.id;
    await t.req("POST", `/api/workgroup/${wg}/user/${u.userId}`, { token: manager.token });
    await t.req("POST", `/api/workgroup/${wg}/service/${cityService}`, { token: manager.token });
    expect((await credentialsOf(u.token)).admin).toEqual(["platform.city"]);
    await t.req("DELETE", `/api/workgroup/${wg}`, { token: manager.token });
    expect((await credentialsOf(u.token)).admin).toEqual([]);
  });

  test("409: a user outside the corporation; a service (or feature's service) not enabled", async () => {
    const wg = (await t.req("POST", "/api/workgroup", { token: manager.token, body: { name: "Conflicts" } })).body.id;
    const outsider = await addUser(t, otherCorp, { login: "not-in-acme" });
    expect((await t.req("POST", `/api/workgroup/${wg}/user/${outsider.userId}`, { token: manager.token })).status).toBe(409);
    expect((await t.req("DELETE", `/api/corp/${admin.corpId}/service/${cityService}`, { token: admin.token })).status).toBe(204);
    try {
      expect((await t.req("POST", `/api/workgroup/${wg}/service/${cityService}`, { token: manager.token })).status).toBe(409);
      expect((await t.req("POST", `/api/workgroup/${wg}/feature/${cityFeature}`, { token: manager.token })).status).toBe(409);
    } finally {
      expect((await t.req("POST", `/api/corp/${admin.corpId}/service/${cityService}`, { token: admin.token })).status).toBe(204);
    }
  });

  test("404 unknown user, service, feature and workgroup; another corporation's workgroup; 403; 401", async () => {
    const wg = (await t.req("POST", "/api/workgroup", { token: manager.token, body: { name: "Unknowns" } })).body.id;
    expect((await t.req("POST", `/api/workgroup/${wg}/user/${UNKNOWN_ID}`, { token: manager.token })).status).toBe(404);
    expect((await t.req("POST", `/api/workgroup/${wg}/service/${UNKNOWN_ID}`, { token: manager.token })).status).toBe(404);
    expect((await t.req("POST", `/api/workgroup/${wg}/feature/${UNKNOWN_ID}`, { token: manager.token })).status).toBe(404);
    expect((await t.req("POST", `/api/workgroup/${UNKNOWN_ID}/user/${plain.userId}`, { token: manager.token })).status).toBe(404);
    expect((await t.req("POST", `/api/workgroup/${foreignWg}/service/${cityService}`, { token: manager.token })).status).toBe(404);
    expect((await t.req("POST", `/api/workgroup/${wg}/user/bad-id`, { token: manager.token })).status).toBe(404);
    expect((await t.req("POST", `/api/workgroup/${wg}/user/${plain.userId}`, { token: plain.token })).status).toBe(403);
    expect((await t.req("POST", `/api/workgroup/${wg}/feature/${cityFeature}`, { token: plain.token })).status).toBe(403);
    expect((await t.req("DELETE", `/api/workgroup/${wg}/service/${cityService}`)).status).toBe(401);
  });
});
