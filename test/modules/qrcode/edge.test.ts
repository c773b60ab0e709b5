// GET /q/{slug} as the server answers it: from Bun's router in front of Elysia (src/lib/edge.ts),
// through the same handler app.handle reaches. Both must answer alike, record every scan, and
// feed the request metrics.
// source-only: reads the app's in-process request counters.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { listen } from "../../../src/cli/serve";
import { makeApp, startAndLogin, type TestApp } from "../../support/helpers";
import { waitFor } from "../../support/wait";

let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
let base: string;
const UA = "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0";

beforeAll(async () => {
  t = await makeApp();
  admin = await startAndLogin(t);
  listen(t, 0, "127.0.0.1");
  base = `http://127.0.0.1:${t.app.server!.port}`;
});
afterAll(async () => {
  await t.app.stop(true);
  await t.close();
});

async function dynamic(name: string) {
  const res = await t.req("POST", "/api/qrcode", { token: admin.token, body: { name, kind: "dynamic", target: `https://example.com/${name}` } });
  expect(res.status).toBe(200);
  return res.body as { id: string; slug: string };
}

const served = (path: string, headers: Record<string, string> = {}) => fetch(base + path, { headers: { "user-agent": UA, ...headers }, redirect: "manual" });
const handled = (path: string, headers: Record<string, string> = {}) =>
  t.app.handle(new Request(`http://localhost${path}`, { headers: { "user-agent": UA, "x-test-peer": "127.0.0.1", ...headers } }));

/** What a client can see of an answer, the request id aside. */
async function seen(res: Response) {
  return {
    status: res.status,
    location: res.headers.get("location"),
    cacheControl: res.headers.get("cache-control"),
    contentType: res.headers.get("content-type"),
    body: await res.text(),
  };
}

const requestsTotal = (status: number) =>
  t.ctx.serviceMetrics.counter("corpadmin_http_requests_total").get({ method: "GET", route: "/q/:slug", status });

describe("GET /q/{slug} from the server's edge route", () => {
  test("the server's router takes /q/:slug GET from the edge routes", () => {
    expect(Object.keys(t.serveRoutes())).toContain("/q/:slug");
  });

  test("answers as app.handle does: 302, 404 (unknown, malformed), 410 (inactive)", async () => {
    const active = await dynamic("edge-active");
    const inactive = await dynamic("edge-inactive");
    expect((await t.req("PUT", `/api/qrcode/${inactive.id}/inactive`, { token: admin.token })).status).toBe(200);
    const cases: [string, number][] = [
      [`/q/${active.slug}`, 302],
      [`/q/${active.slug}?utm_source=poster`, 302],
      ["/q/doesNotExist", 404],
      ["/q/a", 404],
      [`/q/${inactive.slug}`, 410],
    ];
    for (const [path, status] of cases) {
      const viaServer = await seen(await served(path));
      expect(viaServer.status).toBe(status);
      expect(viaServer).toEqual(await seen(await handled(path)));
    }
    const ok = await seen(await served(`/q/${active.slug}`));
    expect(ok.location).toBe("https://example.com/edge-active");
    expect(ok.cacheControl).toBe("no-store");
    const gone = await seen(await served(`/q/${inactive.slug}`));
    expect(gone.contentType).toBe("application/problem+json");
    expect(JSON.parse(gone.body)).toMatchObject({ status: 410, detail: "The QR code is inactive" });
  });

  // Both 404; for a broken percent-encoding Elysia's router answers its generic 404 (no route
  // matched), the server's edge route the QR code one.
  test("odd slugs are 404 and odd headers still 302, never a 500, on both paths", async () => {
    const slugs = ["%", "%zz", "%C0%AF", "%00", "%FF%FE", "a%2Fb", "..%2F..%2Fapi%2Fhealth", "%E2%80%AE", "%20", "__proto__", "constructor", "toString", "hasOwnProperty", "é", "a".repeat(8000)];
    for (const slug of slugs) {
      const viaServer = await seen(await served(`/q/${slug}`));
      expect({ slug: slug.slice(0, 20), status: viaServer.status }).toEqual({ slug: slug.slice(0, 20), status: 404 });
      expect((await handled(`/q/${slug}`)).status).toBe(404);
    }
    const code = await dynamic("edge-odd");
    for (const headers of <Record<string, string>[]>[{ "user-agent": "\"\\</script>\u00e9" }, { referer: "%zz" }, { referer: "x".repeat(6000) }, { "x-forwarded-for": "::::, %zz" }, { "user-agent": "" }]) {
      expect((await served(`/q/${code.slug}?%zz=%`, headers)).status).toBe(302);
    }
  });

  test("a request id is echoed or made, as on every other route", async () => {
    const code = await dynamic("edge-id");
    expect((await served(`/q/${code.slug}`, { "x-request-id": "trace-123" })).headers.get("x-request-id")).toBe("trace-123");
    const made = (await served(`/q/${code.slug}`)).headers.get("x-request-id");
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
    expect((await served("/q/doesNotExist")).headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("every scan is recorded with the peer address and counted in the request metrics", async () => {
    const code = await dynamic("edge-scans");
    const before302 = requestsTotal(302);
    const before404 = requestsTotal(404);
    await Promise.all(Array.from({ length: 25 }, () => served(`/q/${code.slug}`, { referer: "https://poster.example/" }).then((r) => r.text())));
    await served("/q/doesNotExist").then((r) => r.text());
    // Counted after the response is sent, and written by the recorder in batches: waited for.
    await waitFor("the requests counted", () => requestsTotal(302) - before302 >= 25 && requestsTotal(404) - before404 >= 1);
    expect(requestsTotal(302) - before302).toBe(25);
    expect(requestsTotal(404) - before404).toBe(1);
    await waitFor("the scans written", async () => (await t.req("GET", `/api/qrcode/${code.id}`, { token: admin.token })).body.scans >= 25);
    const list = await t.req("GET", `/api/qrcode/${code.id}/accesses?limit=100`, { token: admin.token });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(25);
    expect(list.body.items[0]).toMatchObject({ ip: "127.0.0.1", user_agent: UA, referer: "https://poster.example/", bot: false });
    expect((await t.req("GET", `/api/qrcode/${code.id}`, { token: admin.token })).body.scans).toBe(25);
  });

  test("other methods on /q/{slug} still reach the app", async () => {
    const code = await dynamic("edge-post");
    const res = await fetch(`${base}/q/${code.slug}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    // The app answers: the path has GET only (issue 29: 405 with Allow).
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect(res.headers.get("content-type")).toBe("application/problem+json");
  });
});
