// Compression (issue 29 defect 6): the console's files, the docs page's script and the OpenAPI
// document in the coding the client accepts (brotli, then gzip, else identity); JSON answers,
// problems and CSV compressed when asked for and large enough, small ones left as they are.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { COMPRESS_MIN_BYTES, acceptedCodings } from "../../../src/lib/compression";
import { makeApp, startAndLogin, TARGET, type TestApp } from "../../support/helpers";

let t: TestApp;
let token: string;
let base: string;

beforeAll(async () => {
  // From source the console module serves dist/console, the last console build (with its
  // compressed forms): build it when missing. The binary carries its own.
  if (TARGET === "source" && !existsSync(join(import.meta.dir, "../../../dist/console/index.html.br"))) {
    const build = Bun.spawnSync(["bun", "scripts/build-console.ts"], { cwd: join(import.meta.dir, "../../.."), stdout: "pipe", stderr: "pipe" });
    if (build.exitCode !== 0) throw new Error(`console build failed: ${build.stderr}`);
  }
  t = await makeApp();
  ({ token } = await startAndLogin(t));
  // Over a socket, as a client sees it: Bun's server sets Content-Length there.
  base = t.listen();
  // A list well above the threshold: 200 cities.
  for (let i = 0; i < 200; i++) {
    const res = await t.req("POST", "/api/city", { token, body: { name: `Cidade de teste número ${String(i).padStart(3, "0")}`, state: "SP", country: "BR" } });
    expect(res.status).toBe(200);
  }
  // And persons, whose list answers its JSON text directly (lib/http.ts checkedJson).
  for (let i = 0; i < 60; i++) {
    const res = await t.req("POST", "/api/person", { token, body: { name: `Pessoa de teste número ${String(i).padStart(3, "0")}` } });
    expect(res.status).toBe(200);
  }
});
afterAll(() => t.close());

/** The raw answer (not decoded by the client) for an Accept-Encoding header (null: none sent). */
async function raw(path: string, acceptEncoding: string | null, headers: Record<string, string> = {}) {
  const h: Record<string, string> = { ...headers, authorization: `Bearer ${token}` };
  if (acceptEncoding !== null) h["accept-encoding"] = acceptEncoding;
  // decompress: false also keeps fetch from sending an Accept-Encoding of its own.
  const res = await fetch(base + path, { headers: h, decompress: false } as RequestInit);
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { res, bytes, coding: res.headers.get("content-encoding") };
}

function decoded(bytes: Uint8Array, coding: string | null): string {
  const out = coding === "br" ? brotliDecompressSync(bytes) : coding === "gzip" ? gunzipSync(bytes) : Buffer.from(bytes);
  return out.toString("utf8");
}

describe("Accept-Encoding negotiation", () => {
  test("best q first, brotli on a tie, q=0 refuses, * stands for the rest", () => {
    expect(acceptedCodings(null)).toEqual([]);
    expect(acceptedCodings("gzip, deflate, br, zstd")).toEqual(["br", "gzip"]);
    expect(acceptedCodings("gzip")).toEqual(["gzip"]);
    expect(acceptedCodings("br;q=0, gzip")).toEqual(["gzip"]);
    expect(acceptedCodings("gzip;q=1, br;q=0.5")).toEqual(["gzip", "br"]);
    expect(acceptedCodings("br;q=0, gzip;q=0")).toEqual([]);
    expect(acceptedCodings("*")).toEqual(["br", "gzip"]);
    expect(acceptedCodings("*;q=0")).toEqual([]);
    expect(acceptedCodings("gzip, *;q=0")).toEqual(["gzip"]);
    expect(acceptedCodings("identity")).toEqual([]);
    expect(acceptedCodings("BR;Q=0.8, x-gzip")).toEqual(["gzip", "br"]);
  });
});

describe("files compressed by the build", () => {
  /** Each coding of one file decodes to its identity form, with Vary and the right length. */
  async function checkFile(path: string) {
    const identity = await raw(path, null);
    expect(identity.res.status).toBe(200);
    expect(identity.coding).toBeNull();
    expect(identity.res.headers.get("vary")).toBe("Accept-Encoding");
    const text = decoded(identity.bytes, null);
    const cache = identity.res.headers.get("cache-control");
    for (const [accept, coding] of [
      ["gzip, deflate, br", "br"],
      ["gzip", "gzip"],
      ["br;q=0, gzip", "gzip"],
      ["gzip;q=1, br;q=0.3", "gzip"],
      ["br;q=0, gzip;q=0", null],
      ["identity", null],
    ] as const) {
      const r = await raw(path, accept);
      expect({ path, accept, coding: r.coding }).toEqual({ path, accept, coding });
      expect(r.res.headers.get("vary")).toBe("Accept-Encoding");
      expect(r.res.headers.get("cache-control")).toBe(cache);
      expect(r.res.headers.get("content-type")).toBe(identity.res.headers.get("content-type"));
      expect(Number(r.res.headers.get("content-length"))).toBe(r.bytes.length);
      expect(decoded(r.bytes, r.coding)).toBe(text);
      if (coding) expect(r.bytes.length).toBeLessThan(identity.bytes.length);
    }
    return text;
  }

  test("the console's page and its hashed script and stylesheet", async () => {
    const html = await checkFile("/console");
    const assets = [...html.matchAll(/(?:src|href)="\/console\/([^"]+\.(?:js|css))"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const a of assets) await checkFile(`/console/${a}`);
    // Screens of the app are the page, in the coding asked for.
    const screen = await raw("/console/city", "br");
    expect(screen.coding).toBe("br");
    expect(decoded(screen.bytes, "br")).toBe(html);
  });

  test("the docs page's script: 4.35 MB, about a million bytes in brotli", async () => {
    await checkFile("/api/docs/scalar.js");
    const br = await raw("/api/docs/scalar.js", "br");
    expect(br.bytes.length).toBeLessThan(1_200_000);
  });

  test("the OpenAPI document", async () => {
    const identity = await raw("/api/openapi.json", null);
    const doc = JSON.parse(decoded(identity.bytes, null));
    for (const coding of ["br", "gzip"]) {
      const r = await raw("/api/openapi.json", coding);
      expect(r.coding).toBe(coding);
      expect(r.res.headers.get("vary")).toContain("Accept-Encoding");
      expect(r.bytes.length).toBeLessThan(identity.bytes.length / 5);
      expect(JSON.parse(decoded(r.bytes, coding))).toEqual(doc);
    }
  });
});

