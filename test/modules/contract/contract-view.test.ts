// The contract view is read in one joined statement: its parts must match what the narrower rows return.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { getSchemaValidator } from "elysia/schema";
import { contractBody } from "../../support/contract-body";
import { testSourceOnly } from "../../support/helpers";
import { TEST_BACKEND } from "../../support/backend";
import { Contract, ContractWithIdentity } from "../../../src/modules/contract/model";
import { contractViewJson, keptContractBodies, sweepContractBodies } from "../../../src/modules/contract/service";
import { registryApp } from "../../support/registry";

let f: Awaited<ReturnType<typeof registryApp>>;
let token: string;

beforeAll(async () => {
  f = await registryApp();
  token = f.admin.token;
  await f.t.req("POST", "/api/externalapp", { token, body: { name: "erp" } });
});
afterAll(() => f.t.close());

test("flags in SQLite's binary order, parties and addresses as their own rows show them", async () => {
  const c = (await f.t.req("POST", "/api/contract/create/externalapp/name/erp", { token, body: contractBody(7) })).body;
  // Created out of order, with a capital, an accent and a character beyond the BMP.
  const names = ["zeta", "Émile", "alpha", "Beta", "😀 smile", "\u{ff5e}tilde"];
  for (const name of names) expect((await f.t.req("POST", "/api/classification", { token, body: { name } })).status).toBe(200);
  const patched = await f.t.req("PATCH", `/api/contract/${c.id}/flags`, { token, body: { add: names } });
  expect(patched.status).toBe(200);
  const expected = ["Beta", "alpha", "zeta", "Émile", "\u{ff5e}tilde", "😀 smile"];
  expect(patched.body.flags).toEqual(expected);
  const got = (await f.t.req("GET", `/api/contract/${c.id}`, { token })).body;
  expect(got.flags).toEqual(expected);

  for (const role of ["customer", "billing_customer", "agent"] as const) {
    const person = (await f.t.req("GET", `/api/person/${got[role].id}`, { token })).body;
    const { email: _e, phone: _p, created_at: _c, updated_at: _u, ...party } = person;
    expect(got[role]).toEqual(party);
  }
  expect(got.agent.address).toBeNull();
  expect(got.address.city).toEqual(got.customer.address.city);
  const city = (await f.t.req("GET", `/api/city/${got.address.city.id}`, { token })).body;
  expect(got.address.city).toEqual({ id: city.id, name: city.name, state: city.state, country: city.country });
  expect(got.config.password).toBe("********");
  expect(got.config.username).toBe("C-7");
  // The list shows the same view.
  const listed = (await f.t.req("GET", `/api/contract?number=C-7`, { token })).body.items;
  expect(listed).toEqual([got]);
});

