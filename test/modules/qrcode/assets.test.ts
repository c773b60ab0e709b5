import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addCorp, addUser, makeApp, startAndLogin, UNKNOWN_ID, type TestApp } from "../../support/helpers";
import { b64, jpegLogo, pngLogo } from "../../support/qrcode";

let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
let noPerm: string;
let betaToken: string;

beforeAll(async () => {
  t = await makeApp();
  admin = await startAndLogin(t);
  noPerm = (await addUser(t, admin.corpId, { services: ["platform.city"] })).token;
  const beta = await addCorp(t, "beta");
  betaToken = (await addUser(t, beta, { services: ["platform.qrcode"] })).token;
});
afterAll(() => t.close());

const req = (method: string, path: string, body?: unknown, token = admin.token) => t.req(method, path, { token, body });

describe("GET|POST /api/qrcode/logo; GET|PUT|DELETE /api/qrcode/logo/{id}: logos", () => {
  test("PNG and JPEG upload, get with data, list without data, update, delete", async () => {
    const png = pngLogo();
    const made = await req("POST", "/api/qrcode/logo", { name: "Brand", content_type: "image/png", data: b64(png) });
    expect(made.status).toBe(200);
    expect(made.headers.get("location")).toBe(`/api/qrcode/logo/${made.body.id}`);
    expect(made.body).toMatchObject({ name: "Brand", content_type: "image/png", size: png.length, data: b64(png) });
    const jpg = jpegLogo();
    const j = await req("POST", "/api/qrcode/logo", { name: "Photo", content_type: "image/jpeg", data: b64(jpg) });
    expect(j.status).toBe(200);
    expect(j.body.size).toBe(jpg.length);

    const one = await req("GET", `/api/qrcode/logo/${made.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toBe(b64(png));
    const list = await req("GET", "/api/qrcode/logo?q=bra");
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    expect(list.body.items[0]).toEqual({ id: made.body.id, name: "Brand", content_type: "image/png", size: png.length, created_at: made.body.created_at, updated_at: made.body.updated_at });

    const upd = await req("PUT", `/api/qrcode/logo/${made.body.id}`, { name: "Brand 2", content_type: "image/jpeg", data: b64(jpg) });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ name: "Brand 2", content_type: "image/jpeg", size: jpg.length });
    expect((await req("DELETE", `/api/qrcode/logo/${made.body.id}`)).status).toBe(204);
    expect((await req("GET", `/api/qrcode/logo/${made.body.id}`)).status).toBe(404);
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
    const res = await req("POST", "/api/qrcode/logo", body);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
  });

  test("a PNG wider than 4096 px is refused before it is inflated", async () => {
    const png = pngLogo(2, 2);
    png.writeUInt32BE(100_000, 16); // IHDR width
    const res = await req("POST", "/api/qrcode/logo", { name: "huge", content_type: "image/png", data: b64(png) });
    expect(res.status).toBe(400);
  });

  test("PUT 400 as create; 401, 403, 404 for every row", async () => {
    const made = await req("POST", "/api/qrcode/logo", { name: "Keep", content_type: "image/png", data: b64(pngLogo()) });
    expect((await req("PUT", `/api/qrcode/logo/${made.body.id}`, { name: "x", content_type: "image/png", data: "AAAA" })).status).toBe(400);
    const body = { name: "x", content_type: "image/png", data: b64(pngLogo()) };
    expect((await t.req("GET", "/api/qrcode/logo")).status).toBe(401);
    expect((await req("GET", "/api/qrcode/logo", undefined, noPerm)).status).toBe(403);
    expect((await req("POST", "/api/qrcode/logo", body, noPerm)).status).toBe(403);
    expect((await req("GET", `/api/qrcode/logo/${made.body.id}`, undefined, noPerm)).status).toBe(403);
    expect((await req("PUT", `/api/qrcode/logo/${made.body.id}`, body, noPerm)).status).toBe(403);
    expect((await req("DELETE", `/api/qrcode/logo/${made.body.id}`, undefined, noPerm)).status).toBe(403);
    for (const id of [UNKNOWN_ID]) {
      expect((await req("GET", `/api/qrcode/logo/${id}`)).status).toBe(404);
      expect((await req("PUT", `/api/qrcode/logo/${id}`, body)).status).toBe(404);
      expect((await req("DELETE", `/api/qrcode/logo/${id}`)).status).toBe(404);
    }
    expect((await req("GET", `/api/qrcode/logo/${made.body.id}`, undefined, betaToken)).status).toBe(404);
    expect((await req("PUT", `/api/qrcode/logo/${made.body.id}`, body, betaToken)).status).toBe(404);
    expect((await req("DELETE", `/api/qrcode/logo/${made.body.id}`, undefined, betaToken)).status).toBe(404);
    expect((await req("GET", "/api/qrcode/logo", undefined, betaToken)).body.items).toEqual([]);
  });
});

for (const [kind, path] of [
  ["campaign", "/api/qrcode/campaign"],
  ["category", "/api/qrcode/category"],
] as const) {
  describe(`GET|POST ${path}; GET|PUT|DELETE ${path}/{id}: ${kind}s`, () => {
    const full = kind === "campaign" ? { description: "Summer", start_date: "2025-01-01", end_date: "2025-02-28T10:00:00-03:00" } : { description: "Stickers" };

    test("create, get, list, update, delete", async () => {
      const made = await req("POST", path, { name: `First ${kind}`, ...full });
      expect(made.status).toBe(200);
      expect(made.headers.get("location")).toBe(`${path}/${made.body.id}`);
      expect(made.body).toMatchObject({ name: `First ${kind}`, description: full.description });
      if (kind === "campaign") expect(made.body).toMatchObject({ start_date: "2025-01-01", end_date: "2025-02-28" });
      expect((await req("GET", `${path}/${made.body.id}`)).body).toEqual(made.body);
      const list = await req("GET", `${path}?q=first`);
      expect(list.body.items).toEqual([made.body]);
      const upd = await req("PUT", `${path}/${made.body.id}`, { name: `Renamed ${kind}` });
      expect(upd.status).toBe(200);
      expect(upd.body).toMatchObject({ name: `Renamed ${kind}`, description: null });
      expect((await req("DELETE", `${path}/${made.body.id}`)).status).toBe(204);
      expect((await req("GET", `${path}/${made.body.id}`)).status).toBe(404);
    });

    test("409 for a taken name on create and update; the same name on itself is fine", async () => {
      const a = await req("POST", path, { name: `Dup ${kind}` });
      const b = await req("POST", path, { name: `Other ${kind}` });
      expect((await req("POST", path, { name: `Dup ${kind}` })).status).toBe(409);
      expect((await req("PUT", `${path}/${b.body.id}`, { name: `Dup ${kind}` })).status).toBe(409);
      expect((await req("PUT", `${path}/${a.body.id}`, { name: `Dup ${kind}` })).status).toBe(200);
      // Names are per corporation.
      expect((await req("POST", path, { name: `Dup ${kind}` }, betaToken)).status).toBe(200);
    });

    test("400, 401, 403, 404", async () => {
      const made = await req("POST", path, { name: `Guarded ${kind}` });
      const noName = await req("POST", path, { description: "x" });
      expect(noName.status).toBe(400);
      expect(noName.body.errors[0].path).toBe("name");
      expect((await t.req("GET", path)).status).toBe(401);
      expect((await t.req("POST", path, { body: { name: "x" } })).status).toBe(401);
      expect((await req("GET", path, undefined, noPerm)).status).toBe(403);
      expect((await req("POST", path, { name: "x" }, noPerm)).status).toBe(403);
      expect((await req("GET", `${path}/${made.body.id}`, undefined, noPerm)).status).toBe(403);
      expect((await req("PUT", `${path}/${made.body.id}`, { name: "x" }, noPerm)).status).toBe(403);
      expect((await req("DELETE", `${path}/${made.body.id}`, undefined, noPerm)).status).toBe(403);
      expect((await req("GET", `${path}/${UNKNOWN_ID}`)).status).toBe(404);
      expect((await req("PUT", `${path}/${UNKNOWN_ID}`, { name: "x" })).status).toBe(404);
      expect((await req("DELETE", `${path}/${UNKNOWN_ID}`)).status).toBe(404);
      expect((await req("GET", `${path}/${made.body.id}`, undefined, betaToken)).status).toBe(404);
      expect((await req("PUT", `${path}/${made.body.id}`, { name: "x" }, betaToken)).status).toBe(404);
      expect((await req("DELETE", `${path}/${made.body.id}`, undefined, betaToken)).status).toBe(404);
    });

    if (kind === "campaign") {
      test("dates: malformed 400, end before start 400", async () => {
        const bad = await req("POST", path, { name: "Bad dates", start_date: "2025-02-30" });
        expect(bad.status).toBe(400);
        expect(bad.body.errors[0].path).toBe("start_date");
        const order = await req("POST", path, { name: "Bad order", start_date: "2025-03-01", end_date: "2025-02-01" });
        expect(order.status).toBe(400);
        expect(order.body.errors[0].path).toBe("end_date");
      });
    }
  });
}
