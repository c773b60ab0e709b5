// The history of records (routes.md, Network operations additions: Change, GET /api/history):
// one Change per record per write, by whoever made it (a user, an external app's key, a job),
// written in the write's transaction; nothing for a write that changed nothing or was refused.
import { beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Housekeeping } from "../../../src/modules/retention/housekeeping";
import { addCorp, addUser, adminIn, inProcessOnly, makeApp, startAndLogin, testSourceOnly, openApp, type User } from "../../support/helpers";
import { contractBody } from "../../support/contract-body";
import { sqliteOnly } from "../../support/backend";
import { FAST, LOOPBACK_ALLOWED, receiver, waitFor } from "../../support/webhooks";

const { t, admin } = await openApp();
let app: { id: string; api_key: string };

beforeAll(async () => {
  app = (await t.req("POST", "/api/externalapp", { token: admin.token, body: { name: "erp" } })).body;
});

async function changesOf(type: string, id: string, token = admin.token) {
  const res = await t.req("GET", `/api/history?target_type=${type}&target_id=${id}&limit=500`, { token });
  expect(res.status).toBe(200);
  return res.body.items as { actor: string; actor_user_id: string | null; actor_app_id: string | null; action: string; changes: { field: string; before: unknown; after: unknown; keys?: string[] }[]; request_id: string | null; at: string }[];
}
const count = async () => (await t.req("GET", "/api/history?limit=1", { token: admin.token })).body.total as number;

describe("a contract's history", () => {
  test("changed by an API key and by a user, with before and after, newest first", async () => {
    const created = await t.req("POST", "/api/contract/create/externalapp/name/erp", { apiKey: app.api_key, body: contractBody(1) });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    let changes = await changesOf("contract", id);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ actor: "erp", actor_user_id: null, actor_app_id: app.id, action: "create" });
    expect(changes[0].changes).toContainEqual({ field: "number", before: null, after: "C-1" });
    expect(changes[0].request_id).toBeString();
    // The customer, the agent and the city it created: one Change each, by the app.
    const customerId = created.body.customer.id as string;
    expect((await changesOf("person", customerId)).map((c) => [c.actor, c.action])).toEqual([["erp", "create"]]);
    expect((await changesOf("city", created.body.address.city.id)).map((c) => [c.actor, c.action])).toEqual([["erp", "create"]]);

    // The app changes the contract's value and the customer's name: the contract and the person.
    const body = { ...contractBody(1), total_value: 120 };
    body.customer = { ...body.customer, name: "Renamed Customer" };
    body.billing_customer = body.customer;
    expect((await t.req("POST", "/api/contract/create/externalapp/name/erp", { apiKey: app.api_key, body })).status).toBe(200);
    changes = await changesOf("contract", id);
    expect(changes[0].action).toBe("update");
    expect(changes[0].changes).toEqual([{ field: "total_value", before: 99.9, after: 120 }]);
    const person = await changesOf("person", customerId);
    expect(person[0]).toMatchObject({ actor: "erp", action: "update", changes: [{ field: "name", before: "Joao Silva 1", after: "Renamed Customer" }] });

    // A user sets the speed and the password; the password is never in the history.
    const set = await t.req("POST", `/api/contract/${id}/config`, { token: admin.token, body: { max_upload: "20M", password: "plain-secret-pw1" } });
    expect(set.status).toBe(200);
    changes = await changesOf("contract", id);
    expect(changes[0]).toMatchObject({ actor: "admin", actor_user_id: admin.userId, actor_app_id: null, action: "config" });
    expect(changes[0].changes).toContainEqual({ field: "config.max_upload", before: null, after: "20M" });
    expect(changes[0].changes).toContainEqual({ field: "config.password", before: "********", after: "********" });
    expect(JSON.stringify(changes)).not.toContain("plain-secret-pw1");

    expect((await t.req("PUT", `/api/contract/${id}/inactive`, { token: admin.token })).status).toBe(200);
    changes = await changesOf("contract", id);
    expect(changes[0]).toMatchObject({ action: "status", changes: [{ field: "contract_status", before: "ACTIVE", after: "INACTIVE" }] });
    expect(changes.map((c) => c.action)).toEqual(["status", "config", "update", "create"]);
  });

  test("a large JSON field is a digest with its changed keys", async () => {
    const created = (await t.req("POST", "/api/contract/create/externalapp/name/erp", { apiKey: app.api_key, body: contractBody(2) })).body;
    await t.req("POST", "/api/contract/create/externalapp/name/erp", { apiKey: app.api_key, body: { ...contractBody(2), json_original: { source: "erp", seq: 3 } } });
    const [last] = await changesOf("contract", created.id);
    const json = last.changes.find((c) => c.field === "json_original")!;
    expect(json.keys).toEqual(["seq"]);
    expect(String(json.before)).toStartWith("sha256:");
    expect(json.after).not.toBe(json.before);
  });

  test("a write that changed nothing, and a refused one, record nothing", async () => {
    const created = (await t.req("POST", "/api/contract/create/externalapp/name/erp", { apiKey: app.api_key, body: contractBody(3) })).body;
    const before = await count();
    // The same body again, the same status, the same config: no Change.
    expect((await t.req("POST", "/api/contract/create/externalapp/name/erp", { apiKey: app.api_key, body: contractBody(3) })).status).toBe(200);
    expect((await t.req("PUT", `/api/contract/${created.id}/active`, { token: admin.token })).status).toBe(200);
    const city = (await t.req("POST", "/api/city", { token: admin.token, body: { name: "Noop", state: "SP", country: "BR" } })).body;
    const afterCreate = await count();
    expect(afterCreate).toBe(before + 1);
    expect((await t.req("PUT", `/api/city/${city.id}`, { token: admin.token, body: { name: "Noop", state: "SP", country: "BR" } })).status).toBe(200);
    // Refused: 400 (validation in the service), 409 (a duplicate city).
    expect((await t.req("POST", `/api/contract/${created.id}/items`, { token: admin.token, body: { items: [{ product_id: "01900000-0000-7000-8000-000000000000" }] } })).status).toBe(400);
    expect((await t.req("POST", "/api/city", { token: admin.token, body: { name: "Noop", state: "SP", country: "BR" } })).status).toBe(409);
    expect(await count()).toBe(afterCreate);
  });

  test("GET /api/history: platform.corp, or the area's permission with target_type", async () => {
    const cityOnly = await addUser(t, admin.corpId, { services: ["platform.city"] });
    expect((await t.req("GET", "/api/history", { token: cityOnly.token })).status).toBe(403);
    expect((await t.req("GET", "/api/history?target_type=contract", { token: cityOnly.token })).status).toBe(403);
    const cities = await t.req("GET", "/api/history?target_type=city", { token: cityOnly.token });
    expect(cities.status).toBe(200);
    expect(cities.body.items.every((c: { target_type: string }) => c.target_type === "city")).toBe(true);
    expect((await t.req("GET", "/api/history?from=2025-01-01", { token: admin.token })).status).toBe(400);
    const csv = await t.req("GET", "/api/history?format=csv&target_type=contract", { token: admin.token });
    expect(csv.status).toBe(200);
    expect(csv.text.split("\n")[0]).toContain("fields");
  });
});

