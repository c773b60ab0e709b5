// Cities (routes.md, Registry: City): CRUD as scenario tables; each row checks the answer, the
// outbox events and the history of one request.
import { describe, expect, test } from "bun:test";
import { sourceOnly, UNKNOWN_ID } from "../../support/helpers";
import { registrySuite } from "../../support/registry";
import { scenarios } from "../../support/scenario";
import { waitFor } from "../../support/wait";

const suite = registrySuite();
const { target, admin, other } = suite;
/** Ids and answers of earlier rows, for the rows after them. */
const seen: Record<string, any> = {};

describe("GET|POST /api/city; GET|PUT|DELETE /api/city/{id}: create, show, list, update, delete with exactly their events", () => {
  scenarios(target, [
    {
      name: "create: 200 with its Location and fields, one insert event carrying the city, one Change",
      method: "POST",
      url: "/api/city",
      token: admin,
      body: { name: "Campinas", state: "SP", country: "BR" },
      expectStatus: 200,
      expectBody: { name: "Campinas", state: "SP", country: "BR" },
      expectEvents: ["CITY_AFTER_INSERT"],
      expectHistory: [{ target_type: "city", action: "create" }],
      check: (res, events) => {
        expect(res.headers.get("location")).toBe(`/api/city/${res.body.id}`);
        expect(Object.keys(res.body).sort()).toEqual(["country", "created_at", "id", "name", "state", "updated_at"]);
        expect(events[0].payload.data).toEqual(res.body);
        seen.campinas = res.body.id;
      },
    },
    { name: "create a second city", method: "POST", url: "/api/city", token: admin, body: { name: "Curitiba", state: "PR", country: "BR" }, expectStatus: 200, expectEvents: ["CITY_AFTER_INSERT"] },
    { name: "show by id", method: "GET", url: () => `/api/city/${seen.campinas}`, token: admin, expectStatus: 200, expectBody: { name: "Campinas" }, expectEvents: [], expectHistory: [] },
    { name: "list with q", method: "GET", url: "/api/city?q=camp", token: admin, expectStatus: 200, expectBody: { total: 1, items: [{ name: "Campinas" }] } },
    { name: "list with a filter", method: "GET", url: "/api/city?state=PR", token: admin, expectStatus: 200, expectBody: { total: 1 } },
    { name: "list sorted", method: "GET", url: "/api/city?sort=-name", token: admin, expectStatus: 200, check: (res) => expect(res.body.items[0].name).toBe("Curitiba") },
    { name: "list with an unknown query field is 400", method: "GET", url: "/api/city?nope=1", token: admin, expectStatus: 400 },
    {
      name: "update: 200, one update event carrying the new city, one Change",
      method: "PUT",
      url: () => `/api/city/${seen.campinas}`,
      token: admin,
      body: { name: "Campinas", state: "São Paulo", country: "BR" },
      expectStatus: 200,
      expectBody: { state: "São Paulo" },
      expectEvents: ["CITY_AFTER_UPDATE"],
      expectHistory: [{ target_type: "city", action: "update" }],
      check: (res, events) => {
        expect(events[0].payload.data).toEqual(res.body);
        seen.updated = res.body;
      },
    },
    {
      name: "delete: 204, one delete event carrying the last state, one Change",
      method: "DELETE",
      url: () => `/api/city/${seen.campinas}`,
      token: admin,
      expectStatus: 204,
      expectEvents: ["CITY_AFTER_DELETE"],
      expectHistory: [{ target_type: "city", action: "delete" }],
      check: (_res, events) => {
        expect(events[0].payload.data).toEqual(seen.updated);
        expect(events[0].payload.type).toBe("CITY_AFTER_DELETE");
      },
    },
    { name: "a deleted city is 404", method: "GET", url: () => `/api/city/${seen.campinas}`, token: admin, expectStatus: 404 },
  ]);
});

