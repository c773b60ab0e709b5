import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { ADMIN, addCorp, addUser, inProcessOnly, makeApp, sourceOnly, startAndLogin, TARGET, UNKNOWN_ID, type TestApp } from "../../support/helpers";
import { TEST_BACKEND } from "../../support/backend";
import { waitFor } from "../../support/wait";

let clock = Date.parse("2025-03-10T12:00:00Z");
let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
let noPerm: string;
let betaToken: string;

beforeAll(async () => {
  t = await makeApp({ options: inProcessOnly({ now: () => clock }) });
  admin = await startAndLogin(t); // timezone America/Sao_Paulo (UTC-3, no DST in 2025)
  noPerm = (await addUser(t, admin.corpId, { services: ["platform.city"] })).token;
  const beta = await addCorp(t, "beta");
  betaToken = (await addUser(t, beta, { services: ["platform.qrcode"] })).token;
});
afterAll(() => t.close());

const api = (method: string, path: string, body?: unknown, token = admin.token) => t.req(method, path, { token, body });
const UA = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari/604.1";
const scan = (slug: string, o: { ip?: string; ua?: string | null; referer?: string } = {}) => {
  const headers: Record<string, string> = {};
  if (o.ua !== null) headers["user-agent"] = o.ua ?? UA;
  if (o.referer) headers.referer = o.referer;
  return t.req("GET", `/q/${slug}`, { ip: o.ip ?? "203.0.113.7", headers });
};
/** Waits until the recorder, which writes scans in batches, has written `n` scans of the code. */
const written = (id: string, n: number, token = admin.token) =>
  waitFor(`${n} scans of ${id} written`, async () => (await api("GET", `/api/qrcode/${id}`, undefined, token)).body.scans >= n);

async function dynamic(name: string, extra: Record<string, unknown> = {}) {
  const res = await api("POST", "/api/qrcode", { name, kind: "dynamic", target: `https://example.com/${name}`, ...extra });
  expect(res.status).toBe(200);
  return res.body as { id: string; slug: string; target: string };
}