describe("a classification's holders", () => {
  test("a rename or a delete records a Change on each product and contract showing it, with its names before and after", async () => {
    const tag = (await t.req("POST", "/api/classification", { token: admin.token, body: { name: "fibra" } })).body;
    await t.req("POST", "/api/classification", { token: admin.token, body: { name: "zz-vip" } });
    const product = (await t.req("POST", "/api/product", { token: admin.token, body: { identity: "P-HIST", name: "Fibra 100M", price: 99.9 } })).body;
    expect((await t.req("PUT", `/api/product/${product.id}/classifications`, { token: admin.token, body: { names: ["fibra", "zz-vip"] } })).status).toBe(200);
    const contract = (await t.req("POST", "/api/contract/create/externalapp/name/erp", { apiKey: app.api_key, body: contractBody(71) })).body;
    expect((await t.req("PATCH", `/api/contract/${contract.id}/flags`, { token: admin.token, body: { add: ["fibra"] } })).status).toBe(200);
    const unrelated = (await t.req("POST", "/api/product", { token: admin.token, body: { identity: "P-OTHER", name: "Other" } })).body;
    const before = await count();

    expect((await t.req("PUT", `/api/classification/${tag.id}`, { token: admin.token, body: { name: "optical" } })).status).toBe(200);
    expect(await count()).toBe(before + 3); // the classification, the product, the contract
    expect((await changesOf("product", product.id))[0]).toMatchObject({ action: "classifications", changes: [{ field: "classifications", before: ["fibra", "zz-vip"], after: ["optical", "zz-vip"] }] });
    expect((await changesOf("contract", contract.id))[0]).toMatchObject({ action: "flags", changes: [{ field: "flags", before: ["fibra"], after: ["optical"] }] });
    expect(await changesOf("product", unrelated.id)).toHaveLength(1);

    // A change of its description alone shows nowhere else: no holder's Change.
    expect((await t.req("PUT", `/api/classification/${tag.id}`, { token: admin.token, body: { name: "optical", description: "FTTH" } })).status).toBe(200);
    expect(await count()).toBe(before + 4);

    expect((await t.req("DELETE", `/api/classification/${tag.id}`, { token: admin.token })).status).toBe(204);
    expect((await changesOf("product", product.id))[0]).toMatchObject({ action: "classifications", changes: [{ field: "classifications", before: ["optical", "zz-vip"], after: ["zz-vip"] }] });
    expect((await changesOf("contract", contract.id))[0]).toMatchObject({ action: "flags", changes: [{ field: "flags", before: ["optical"], after: [] }] });
  });
});

