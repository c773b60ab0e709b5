// Hostile bodies against every operation that takes one: wrong types, missing fields, huge strings
// and arrays, deep nesting, __proto__/constructor keys, invalid UTF-8, wrong content types,
// oversized bodies. Never a 5xx, always a problem document, and nothing changes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { makeApp, startAndLogin, UNKNOWN_ID, type TestApp } from "../helpers";
import { appChecksum } from "./checksum";
import { fill, operationsOf, type Operation } from "./openapi";

let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
let ops: Operation[];

beforeAll(async () => {
  t = await makeApp();
  admin = await startAndLogin(t);
  ops = (await operationsOf(t)).filter((op) => op.hasBody && op.path !== "/api/start");
});
afterAll(() => t.close());

const SESSION_ENDING = new Set(["POST /api/auth/corp"]);

const deep = (n: number): unknown => (n === 0 ? "leaf" : { a: deep(n - 1) });
const hostileValue = fc.oneof(
  fc.anything({ maxDepth: 3 }),
  fc.string({ maxLength: 50 }).map((s) => ({ name: s, __proto__: { polluted: "yes" } })),
  fc.constant(JSON.parse('{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}}')),
  fc.constant({ name: "x".repeat(200_000) }),
  fc.constant({ items: Array.from({ length: 20_000 }, (_, i) => i) }),
  fc.constant(deep(200)),
  fc.dictionary(fc.string({ maxLength: 10 }), fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.double())),
);

async function send(op: Operation, body: string | Uint8Array, contentType = "application/json") {
  const path = fill(op.path, Object.fromEntries(op.params.map((p) => [p.name, p.uuid ? UNKNOWN_ID : "probe"])));
  const res = await t.fetch(path, { method: op.method, headers: { authorization: `Bearer ${admin.token}`, "content-type": contentType }, body });
  const text = await res.text();
  if (SESSION_ENDING.has(`${op.method} ${op.path}`) && res.status === 200) {
    admin.token = JSON.parse(text).access_token;
  }
  return { status: res.status, text, type: res.headers.get("content-type") ?? "" };
}

test("generated hostile bodies: 4xx problem documents, never 5xx, nothing changed", async () => {
  const failures: string[] = [];
  let requests = 0;
  for (const op of ops) {
    await fc.assert(
      fc.asyncProperty(hostileValue, async (value) => {
        const before = appChecksum(t);
        const r = await send(op, JSON.stringify(value) ?? "null");
        requests++;
        if (r.status >= 500) failures.push(`${op.method} ${op.path}: ${r.status} ${r.text.slice(0, 160)}`);
        else if (r.status >= 400 && !r.type.includes("problem+json")) failures.push(`${op.method} ${op.path}: ${r.status} is not a problem document`);
        else if (r.status >= 400 && appChecksum(t) !== before) failures.push(`${op.method} ${op.path}: a refused request changed data`);
        return true;
      }),
      { numRuns: 12, seed: 42 },
    );
  }
  console.log(`hostile bodies: ${ops.length} operations with a body, ${requests} requests, ${failures.length} failures`);
  expect(failures).toEqual([]);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.keys(Object.prototype)).toEqual([]);
});

test("invalid UTF-8, wrong content types and oversized bodies: 400, 415, 413", async () => {
  const failures: string[] = [];
  const before = appChecksum(t);
  for (const op of ops) {
    const utf8 = await send(op, new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
    if (utf8.status !== 400 && utf8.status !== 404) failures.push(`${op.method} ${op.path} invalid UTF-8: ${utf8.status}`);
    for (const type of ["text/plain", "application/xml", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const r = await send(op, type === "application/xml" ? "<a>1</a>" : "a=1", type);
      if (r.status !== 415) failures.push(`${op.method} ${op.path} ${type}: ${r.status}`);
    }
    const big = await send(op, JSON.stringify({ name: "x".repeat(1024 * 1024 + 1) }));
    if (big.status !== 413) failures.push(`${op.method} ${op.path} oversized: ${big.status}`);
  }
  expect(failures).toEqual([]);
  expect(appChecksum(t)).toBe(before);
});
