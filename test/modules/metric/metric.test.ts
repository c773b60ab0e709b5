import { beforeAll, describe, expect, test } from "bun:test";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { events } from "../../../src/db/tenant/schema";
import { addCorp, addUser, UNKNOWN_ID, openApp } from "../../support/helpers";
import { scenarios } from "../../support/scenario";

const { t, admin } = await openApp();
let otherCorp: string;
let otherToken: string;

beforeAll(async () => {
  otherCorp = await addCorp(t, "other-isp");
  otherToken = (await addUser(t, otherCorp, { services: ["platform.metric"] })).token;
});

/** The interface document's Metric, every field given. */
const doc = (over: Record<string, unknown> = {}) => ({
  name: `m-${crypto.randomUUID().slice(0, 8)}`,
  endpoint: "https://collector.example.net/load",
  data_type: "Int",
  periodicity: "5m",
  start_date: "2025-01-01T00:00:00-03:00",
  end_date: "2025-12-31T23:59:59.5-03:00",
  daily_start_time: "08:00",
  daily_end_time: "18:30",
  ...over,
});

const target = () => ({ t, corpId: admin.corpId, historyToken: admin.token });
const adminToken = () => admin.token;
const refused = { expectEvents: [], expectHistory: [] };
/** Records and users of earlier rows, for the rows after them. */
const seen: Record<string, any> = {};

const create = (body: unknown, token = admin.token) => t.req("POST", "/api/metric", { token, body });
const eventsOf = (corpId: string, recordId: string) =>
  drizzle(t.sql(corpId))
    .select()
    .from(events)
    .orderBy(events.seq)
    .all()
    .filter((e) => e.record_id === recordId)
    .map((e) => ({ type: e.type, data: JSON.parse(e.payload).data }));

describe("POST /api/metric (the interface document's operation)", () => {
  test("200 with the Metric including id; instants come back in UTC; Location names it", async () => {
    const body = doc();
    const res = await create(body);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      ["created_at", "daily_end_time", "daily_start_time", "data_type", "end_date", "endpoint", "id", "name", "periodicity", "start_date", "updated_at"],
    );
    expect(res.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res.body).toMatchObject({
      name: body.name,
      endpoint: body.endpoint,
      data_type: "Int",
      periodicity: "5m",
      start_date: "2025-01-01T03:00:00.000+00:00",
      end_date: "2026-01-01T02:59:59.500+00:00",
      daily_start_time: "08:00",
      daily_end_time: "18:30",
    });
    expect(res.headers.get("location")).toBe(`/api/metric/${res.body.id}`);
    const got = await t.req("GET", `/api/metric/${res.body.id}`, { token: admin.token });
    expect(got.body).toEqual(res.body);
    expect(eventsOf(admin.corpId, res.body.id)).toEqual([{ type: "METRIC_AFTER_INSERT", data: res.body }]);
  });

  test("optional fields may be left out or null: no endpoint, no end, the whole day", async () => {
    const { endpoint, end_date, daily_start_time, daily_end_time, ...required } = doc();
    for (const body of [required, { ...required, name: required.name + "-n", endpoint: null, end_date: null, daily_start_time: null, daily_end_time: null }]) {
      const res = await create(body);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ endpoint: null, end_date: null, daily_start_time: "00:00", daily_end_time: "00:00" });
    }
  });

  test("read-only and unknown fields in the body are ignored", async () => {
    const res = await create({ ...doc(), id: UNKNOWN_ID, created_at: "2000-01-01T00:00:00Z", color: "red" });
    expect(res.status).toBe(200);
    expect(res.body.id).not.toBe(UNKNOWN_ID);
    expect(res.body.created_at).not.toStartWith("2000");
    expect(res.body.color).toBeUndefined();
  });

  test("every data type and every duration unit is accepted", async () => {
    for (const [data_type, periodicity] of [["Int", "1s"], ["Float", "90m"], ["Bool", "12h"], ["Text", "1d"], ["Int", "2w"]]) {
      const res = await create(doc({ data_type, periodicity }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ data_type, periodicity });
    }
  });

  const malformed: [field: string, value: unknown][] = [
    ["name", ""],
    ["name", "a/b"],
    ["name", "x".repeat(129)],
    ["name", 12],
    ["name", undefined],
    ["endpoint", "ftp://example.com/x"],
    ["endpoint", "not a url"],
    ["endpoint", 5],
    ["data_type", "Integer"],
    ["data_type", "int"],
    ["data_type", undefined],
    ["periodicity", "5"],
    ["periodicity", "0s"],
    ["periodicity", "05m"],
    ["periodicity", "1y"],
    ["periodicity", "1.5h"],
    ["periodicity", "99999999999999w"],
    ["periodicity", undefined],
    ["start_date", "2025-01-01"],
    ["start_date", "2025-01-01T00:00:00"],
    ["start_date", "2025-13-01T00:00:00Z"],
    ["start_date", "yesterday at noon, UTC"],
    ["start_date", undefined],
    ["end_date", "2025-06-01T00:00:00"],
    ["end_date", "2024-12-31T23:00:00-03:00"],
    ["end_date", "2025-01-01T03:00:00Z"],
    ["daily_start_time", "24:00"],
    ["daily_start_time", "8:00"],
    ["daily_start_time", "08:60"],
    ["daily_end_time", "18:00:00"],
    ["daily_end_time", 1800],
  ];
  test.each(malformed)("%s = %p is 400 naming the field", async (field, value) => {
    const res = await create(doc({ [field]: value }));
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body.type).toBe("urn:corpadmin:problem:validation");
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual([field]);
  });

  test("several malformed fields are named together", async () => {
    const res = await create(doc({ endpoint: "gopher://x", start_date: "2025-01-01", end_date: "nope-nope-nope" }));
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["end_date", "endpoint", "start_date"]);
  });

  test("401 without a token or with a bad one", async () => {
    expect((await t.req("POST", "/api/metric", { body: doc() })).status).toBe(401);
    const bad = await t.req("POST", "/api/metric", { body: doc(), token: "not.a.jwt" });
    expect(bad.status).toBe(401);
    expect(bad.body.type).toBe("urn:corpadmin:problem:unauthorized");
    // authentication comes before validation
    expect((await t.req("POST", "/api/metric", { body: { name: 5 } })).status).toBe(401);
  });

  test("403 for a member without platform.metric", async () => {
    const u = await addUser(t, admin.corpId, { services: ["platform.city"] });
    const res = await create(doc(), u.token);
    expect(res.status).toBe(403);
    expect(res.body.type).toBe("urn:corpadmin:problem:forbidden");
  });

  test("409 for a name already taken; the same name in another corporation is fine", async () => {
    const body = doc();
    expect((await create(body)).status).toBe(200);
    const again = await create({ ...body, periodicity: "1h" });
    expect(again.status).toBe(409);
    expect(again.body.type).toBe("urn:corpadmin:problem:conflict");
    expect((await create(body, otherToken)).status).toBe(200);
  });
});