describe("a job's changes", () => {
  test("the webhook dispatcher making a webhook inactive (410 Gone) is system:webhook-dispatcher's change", async () => {
    const j = await makeApp({ env: LOOPBACK_ALLOWED, options: inProcessOnly({ dispatchTuning: FAST }) });
    try {
      const a = await startAndLogin(j);
      const gone = receiver(() => new Response("", { status: 410 }));
      try {
        const hook = (await j.req("POST", "/api/webhook", { token: a.token, body: { name: "r", target: gone.url(), email: "ops@example.net", groups: ["CITY_AFTER_INSERT"] } })).body;
        await j.req("POST", "/api/city", { token: a.token, body: { name: "Gone", state: "SP", country: "BR" } });
        const changes = async () => (await j.req("GET", `/api/history?target_type=webhook&target_id=${hook.id}`, { token: a.token })).body.items;
        await waitFor("the webhook to be made inactive", async () => (await changes()).length === 2);
        const [inactive, created] = await changes();
        expect(created).toMatchObject({ actor: "admin", action: "create" });
        expect(created.changes).toContainEqual({ field: "secret", before: null, after: "********" });
        expect(inactive).toMatchObject({ actor: "system:webhook-dispatcher", actor_user_id: null, actor_app_id: null, action: "status", request_id: null });
        expect(inactive.changes).toEqual([{ field: "status", before: true, after: false }]);
      } finally {
        gone.stop();
      }
    } finally {
      await j.close();
    }
  });
});

sqliteOnly("no plain secret in the history, nor in the database files", () => {
  /** Every file under the data directory (databases, their -wal files), as bytes. */
  function filesContaining(dir: string, needle: string): string[] {
    const found: string[] = [];
    for (const name of readdirSync(dir, { recursive: true }) as string[]) {
      const path = join(dir, name);
      if (!statSync(path).isFile()) continue;
      if (readFileSync(path).includes(Buffer.from(needle))) found.push(name);
    }
    return found;
  }

  test("passwords, API keys, NAS and webhook secrets sent through the write routes", async () => {
    const password1 = "Plain-Password-One-1";
    const password2 = "Plain-Password-Two-2";
    const user = (await t.req("POST", "/api/user", { token: admin.token, body: { name: "Secret User", email: "secret@example.com", login: "secret-user", password: password1 } })).body;
    expect((await t.req("POST", `/api/user/${user.id}/password`, { token: admin.token, body: { new_password: password2 } })).status).toBe(204);
    const rotated = await t.req("POST", `/api/externalapp/${app.id}/key`, { token: admin.token });
    expect(rotated.status).toBe(200);
    const keySecret = (rotated.body.api_key as string).split(".")[2];
    app.api_key = rotated.body.api_key;
    const nasSecret = "Plain-Nas-Secret-3";
    const nas = (await t.req("POST", "/api/isp/nas", { token: admin.token, body: { name: "nas-secret", ip: "10.77.0.1", secret: nasSecret } })).body;
    const nasSecret2 = "Plain-Nas-Secret-4";
    expect((await t.req("PUT", `/api/isp/nas/${nas.id}`, { token: admin.token, body: { name: "nas-secret", ip: "10.77.0.1", secret: nasSecret2 } })).status).toBe(200);
    const webhook = (await t.req("POST", "/api/webhook", { token: admin.token, body: { name: "w-secret", target: "http://127.0.0.1:9/x", email: "ops@example.com" } })).body;
    const contract = (await t.req("POST", "/api/contract/create/externalapp/name/erp", { apiKey: app.api_key, body: contractBody(40) })).body;
    const radiusPassword = "Plain-Radius-Password-5";
    expect((await t.req("POST", `/api/contract/${contract.id}/config`, { token: admin.token, body: { password: radiusPassword } })).status).toBe(200);

    // Each of these writes is in the history, with the secret masked.
    const nasChanges = await changesOf("nas", nas.id);
    expect(nasChanges.map((c) => c.action)).toEqual(["update", "create"]);
    expect(nasChanges[0].changes).toEqual([{ field: "secret", before: "********", after: "********" }]);
    expect((await changesOf("externalapp", app.id))[0]).toMatchObject({ action: "key", changes: [{ field: "key", before: "********", after: "********" }] });
    const userChanges = (await t.req("GET", `/api/history?target_type=user&target_id=${user.id}`, { token: admin.token })).body.items;
    expect(userChanges.map((c: { action: string }) => c.action)).toEqual(["password", "create"]);
    expect(userChanges[0].changes).toEqual([{ field: "password_hash", before: "********", after: "********" }]);

    // Stored only as hashes (or sealed): in no file of the data directory.
    for (const secret of [password1, password2, keySecret, nasSecret, nasSecret2]) expect({ secret, files: filesContaining(t.dir, secret) }).toEqual({ secret, files: [] });
    // The webhook secret (it signs deliveries) and the RADIUS password (PAP/CHAP) are stored by
    // their records; the history holds neither.
    const history = JSON.stringify(t.sql(admin.corpId).query("SELECT * FROM history").all()) + JSON.stringify(t.sql().query("SELECT * FROM platform_history").all());
    for (const secret of [webhook.secret, radiusPassword, password1, password2, keySecret, nasSecret, nasSecret2]) expect(history.includes(secret)).toBe(false);
  });
});

