// The ISP record rows (manufacturer, pop, radius-attribute, layout, pool, nas) through HTTP:
// the same CRUD/active/inactive contract for each, then each type's own rules.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addCorp, addUser, makeApp, startAndLogin, UNKNOWN_ID, type TestApp } from "../../support/helpers";

let t: TestApp;
let admin: { token: string; corpId: string };
let isp: { token: string }; // a member granted platform.isp
let plain: { token: string }; // a member with no grant
let other: { token: string }; // platform.isp in another corporation

beforeAll(async () => {
  t = await makeApp();
  admin = await startAndLogin(t);
  isp = await addUser(t, admin.corpId, { services: ["platform.isp"] });
  plain = await addUser(t, admin.corpId);
  const beta = await addCorp(t, "beta-net");
  other = await addUser(t, beta, { services: ["platform.isp"] });
});
afterAll(() => t.close());

let seq = 0;
const uniq = (p: string) => `${p}-${++seq}`;
const req = (method: string, path: string, body?: unknown, token = admin.token) => t.req(method, path, { token, body });
async function make(path: string, body: Record<string, unknown>) {
  const res = await req("POST", path, body);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.body;
}
const manufacturer = () => make("/api/isp/manufacturer", { name: uniq("Vendor") });
const pop = () => make("/api/isp/pop", { name: uniq("POP") });
const attribute = (o: Record<string, unknown> = {}) => make("/api/isp/radius-attribute", { name: uniq("Attr"), type: "string", ...o });
const layout = (o: Record<string, unknown> = {}) => make("/api/isp/layout", { name: uniq("Layout"), ...o });
const nas = (o: Record<string, unknown> = {}) => make("/api/isp/nas", { name: uniq("NAS"), ip: `10.9.${seq % 250}.${++seq % 250}`, secret: "radius-secret-1", ...o });
const pool = (o: Record<string, unknown> = {}) => make("/api/isp/pool", { name: uniq("Pool"), version: 4, cidr: "100.64.0.0/16", ...o });

interface Kind {
  path: string;
  body: () => Record<string, unknown>;
  /** A body field that is missing or wrong → 400 naming it. */
  bad: { body: () => Record<string, unknown>; field: string };
  q: string;
}

const KINDS: Record<string, Kind> = {
  manufacturer: {
    path: "/api/isp/manufacturer",
    body: () => ({ name: uniq("Mikrotik"), description: "RouterOS" }),
    bad: { body: () => ({ description: "no name" }), field: "name" },
    q: "mikrotik",
  },
  pop: {
    path: "/api/isp/pop",
    body: () => ({ name: uniq("Centro"), description: "downtown" }),
    bad: { body: () => ({ name: uniq("x"), address: { line1: "Rua A" } }), field: "address.city_id" },
    q: "centro",
  },
  "radius-attribute": {
    path: "/api/isp/radius-attribute",
    body: () => ({ name: uniq("Session-Timeout"), type: "integer" }),
    bad: { body: () => ({ name: uniq("X"), type: "float" }), field: "type" },
    q: "session-timeout",
  },
  layout: {
    path: "/api/isp/layout",
    body: () => ({ name: uniq("PPPoE plan") }),
    bad: { body: () => ({ name: "" }), field: "name" },
    q: "pppoe plan",
  },
  pool: {
    path: "/api/isp/pool",
    body: () => ({ name: uniq("cgnat"), version: 4, cidr: "100.64.0.0/10" }),
    bad: { body: () => ({ name: uniq("p"), version: 5, cidr: "10.0.0.0/8" }), field: "version" },
    q: "cgnat",
  },
  nas: {
    path: "/api/isp/nas",
    body: () => ({ name: uniq("bng"), ip: `192.0.2.${++seq % 250}`, secret: "radius-secret-1" }),
    bad: { body: () => ({ name: uniq("n"), ip: "192.0.2.1", secret: "short" }), field: "secret" },
    q: "bng",
  },
};