describe("GET /api/metric; GET|PUT|DELETE /api/metric/{id}: list, get, update and delete by id", () => {
  test("GET /api/metric lists with paging, ?q on name, filters and sort", async () => {
    const tag = crypto.randomUUID().slice(0, 6);
    for (const n of ["b", "a", "c"]) expect((await create(doc({ name: `list-${tag}-${n}`, data_type: n === "c" ? "Text" : "Float" }))).status).toBe(200);
    const res = await t.req("GET", `/api/metric?q=LIST-${tag}&sort=-name&limit=2`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(3);
    expect(res.body.items.map((m: { name: string }) => m.name)).toEqual([`list-${tag}-c`, `list-${tag}-b`]);
    const text = await t.req("GET", `/api/metric?q=list-${tag}&data_type=Text`, { token: admin.token });
    expect(text.body.items.map((m: { name: string }) => m.name)).toEqual([`list-${tag}-c`]);
    expect((await t.req("GET", "/api/metric?sort=nope", { token: admin.token })).status).toBe(400);
    expect((await t.req("GET", "/api/metric?limit=501", { token: admin.token })).status).toBe(400);
    // another corporation sees none of them
    const other = await t.req("GET", `/api/metric?q=list-${tag}`, { token: otherToken });
    expect(other.body.total).toBe(0);
  });

  scenarios(target, [
    { name: "arrange: a metric", method: "POST", url: "/api/metric", token: adminToken, body: () => doc(), expectStatus: 200, expectEvents: ["METRIC_AFTER_INSERT"], expectHistory: [{ target_type: "metric", action: "create" }], check: (res) => (seen.byId = res.body) },
    { name: "GET by id: unknown is 404", method: "GET", url: `/api/metric/${UNKNOWN_ID}`, token: adminToken, expectStatus: 404 },
    { name: "GET by id: malformed is 404", method: "GET", url: "/api/metric/not-a-uuid", token: adminToken, expectStatus: 404 },
    { name: "GET by id: another corporation's is 404", method: "GET", url: () => `/api/metric/${seen.byId.id}`, token: () => otherToken, expectStatus: 404, expectBody: { type: "urn:corpadmin:problem:not-found" } },
    { name: "GET by id: no token is 401", method: "GET", url: () => `/api/metric/${seen.byId.id}`, expectStatus: 401 },
    { name: "arrange: a metric whose name is taken", method: "POST", url: "/api/metric", token: adminToken, body: () => doc(), expectStatus: 200, check: (res) => (seen.taken = res.body) },
    { name: "PUT: a bad field is 400 naming it", method: "PUT", url: () => `/api/metric/${seen.byId.id}`, token: adminToken, body: () => doc({ name: seen.byId.name, periodicity: "fast" }), expectStatus: 400, expectErrorPaths: ["periodicity"], ...refused },
    { name: "PUT: unknown is 404", method: "PUT", url: `/api/metric/${UNKNOWN_ID}`, token: adminToken, body: () => doc(), expectStatus: 404, ...refused },
    { name: "PUT: another corporation's is 404", method: "PUT", url: () => `/api/metric/${seen.byId.id}`, token: () => otherToken, body: () => doc(), expectStatus: 404, ...refused },
    { name: "PUT: a taken name is 409", method: "PUT", url: () => `/api/metric/${seen.byId.id}`, token: adminToken, body: () => doc({ name: seen.taken.name }), expectStatus: 409, ...refused },
    { name: "PUT: no token is 401", method: "PUT", url: () => `/api/metric/${seen.byId.id}`, body: () => doc({ name: seen.byId.name }), expectStatus: 401, ...refused },
    {
      name: "PUT: a member allowed only to read it is 403",
      before: async () => (seen.reader = await addUser(t, admin.corpId, { actions: ["localhost:80/api/metric/{id}/GET"] })),
      method: "PUT",
      url: () => `/api/metric/${seen.byId.id}`,
      token: () => seen.reader.token,
      body: () => doc({ name: seen.byId.name }),
      expectStatus: 403,
      ...refused,
    },
    { name: "GET: that member may read it", method: "GET", url: () => `/api/metric/${seen.byId.id}`, token: () => seen.reader.token, expectStatus: 200 },
    { name: "PUT: keeping its own name is no conflict (and, changing nothing, writes nothing)", method: "PUT", url: () => `/api/metric/${seen.byId.id}`, token: adminToken, body: () => doc({ name: seen.byId.name }), expectStatus: 200, expectEvents: [], expectHistory: [] },
  ]);

  test("PUT replaces every field (left out: default), fires METRIC_AFTER_UPDATE", async () => {
    const m = (await create(doc())).body;
    const res = await t.req("PUT", `/api/metric/${m.id}`, {
      token: admin.token,
      body: { name: m.name + "-renamed", data_type: "Int", periodicity: "1h", start_date: "2025-02-01T00:00:00Z" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: m.id,
      name: m.name + "-renamed",
      endpoint: null,
      periodicity: "1h",
      start_date: "2025-02-01T00:00:00.000+00:00",
      end_date: null,
      daily_start_time: "00:00",
      daily_end_time: "00:00",
      created_at: m.created_at,
    });
    expect((await t.req("GET", `/api/metric/${m.id}`, { token: admin.token })).body).toEqual(res.body);
    expect(eventsOf(admin.corpId, m.id).map((e) => e.type)).toEqual(["METRIC_AFTER_INSERT", "METRIC_AFTER_UPDATE"]);
    expect(eventsOf(admin.corpId, m.id)[1].data).toEqual(res.body);
  });

  test("data_type cannot change once values exist (409); without values it can", async () => {
    const m = (await create(doc({ data_type: "Int" }))).body;
    expect((await t.req("PUT", `/api/metric/${m.id}`, { token: admin.token, body: doc({ name: m.name, data_type: "Float" }) })).status).toBe(200);
    expect((await t.req("POST", `/api/metric/${m.id}/value`, { token: admin.token, body: { value: 1.5 } })).status).toBe(200);
    const res = await t.req("PUT", `/api/metric/${m.id}`, { token: admin.token, body: doc({ name: m.name, data_type: "Text" }) });
    expect(res.status).toBe(409);
  });

  test("DELETE: 204, values go too, METRIC_AFTER_DELETE carries the record as it was; then 404", async () => {
    const m = (await create(doc())).body;
    expect((await t.req("POST", `/api/metric/${m.id}/value`, { token: admin.token, body: { value: 7 } })).status).toBe(200);
    expect((await t.req("DELETE", `/api/metric/${m.id}`, { token: otherToken })).status).toBe(404);
    const res = await t.req("DELETE", `/api/metric/${m.id}`, { token: admin.token });
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect((await t.req("GET", `/api/metric/${m.id}`, { token: admin.token })).status).toBe(404);
    expect((await t.req("DELETE", `/api/metric/${m.id}`, { token: admin.token })).status).toBe(404);
    const left = t.sql(admin.corpId).query("SELECT count(*) AS n FROM metric_values WHERE metric_id = ?").get(m.id) as { n: number };
    expect(left.n).toBe(0);
    const evs = eventsOf(admin.corpId, m.id);
    expect(evs.map((e) => e.type)).toEqual(["METRIC_AFTER_INSERT", "METRIC_AFTER_DELETE"]);
    expect(evs[1].data).toEqual(m);
    const u = await addUser(t, admin.corpId, { services: ["platform.city"] });
    const m2 = (await create(doc())).body;
    expect((await t.req("DELETE", `/api/metric/${m2.id}`, { token: u.token })).status).toBe(403);
    expect((await t.req("DELETE", `/api/metric/${m2.id}`)).status).toBe(401);
  });
});

describe("GET|PUT|DELETE /api/metric/name/{name}: by name", () => {
  test("GET, PUT (renaming), DELETE by name; names with spaces and unicode travel encoded", async () => {
    const name = `Tráfego uplink ${crypto.randomUUID().slice(0, 4)}`;
    const m = (await create(doc({ name }))).body;
    const path = `/api/metric/name/${encodeURIComponent(name)}`;
    const got = await t.req("GET", path, { token: admin.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(m);
    const renamed = `${name} v2`;
    const put = await t.req("PUT", path, { token: admin.token, body: doc({ name: renamed, data_type: "Int" }) });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ id: m.id, name: renamed });
    expect((await t.req("GET", path, { token: admin.token })).status).toBe(404);
    const newPath = `/api/metric/name/${encodeURIComponent(renamed)}`;
    expect((await t.req("GET", newPath, { token: admin.token })).body.id).toBe(m.id);
    expect(eventsOf(admin.corpId, m.id).map((e) => e.type)).toEqual(["METRIC_AFTER_INSERT", "METRIC_AFTER_UPDATE"]);
    const del = await t.req("DELETE", newPath, { token: admin.token });
    expect(del.status).toBe(204);
    expect((await t.req("GET", `/api/metric/${m.id}`, { token: admin.token })).status).toBe(404);
    expect(eventsOf(admin.corpId, m.id).map((e) => e.type)).toEqual(["METRIC_AFTER_INSERT", "METRIC_AFTER_UPDATE", "METRIC_AFTER_DELETE"]);
  });

  const byName = (n: () => string) => () => `/api/metric/name/${encodeURIComponent(n())}`;
  const a = () => seen.a.name as string;
  scenarios(target, [
    { name: "arrange: a metric", method: "POST", url: "/api/metric", token: adminToken, body: () => doc(), expectStatus: 200, check: (res) => (seen.a = res.body) },
    { name: "arrange: another metric", method: "POST", url: "/api/metric", token: adminToken, body: () => doc(), expectStatus: 200, check: (res) => (seen.b = res.body) },
    { name: "GET by name: unknown is 404", method: "GET", url: byName(() => "no such metric"), token: adminToken, expectStatus: 404 },
    { name: "GET by name: another corporation's is 404", method: "GET", url: byName(a), token: () => otherToken, expectStatus: 404 },
    { name: "PUT by name: another corporation's is 404", method: "PUT", url: byName(a), token: () => otherToken, body: () => doc(), expectStatus: 404, ...refused },
    { name: "DELETE by name: another corporation's is 404", method: "DELETE", url: byName(a), token: () => otherToken, expectStatus: 404, ...refused },
    { name: "PUT by name: renaming onto a taken name is 409", method: "PUT", url: byName(a), token: adminToken, body: () => doc({ name: seen.b.name }), expectStatus: 409, ...refused },
    { name: "PUT by name: a bad field is 400 naming it", method: "PUT", url: byName(a), token: adminToken, body: () => doc({ name: a(), daily_end_time: "25:00" }), expectStatus: 400, expectErrorPaths: ["daily_end_time"], ...refused },
    { name: "GET by name: no token is 401", method: "GET", url: byName(a), expectStatus: 401 },
    {
      name: "GET by name: a member without platform.metric is 403",
      before: async () => (seen.cityUser = await addUser(t, admin.corpId, { services: ["platform.city"] })),
      method: "GET",
      url: byName(a),
      token: () => seen.cityUser.token,
      expectStatus: 403,
    },
    // the action string of a by-name row names the path as routes.md writes it
    {
      name: "GET by name: a member allowed the by-name row may read by name",
      before: async () => (seen.byName = await addUser(t, admin.corpId, { actions: ["localhost:80/api/metric/name/{name}/GET"] })),
      method: "GET",
      url: byName(a),
      token: () => seen.byName.token,
      expectStatus: 200,
    },
    { name: "GET by id: ...but not by id (403)", method: "GET", url: () => `/api/metric/${seen.a.id}`, token: () => seen.byName.token, expectStatus: 403 },
  ]);

});