describe("answers compressed as they are sent", () => {
  test.each(["/api/city?limit=200&sort=name", "/api/person?limit=60&sort=name"])("a large list: compressed when asked, decoding to the same JSON (%s)", async (path) => {
    const identity = await raw(path, null);
    expect(identity.coding).toBeNull();
    expect(identity.bytes.length).toBeGreaterThan(COMPRESS_MIN_BYTES * 4);
    const json = JSON.parse(decoded(identity.bytes, null));
    expect(json.items.length).toBe(path.includes("city") ? 200 : 60);
    for (const [accept, coding] of [
      ["gzip, deflate, br, zstd", "br"],
      ["gzip", "gzip"],
      ["br;q=0, gzip", "gzip"],
      ["br;q=0, gzip;q=0", null],
      ["*;q=0", null],
    ] as const) {
      const r = await raw(path, accept);
      expect({ accept, coding: r.coding, status: r.res.status }).toEqual({ accept, coding, status: 200 });
      expect(r.res.headers.get("content-type")).toStartWith("application/json");
      if (coding) {
        expect(r.res.headers.get("vary")).toContain("Accept-Encoding");
        expect(r.bytes.length).toBeLessThan(identity.bytes.length / 4);
      }
      expect(r.res.headers.get("x-request-id")).toBeTruthy();
      expect(JSON.parse(decoded(r.bytes, r.coding))).toEqual(json);
    }
  });

  test("a small answer stays identity", async () => {
    const health = await raw("/api/health", "gzip, br");
    expect(health.res.status).toBe(200);
    expect(health.coding).toBeNull();
    expect(health.res.headers.get("vary")).toBeNull();
    expect(JSON.parse(decoded(health.bytes, null)).status).toBe("ok");
    for (const path of ["/api/city?limit=1", "/api/person?limit=1"]) {
      const one = await raw(path, "gzip, br");
      expect(one.coding).toBeNull();
      expect(JSON.parse(decoded(one.bytes, null)).items.length).toBe(1);
    }
    // A problem document: small too.
    const missing = await raw("/api/city/0190c0de-0000-7000-8000-000000000000", "br");
    expect(missing.res.status).toBe(404);
    expect(missing.coding).toBeNull();
    expect(missing.res.headers.get("content-type")).toStartWith("application/problem+json");
    expect(JSON.parse(decoded(missing.bytes, null)).status).toBe(404);
  });

  test("a large problem document is compressed with its status", async () => {
    // 400 naming every bad field: one per empty flag name.
    const send = (acceptEncoding: string | null) => {
      const headers: Record<string, string> = { authorization: `Bearer ${token}`, "content-type": "application/json" };
      if (acceptEncoding) headers["accept-encoding"] = acceptEncoding;
      const body = JSON.stringify({ add: Array.from({ length: 200 }, () => "") });
      return fetch(`${base}/api/contract/0190c0de-0000-7000-8000-000000000000/flags`, { method: "PATCH", headers, body, decompress: false } as RequestInit);
    };
    const identity = await send(null);
    expect(identity.status).toBe(400);
    const identityBytes = new Uint8Array(await identity.arrayBuffer());
    expect(identityBytes.length).toBeGreaterThan(COMPRESS_MIN_BYTES);
    const r = await send("gzip");
    expect(r.status).toBe(400);
    expect(r.headers.get("content-encoding")).toBe("gzip");
    expect(r.headers.get("content-type")).toStartWith("application/problem+json");
    expect(JSON.parse(decoded(new Uint8Array(await r.arrayBuffer()), "gzip"))).toEqual(JSON.parse(decoded(identityBytes, null)));
  });

  test("a CSV export: compressed as it streams, decoding to the same rows; a tiny one stays identity", async () => {
    const identity = await raw("/api/city?format=csv&sort=name", null);
    expect(identity.res.headers.get("content-type")).toStartWith("text/csv");
    const csv = decoded(identity.bytes, null);
    expect(csv.split("\r\n").length).toBe(202);
    for (const coding of ["br", "gzip"] as const) {
      const r = await raw("/api/city?format=csv&sort=name", coding);
      expect(r.coding).toBe(coding);
      expect(r.res.headers.get("content-disposition")).toBe(identity.res.headers.get("content-disposition"));
      expect(decoded(r.bytes, coding)).toBe(csv);
    }
    const tiny = await raw("/api/city?format=csv&q=n%C3%BAmero%20007", "br");
    expect(tiny.coding).toBeNull();
    expect(decoded(tiny.bytes, null).split("\r\n").length).toBe(3);
  });

  test("a websocket upgrade asking for gzip and br is not touched", async () => {
    const ticket = (await t.req("GET", "/api/user/socket", { token })).body.ticket as string;
    const ws = new WebSocket(`${base.replace("http", "ws")}/api/socket?ticket=${ticket}`, { headers: { "accept-encoding": "gzip, deflate, br" } } as never);
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onclose = (e) => reject(new Error(`socket refused (${e.code})`));
    });
    ws.close();
  });
});
