import { beforeAll, describe, expect, test } from "bun:test";
import { addCorp, addUser, UNKNOWN_ID, openApp } from "../../support/helpers";
import { b64, pngLogo } from "../../support/qrcode";
import { waitFor } from "../../support/wait";

const { t, admin } = await openApp();
let noPerm: string; // a member of acme without platform.qrcode
let betaToken: string; // a user with platform.qrcode working in another corporation
let betaId: string;

beforeAll(async () => {
  noPerm = (await addUser(t, admin.corpId, { services: ["platform.city"] })).token;
  betaId = await addCorp(t, "beta");
  betaToken = (await addUser(t, betaId, { services: ["platform.qrcode"] })).token;
});

const as = (token: string) => ({
  get: (p: string) => t.req("GET", p, { token }),
  post: (p: string, body: unknown) => t.req("POST", p, { token, body }),
  put: (p: string, body?: unknown) => t.req("PUT", p, { token, body }),
  del: (p: string) => t.req("DELETE", p, { token }),
});
const A = () => as(admin.token);

function events(corpId = admin.corpId) {
  return t.sql(corpId).query("SELECT type, record_id, payload FROM events ORDER BY seq").all() as { type: string; record_id: string; payload: string }[];
}

describe("POST /api/qrcode", () => {
  test("a static code encodes its content", async () => {
    const res = await A().post("/api/qrcode", { name: "Wi-Fi", kind: "static", content: "WIFI:S:acme;T:WPA;P:secret;;" });
    expect(res.status).toBe(200);
    expect(res.headers.get("location")).toBe(`/api/qrcode/${res.body.id}`);
    expect(res.body).toMatchObject({
      name: "Wi-Fi",
      kind: "static",
      content: "WIFI:S:acme;T:WPA;P:secret;;",
      target: null,
      slug: null,
      url: null,
      encoded: "WIFI:S:acme;T:WPA;P:secret;;",
      campaign_id: null,
      category_id: null,
      logo_id: null,
      status: true,
      scans: 0,
    });
    expect(res.body.created_at).toMatch(/\+00:00$/);
  });

  test("a dynamic code gets an 8-character base62 slug and encodes its public URL", async () => {
    const res = await A().post("/api/qrcode", { name: "Promo", kind: "dynamic", target: "https://example.com/promo" });
    expect(res.status).toBe(200);
    expect(res.body.slug).toMatch(/^[A-Za-z0-9]{8}$/);
    expect(res.body.url).toBe(`${t.config.publicUrl}/q/${res.body.slug}`);
    expect(res.body.encoded).toBe(res.body.url);
    expect(res.body.target).toBe("https://example.com/promo");
  });

  test("a chosen slug is kept, and taken again (in any corporation) is 409", async () => {
    const res = await A().post("/api/qrcode", { name: "Chosen", kind: "dynamic", target: "https://example.com", slug: "my-promo_1" });
    expect(res.status).toBe(200);
    expect(res.body.slug).toBe("my-promo_1");
    const again = await A().post("/api/qrcode", { name: "Again", kind: "dynamic", target: "https://example.com", slug: "my-promo_1" });
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain("my-promo_1");
    const other = await as(betaToken).post("/api/qrcode", { name: "Elsewhere", kind: "dynamic", target: "https://example.com", slug: "my-promo_1" });
    expect(other.status).toBe(409);
  });

  test("fires QRCODE_AFTER_INSERT with the record as GET returns it", async () => {
    const res = await A().post("/api/qrcode", { name: "Evented", kind: "static", content: "x" });
    const ev = events().filter((e) => e.record_id === res.body.id);
    expect(ev.map((e) => e.type)).toEqual(["QRCODE_AFTER_INSERT"]);
    expect(JSON.parse(ev[0].payload).data).toEqual(res.body);
  });

  test.each([
    ["static without content", { name: "x", kind: "static" }, "content"],
    ["static with a target", { name: "x", kind: "static", content: "a", target: "https://e.com" }, "target"],
    ["static with a slug", { name: "x", kind: "static", content: "a", slug: "abcd" }, "slug"],
    ["dynamic without target", { name: "x", kind: "dynamic" }, "target"],
    ["dynamic with a non-http target", { name: "x", kind: "dynamic", target: "ftp://e.com/x" }, "target"],
    ["dynamic with a malformed target", { name: "x", kind: "dynamic", target: "not a url" }, "target"],
    ["a malformed slug", { name: "x", kind: "dynamic", target: "https://e.com", slug: "a b" }, "slug"],
    ["a too-short slug", { name: "x", kind: "dynamic", target: "https://e.com", slug: "ab" }, "slug"],
    ["an unknown kind", { name: "x", kind: "weird", content: "a" }, "kind"],
    ["no name", { kind: "static", content: "a" }, "name"],
    ["content over 2000 characters", { name: "x", kind: "static", content: "a".repeat(2001) }, "content"],
    ["content that no QR version holds", { name: "x", kind: "static", content: "€".repeat(1500) }, "content"],
    ["an unknown campaign", { name: "x", kind: "static", content: "a", campaign_id: UNKNOWN_ID }, "campaign_id"],
    ["an unknown category", { name: "x", kind: "static", content: "a", category_id: UNKNOWN_ID }, "category_id"],
    ["an unknown logo", { name: "x", kind: "static", content: "a", logo_id: UNKNOWN_ID }, "logo_id"],
  ])("%s is 400 naming the field", async (_name, body, field) => {
    const res = await A().post("/api/qrcode", body);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
  });

  test("a failed create leaves no slug behind", async () => {
    const res = await A().post("/api/qrcode", { name: "x", kind: "dynamic", target: "https://e.com", slug: "never-made", campaign_id: UNKNOWN_ID });
    expect(res.status).toBe(400);
    expect(t.sql().query("SELECT count(*) AS n FROM qr_slugs WHERE slug = 'never-made'").get()).toEqual({ n: 0 });
  });

  test("401 without a token, 403 without the permission", async () => {
    expect((await t.req("POST", "/api/qrcode", { body: { name: "x", kind: "static", content: "a" } })).status).toBe(401);
    expect((await as(noPerm).post("/api/qrcode", { name: "x", kind: "static", content: "a" })).status).toBe(403);
  });

  test("an allowed action is enough for its own row only", async () => {
    const u = await addUser(t, admin.corpId, { actions: ["localhost:80/api/qrcode/GET"] });
    expect((await as(u.token).get("/api/qrcode")).status).toBe(200);
    expect((await as(u.token).post("/api/qrcode", { name: "x", kind: "static", content: "a" })).status).toBe(403);
  });
});