test("GET /api/contract/{id} answers exactly what the Contract schema's check and normaliser would (it skips them)", async () => {
  // The route returns its view through checkedJson, past Elysia's response check: every shape the
  // view can take must still pass the schema, and normalising it must not change a byte.
  const validator = getSchemaValidator(Contract, { normalize: true, modules: undefined as never, dynamic: false } as never) as unknown as {
    Check(v: unknown): boolean;
    Clean(v: unknown): unknown;
  };
  const full = contractBody(31);
  const bare = { ...contractBody(32), agent: null, approval_date: null, signature_date: null, json_original: null, json_items: null };
  const ids: string[] = [];
  for (const body of [full, bare]) {
    const made = await f.t.req("POST", "/api/contract/create/externalapp/name/erp", { token, body });
    expect(made.status).toBe(200);
    ids.push(made.body.id);
  }
  expect((await f.t.req("POST", "/api/classification", { token, body: { name: "vip-31" } })).status).toBe(200);
  expect((await f.t.req("PATCH", `/api/contract/${ids[0]}/flags`, { token, body: { add: ["vip-31"] } })).status).toBe(200);
  for (const id of ids) {
    const got = await f.t.req("GET", `/api/contract/${id}`, { token });
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("application/json;charset=utf-8");
    expect(got.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(validator.Check(got.body)).toBe(true);
    expect(JSON.stringify(validator.Clean(structuredClone(got.body)))).toBe(got.text);
  }
  const seen = (await f.t.req("GET", `/api/contract/${ids[1]}`, { token })).body;
  expect(seen.agent).toBeNull();
  expect((await f.t.req("GET", `/api/contract/${ids[0]}`, { token })).body.flags).toEqual(["vip-31"]);
});

test("POST /api/contract/create/externalapp/name/{externalAppName} answers exactly what the ContractWithIdentity schema's check and normaliser would (it skips them)", async () => {
  const validator = getSchemaValidator(ContractWithIdentity, { normalize: true, modules: undefined as never, dynamic: false } as never) as unknown as {
    Check(v: unknown): boolean;
    Clean(v: unknown): unknown;
  };
  const full = contractBody(51);
  const bare = { ...contractBody(52), agent: null, approval_date: null, signature_date: null, json_original: null, json_items: null, billing_customer: undefined };
  for (const body of [full, bare]) {
    // A create (the password in clear, Location), a change, an unchanged repeat.
    for (const b of [body, { ...body, total_value: 12.5 }, { ...body, total_value: 12.5 }]) {
      const got = await f.t.req("POST", "/api/contract/create/externalapp/name/erp", { token, body: b });
      expect(got.status).toBe(200);
      expect(got.headers.get("content-type")).toBe("application/json;charset=utf-8");
      expect(got.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      expect(validator.Check(got.body)).toBe(true);
      expect(JSON.stringify(validator.Clean(structuredClone(got.body)))).toBe(got.text);
      expect(got.body.identity).toBe(b.identity);
      if (b === body) {
        expect(got.headers.get("location")).toBe(`/api/contract/${got.body.id}`);
        expect(got.body.config.password).toMatch(/^[A-Za-z0-9]{12}$/);
      } else {
        expect(got.headers.get("location")).toBeNull();
        expect(got.body.config.password).toBe("********");
      }
    }
  }
});

// In-process: writes on the app's own connection and calls the view directly.
// SQLite-only: another connection writes to the corporation's file behind the app.
(TEST_BACKEND === "pg" ? test.skip : testSourceOnly)("GET /api/contract/{id} reuses its text only until the corporation's database changes, whoever writes", async () => {
  const c = (await f.t.req("POST", "/api/contract/create/externalapp/name/erp", { token, body: contractBody(41) })).body;
  const get = async () => {
    const res = await f.t.req("GET", `/api/contract/${c.id}`, { token });
    expect(res.status).toBe(200);
    return res.body;
  };
  expect((await get()).flags).toEqual([]);
  expect(await get()).toEqual(await get());

  // Through the API.
  expect((await f.t.req("POST", "/api/classification", { token, body: { name: "gold-41" } })).status).toBe(200);
  expect((await f.t.req("PATCH", `/api/contract/${c.id}/flags`, { token, body: { add: ["gold-41"] } })).status).toBe(200);
  expect((await get()).flags).toEqual(["gold-41"]);

  // Straight into the database, on the app's own writer connection.
  const door = f.t.ctx.store.tenant(f.admin.corpId);
  await door.write((tx) => tx.$client.query("UPDATE persons SET name = 'Renamed 41' WHERE id = ?1").run(c.customer.id));
  expect((await get()).customer.name).toBe("Renamed 41");

  // From another connection to the same file.
  const other = new Database(f.t.ctx.tenants.pathOf(f.admin.corpId));
  try {
    other.run("UPDATE cities SET name = 'Elsewhere 41' WHERE id = ?1", [c.address.city.id]);
  } finally {
    other.close();
  }
  expect((await get()).address.city.name).toBe("Elsewhere 41");

  // Inside a transaction that rolls back: its view is not kept past it.
  const tz = (await get()).start_date.slice(-6) === "-03:00" ? "America/Sao_Paulo" : "UTC";
  await expect(
    door.write(async (tx) => {
      await tx.$client.query("UPDATE contracts SET number = 'Rolled back 41' WHERE id = ?1").run(c.id);
      expect(JSON.parse(await contractViewJson(f.t.ctx.contractNetwork, tx, c.id, tz)).number).toBe("Rolled back 41");
      throw new Error("roll back");
    }),
  ).rejects.toThrow("roll back");
  expect((await get()).number).toBe("C-41");
});

// In-process: reads the kept bodies and sweeps them with a clock of its own.
testSourceOnly("a kept GET /api/contract/{id} body not answered for 10 s is dropped; one answered meanwhile stays", async () => {
  const a = (await f.t.req("POST", "/api/contract/create/externalapp/name/erp", { token, body: contractBody(51) })).body;
  const b = (await f.t.req("POST", "/api/contract/create/externalapp/name/erp", { token, body: contractBody(52) })).body;
  const get = async (id: string) => expect((await f.t.req("GET", `/api/contract/${id}`, { token })).status).toBe(200);
  const kept = (id: string) => keptContractBodies().some((k) => k.endsWith(` ${id}`));
  // A body read while a write of the corporation ended is answered, not kept (PostgreSQL): read
  // until it is.
  const keep = async (id: string) => {
    for (let i = 0; i < 50 && !kept(id); i++) {
      await get(id);
      if (!kept(id)) await Bun.sleep(20);
    }
  };
  await keep(a.id);
  await keep(b.id);
  expect(kept(a.id) && kept(b.id)).toBe(true);
  const t0 = Date.now();
  sweepContractBodies(t0 + 5_000);
  expect(kept(a.id) && kept(b.id)).toBe(true);
  // `a` answered again (from the kept text): its 10 s start over.
  await get(a.id);
  sweepContractBodies(Date.now() + 9_000);
  expect(kept(a.id)).toBe(true);
  sweepContractBodies(t0 + 11_000);
  expect(kept(b.id)).toBe(false);
  sweepContractBodies(Date.now() + 11_000);
  expect(kept(a.id)).toBe(false);
  await keep(a.id);
  expect(kept(a.id)).toBe(true);
});
