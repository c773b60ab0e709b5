import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import jsQR from "jsqr";
import { PNG } from "pngjs";
import { addCorp, addUser, makeApp, startAndLogin, UNKNOWN_ID, type TestApp } from "../../support/helpers";
import { b64, jpegLogo, pngLogo } from "../../support/qrcode";

let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
let staticCode: { id: string; encoded: string };
let dynamicCode: { id: string; encoded: string; slug: string };
let pngLogoCode: { id: string; encoded: string };
let jpegLogoCode: { id: string; encoded: string; slug: string };

beforeAll(async () => {
  t = await makeApp({ env: { CORPADMIN_PUBLIC_URL: "https://qr.example.net" } });
  admin = await startAndLogin(t);
  const post = async (path: string, body: unknown) => (await t.req("POST", path, { token: admin.token, body })).body;
  const png = await post("/api/qrcode/logo", { name: "png", content_type: "image/png", data: b64(pngLogo()) });
  const jpg = await post("/api/qrcode/logo", { name: "jpeg", content_type: "image/jpeg", data: b64(jpegLogo(120, 120)) });
  staticCode = await post("/api/qrcode", { name: "s", kind: "static", content: "Hello, QR! ünïcødé" });
  dynamicCode = await post("/api/qrcode", { name: "d", kind: "dynamic", target: "https://example.com/x" });
  pngLogoCode = await post("/api/qrcode", { name: "s+logo", kind: "static", content: "BEGIN:VCARD\nFN:ACME\nEND:VCARD", logo_id: png.id });
  jpegLogoCode = await post("/api/qrcode", { name: "d+logo", kind: "dynamic", target: "https://example.com/y", logo_id: jpg.id });
});
afterAll(() => t.close());

async function image(id: string, query = "") {
  const res = await t.fetch(`/api/qrcode/${id}/image${query}`, { headers: { authorization: `Bearer ${admin.token}` } });
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
}

function decode(bytes: Buffer) {
  const img = PNG.sync.read(bytes);
  return { img, text: jsQR(new Uint8ClampedArray(img.data.buffer, img.data.byteOffset, img.data.length), img.width, img.height)?.data };
}

describe("GET /api/qrcode/{id}/image", () => {
  test("PNG by default, 512 px, attachment, and it decodes to the encoded text", async () => {
    const { res, bytes } = await image(staticCode.id);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="qrcode-${staticCode.id}.png"`);
    const { img, text } = decode(bytes);
    expect([img.width, img.height]).toEqual([512, 512]);
    expect(text).toBe("Hello, QR! ünïcødé");
  });

  test("a dynamic code's image decodes to its public URL", async () => {
    const { bytes } = await image(dynamicCode.id, "?size=300&ecc=Q");
    const { img, text } = decode(bytes);
    expect(img.width).toBe(300);
    expect(text).toBe(`https://qr.example.net/q/${dynamicCode.slug}`);
    expect(text).toBe(dynamicCode.encoded);
  });

  test("with a PNG logo, and with a JPEG logo, the image still decodes", async () => {
    const withPng = await image(pngLogoCode.id, "?logo=true");
    expect(withPng.res.status).toBe(200);
    expect(decode(withPng.bytes).text).toBe("BEGIN:VCARD\nFN:ACME\nEND:VCARD");
    const withJpeg = await image(jpegLogoCode.id, "?logo=true&size=400");
    expect(withJpeg.res.status).toBe(200);
    expect(decode(withJpeg.bytes).text).toBe(jpegLogoCode.encoded);
    // ... and the logo is really there: the centre differs from the same code without it.
    const plain = decode((await image(jpegLogoCode.id, "?size=400&ecc=H")).bytes).img;
    const logoed = decode(withJpeg.bytes).img;
    const centre = (img: PNG) => [...img.data.subarray((200 * 400 + 200) * 4, (200 * 400 + 200) * 4 + 3)];
    expect(centre(logoed)).not.toEqual(centre(plain));
    expect(centre(logoed).some((v) => v !== 0 && v !== 255)).toBe(true);
  });

  test("colours and margin: the corner pixel is the light colour, the first module the dark one", async () => {
    const { bytes } = await image(staticCode.id, "?size=290&margin=0&dark=%23123456&light=ABCDEF");
    const { img, text } = decode(bytes);
    expect(text).toBe(staticCode.encoded);
    // With no margin the top-left finder pattern starts at pixel (0, 0).
    expect([...img.data.subarray(0, 3)]).toEqual([0x12, 0x34, 0x56]);
    const withMargin = decode((await image(staticCode.id, "?size=290&margin=4&light=ABCDEF")).bytes).img;
    expect([...withMargin.data.subarray(0, 3)]).toEqual([0xab, 0xcd, 0xef]);
  });

  test("SVG, with the logo embedded as a data URI", async () => {
    const plain = await image(staticCode.id, "?format=svg&size=256");
    expect(plain.res.headers.get("content-type")).toBe("image/svg+xml");
    expect(plain.res.headers.get("content-disposition")).toContain(".svg");
    const svg = plain.bytes.toString();
    expect(svg).toStartWith("<svg");
    expect(svg).toContain('width="256"');
    expect(svg).not.toContain("<image");
    const logo = (await image(pngLogoCode.id, "?format=svg&logo=true")).bytes.toString();
    expect(logo).toContain(`href="data:image/png;base64,${b64(pngLogo())}"`);
    expect(logo).toEndWith("</svg>");
  });

  test("400s: logo=true without a logo, bad size, margin, colour, ecc, format; too long for the level", async () => {
    const bad = async (q: string, field: string) => {
      const res = await t.req("GET", `/api/qrcode/${staticCode.id}/image${q}`, { token: admin.token });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    };
    await bad("?logo=true", "logo");
    await bad("?size=63", "size");
    await bad("?size=4097", "size");
    await bad("?margin=17", "margin");
    await bad("?dark=12345", "dark");
    await bad("?light=GGGGGG", "light");
    await bad("?ecc=X", "ecc");
    await bad("?format=gif", "format");
    const long = await t.req("POST", "/api/qrcode", { token: admin.token, body: { name: "long", kind: "static", content: "x".repeat(2000) } });
    expect(long.status).toBe(200);
    const res = await t.req("GET", `/api/qrcode/${long.body.id}/image?ecc=H`, { token: admin.token });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("ecc");
    expect((await image(long.body.id, "?ecc=L&size=1024")).res.status).toBe(200);
  });

  test("401, 403, 404 (unknown, another corporation's)", async () => {
    expect((await t.req("GET", `/api/qrcode/${staticCode.id}/image`)).status).toBe(401);
    const u = await addUser(t, admin.corpId, { services: ["platform.city"] });
    expect((await t.req("GET", `/api/qrcode/${staticCode.id}/image`, { token: u.token })).status).toBe(403);
    expect((await t.req("GET", `/api/qrcode/${UNKNOWN_ID}/image`, { token: admin.token })).status).toBe(404);
    const beta = await addCorp(t, "beta");
    const b = await addUser(t, beta, { services: ["platform.qrcode"] });
    expect((await t.req("GET", `/api/qrcode/${staticCode.id}/image`, { token: b.token })).status).toBe(404);
  });
});