describe("GET /api/qrcode; GET /api/qrcode/{id}", () => {
  test("lists with paging, q and filters; shows one", async () => {
    const made = await A().post("/api/qrcode", { name: "Findable Sticker", kind: "static", content: "sticker" });
    const list = await A().get("/api/qrcode?q=findable&limit=5");
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ page: 1, limit: 5, total: 1 });
    expect(list.body.items[0]).toEqual(made.body);
    const byKind = await A().get("/api/qrcode?kind=dynamic&sort=-name");
    expect(byKind.body.items.every((c: { kind: string }) => c.kind === "dynamic")).toBe(true);
    const one = await A().get(`/api/qrcode/${made.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(made.body);
  });

  test("400 for a bad list parameter, 401, 403, 404 unknown or another corporation's", async () => {
    expect((await A().get("/api/qrcode?limit=501")).status).toBe(400);
    const bad = await A().get("/api/qrcode?sort=nope");
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("sort");
    expect((await t.req("GET", "/api/qrcode")).status).toBe(401);
    expect((await as(noPerm).get("/api/qrcode")).status).toBe(403);
    expect((await A().get(`/api/qrcode/${UNKNOWN_ID}`)).status).toBe(404);
    expect((await A().get("/api/qrcode/not-a-uuid")).status).toBe(404);
    const mine = await A().post("/api/qrcode", { name: "Mine", kind: "static", content: "m" });
    expect((await as(betaToken).get(`/api/qrcode/${mine.body.id}`)).status).toBe(404);
    const theirs = await as(betaToken).get("/api/qrcode");
    expect(theirs.body.items.find((c: { id: string }) => c.id === mine.body.id)).toBeUndefined();
    expect((await as(noPerm).get(`/api/qrcode/${mine.body.id}`)).status).toBe(403);
    expect((await t.req("GET", `/api/qrcode/${mine.body.id}`)).status).toBe(401);
  });
});

describe("PUT /api/qrcode/{id}", () => {
  test("changes a dynamic code's target but not its slug or image text; fires UPDATE", async () => {
    const made = await A().post("/api/qrcode", { name: "Menu", kind: "dynamic", target: "https://example.com/a" });
    const res = await A().put(`/api/qrcode/${made.body.id}`, { name: "Menu 2", kind: "dynamic", target: "https://example.com/b" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: "Menu 2", target: "https://example.com/b", slug: made.body.slug, encoded: made.body.encoded });
    const ev = events().filter((e) => e.record_id === made.body.id).map((e) => e.type);
    expect(ev).toEqual(["QRCODE_AFTER_INSERT", "QRCODE_AFTER_UPDATE"]);
  });

  test("omitted optional fields become null", async () => {
    const camp = await A().post("/api/qrcode/campaign", { name: "Put-null campaign" });
    const made = await A().post("/api/qrcode", { name: "P", kind: "static", content: "c", campaign_id: camp.body.id });
    expect(made.body.campaign_id).toBe(camp.body.id);
    const res = await A().put(`/api/qrcode/${made.body.id}`, { name: "P", kind: "static", content: "c" });
    expect(res.body.campaign_id).toBeNull();
  });

  test("400 when kind or slug changes, 404 unknown or another corporation's, 401, 403", async () => {
    const made = await A().post("/api/qrcode", { name: "Fixed", kind: "dynamic", target: "https://example.com/a" });
    const kind = await A().put(`/api/qrcode/${made.body.id}`, { name: "F", kind: "static", content: "x" });
    expect(kind.status).toBe(400);
    expect(kind.body.errors.map((e: { path: string }) => e.path)).toContain("kind");
    const slug = await A().put(`/api/qrcode/${made.body.id}`, { name: "F", kind: "dynamic", target: "https://e.com", slug: "other-slug" });
    expect(slug.status).toBe(400);
    expect(slug.body.errors[0].path).toBe("slug");
    const same = await A().put(`/api/qrcode/${made.body.id}`, { name: "F", kind: "dynamic", target: "https://e.com", slug: made.body.slug });
    expect(same.status).toBe(200);
    const body = { name: "F", kind: "dynamic", target: "https://e.com" };
    expect((await A().put(`/api/qrcode/${UNKNOWN_ID}`, body)).status).toBe(404);
    expect((await as(betaToken).put(`/api/qrcode/${made.body.id}`, body)).status).toBe(404);
    expect((await as(noPerm).put(`/api/qrcode/${made.body.id}`, body)).status).toBe(403);
    expect((await t.req("PUT", `/api/qrcode/${made.body.id}`, { body })).status).toBe(401);
  });
});

describe("PUT /api/qrcode/{id}/active|inactive", () => {
  test("toggle status, each change an UPDATE event; no event when nothing changes", async () => {
    const made = await A().post("/api/qrcode", { name: "Toggle", kind: "dynamic", target: "https://example.com" });
    const off = await A().put(`/api/qrcode/${made.body.id}/inactive`);
    expect(off.status).toBe(200);
    expect(off.body.status).toBe(false);
    expect((await A().put(`/api/qrcode/${made.body.id}/inactive`)).body.status).toBe(false);
    const on = await A().put(`/api/qrcode/${made.body.id}/active`);
    expect(on.body.status).toBe(true);
    const ev = events().filter((e) => e.record_id === made.body.id).map((e) => e.type);
    expect(ev).toEqual(["QRCODE_AFTER_INSERT", "QRCODE_AFTER_UPDATE", "QRCODE_AFTER_UPDATE"]);
  });

  test("404, 401, 403", async () => {
    const made = await A().post("/api/qrcode", { name: "T2", kind: "static", content: "x" });
    for (const action of ["active", "inactive"]) {
      expect((await A().put(`/api/qrcode/${UNKNOWN_ID}/${action}`)).status).toBe(404);
      expect((await as(betaToken).put(`/api/qrcode/${made.body.id}/${action}`)).status).toBe(404);
      expect((await as(noPerm).put(`/api/qrcode/${made.body.id}/${action}`)).status).toBe(403);
      expect((await t.req("PUT", `/api/qrcode/${made.body.id}/${action}`)).status).toBe(401);
    }
  });
});

describe("DELETE /api/qrcode/{id}", () => {
  test("deletes, fires DELETE with the record as it was, frees the slug", async () => {
    const made = await A().post("/api/qrcode", { name: "Gone", kind: "dynamic", target: "https://example.com", slug: "freed-slug" });
    expect((await as(noPerm).del(`/api/qrcode/${made.body.id}`)).status).toBe(403);
    expect((await as(betaToken).del(`/api/qrcode/${made.body.id}`)).status).toBe(404);
    expect((await t.req("DELETE", `/api/qrcode/${made.body.id}`)).status).toBe(401);
    const res = await A().del(`/api/qrcode/${made.body.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect((await A().get(`/api/qrcode/${made.body.id}`)).status).toBe(404);
    const ev = events().filter((e) => e.record_id === made.body.id);
    expect(ev.map((e) => e.type)).toEqual(["QRCODE_AFTER_INSERT", "QRCODE_AFTER_DELETE"]);
    expect(JSON.parse(ev[1].payload).data).toEqual(made.body);
    const reuse = await as(betaToken).post("/api/qrcode", { name: "Reuse", kind: "dynamic", target: "https://example.com", slug: "freed-slug" });
    expect(reuse.status).toBe(200);
    expect((await A().del(`/api/qrcode/${made.body.id}`)).status).toBe(404);
  });

  test("deleting a corporation frees its slugs", async () => {
    const gamma = await addCorp(t, "gamma");
    const g = await addUser(t, gamma, { services: ["platform.qrcode"] });
    expect((await as(g.token).post("/api/qrcode", { name: "G", kind: "dynamic", target: "https://e.com", slug: "gamma-slug" })).status).toBe(200);
    expect((await t.req("DELETE", `/api/corp/${gamma}`, { token: admin.token })).status).toBe(204);
    const res = await A().post("/api/qrcode", { name: "Taken over", kind: "dynamic", target: "https://e.com", slug: "gamma-slug" });
    expect(res.status).toBe(200);
  });
});