for (const [kind, k] of Object.entries(KINDS)) {
  describe(`GET|POST ${k.path}; GET|PUT|DELETE ${k.path}/{id}: ${kind}, the common contract`, () => {
    test("create answers 200 with the record and a Location; get, list, q and filters find it", async () => {
      const body = k.body();
      const res = await req("POST", k.path, body);
      expect(res.status).toBe(200);
      expect(res.headers.get("location")).toBe(`${k.path}/${res.body.id}`);
      expect(res.body).toMatchObject({ name: body.name, status: true });
      expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
      const got = await req("GET", `${k.path}/${res.body.id}`);
      expect(got.status).toBe(200);
      expect(got.body).toEqual(res.body);
      const list = await req("GET", `${k.path}?q=${encodeURIComponent(k.q)}&limit=500`);
      expect(list.status).toBe(200);
      expect(list.body.items.map((r: any) => r.id)).toContain(res.body.id);
      const byName = await req("GET", `${k.path}?name=${encodeURIComponent(String(body.name))}`);
      expect(byName.body).toMatchObject({ total: 1, page: 1, limit: 50 });
      expect(byName.body.items[0].id).toBe(res.body.id);
      expect((await req("GET", `${k.path}?nope=1`)).status).toBe(400);
    });

    test("update replaces the writable fields; a name taken by another record is 409", async () => {
      const a = await make(k.path, k.body());
      const b = await make(k.path, k.body());
      const next = { ...k.body() };
      const res = await req("PUT", `${k.path}/${a.id}`, next);
      expect(res.status).toBe(200);
      expect(res.body.name).toBe(next.name);
      expect(res.body.id).toBe(a.id);
      const clash = await req("PUT", `${k.path}/${b.id}`, { ...k.body(), name: next.name });
      expect(clash.status).toBe(409);
      expect(clash.body.type).toBe("urn:corpadmin:problem:conflict");
      const dup = await req("POST", k.path, { ...k.body(), name: next.name });
      expect(dup.status).toBe(409);
    });

    test("inactive and active flip status only", async () => {
      const a = await make(k.path, k.body());
      const off = await req("PUT", `${k.path}/${a.id}/inactive`);
      expect(off.status).toBe(200);
      expect(off.body.status).toBe(false);
      expect(off.body.name).toBe(a.name);
      expect((await req("GET", `${k.path}?status=false&name=${encodeURIComponent(a.name)}`)).body.total).toBe(1);
      const on = await req("PUT", `${k.path}/${a.id}/active`);
      expect(on.status).toBe(200);
      expect(on.body.status).toBe(true);
    });

    test("delete answers 204 and the record is gone", async () => {
      const a = await make(k.path, k.body());
      const del = await req("DELETE", `${k.path}/${a.id}`);
      expect(del.status).toBe(204);
      expect(del.text).toBe("");
      expect((await req("GET", `${k.path}/${a.id}`)).status).toBe(404);
      expect((await req("DELETE", `${k.path}/${a.id}`)).status).toBe(404);
    });

    test("an invalid body is 400 naming the field", async () => {
      const res = await req("POST", k.path, k.bad.body());
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: any) => e.path)).toContain(k.bad.field);
    });

    test("401 without a token, 403 without platform.isp, 200 with it", async () => {
      const a = await make(k.path, k.body());
      expect((await t.req("GET", k.path)).status).toBe(401);
      expect((await t.req("POST", k.path, { body: k.body() })).status).toBe(401);
      expect((await req("GET", `${k.path}/${a.id}`, undefined, plain.token)).status).toBe(403);
      expect((await req("POST", k.path, k.body(), plain.token)).status).toBe(403);
      expect((await req("PUT", `${k.path}/${a.id}/inactive`, undefined, plain.token)).status).toBe(403);
      expect((await req("DELETE", `${k.path}/${a.id}`, undefined, plain.token)).status).toBe(403);
      expect((await req("GET", `${k.path}/${a.id}`, undefined, isp.token)).status).toBe(200);
      expect((await req("POST", k.path, k.body(), isp.token)).status).toBe(200);
    });

    test("unknown ids, malformed ids and another corporation's ids are 404", async () => {
      const a = await make(k.path, k.body());
      for (const [method, suffix] of [["GET", ""], ["PUT", ""], ["DELETE", ""], ["PUT", "/active"], ["PUT", "/inactive"]] as const) {
        const body = method === "PUT" && suffix === "" ? k.body() : undefined;
        expect((await req(method, `${k.path}/${UNKNOWN_ID}${suffix}`, body)).status).toBe(404);
        expect((await req(method, `${k.path}/not-a-uuid${suffix}`, body)).status).toBe(404);
        expect((await req(method, `${k.path}/${a.id}${suffix}`, body, other.token)).status).toBe(404);
      }
      expect((await req("GET", k.path, undefined, other.token)).body.items.map((r: any) => r.id)).not.toContain(a.id);
      // still there, untouched, for its own corporation
      expect((await req("GET", `${k.path}/${a.id}`)).body.status).toBe(true);
    });
  });
}