describe("GET|POST /api/city; GET|PUT|DELETE /api/city/{id}: refusals change nothing", () => {
  const refused = { expectEvents: [], expectHistory: [] };
  scenarios(target, [
    { name: "arrange: a city", method: "POST", url: "/api/city", token: admin, body: { name: "Recife", state: "PE", country: "BR" }, expectStatus: 200, check: (res) => (seen.recife = res.body.id) },
    { name: "a taken (name, state, country) is 409", method: "POST", url: "/api/city", token: admin, body: { name: "Recife", state: "PE", country: "BR" }, expectStatus: 409, ...refused },
    { name: "a missing field is 400 naming it", method: "POST", url: "/api/city", token: admin, body: { name: "X", country: "BR" }, expectStatus: 400, expectErrorPaths: ["state"], ...refused },
    { name: "no token is 401", method: "GET", url: "/api/city", expectStatus: 401, ...refused },
    { name: "no permission is 403", method: "GET", url: "/api/city", token: suite.nobody, expectStatus: 403, ...refused },
    { name: "an unknown id is 404", method: "GET", url: `/api/city/${UNKNOWN_ID}`, token: admin, expectStatus: 404 },
    { name: "a malformed id is 404", method: "GET", url: "/api/city/not-a-uuid", token: admin, expectStatus: 404 },
    { name: "another corporation's city: show 404", method: "GET", url: () => `/api/city/${seen.recife}`, token: other, expectStatus: 404 },
    { name: "another corporation's city: update 404", method: "PUT", url: () => `/api/city/${seen.recife}`, token: other, body: { name: "a", state: "b", country: "c" }, expectStatus: 404, ...refused },
    { name: "another corporation's city: delete 404", method: "DELETE", url: () => `/api/city/${seen.recife}`, token: other, expectStatus: 404, ...refused },
    { name: "another corporation lists none of them", method: "GET", url: "/api/city", token: other, expectStatus: 200, expectBody: { total: 0 } },
    {
      name: "a city used by an address is 409 on delete",
      before: async () => {
        seen.olinda = (await suite.f.t.req("POST", "/api/city", { token: admin(), body: { name: "Olinda", state: "PE", country: "BR" } })).body.id;
        await suite.f.t.req("POST", "/api/person", { token: admin(), body: { name: "Ana", address: { line1: "Rua 1", city_id: seen.olinda } } });
      },
      method: "DELETE",
      url: () => `/api/city/${seen.olinda}`,
      token: admin,
      expectStatus: 409,
      ...refused,
    },
  ]);
});

// In-process: listens to the app's event bus.
sourceOnly("POST /api/city; DELETE /api/city/{id}: dispatcher wake-up", () => {
  test("committed(corpId) follows each mutation that wrote events, and no failed request", async () => {
    const token = admin();
    const corpId = suite.f.admin.corpId;
    const woken: string[] = [];
    const off = suite.f.t.ctx.events.subscribe((id) => woken.push(id));
    // One wake-up per evented write on both engines: on PostgreSQL the change feed skips the
    // NOTIFYs of this node's own commits, which its door already announced (docs/architecture.md,
    // "Change feed").
    const wakes = async (n: number) => {
      await waitFor(`${n} wake-ups`, () => woken.length >= n);
      // One too many (a failed request's, or the feed's echo of this node's commit) would come
      // with the others: a moment for it to show.
      await Bun.sleep(300);
      expect(woken).toEqual(Array.from({ length: n }, () => corpId));
    };
    try {
      const c = await suite.f.t.req("POST", "/api/city", { token, body: { name: "Wake", state: "W", country: "W" } });
      await wakes(1);
      expect((await suite.f.t.req("POST", "/api/city", { token, body: { name: "Wake", state: "W", country: "W" } })).status).toBe(409);
      expect((await suite.f.t.req("DELETE", `/api/city/${UNKNOWN_ID}`, { token })).status).toBe(404);
      await wakes(1);
      await suite.f.t.req("DELETE", `/api/city/${c.body.id}`, { token });
      await wakes(2);
    } finally {
      off();
    }
  });
});
