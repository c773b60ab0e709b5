// Classifications (routes.md, Core: Classification): by id and by name, as a scenario table.
// They write no outbox events and, as plain labels, no history either.
import { describe, expect } from "bun:test";
import { registrySuite } from "../../support/registry";
import { scenarios } from "../../support/scenario";

const suite = registrySuite();
const { target, admin, other } = suite;
/** Ids of earlier rows, for the rows after them. */
const seen: Record<string, string> = {};
const noEvents = { expectEvents: [] };

describe("GET|POST /api/classification; GET|PUT|DELETE /api/classification/{id}; GET|PUT|DELETE /api/classification/name/{name}: classifications", () => {
  scenarios(target, [
    {
      name: "create: 200 with its Location and fields, no event",
      method: "POST",
      url: "/api/classification",
      token: admin,
      body: { name: "fiber", description: "Fiber plans", color: "#00ff00" },
      expectStatus: 200,
      ...noEvents,
      check: (res) => {
        expect(res.headers.get("location")).toBe(`/api/classification/${res.body.id}`);
        expect(Object.keys(res.body).sort()).toEqual(["color", "created_at", "description", "id", "name", "updated_at"]);
        seen.fiber = res.body.id;
      },
    },
    { name: "show by name", method: "GET", url: "/api/classification/name/fiber", token: admin, expectStatus: 200, expectBody: () => ({ id: seen.fiber }) },
    { name: "show by id", method: "GET", url: () => `/api/classification/${seen.fiber}`, token: admin, expectStatus: 200, expectBody: { name: "fiber" } },
    { name: "a taken name is 409", method: "POST", url: "/api/classification", token: admin, body: { name: "fiber" }, expectStatus: 409, ...noEvents },
    { name: "a name with a slash is 400 naming it", method: "POST", url: "/api/classification", token: admin, body: { name: "a/b" }, expectStatus: 400, expectErrorPaths: ["name"] },
    { name: "a bad color is 400 naming it", method: "POST", url: "/api/classification", token: admin, body: { name: "x", color: "green" }, expectStatus: 400, expectErrorPaths: ["color"] },
    {
      name: "rename by name (a left-out description becomes null)",
      method: "PUT",
      url: "/api/classification/name/fiber",
      token: admin,
      body: { name: "fibra", color: "#123456" },
      expectStatus: 200,
      expectBody: () => ({ id: seen.fiber, name: "fibra", description: null, color: "#123456" }),
      ...noEvents,
    },
    { name: "create another", method: "POST", url: "/api/classification", token: admin, body: { name: "radio" }, expectStatus: 200 },
    { name: "renaming to a taken name is 409", method: "PUT", url: () => `/api/classification/${seen.fiber}`, token: admin, body: { name: "radio" }, expectStatus: 409 },
    { name: "list with q, case-insensitive", method: "GET", url: "/api/classification?q=RAD", token: admin, expectStatus: 200, expectBody: { items: [{ name: "radio" }] } },
    { name: "delete by name", method: "DELETE", url: "/api/classification/name/radio", token: admin, expectStatus: 204, ...noEvents },
    { name: "a deleted name is 404", method: "GET", url: "/api/classification/name/radio", token: admin, expectStatus: 404 },
    { name: "delete by id", method: "DELETE", url: () => `/api/classification/${seen.fiber}`, token: admin, expectStatus: 204, ...noEvents },
    { name: "a deleted id is 404", method: "DELETE", url: () => `/api/classification/${seen.fiber}`, token: admin, expectStatus: 404 },
  ]);
});

describe("GET|POST /api/classification; GET|PUT|DELETE /api/classification/{id}; GET|PUT|DELETE /api/classification/name/{name}: 401, 403, other corporation", () => {
  scenarios(target, [
    { name: "arrange: a classification", method: "POST", url: "/api/classification", token: admin, body: { name: "mine" }, expectStatus: 200, check: (res) => (seen.mine = res.body.id) },
    { name: "no token is 401", method: "GET", url: "/api/classification", expectStatus: 401 },
    { name: "no permission is 403", method: "GET", url: "/api/classification", token: suite.nobody, expectStatus: 403 },
    { name: "another corporation: show by id 404", method: "GET", url: () => `/api/classification/${seen.mine}`, token: other, expectStatus: 404 },
    { name: "another corporation: show by name 404", method: "GET", url: "/api/classification/name/mine", token: other, expectStatus: 404 },
    { name: "another corporation: update 404", method: "PUT", url: () => `/api/classification/${seen.mine}`, token: other, body: { name: "z" }, expectStatus: 404 },
    { name: "another corporation: delete by name 404", method: "DELETE", url: "/api/classification/name/mine", token: other, expectStatus: 404 },
    { name: "the classification is still there", method: "GET", url: "/api/classification/name/mine", token: admin, expectStatus: 200 },
  ]);
});