describe("GET /api/qrcode/export", () => {
  test("CSV of the filtered codes with campaign and category names", async () => {
    const camp = await A().post("/api/qrcode/campaign", { name: "Export, \"quoted\" campaign" });
    const cat = await A().post("/api/qrcode/category", { name: "Export category" });
    const made = await A().post("/api/qrcode", { name: "=cmd export", kind: "static", content: "line1\nline2", campaign_id: camp.body.id, category_id: cat.body.id });
    const res = await A().get("/api/qrcode/export?format=csv&q=export");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/csv");
    expect(res.headers.get("content-disposition")).toContain("attachment");
    const [header, ...rest] = res.text.split("\r\n");
    expect(header).toBe("id,name,kind,content,target,slug,url,campaign,category,status,scans,created_at");
    expect(rest.filter(Boolean)).toEqual([
      `${made.body.id},'=cmd export,static,"line1\nline2",,,,"Export, ""quoted"" campaign",Export category,true,0,${made.body.created_at}`,
    ]);
    const all = await A().get("/api/qrcode/export?format=csv&kind=dynamic");
    expect(all.text.split("\r\n").filter(Boolean).length).toBeGreaterThan(1);
  });

  test("400 for another format or an unknown filter, 401, 403", async () => {
    const res = await A().get("/api/qrcode/export?format=xlsx");
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("format");
    expect((await A().get("/api/qrcode/export")).status).toBe(400);
    expect((await A().get("/api/qrcode/export?format=csv&nope=1")).status).toBe(400);
    expect((await t.req("GET", "/api/qrcode/export?format=csv")).status).toBe(401);
    expect((await as(noPerm).get("/api/qrcode/export?format=csv")).status).toBe(403);
  });
});