describe("GET /q/{slug}", () => {
  test("302 to the target with Cache-Control: no-store; the access is written in the background", async () => {
    const code = await dynamic("hello");
    const res = await scan(code.slug, { referer: "https://social.example/post" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://example.com/hello");
    expect(res.headers.get("cache-control")).toBe("no-store");
    await written(code.id, 1);
    const list = await api("GET", `/api/qrcode/${code.id}/accesses`);
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    expect(list.body.items[0]).toMatchObject({
      qrcode_id: code.id,
      ...(TARGET === "source" ? { at: "2025-03-10T12:00:00.000+00:00" } : {}),
      ip: "203.0.113.7",
      user_agent: UA,
      referer: "https://social.example/post",
      bot: false,
    });
    expect((await api("GET", `/api/qrcode/${code.id}`)).body.scans).toBe(1);
  });

  test("404 for an unknown or malformed slug, with no-store", async () => {
    const res = await scan("doesNotExist");
    expect(res.status).toBe(404);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.body.type).toBe("urn:corpadmin:problem:not-found");
    expect((await scan("a")).status).toBe(404);
    expect((await scan("bad%20slug")).status).toBe(404);
  });

  test("410 while inactive, 302 again once active; a new target applies at once", async () => {
    const code = await dynamic("toggle");
    expect((await scan(code.slug)).status).toBe(302); // now cached
    await api("PUT", `/api/qrcode/${code.id}/inactive`);
    const gone = await scan(code.slug);
    expect(gone.status).toBe(410);
    expect(gone.body.type).toBe("urn:corpadmin:problem:gone");
    await api("PUT", `/api/qrcode/${code.id}/active`);
    expect((await scan(code.slug)).status).toBe(302);
    await api("PUT", `/api/qrcode/${code.id}`, { name: "toggle", kind: "dynamic", target: "https://example.org/new" });
    expect((await scan(code.slug)).headers.get("location")).toBe("https://example.org/new");
    await api("DELETE", `/api/qrcode/${code.id}`);
    expect((await scan(code.slug)).status).toBe(404);
  });

  test("410 while the corporation is BLOCKED; 302 again when enabled", async () => {
    const code = await dynamic("blocked");
    expect((await scan(code.slug)).status).toBe(302);
    const setStatus = async (s: "block" | "enable") => expect((await api("POST", `/api/corp/${admin.corpId}/${s}`)).status).toBe(200);
    await setStatus("block");
    try {
      expect((await scan(code.slug)).status).toBe(410);
    } finally {
      await setStatus("enable");
    }
    expect((await scan(code.slug)).status).toBe(302);
  });

  test("a static code has no public URL", async () => {
    const s = await api("POST", "/api/qrcode", { name: "static", kind: "static", content: "plain" });
    expect(s.body.slug).toBeNull();
    expect((await t.req("GET", `/q/${s.body.id}`)).status).toBe(404);
  });

  test("bots are recorded and flagged, counted in total but not in unique_visitors", async () => {
    const code = await dynamic("bots");
    await scan(code.slug, { ua: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" });
    await scan(code.slug, { ua: "curl/8.5.0" });
    await scan(code.slug, { ua: null });
    await scan(code.slug); // a person
    await scan(code.slug); // the same person again
    await scan(code.slug, { ip: "198.51.100.9" }); // another person
    await written(code.id, 6);
    const list = await api("GET", `/api/qrcode/${code.id}/accesses?sort=id`);
    expect(list.body.items.map((a: { bot: boolean }) => a.bot)).toEqual([true, true, true, false, false, false]);
    expect(list.body.items[2].user_agent).toBeNull();
    const report = await api("GET", `/api/qrcode/${code.id}/report`);
    expect(report.body).toMatchObject({ total: 6, unique_visitors: 2 });
  });
});

// In-process: closes the app's context while scans are still in memory.
sourceOnly("GET /q/{slug}; GET /api/qrcode/{id}/accesses: no access is lost", () => {
  test("across a clean shutdown, and a reopened app counts them all", async () => {
    const own = await makeApp();
    const a = await startAndLogin(own);
    const code = (await own.req("POST", "/api/qrcode", { token: a.token, body: { name: "d", kind: "dynamic", target: "https://example.com" } })).body;
    const N = 150;
    for (let i = 0; i < N; i++) {
      const res = await own.req("GET", `/q/${code.slug}`, { ip: `10.0.${i >> 8}.${i & 255}`, headers: { "user-agent": UA } });
      expect(res.status).toBe(302);
    }
    await own.ctx.close(); // at once: the scans are still in memory
    const again = await makeApp({ dir: own.dir });
    try {
      const login = await again.req("POST", "/api/login", { body: { corp: "acme", login: ADMIN.login, password: ADMIN.password } });
      const token = login.body.access_token;
      const list = await again.req("GET", `/api/qrcode/${code.id}/accesses?limit=1`, { token });
      expect(list.body.total).toBe(N);
      expect((await again.req("GET", `/api/qrcode/${code.id}`, { token })).body.scans).toBe(N);
      const report = await again.req("GET", `/api/qrcode/${code.id}/report`, { token });
      expect(report.body.unique_visitors).toBe(N);
    } finally {
      await again.ctx.close();
      rmSync(own.dir, { recursive: true, force: true });
    }
  });
});

// In-process: scans at chosen times of the app's clock.
sourceOnly("GET /api/qrcode/{id}/accesses; GET /api/qrcode/{id}/accesses/export: accesses list and export", () => {
  let code: { id: string; slug: string };
  beforeAll(async () => {
    code = await dynamic("listed");
    for (const [at, ip] of [
      ["2025-03-01T10:00:00Z", "192.0.2.1"],
      ["2025-03-02T10:00:00Z", "192.0.2.2"],
      ["2025-03-03T10:00:00Z", "192.0.2.3"],
    ]) {
      clock = Date.parse(at);
      await scan(code.slug, { ip, referer: ip === "192.0.2.3" ? "=HYPERLINK(\"http://evil\")" : undefined });
    }
    clock = Date.parse("2025-03-10T12:00:00Z");
    await written(code.id, 3);
  });

  test("newest first by default; from/to (dates in the corporation's timezone or instants); q", async () => {
    const all = await api("GET", `/api/qrcode/${code.id}/accesses`);
    expect(all.body.items.map((a: { ip: string }) => a.ip)).toEqual(["192.0.2.3", "192.0.2.2", "192.0.2.1"]);
    const range = await api("GET", `/api/qrcode/${code.id}/accesses?from=2025-03-02&to=2025-03-02`);
    expect(range.body.items.map((a: { ip: string }) => a.ip)).toEqual(["192.0.2.2"]);
    const instants = await api("GET", `/api/qrcode/${code.id}/accesses?from=${encodeURIComponent("2025-03-02T07:00:00-03:00")}&sort=at`);
    expect(instants.body.items.map((a: { ip: string }) => a.ip)).toEqual(["192.0.2.2", "192.0.2.3"]);
    const q = await api("GET", `/api/qrcode/${code.id}/accesses?q=192.0.2.1`);
    expect(q.body.total).toBe(1);
  });

  test("400 bad from/to or filter, 401, 403, 404 unknown or another corporation's", async () => {
    const bad = await api("GET", `/api/qrcode/${code.id}/accesses?from=yesterday`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("from");
    const noOffset = await api("GET", `/api/qrcode/${code.id}/accesses?to=2025-03-02T10:00:00`);
    expect(noOffset.status).toBe(400);
    expect(noOffset.body.errors[0].path).toBe("to");
    const order = await api("GET", `/api/qrcode/${code.id}/accesses?from=2025-03-05&to=2025-03-01`);
    expect(order.status).toBe(400);
    expect((await api("GET", `/api/qrcode/${code.id}/accesses?visitor=1`)).status).toBe(400);
    expect((await t.req("GET", `/api/qrcode/${code.id}/accesses`)).status).toBe(401);
    expect((await api("GET", `/api/qrcode/${code.id}/accesses`, undefined, noPerm)).status).toBe(403);
    expect((await api("GET", `/api/qrcode/${UNKNOWN_ID}/accesses`)).status).toBe(404);
    expect((await api("GET", `/api/qrcode/${code.id}/accesses`, undefined, betaToken)).status).toBe(404);
  });

  test("CSV export in time order, formula-like text defused", async () => {
    const res = await api("GET", `/api/qrcode/${code.id}/accesses/export?format=csv`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/csv");
    expect(res.headers.get("content-disposition")).toContain("attachment");
    expect(res.text.split("\r\n")).toEqual([
      "at,ip,user_agent,referer",
      `2025-03-01T10:00:00.000+00:00,192.0.2.1,"${UA}",`,
      `2025-03-02T10:00:00.000+00:00,192.0.2.2,"${UA}",`,
      `2025-03-03T10:00:00.000+00:00,192.0.2.3,"${UA}","'=HYPERLINK(""http://evil"")"`,
      "",
    ]);
    const ranged = await api("GET", `/api/qrcode/${code.id}/accesses/export?format=csv&from=2025-03-02&to=2025-03-02`);
    expect(ranged.text.split("\r\n").filter(Boolean).length).toBe(2);
  });

  test("export: 400 other format, 401, 403, 404", async () => {
    const res = await api("GET", `/api/qrcode/${code.id}/accesses/export?format=json`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("format");
    expect((await t.req("GET", `/api/qrcode/${code.id}/accesses/export?format=csv`)).status).toBe(401);
    expect((await api("GET", `/api/qrcode/${code.id}/accesses/export?format=csv`, undefined, noPerm)).status).toBe(403);
    expect((await api("GET", `/api/qrcode/${UNKNOWN_ID}/accesses/export?format=csv`)).status).toBe(404);
    expect((await api("GET", `/api/qrcode/${code.id}/accesses/export?format=csv`, undefined, betaToken)).status).toBe(404);
  });

  test("a large export streams every row", async () => {
    const big = await dynamic("big-export");
    const db = t.sqlWrite(admin.corpId);
    const insert = db.query("INSERT INTO qr_accesses (id, qrcode_id, at, ip, user_agent, referer, bot, visitor) VALUES (?, ?, ?, ?, NULL, NULL, 0, ?)");
    db.transaction(() => {
      for (let i = 0; i < 4500; i++) insert.run(Bun.randomUUIDv7(), big.id, new Date(Date.UTC(2025, 0, 1) + (i >> 1) * 1000).toISOString().replace("Z", "+00:00"), `10.1.${i >> 8}.${i & 255}`, i);
    })();
    const res = await api("GET", `/api/qrcode/${big.id}/accesses/export?format=csv`);
    const lines = res.text.split("\r\n").filter(Boolean);
    expect(lines.length).toBe(4501);
    expect(new Set(lines).size).toBe(4501);
  });
});

// In-process: scans at chosen times of the app's clock.
sourceOnly("GET /api/qrcode/{id}/report; GET /api/qrcode/report: reports", () => {
  let a: { id: string; slug: string };
  let b: { id: string; slug: string };
  let campaignId: string;
  let categoryId: string;
  beforeAll(async () => {
    campaignId = (await api("POST", "/api/qrcode/campaign", { name: "Report campaign" })).body.id;
    categoryId = (await api("POST", "/api/qrcode/category", { name: "Report category" })).body.id;
    a = await dynamic("report-a", { campaign_id: campaignId, category_id: categoryId });
    b = await dynamic("report-b", { category_id: categoryId });
    const at = async (iso: string, slug: string, o: { ip?: string; ua?: string } = {}) => {
      clock = Date.parse(iso);
      expect((await scan(slug, o)).status).toBe(302);
    };
    // 23:30 on the 9th and 00:30 on the 10th in São Paulo (UTC-3).
    await at("2025-06-10T02:30:00Z", a.slug, { ip: "192.0.2.10" });
    await at("2025-06-10T03:30:00Z", a.slug, { ip: "192.0.2.10" });
    await at("2025-06-10T04:00:00Z", a.slug, { ip: "192.0.2.11" });
    await at("2025-06-10T05:00:00Z", a.slug, { ua: "Googlebot/2.1" });
    await at("2025-06-10T06:00:00Z", b.slug, { ip: "192.0.2.10" });
    await at("2025-06-12T15:00:00Z", b.slug, { ip: "192.0.2.12" });
    clock = Date.parse("2025-06-12T18:00:00Z");
    await written(a.id, 4);
    await written(b.id, 2);
  });

  test("per code: days in the corporation's timezone, unique visitors per day and overall", async () => {
    const res = await api("GET", `/api/qrcode/${a.id}/report?from=2025-06-09&to=2025-06-11`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      qrcode_id: a.id,
      from: "2025-06-09T03:00:00.000+00:00",
      to: "2025-06-12T03:00:00.000+00:00",
      total: 4,
      unique_visitors: 2,
      days: [
        { date: "2025-06-09", total: 1, unique_visitors: 1 },
        { date: "2025-06-10", total: 3, unique_visitors: 2 },
        { date: "2025-06-11", total: 0, unique_visitors: 0 },
      ],
    });
  });

  test("per code: the last 30 days by default, today included", async () => {
    const res = await api("GET", `/api/qrcode/${b.id}/report`);
    expect(res.body.days.length).toBe(30);
    expect(res.body.days[0].date).toBe("2025-05-14");
    expect(res.body.days[29]).toEqual({ date: "2025-06-12", total: 1, unique_visitors: 1 });
    expect(res.body.to).toBe("2025-06-13T03:00:00.000+00:00");
    expect(res.body.from).toBe("2025-05-14T03:00:00.000+00:00");
    expect(res.body.total).toBe(2);
  });

  test("per code: instants work too, and the days are clipped to them", async () => {
    const from = encodeURIComponent("2025-06-10T03:45:00+00:00");
    const to = encodeURIComponent("2025-06-10T05:30:00+00:00");
    const res = await api("GET", `/api/qrcode/${a.id}/report?from=${from}&to=${to}`);
    expect(res.body).toMatchObject({ total: 2, unique_visitors: 1, days: [{ date: "2025-06-10", total: 2, unique_visitors: 1 }] });
  });

  test("per code: 400, 401, 403, 404", async () => {
    const bad = await api("GET", `/api/qrcode/${a.id}/report?to=not-a-date`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("to");
    expect((await api("GET", `/api/qrcode/${a.id}/report?from=1990-01-01&to=2025-01-01`)).status).toBe(400);
    expect((await t.req("GET", `/api/qrcode/${a.id}/report`)).status).toBe(401);
    expect((await api("GET", `/api/qrcode/${a.id}/report`, undefined, noPerm)).status).toBe(403);
    expect((await api("GET", `/api/qrcode/${UNKNOWN_ID}/report`)).status).toBe(404);
    expect((await api("GET", `/api/qrcode/${a.id}/report`, undefined, betaToken)).status).toBe(404);
  });

  test("all codes: grouped by code (default), campaign or category, with filters", async () => {
    const range = "from=2025-06-09&to=2025-06-12";
    const byCode = await api("GET", `/api/qrcode/report?${range}`);
    expect(byCode.status).toBe(200);
    expect(byCode.body).toEqual({
      from: "2025-06-09T03:00:00.000+00:00",
      to: "2025-06-13T03:00:00.000+00:00",
      total: 6,
      unique_visitors: 3,
      groups: [
        { id: a.id, name: "report-a", total: 4, unique_visitors: 2 },
        { id: b.id, name: "report-b", total: 2, unique_visitors: 2 },
      ],
    });
    const byCampaign = await api("GET", `/api/qrcode/report?${range}&group_by=campaign`);
    expect(byCampaign.body.groups).toEqual([
      { id: campaignId, name: "Report campaign", total: 4, unique_visitors: 2 },
      { id: null, name: null, total: 2, unique_visitors: 2 },
    ]);
    const byCategory = await api("GET", `/api/qrcode/report?${range}&group_by=category`);
    expect(byCategory.body.groups).toEqual([{ id: categoryId, name: "Report category", total: 6, unique_visitors: 3 }]);
    const filtered = await api("GET", `/api/qrcode/report?${range}&campaign_id=${campaignId}`);
    expect(filtered.body).toMatchObject({ total: 4, unique_visitors: 2, groups: [{ id: a.id }] });
    const cat = await api("GET", `/api/qrcode/report?${range}&category_id=${categoryId}&group_by=campaign`);
    expect(cat.body.total).toBe(6);
    const none = await api("GET", "/api/qrcode/report?from=2024-01-01&to=2024-01-31");
    expect(none.body).toMatchObject({ total: 0, unique_visitors: 0, groups: [] });
  });

  test("all codes: 400, 401, 403; another corporation sees none of it", async () => {
    const bad = await api("GET", "/api/qrcode/report?group_by=color");
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("group_by");
    expect((await api("GET", "/api/qrcode/report?campaign_id=nope")).status).toBe(400);
    expect((await t.req("GET", "/api/qrcode/report")).status).toBe(401);
    expect((await api("GET", "/api/qrcode/report", undefined, noPerm)).status).toBe(403);
    const beta = await api("GET", "/api/qrcode/report?from=2025-06-01&to=2025-06-30", undefined, betaToken);
    expect(beta.body).toMatchObject({ total: 0, groups: [] });
  });
});

// In-process: scans at chosen times of the app's clock.
sourceOnly("GET /api/qrcode/{id}/report: reports across a daylight-saving change", () => {
  test("a 23-hour local day is one day of the report", async () => {
    const ny = await addCorp(t, "newyork", "America/New_York");
    const u = await addUser(t, ny, { services: ["platform.qrcode"] });
    const code = (await t.req("POST", "/api/qrcode", { token: u.token, body: { name: "ny", kind: "dynamic", target: "https://example.com" } })).body;
    // 23:30 on the 8th (EST), 23:30 on the 9th (EDT, clocks went forward that night), 00:30 on the 10th.
    for (const at of ["2025-03-09T04:30:00Z", "2025-03-10T03:30:00Z", "2025-03-10T04:30:00Z"]) {
      clock = Date.parse(at);
      expect((await scan(code.slug)).status).toBe(302);
    }
    await written(code.id, 3, u.token);
    const res = await t.req("GET", `/api/qrcode/${code.id}/report?from=2025-03-08&to=2025-03-10`, { token: u.token });
    expect(res.body).toMatchObject({
      from: "2025-03-08T05:00:00.000+00:00",
      to: "2025-03-11T04:00:00.000+00:00",
      total: 3,
      days: [
        { date: "2025-03-08", total: 1 },
        { date: "2025-03-09", total: 1 },
        { date: "2025-03-10", total: 1 },
      ],
    });
  });
});

// In-process: deletes and closes past the API while scans are in memory.
// SQLite-only too: it removes the corporation's file under the writer.
(TEST_BACKEND === "pg" ? describe.skip : sourceOnly)("GET /q/{slug}: scans of a corporation deleted before they were written", () => {
  test("are dropped without holding back anyone else's", async () => {
    const doomed = await addCorp(t, "doomed");
    const d = await addUser(t, doomed, { services: ["platform.qrcode"] });
    const dCode = (await t.req("POST", "/api/qrcode", { token: d.token, body: { name: "d", kind: "dynamic", target: "https://example.com" } })).body;
    const mine = await dynamic("survivor");
    expect((await scan(dCode.slug)).status).toBe(302);
    expect((await scan(mine.slug)).status).toBe(302);
    // Deleted before the flush: the platform row (and with it the slug), the open handle, the file.
    const path = t.ctx.tenants.pathOf(doomed);
    t.sqlWrite().query("DELETE FROM corporations WHERE id = ?").run(doomed);
    t.ctx.corps.invalidate(doomed);
    t.ctx.tenants.close(doomed);
    rmSync(path, { force: true });
    await written(mine.id, 1);
    expect((await api("GET", `/api/qrcode/${mine.id}`)).body.scans).toBe(1);
    expect(await Bun.file(path).exists()).toBe(false);
    expect((await scan(dCode.slug)).status).toBe(404);
  });
});