describe("GET|POST /api/isp/manufacturer; GET|PUT|DELETE /api/isp/manufacturer/{id}; PUT /api/isp/manufacturer/{id}/active|inactive", () => {
  test("delete is 409 while a RADIUS attribute, a layout or a NAS uses it", async () => {
    for (const use of [(id: string) => attribute({ manufacturer_id: id }), (id: string) => layout({ manufacturer_id: id }), (id: string) => nas({ manufacturer_id: id })]) {
      const m = await manufacturer();
      const user = await use(m.id);
      const res = await req("DELETE", `/api/isp/manufacturer/${m.id}`);
      expect(res.status).toBe(409);
      expect(res.body.detail).toMatch(/RADIUS attribute|layout|NAS/);
      const path = user.ip ? "/api/isp/nas" : user.type ? "/api/isp/radius-attribute" : "/api/isp/layout";
      expect((await req("DELETE", `${path}/${user.id}`)).status).toBe(204);
      expect((await req("DELETE", `/api/isp/manufacturer/${m.id}`)).status).toBe(204);
    }
  });

  test("an optional description left out of a PUT becomes null", async () => {
    const m = await make("/api/isp/manufacturer", { name: uniq("V"), description: "d" });
    const res = await req("PUT", `/api/isp/manufacturer/${m.id}`, { name: m.name });
    expect(res.body.description).toBeNull();
  });
});

describe("GET|POST /api/isp/pop; GET|PUT|DELETE /api/isp/pop/{id}; PUT /api/isp/pop/{id}/active|inactive", () => {
  test("stores an address and answers it with its city; PUT without it clears it", async () => {
    const city = await make("/api/city", { name: uniq("Campinas"), state: "SP", country: "BR" });
    const body = { name: uniq("Norte"), address: { line1: "Rua das Flores, 10", postal_code: "01000-000", latitude: -23.5, longitude: -46.6, city_id: city.id } };
    const res = await req("POST", "/api/isp/pop", body);
    expect(res.status).toBe(200);
    expect(res.body.address).toEqual({
      line1: "Rua das Flores, 10",
      line2: null,
      district: null,
      postal_code: "01000-000",
      detail: null,
      latitude: -23.5,
      longitude: -46.6,
      city: { id: city.id, name: city.name, state: "SP", country: "BR" },
    });
    expect((await req("GET", `/api/isp/pop/${res.body.id}`)).body.address.city.id).toBe(city.id);
    // the city cannot go while the POP's address names it
    expect((await req("DELETE", `/api/city/${city.id}`)).status).toBe(409);
    const cleared = await req("PUT", `/api/isp/pop/${res.body.id}`, { name: body.name });
    expect(cleared.body.address).toBeNull();
    expect((await req("DELETE", `/api/city/${city.id}`)).status).toBe(204);
  });

  test("an unknown city is 400 naming address.city_id", async () => {
    const res = await req("POST", "/api/isp/pop", { name: uniq("P"), address: { line1: "x", city_id: UNKNOWN_ID } });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: any) => e.path)).toEqual(["address.city_id"]);
  });

  test("an out-of-range latitude is 400 naming address.latitude", async () => {
    const res = await req("POST", "/api/isp/pop", { name: uniq("P"), address: { line1: "x", latitude: 91, city_id: UNKNOWN_ID } });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: any) => e.path)).toContain("address.latitude");
  });

  test("delete is 409 while a pool or a NAS uses it", async () => {
    const p = await pop();
    const pl = await pool({ pop_id: p.id });
    expect((await req("DELETE", `/api/isp/pop/${p.id}`)).body.detail).toContain("pool");
    await req("DELETE", `/api/isp/pool/${pl.id}`);
    const n = await nas({ pop_id: p.id });
    const res = await req("DELETE", `/api/isp/pop/${p.id}`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain("NAS");
    await req("DELETE", `/api/isp/nas/${n.id}`);
    expect((await req("DELETE", `/api/isp/pop/${p.id}`)).status).toBe(204);
  });
});