describe("POST /api/qrcode; DELETE /api/qrcode/logo|campaign|category/{id}: references to logos, campaigns and categories", () => {
  test("a code keeps them, and they cannot be deleted while used (409)", async () => {
    const logo = await A().post("/api/qrcode/logo", { name: "L", content_type: "image/png", data: b64(pngLogo()) });
    const camp = await A().post("/api/qrcode/campaign", { name: "Used campaign" });
    const cat = await A().post("/api/qrcode/category", { name: "Used category" });
    const made = await A().post("/api/qrcode", { name: "Refs", kind: "static", content: "r", logo_id: logo.body.id, campaign_id: camp.body.id, category_id: cat.body.id });
    expect(made.body).toMatchObject({ logo_id: logo.body.id, campaign_id: camp.body.id, category_id: cat.body.id });
    expect((await A().del(`/api/qrcode/logo/${logo.body.id}`)).status).toBe(409);
    expect((await A().del(`/api/qrcode/campaign/${camp.body.id}`)).status).toBe(409);
    expect((await A().del(`/api/qrcode/category/${cat.body.id}`)).status).toBe(409);
    await A().del(`/api/qrcode/${made.body.id}`);
    expect((await A().del(`/api/qrcode/logo/${logo.body.id}`)).status).toBe(204);
    expect((await A().del(`/api/qrcode/campaign/${camp.body.id}`)).status).toBe(204);
    expect((await A().del(`/api/qrcode/category/${cat.body.id}`)).status).toBe(204);
  });

  test("another corporation's ids are unknown (400 naming the field)", async () => {
    const camp = await A().post("/api/qrcode/campaign", { name: "Acme only" });
    const res = await as(betaToken).post("/api/qrcode", { name: "x", kind: "static", content: "a", campaign_id: camp.body.id });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("campaign_id");
  });
});

