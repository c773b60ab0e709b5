// GET /api/isp/radius/authorize as the server answers it: from Bun's router in front of Elysia
// (src/lib/edge.ts) for the plain query rlm_rest sends, through the same authentication and work
// app.handle reaches; any other query is handed to the Elysia route. Both must answer alike, log
// the attempts and feed the request metrics.
// source-only: compares the server with app.handle and reads the app's in-process request counters.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { listen } from "../../../src/cli/serve";
import { plainAuthorizeQuery } from "../../../src/modules/isp/radius-routes";
import { makeApp, startAndLogin, type TestApp } from "../../support/helpers";
import { contractWith, mikrotikLayout, must } from "../../support/isp";

const SECRET = "nas-secret-edge-1";
const basic = `Basic ${Buffer.from(`acme:${SECRET}`).toString("base64")}`;
let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
let base: string;

beforeAll(async () => {
  t = await makeApp();
  admin = await startAndLogin(t);
  const { layout } = await mikrotikLayout(t, admin.token);
  await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-edge", ip: "192.0.2.20", secret: SECRET, layout_id: layout.id });
  await contractWith(t, admin.token, { username: "ana@isp", password: "p&ss word", max_upload: "5M", max_download: "50M", pool_name_ipv4: "v4" });
  await contractWith(t, admin.token, { username: "off", password: "off-pass", max_upload: "1M", max_download: "1M" }, "SUSPENDED");
  listen(t, 0, "127.0.0.1");
  base = `http://127.0.0.1:${t.app.server!.port}`;
});
afterAll(async () => {
  await t.app.stop(true);
  await t.close();
});

const PATH = "/api/isp/radius/authorize";
const served = (query: string, headers: Record<string, string> = { authorization: basic }) => fetch(`${base}${PATH}?${query}`, { headers });
const handled = (query: string, headers: Record<string, string> = { authorization: basic }) => t.app.handle(new Request(`http://localhost${PATH}?${query}`, { headers }));

async function seen(res: Response) {
  return { status: res.status, contentType: res.headers.get("content-type"), body: await res.text(), requestId: /^[0-9a-f-]{36}$/.test(res.headers.get("x-request-id") ?? "") };
}

const requestsTotal = (status: number) => t.ctx.serviceMetrics.counter("corpadmin_http_requests_total").get({ method: "GET", route: PATH, status });

describe("GET /api/isp/radius/authorize from the server's edge route", () => {
  test("the server's router takes authorize GET from the edge routes", () => {
    expect(Object.keys(t.serveRoutes())).toContain(PATH);
  });

  test("answers as app.handle does: 200 (PAP and CHAP), 401, 404, and the queries only the schema judges", async () => {
    const cases: [string, number, Record<string, string>?][] = [
      ["username=ana%40isp&password=p%26ss%20word&nas_ip=192.0.2.20", 200],
      ["nas_ip=192.0.2.20&username=ana%40isp&password=", 200],
      ["username=ana%40isp&nas_ip=192.0.2.20", 200],
      ["username=ana%40isp&password=wrong&nas_ip=192.0.2.20", 401],
      ["username=off&password=off-pass&nas_ip=192.0.2.20", 401],
      ["username=nobody&nas_ip=192.0.2.20", 404],
      ["username=ana%40isp&nas_ip=192.0.2.99", 401],
      ["username=ana%40isp&nas_ip=192.0.2.20", 401, {}],
      ["username=ana%40isp&nas_ip=192.0.2.20", 401, { authorization: `Basic ${Buffer.from("acme:wrong-secret").toString("base64")}` }],
      // Handed to the Elysia route: missing, empty, repeated, unknown or overlong keys, `+`, bad escapes.
      ["username=ana%40isp", 400],
      ["username=&nas_ip=192.0.2.20", 400],
      ["username=a&username=b&nas_ip=192.0.2.20", 400],
      [`username=${"u".repeat(254)}&nas_ip=192.0.2.20`, 400],
      ["username=ana%40isp&nas_ip=192.0.2.20&extra=1", 200],
      ["username=p+q&nas_ip=192.0.2.20", 404],
      ["username=%zz&nas_ip=192.0.2.20", 400],
      ["username=ana%40isp&nas_ip=192.0.2.20&password", 200],
      ["", 400],
      ["username=ana%40isp&nas_ip=192.0.2.20", 400, { authorization: basic, "x-api-key": "" }],
    ];
    for (const [query, , headers] of cases) {
      const viaServer = await seen(await served(query, headers));
      const viaApp = await seen(await handled(query, headers));
      expect({ query, ...viaServer }).toEqual({ query, ...viaApp });
    }
    for (const [query, status, headers] of cases.slice(0, 9)) expect({ query, status: (await served(query, headers)).status }).toEqual({ query, status });
  });

  test("the plain form is taken only when the schema would take it as it is", () => {
    expect(plainAuthorizeQuery("http://x/a?username=ana%40isp&password=&nas_ip=10.0.0.1")).toEqual({ username: "ana@isp", password: "", nas_ip: "10.0.0.1" });
    for (const q of ["", "?", "?username=a", "?username=a&nas_ip=", "?username=a&nas_ip=1&x=1", "?username=a&nas_ip=1&nas_ip=2", "?username=a+b&nas_ip=1", "?username=%E0%A4%A&nas_ip=1", "?username&nas_ip=1", `?username=a&nas_ip=${"1".repeat(65)}`]) {
      expect({ q, parsed: plainAuthorizeQuery(`http://x/a${q}`) }).toEqual({ q, parsed: null });
    }
  });

  test("attempts are logged and requests counted as on the Elysia route", async () => {
    const before200 = requestsTotal(200);
    const before401 = requestsTotal(401);
    expect((await served("username=ana%40isp&password=edge-wrong&nas_ip=192.0.2.20")).status).toBe(401);
    expect((await served("username=ana%40isp&password=p%26ss%20word&nas_ip=192.0.2.20")).status).toBe(200);
    expect(requestsTotal(200) - before200).toBe(1);
    expect(requestsTotal(401) - before401).toBe(1);
    const list = await t.req("GET", "/api/isp/radius/attempts?username=ana%40isp&limit=100", { token: admin.token });
    expect(list.status).toBe(200);
    expect(list.body.items.some((a: { reason: string }) => a.reason === "bad-password")).toBe(true);
    expect(JSON.stringify(list.body)).not.toContain("edge-wrong");
  });
});
