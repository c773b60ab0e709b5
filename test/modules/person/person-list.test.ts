// GET /api/person answers its pages past Elysia's response check (lib/list-csv.ts listAnswer): every
// shape a page can take must still pass the schema, and normalising it must not change a byte.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getSchemaValidator } from "elysia/schema";
import { ListOf } from "../../../src/lib/schemas";
import { Person } from "../../../src/modules/person/model";
import { registryApp } from "../../support/registry";

let f: Awaited<ReturnType<typeof registryApp>>;
let token: string;

beforeAll(async () => {
  f = await registryApp();
  token = f.admin.token;
  const city = (await f.t.req("POST", "/api/city", { token, body: { name: "Campinas", state: "SP", country: "BR" } })).body;
  const address = { line1: "Rua A, 1", line2: null, district: "Centro", postal_code: "13000-000", detail: null, latitude: -22.9, longitude: -47.06, city_id: city.id };
  const bodies = [
    { name: "Listada Um", corporate: true, email: "um@example.com", phone: "+55 19 1234", address },
    { name: "Listada Dois", display_name: "Dois", tp_doc_identity: "CPF", doc_identity: "123", corporate: false },
    { name: "Listada Três" },
  ];
  for (const body of bodies) expect((await f.t.req("POST", "/api/person", { token, body })).status).toBe(200);
});
afterAll(() => f.t.close());

describe("GET /api/person: pages skip the response check", () => {
  test("every page passes the ListOf(Person) schema, normalising changes no byte, headers as Elysia's", async () => {
    const validator = getSchemaValidator(ListOf(Person), { normalize: true, modules: undefined as never, dynamic: false } as never) as unknown as {
      Check(v: unknown): boolean;
      Clean(v: unknown): unknown;
    };
    // A search answered from the match set, a search SQLite answers (sorted by name), a plain list.
    for (const query of ["?q=listada", "?q=listada&sort=-name", "?limit=2&page=2", "?q=tres", ""]) {
      const got = await f.t.req("GET", `/api/person${query}`, { token });
      expect(got.status).toBe(200);
      expect(got.headers.get("content-type")).toBe("application/json;charset=utf-8");
      expect(got.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      expect(validator.Check(got.body)).toBe(true);
      expect(JSON.stringify(validator.Clean(structuredClone(got.body)))).toBe(got.text);
      // ?format=json goes through Elysia's own check and serialisation: the same bytes.
      const checked = await f.t.req("GET", `/api/person${query ? `${query}&` : "?"}format=json`, { token });
      expect(checked.text).toBe(got.text);
      expect(checked.headers.get("content-type")).toBe(got.headers.get("content-type"));
    }
    const all = (await f.t.req("GET", "/api/person?q=listada", { token })).body;
    expect(all.total).toBe(3);
    expect(all.items.map((p: { corporate: boolean; address: unknown }) => [p.corporate, p.address === null])).toEqual([
      [true, false],
      [false, true],
      [false, true],
    ]);
  });

  test("CSV still comes from the page object (format=csv and Accept: text/csv)", async () => {
    const byFormat = await f.t.req("GET", "/api/person?q=listada&format=csv", { token });
    expect(byFormat.status).toBe(200);
    expect(byFormat.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(byFormat.text.trim().split("\n")).toHaveLength(4);
    const byAccept = await f.t.req("GET", "/api/person?q=listada", { token, headers: { accept: "text/csv" } });
    expect(byAccept.text).toBe(byFormat.text);
  });
});