// The public redirect and the reports on the real clock (redirect.test.ts moves an in-process one).
describe("GET /q/{slug}: then the accesses and the report", () => {
  test("302 to the target; the scan is listed, exported and counted", async () => {
    const code = (await A().post("/api/qrcode", { name: "scanned", kind: "dynamic", target: "https://example.com/scanned" })).body;
    const scan = await t.req("GET", `/q/${code.slug}`, { ip: "203.0.113.9", headers: { "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0" } });
    expect(scan.status).toBe(302);
    expect(scan.headers.get("location")).toBe("https://example.com/scanned");
    // Scans are written in batches.
    const accesses = await waitFor("the scan written", async () => {
      const res = await A().get(`/api/qrcode/${code.id}/accesses`);
      return res.body.total > 0 && res;
    });
    expect(accesses.body).toMatchObject({ total: 1, items: [{ qrcode_id: code.id, ip: "203.0.113.9" }] });
    const csv = await t.req("GET", `/api/qrcode/${code.id}/accesses/export?format=csv`, { token: admin.token });
    expect(csv.text.trim().split("\n")).toHaveLength(2);
    expect((await A().get(`/api/qrcode/${code.id}/report`)).body).toMatchObject({ qrcode_id: code.id, total: 1, unique_visitors: 1 });
    expect((await A().get("/api/qrcode/report")).body.total).toBeGreaterThanOrEqual(1);
    expect((await t.req("GET", "/q/no-such-slug")).status).toBe(404);
  });
});