describe("GET|POST /api/isp/radius-attribute; GET|PUT|DELETE /api/isp/radius-attribute/{id}; PUT /api/isp/radius-attribute/{id}/active|inactive", () => {
  test("(name, manufacturer_id) is unique, standard attributes included", async () => {
    const m = await manufacturer();
    const name = uniq("Mikrotik-Rate-Limit");
    expect((await req("POST", "/api/isp/radius-attribute", { name, type: "string", manufacturer_id: m.id })).status).toBe(200);
    expect((await req("POST", "/api/isp/radius-attribute", { name, type: "string", manufacturer_id: m.id })).status).toBe(409);
    // the same name for no vendor is another attribute, but only once
    expect((await req("POST", "/api/isp/radius-attribute", { name, type: "string" })).status).toBe(200);
    const dup = await req("POST", "/api/isp/radius-attribute", { name, type: "string", manufacturer_id: null });
    expect(dup.status).toBe(409);
  });

  test("an unknown manufacturer_id is 400 naming it", async () => {
    const res = await req("POST", "/api/isp/radius-attribute", { name: uniq("A"), type: "string", manufacturer_id: UNKNOWN_ID });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("manufacturer_id");
  });

  test("a name that is not a dictionary name is 400", async () => {
    const res = await req("POST", "/api/isp/radius-attribute", { name: "Rate Limit %{x}", type: "string" });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("name");
  });

  test("delete is 409 while attached to a layout", async () => {
    const a = await attribute();
    const l = await layout();
    await req("POST", `/api/isp/layout/${l.id}/attribute`, { attribute_id: a.id, value: "x" });
    const res = await req("DELETE", `/api/isp/radius-attribute/${a.id}`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain("layout");
    await req("DELETE", `/api/isp/layout/${l.id}/attribute/${a.id}`);
    expect((await req("DELETE", `/api/isp/radius-attribute/${a.id}`)).status).toBe(204);
  });
});

describe("GET|POST /api/isp/layout; GET|PUT|DELETE /api/isp/layout/{id}; POST /api/isp/layout/{id}/attribute; DELETE /api/isp/layout/{id}/attribute/{attributeId}; GET /api/isp/layout/variables: layout attributes and variables", () => {
  test("attach, attach again (replaces operator and value, keeps the order), remove", async () => {
    const rate = await attribute({ name: uniq("Mikrotik-Rate-Limit") });
    const pool4 = await attribute({ name: uniq("Framed-Pool") });
    const l = await layout();
    const first = await req("POST", `/api/isp/layout/${l.id}/attribute`, {
      attribute_id: rate.id,
      value: "{{contract.config.max_upload}}/{{contract.config.max_download}}",
    });
    expect(first.status).toBe(200);
    expect(first.body.attributes).toEqual([
      { attribute_id: rate.id, name: rate.name, operator: ":=", value: "{{contract.config.max_upload}}/{{contract.config.max_download}}" },
    ]);
    await req("POST", `/api/isp/layout/${l.id}/attribute`, { attribute_id: pool4.id, operator: "=", value: "{{ contract.config.pool_name_ipv4 }}" });
    const again = await req("POST", `/api/isp/layout/${l.id}/attribute`, { attribute_id: rate.id, operator: "+=", value: "1M/2M" });
    expect(again.body.attributes.map((a: any) => [a.name, a.operator, a.value])).toEqual([
      [rate.name, "+=", "1M/2M"],
      [pool4.name, "=", "{{ contract.config.pool_name_ipv4 }}"],
    ]);
    // PUT leaves the attributes alone
    const put = await req("PUT", `/api/isp/layout/${l.id}`, { name: l.name, description: "changed" });
    expect(put.body.attributes).toHaveLength(2);
    const removed = await req("DELETE", `/api/isp/layout/${l.id}/attribute/${rate.id}`);
    expect(removed.status).toBe(200);
    expect(removed.body.attributes.map((a: any) => a.attribute_id)).toEqual([pool4.id]);
    expect((await req("DELETE", `/api/isp/layout/${l.id}/attribute/${rate.id}`)).status).toBe(404);
    expect((await req("DELETE", `/api/isp/layout/${UNKNOWN_ID}/attribute/${pool4.id}`)).status).toBe(404);
  });

  test("an unknown template variable or attribute_id is 400 naming the field", async () => {
    const a = await attribute();
    const l = await layout();
    const badVar = await req("POST", `/api/isp/layout/${l.id}/attribute`, { attribute_id: a.id, value: "{{contract.config.max_upload}}/{{contract.speed}}" });
    expect(badVar.status).toBe(400);
    expect(badVar.body.errors).toEqual([{ path: "value", message: "unknown template variable 'contract.speed'" }]);
    const badAttr = await req("POST", `/api/isp/layout/${l.id}/attribute`, { attribute_id: UNKNOWN_ID, value: "x" });
    expect(badAttr.status).toBe(400);
    expect(badAttr.body.errors[0].path).toBe("attribute_id");
    const badOp = await req("POST", `/api/isp/layout/${l.id}/attribute`, { attribute_id: a.id, operator: "==", value: "x" });
    expect(badOp.status).toBe(400);
    expect(badOp.body.errors[0].path).toBe("operator");
    expect((await req("GET", `/api/isp/layout/${l.id}`)).body.attributes).toEqual([]);
  });

  test("attributes of another corporation's layout are out of reach", async () => {
    const a = await attribute();
    const l = await layout();
    expect((await req("POST", `/api/isp/layout/${l.id}/attribute`, { attribute_id: a.id, value: "x" }, other.token)).status).toBe(404);
    expect((await req("POST", `/api/isp/layout/${l.id}/attribute`, { attribute_id: a.id, value: "x" }, plain.token)).status).toBe(403);
    expect((await t.req("POST", `/api/isp/layout/${l.id}/attribute`, { body: { attribute_id: a.id, value: "x" } })).status).toBe(401);
  });

  test("an unknown manufacturer_id on a layout is 400 naming it", async () => {
    const res = await req("POST", "/api/isp/layout", { name: uniq("L"), manufacturer_id: UNKNOWN_ID });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("manufacturer_id");
  });

  test("GET /api/isp/layout/variables lists every variable with a description and an example", async () => {
    const res = await req("GET", "/api/isp/layout/variables", undefined, isp.token);
    expect(res.status).toBe(200);
    const names = res.body.items.map((v: any) => v.name);
    expect(names).toEqual([
      "contract.id", "contract.number", "contract.contract_status", "contract.contract_stage",
      "contract.config.username", "contract.config.password", "contract.config.min_upload", "contract.config.max_upload",
      "contract.config.min_download", "contract.config.max_download", "contract.config.pool_name_ipv4", "contract.config.ipv4",
      "contract.config.poll_name_ipv6", "contract.config.ipv6", "contract.network.state", "contract.effective.max_upload",
      "contract.effective.max_download", "contract.effective.pool_name_ipv4", "customer.name", "customer.display_name",
      "customer.doc_identity", "nas.name", "nas.ip", "pop.name",
    ]);
    for (const v of res.body.items) {
      expect(v.description.length).toBeGreaterThan(0);
      expect(v.example.length).toBeGreaterThan(0);
    }
    expect((await req("GET", "/api/isp/layout/variables", undefined, plain.token)).status).toBe(403);
    expect((await t.req("GET", "/api/isp/layout/variables")).status).toBe(401);
  });

  test("delete is 409 while a NAS uses it; its attachments go with it", async () => {
    const a = await attribute();
    const l = await layout();
    await req("POST", `/api/isp/layout/${l.id}/attribute`, { attribute_id: a.id, value: "x" });
    const n = await nas({ layout_id: l.id });
    const res = await req("DELETE", `/api/isp/layout/${l.id}`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain("NAS");
    await req("DELETE", `/api/isp/nas/${n.id}`);
    expect((await req("DELETE", `/api/isp/layout/${l.id}`)).status).toBe(204);
    expect((await req("DELETE", `/api/isp/radius-attribute/${a.id}`)).status).toBe(204);
  });
});

describe("GET|POST /api/isp/pool; GET|PUT|DELETE /api/isp/pool/{id}; PUT /api/isp/pool/{id}/active|inactive", () => {
  test.each([
    [4, "10.1.2.3/24", "10.1.2.0/24"],
    [4, "192.168.7.9", "192.168.7.9/32"],
    [4, "0.0.0.0/0", "0.0.0.0/0"],
    [6, "2001:DB8:0:0:1::1/48", "2001:db8::/48"],
    [6, "2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1/128"],
    [6, "fd00::abcd/64", "fd00::/64"],
  ])("v%d %s is stored as %s", async (version, cidr, canonical) => {
    const res = await req("POST", "/api/isp/pool", { name: uniq("pool"), version, cidr });
    expect(res.status).toBe(200);
    expect(res.body.cidr).toBe(canonical);
    expect(res.body.version).toBe(version);
  });

  test.each([
    [4, "2001:db8::/32"],
    [6, "10.0.0.0/8"],
    [4, "10.0.0.0/33"],
    [6, "2001:db8::/129"],
    [4, "10.0.0/24"],
    [4, "010.0.0.0/8x"],
    [4, "10.0.0.0/24/1"],
    [6, "fe80::1%eth0/64"],
    [4, "not an address"],
  ])("v%d %s is 400 naming cidr", async (version, cidr) => {
    const res = await req("POST", "/api/isp/pool", { name: uniq("pool"), version, cidr });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("cidr");
  });

  test("unknown pop_id and nas_id are 400 naming them; known ones are kept", async () => {
    const bad = await req("POST", "/api/isp/pool", { name: uniq("p"), version: 4, cidr: "10.0.0.0/8", pop_id: UNKNOWN_ID });
    expect(bad.body.errors[0].path).toBe("pop_id");
    const badNas = await req("POST", "/api/isp/pool", { name: uniq("p"), version: 4, cidr: "10.0.0.0/8", nas_id: UNKNOWN_ID });
    expect(badNas.body.errors[0].path).toBe("nas_id");
    const p = await pop();
    const n = await nas();
    const ok = await pool({ pop_id: p.id, nas_id: n.id });
    expect(ok).toMatchObject({ pop_id: p.id, nas_id: n.id });
    const cleared = await req("PUT", `/api/isp/pool/${ok.id}`, { name: ok.name, version: 6, cidr: "2001:db8::/32" });
    expect(cleared.body).toMatchObject({ pop_id: null, nas_id: null, version: 6, cidr: "2001:db8::/32" });
  });

  test("q searches cidr too", async () => {
    const p = await pool({ cidr: "172.31.99.0/24" });
    const res = await req("GET", "/api/isp/pool?q=172.31.99");
    expect(res.body.items.map((r: any) => r.id)).toEqual([p.id]);
  });
});

describe("GET|POST /api/isp/nas; GET|PUT|DELETE /api/isp/nas/{id}; PUT /api/isp/nas/{id}/active|inactive", () => {
  test("the secret is never returned; the ip is stored canonically and unique", async () => {
    const res = await req("POST", "/api/isp/nas", { name: uniq("n"), ip: "2001:DB8::0:1", secret: "a-very-secret-1" });
    expect(res.status).toBe(200);
    expect(res.body.ip).toBe("2001:db8::1");
    expect(JSON.stringify(res.body)).not.toContain("secret");
    expect(JSON.stringify((await req("GET", `/api/isp/nas/${res.body.id}`)).body)).not.toContain("secret");
    expect(JSON.stringify((await req("GET", "/api/isp/nas")).body)).not.toContain("secret");
    const dup = await req("POST", "/api/isp/nas", { name: uniq("n"), ip: "2001:db8:0::1", secret: "another-secret" });
    expect(dup.status).toBe(409);
    expect(dup.body.detail).toContain("2001:db8::1");
    const mapped = await req("POST", "/api/isp/nas", { name: uniq("n"), ip: "::ffff:198.51.100.7", secret: "another-secret" });
    expect(mapped.body.ip).toBe("198.51.100.7");
    expect((await req("GET", "/api/isp/nas?secret_hash=x")).status).toBe(400);
  });

  test("a PUT without secret keeps it, with one replaces it", async () => {
    const n = await nas();
    const before = t.sql(admin.corpId).query("SELECT secret_hash FROM isp_nas WHERE id = ?").get(n.id) as { secret_hash: string };
    expect((await req("PUT", `/api/isp/nas/${n.id}`, { name: n.name, ip: n.ip })).status).toBe(200);
    const kept = t.sql(admin.corpId).query("SELECT secret_hash FROM isp_nas WHERE id = ?").get(n.id) as { secret_hash: string };
    expect(kept.secret_hash).toBe(before.secret_hash);
    await req("PUT", `/api/isp/nas/${n.id}`, { name: n.name, ip: n.ip, secret: "brand-new-secret" });
    const changed = t.sql(admin.corpId).query("SELECT secret_hash FROM isp_nas WHERE id = ?").get(n.id) as { secret_hash: string };
    expect(changed.secret_hash).not.toBe(before.secret_hash);
    expect(changed.secret_hash).not.toContain("brand-new-secret");
  });

  test.each([["10"], ["10.0.0.256"], ["0x0a.0.0.1"], ["10.0.0.0/24"], ["fe80::1%eth0"], ["host.example"]])("ip %s is 400", async (ip) => {
    const res = await req("POST", "/api/isp/nas", { name: uniq("n"), ip, secret: "radius-secret-1" });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("ip");
  });

  test.each([["0.0.0.0"], ["0.1.2.3"], ["::"], ["::ffff:0.0.0.0"], ["255.255.255.255"], ["224.0.0.1"], ["239.255.255.250"], ["ff02::1"], ["240.0.0.1"]])(
    "ip %s, never the source of a NAS's packets, is 400 on create and update",
    async (ip) => {
      const res = await req("POST", "/api/isp/nas", { name: uniq("n"), ip, secret: "radius-secret-1" });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe("ip");
      const n = await nas();
      const put = await req("PUT", `/api/isp/nas/${n.id}`, { name: n.name, ip });
      expect(put.status).toBe(400);
      expect(put.body.errors[0].path).toBe("ip");
    },
  );

  test.each([["127.0.0.1"], ["::1"], ["10.1.2.3"], ["100.64.0.1"], ["169.254.0.9"], ["fe80::1"], ["fd00::7"]])("ip %s is a NAS address", async (ip) => {
    const res = await req("POST", "/api/isp/nas", { name: uniq("n"), ip, secret: "radius-secret-1" });
    expect(res.status).toBe(200);
    expect((await req("DELETE", `/api/isp/nas/${res.body.id}`)).status).toBe(204);
  });

  test("a create without a secret is 400; unknown references are 400 naming them", async () => {
    const res = await req("POST", "/api/isp/nas", { name: uniq("n"), ip: "203.0.113.50" });
    expect(res.body.errors.map((e: any) => e.path)).toContain("secret");
    for (const field of ["manufacturer_id", "pop_id", "layout_id"]) {
      const r = await req("POST", "/api/isp/nas", { name: uniq("n"), ip: "203.0.113.51", secret: "radius-secret-1", [field]: UNKNOWN_ID });
      expect(r.status).toBe(400);
      expect(r.body.errors[0].path).toBe(field);
    }
  });

  test("delete is 409 while a pool uses it", async () => {
    const n = await nas();
    const p = await pool({ nas_id: n.id });
    const res = await req("DELETE", `/api/isp/nas/${n.id}`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain("pool");
    await req("DELETE", `/api/isp/pool/${p.id}`);
    expect((await req("DELETE", `/api/isp/nas/${n.id}`)).status).toBe(204);
  });
});

describe("GET|POST /api/isp/manufacturer; GET|POST /api/isp/pop; PUT /api/isp/manufacturer/{id}/active|inactive: fine-grained grants", () => {
  test("a member allowed only the manufacturer list action may list but not create", async () => {
    const u = await addUser(t, admin.corpId, { actions: ["localhost:80/api/isp/manufacturer/GET"] });
    expect((await req("GET", "/api/isp/manufacturer", undefined, u.token)).status).toBe(200);
    expect((await req("POST", "/api/isp/manufacturer", { name: uniq("m") }, u.token)).status).toBe(403);
    expect((await req("GET", "/api/isp/pop", undefined, u.token)).status).toBe(403);
  });

  test("the action of a row with a parameter is written with the parameter's name", async () => {
    const m = await manufacturer();
    const u = await addUser(t, admin.corpId, { actions: ["localhost:80/api/isp/manufacturer/{id}/inactive/PUT"] });
    expect((await req("PUT", `/api/isp/manufacturer/${m.id}/inactive`, undefined, u.token)).status).toBe(200);
    expect((await req("PUT", `/api/isp/manufacturer/${m.id}/active`, undefined, u.token)).status).toBe(403);
  });
});

test("a POP's address may be sent as null", async () => {
  const res = await req("POST", "/api/isp/pop", { name: uniq("P"), address: null });
  expect(res.status).toBe(200);
  expect(res.body.address).toBeNull();
});