describe("GET /api/history: the working corporation's changes only", () => {
  test("another corporation's changes are not listed; platform records by target_type", async () => {
    const otherCorp = await addCorp(t, "other-history");
    const elsewhere = (await adminIn(t, otherCorp, "POST", "/api/city", { name: "Elsewhere", state: "SP", country: "BR" })).body;
    const here = await t.req("GET", `/api/history?target_type=city&target_id=${elsewhere.id}`, { token: admin.token });
    expect(here.body.total).toBe(0);
    const there = (await adminIn(t, otherCorp, "GET", `/api/history?target_type=city&target_id=${elsewhere.id}`)).body;
    expect(there.items.map((c: { action: string }) => c.action)).toEqual(["create"]);

    // A workgroup of the working corporation: the platform's history, listed under it.
    const wg = (await t.req("POST", "/api/workgroup", { token: admin.token, body: { name: "wg-history" } })).body;
    await t.req("PUT", `/api/workgroup/${wg.id}`, { token: admin.token, body: { name: "wg-history-2" } });
    const wgChanges = (await t.req("GET", `/api/history?target_type=workgroup&target_id=${wg.id}`, { token: admin.token })).body.items;
    expect(wgChanges.map((c: { action: string }) => c.action)).toEqual(["update", "create"]);
    expect(wgChanges[0].changes).toEqual([{ field: "name", before: "wg-history", after: "wg-history-2" }]);
    // The other corporation's workgroups are not.
    const otherWg = (await adminIn(t, otherCorp, "POST", "/api/workgroup", { name: "wg-other" })).body;
    expect((await t.req("GET", `/api/history?target_type=workgroup&target_id=${otherWg.id}`, { token: admin.token })).body.total).toBe(0);
    // Filters: by actor and action.
    const mine = (await t.req("GET", `/api/history?target_type=workgroup&actor_user_id=${admin.userId}&action=update`, { token: admin.token })).body.items;
    expect(mine.map((c: { target_id: string }) => c.target_id)).toEqual([wg.id]);
  });
});

describe("retention", () => {
  testSourceOnly("housekeeping deletes Changes older than --history-retention-days (default 400), in both databases", async () => {
    const DAY = 86_400_000;
    const city = (await t.req("POST", "/api/city", { token: admin.token, body: { name: "Kept", state: "SP", country: "BR" } })).body;
    await t.req("POST", "/api/workgroup", { token: admin.token, body: { name: "wg-kept" } });
    expect(t.ctx.config.historyRetentionDays).toBe(400);
    const early = await new Housekeeping(t.ctx, { now: () => Date.now() + 399 * DAY }).runOnce();
    expect(early.pruned.history).toBe(0);
    expect(early.pruned.platform_history).toBe(0);
    // (The sessions are pruned too: the rows are read directly.)
    const kept = () => (t.sql(admin.corpId).query("SELECT count(*) AS n FROM history WHERE target_id = ?1").get(city.id) as { n: number }).n;
    expect(kept()).toBe(1);
    const late = await new Housekeeping(t.ctx, { now: () => Date.now() + 401 * DAY }).runOnce();
    expect(late.pruned.history).toBeGreaterThan(0);
    expect(late.pruned.platform_history).toBeGreaterThan(0);
    expect(kept()).toBe(0);
  });
});
