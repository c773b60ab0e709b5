import { beforeAll, describe, expect, test } from "bun:test";
import { addCorp, addUser, UNKNOWN_ID, openApp, type User } from "../../support/helpers";
import { b64, jpegLogo, pngLogo } from "../../support/qrcode";

const { t, admin } = await openApp();
let cityUser: User;
let betaUser: User;

beforeAll(async () => {
  cityUser = await addUser(t, admin.corpId, { services: ["platform.city"] });
  const beta = await addCorp(t, "beta");
  betaUser = await addUser(t, beta, { services: ["platform.qrcode"] });
});

describe("GET|POST /api/qrcode/logo; GET|PUT|DELETE /api/qrcode/logo/{id}: logos", () => {
  test("PNG and JPEG upload, get with data, list without data, update, delete", async () => {
    const png = pngLogo();
    const made = await admin.req("POST", "/api/qrcode/logo", { name: "Brand", content_type: "image/png", data: b64(png) });
    expect(made.status).toBe(200);
    expect(made.headers.get("location")).toBe(`/api/qrcode/logo/${made.body.id}`);
    expect(made.body).toMatchObject({ name: "Brand", content_type: "image/png", size: png.length, data: b64(png) });
    const jpg = jpegLogo();
    const j = await admin.req("POST", "/api/qrcode/logo", { name: "Photo", content_type: "image/jpeg", data: b64(jpg) });
    expect(j.status).toBe(200);
    expect(j.body.size).toBe(jpg.length);

    const one = await admin.req("GET", `/api/qrcode/logo/${made.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toBe(b64(png));
    const list = await admin.req("GET", "/api/qrcode/logo?q=bra");
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    expect(list.body.items[0]).toEqual({ id: made.body.id, name: "Brand", content_type: "image/png", size: png.length, created_at: made.body.created_at, updated_at: made.body.updated_at });

    const upd = await admin.req("PUT", `/api/qrcode/logo/${made.body.id}`, { name: "Brand 2", content_type: "image/jpeg", data: b64(jpg) });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ name: "Brand 2", content_type: "image/jpeg", size: jpg.length });
    expect((await admin.req("DELETE", `/api/qrcode/logo/${made.body.id}`)).status).toBe(204);
    expect((await admin.req("GET", `/api/qrcode/logo/${made.body.id}`)).status).toBe(404);
  });

  test.each([
    ["not base64", { name: "x", content_type: "image/png", data: "@@not base64@@" }, "data"],
    ["neither PNG nor JPEG", { name: "x", content_type: "image/png", data: b64(Buffer.from("GIF89a some gif bytes")) }, "data"],
    ["a type that does not match the bytes", { name: "x", content_type: "image/jpeg", data: b64(pngLogo()) }, "content_type"],
    ["an unknown content type", { name: "x", content_type: "image/gif", data: b64(pngLogo()) }, "content_type"],
    ["a corrupt PNG", { name: "x", content_type: "image/png", data: b64(Buffer.concat([pngLogo().subarray(0, 40)])) }, "data"],
    ["over 512 KiB", { name: "x", content_type: "image/png", data: b64(Buffer.concat([pngLogo(), Buffer.alloc(512 * 1024)])) }, "data"],
    ["no name", { content_type: "image/png", data: b64(pngLogo()) }, "name"],
  ])("%s is 400 naming the field", async (_n, body, field) => {
    const res = await admin.req("POST", "/api/qrcode/logo", body);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
  });

  test("a PNG wider than 4096 px is refused before it is inflated", async () => {
    const png = pngLogo(2, 2);
    png.writeUInt32BE(100_000, 16); // IHDR width
    const res = await admin.req("POST", "/api/qrcode/logo", { name: "huge", content_type: "image/png", data: b64(png) });
    expect(res.status).toBe(400);
  });

  test("PUT 400 as create; 401, 403, 404 for every row", async () => {
    const made = await admin.req("POST", "/api/qrcode/logo", { name: "Keep", content_type: "image/png", data: b64(pngLogo()) });
    expect((await admin.req("PUT", `/api/qrcode/logo/${made.body.id}`, { name: "x", content_type: "image/png", data: "AAAA" })).status).toBe(400);
    const body = { name: "x", content_type: "image/png", data: b64(pngLogo()) };
    expect((await t.req("GET", "/api/qrcode/logo")).status).toBe(401);
    expect((await cityUser.req("GET", "/api/qrcode/logo")).status).toBe(403);
    expect((await cityUser.req("POST", "/api/qrcode/logo", body)).status).toBe(403);
    expect((await cityUser.req("GET", `/api/qrcode/logo/${made.body.id}`)).status).toBe(403);
    expect((await cityUser.req("PUT", `/api/qrcode/logo/${made.body.id}`, body)).status).toBe(403);
    expect((await cityUser.req("DELETE", `/api/qrcode/logo/${made.body.id}`)).status).toBe(403);
    for (const id of [UNKNOWN_ID]) {
      expect((await admin.req("GET", `/api/qrcode/logo/${id}`)).status).toBe(404);
      expect((await admin.req("PUT", `/api/qrcode/logo/${id}`, body)).status).toBe(404);
      expect((await admin.req("DELETE", `/api/qrcode/logo/${id}`)).status).toBe(404);
    }
    expect((await betaUser.req("GET", `/api/qrcode/logo/${made.body.id}`)).status).toBe(404);
    expect((await betaUser.req("PUT", `/api/qrcode/logo/${made.body.id}`, body)).status).toBe(404);
    expect((await betaUser.req("DELETE", `/api/qrcode/logo/${made.body.id}`)).status).toBe(404);
    expect((await betaUser.req("GET", "/api/qrcode/logo")).body.items).toEqual([]);
  });
});

for (const [kind, path] of [
  ["campaign", "/api/qrcode/campaign"],
  ["category", "/api/qrcode/category"],
] as const) {
  describe(`GET|POST ${path}; GET|PUT|DELETE ${path}/{id}: ${kind}s`, () => {
    const full = kind === "campaign" ? { description: "Summer", start_date: "2025-01-01", end_date: "2025-02-28T10:00:00-03:00" } : { description: "Stickers" };

    test("create, get, list, update, delete", async () => {
      const made = await admin.req("POST", path, { name: `First ${kind}`, ...full });
      expect(made.status).toBe(200);
      expect(made.headers.get("location")).toBe(`${path}/${made.body.id}`);
      expect(made.body).toMatchObject({ name: `First ${kind}`, description: full.description });
      if (kind === "campaign") expect(made.body).toMatchObject({ start_date: "2025-01-01", end_date: "2025-02-28" });
      expect((await admin.req("GET", `${path}/${made.body.id}`)).body).toEqual(made.body);
      const list = await admin.req("GET", `${path}?q=first`);
      expect(list.body.items).toEqual([made.body]);
      const upd = await admin.req("PUT", `${path}/${made.body.id}`, { name: `Renamed ${kind}` });
      expect(upd.status).toBe(200);
      expect(upd.body).toMatchObject({ name: `Renamed ${kind}`, description: null });
      expect((await admin.req("DELETE", `${path}/${made.body.id}`)).status).toBe(204);
      expect((await admin.req("GET", `${path}/${made.body.id}`)).status).toBe(404);
    });

    test("409 for a taken name on create and update; the same name on itself is fine", async () => {
      const a = await admin.req("POST", path, { name: `Dup ${kind}` });
      const b = await admin.req("POST", path, { name: `Other ${kind}` });
      expect((await admin.req("POST", path, { name: `Dup ${kind}` })).status).toBe(409);
      expect((await admin.req("PUT", `${path}/${b.body.id}`, { name: `Dup ${kind}` })).status).toBe(409);
      expect((await admin.req("PUT", `${path}/${a.body.id}`, { name: `Dup ${kind}` })).status).toBe(200);
      // Names are per corporation.
      expect((await betaUser.req("POST", path, { name: `Dup ${kind}` })).status).toBe(200);
    });

    test("400, 401, 403, 404", async () => {
      const made = await admin.req("POST", path, { name: `Guarded ${kind}` });
      const noName = await admin.req("POST", path, { description: "x" });
      expect(noName.status).toBe(400);
      expect(noName.body.errors[0].path).toBe("name");
      expect((await t.req("GET", path)).status).toBe(401);
      expect((await t.req("POST", path, { body: { name: "x" } })).status).toBe(401);
      expect((await cityUser.req("GET", path)).status).toBe(403);
      expect((await cityUser.req("POST", path, { name: "x" })).status).toBe(403);
      expect((await cityUser.req("GET", `${path}/${made.body.id}`)).status).toBe(403);
      expect((await cityUser.req("PUT", `${path}/${made.body.id}`, { name: "x" })).status).toBe(403);
      expect((await cityUser.req("DELETE", `${path}/${made.body.id}`)).status).toBe(403);
      expect((await admin.req("GET", `${path}/${UNKNOWN_ID}`)).status).toBe(404);
      expect((await admin.req("PUT", `${path}/${UNKNOWN_ID}`, { name: "x" })).status).toBe(404);
      expect((await admin.req("DELETE", `${path}/${UNKNOWN_ID}`)).status).toBe(404);
      expect((await betaUser.req("GET", `${path}/${made.body.id}`)).status).toBe(404);
      expect((await betaUser.req("PUT", `${path}/${made.body.id}`, { name: "x" })).status).toBe(404);
      expect((await betaUser.req("DELETE", `${path}/${made.body.id}`)).status).toBe(404);
    });

    if (kind === "campaign") {
      test("dates: malformed 400, end before start 400", async () => {
        const bad = await admin.req("POST", path, { name: "Bad dates", start_date: "2025-02-30" });
        expect(bad.status).toBe(400);
        expect(bad.body.errors[0].path).toBe("start_date");
        const order = await admin.req("POST", path, { name: "Bad order", start_date: "2025-03-01", end_date: "2025-02-01" });
        expect(order.status).toBe(400);
        expect(order.body.errors[0].path).toBe("end_date");
      });
    }
  });
}
