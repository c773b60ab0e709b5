// Hostile bodies against every operation that takes one: wrong types, missing fields, huge strings
// and arrays, deep nesting, __proto__/constructor keys, invalid UTF-8, wrong content types,
// oversized bodies. Never a 5xx, always a problem document, and nothing changes.
import { beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { UNKNOWN_ID, openApp } from "../support/helpers";
import { appChecksum } from "../support/checksum";
import { fill, operationsOf, type Operation } from "../support/openapi";

const { t, admin } = await openApp();
let ops: Operation[];

beforeAll(async () => {
  ops = (await operationsOf(t)).filter((op) => op.hasBody && op.path !== "/api/start");
});

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
        const before = await appChecksum(t);
        const r = await send(op, JSON.stringify(value) ?? "null");
        requests++;
        if (r.status >= 500) failures.push(`${op.method} ${op.path}: ${r.status} ${r.text.slice(0, 160)}`);
        else if (r.status >= 400 && !r.type.includes("problem+json")) failures.push(`${op.method} ${op.path}: ${r.status} is not a problem document`);
        else if (r.status >= 400 && (await appChecksum(t)) !== before) failures.push(`${op.method} ${op.path}: a refused request changed data`);
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
  const before = await appChecksum(t);
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
  expect(await appChecksum(t)).toBe(before);
});

// ---- bounded input: nesting, non-object JSON, extreme numbers ----------------------------------
// Read from the OpenAPI document, so the next route with a body is covered without anyone
// remembering. Each refused request must be a 400 naming a field, fast, change nothing, and leave
// the serving process's memory where it was.

/** Resident memory of the process that serves the requests (this one, or the spawned binary). */
async function serviceRss(): Promise<number> {
  Bun.gc(true);
  return t.rss();
}
/** What a refused request must leave unchanged. */
const stateOf = () => appChecksum(t);

const MB = 1024 * 1024;
/** A request that is refused before any work must answer in far less than this, even on a loaded CI machine. */
const FAST_MS = 250;

interface BodyOp {
  op: Operation;
  schema: any;
}

async function bodyOps(): Promise<BodyOp[]> {
  const doc = (await t.req("GET", "/api/openapi.json")).body;
  const out: BodyOp[] = [];
  for (const op of await operationsOf(t)) {
    if (!op.hasBody) continue;
    const schema = doc.paths[op.path][op.method.toLowerCase()].requestBody?.content?.["application/json"]?.schema;
    if (schema) out.push({ op, schema });
  }
  return out;
}

/** Every property path of a body schema (through objects, optional/nullable unions and array items). */
function fieldPaths(schema: any, at: string[] = [], out: { path: string[]; schema: any }[] = []): { path: string[]; schema: any }[] {
  if (!schema || at.length > 6) return out;
  for (const variant of schema.anyOf ?? []) if (variant.type !== "null") fieldPaths(variant, at, out);
  if (schema.type === "array" && schema.items) fieldPaths(schema.items, [...at, "0"], out);
  for (const [name, sub] of Object.entries<any>(schema.properties ?? {})) {
    out.push({ path: [...at, name], schema: sub });
    fieldPaths(sub, [...at, name], out);
  }
  return out;
}

const isNumeric = (s: any): boolean => s?.type === "number" || s?.type === "integer" || (s?.anyOf ?? []).some(isNumeric);
/** The numeric variants of a field's schema (a union's number members). */
const numericParts = (s: any): any[] => (s?.type === "number" || s?.type === "integer" ? [s] : (s?.anyOf ?? []).flatMap(numericParts));

/** A plausible body for a schema: required properties with values of their type (not necessarily accepted). */
function example(s: any): unknown {
  if (!s) return null;
  if (s.anyOf) return example(s.anyOf.find((v: any) => v.type !== "null") ?? s.anyOf[0]);
  switch (s.type) {
    case "object":
      return Object.fromEntries((s.required ?? []).map((k: string) => [k, example(s.properties?.[k])]));
    case "array":
      return s.minItems ? [example(s.items)] : [];
    case "string":
      if (s.format === "uuid") return UNKNOWN_ID;
      if (s.format === "email") return "probe@example.com";
      return "x".repeat(Math.max(1, s.minLength ?? 1));
    case "number":
    case "integer":
      return s.minimum ?? 1;
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return {};
  }
}

/** `base` with the raw JSON text `literal` placed at `path` (objects and arrays made on the way). */
function withRaw(base: unknown, path: string[], literal: string): string {
  const root: any = structuredClone(base ?? {});
  let node = root;
  path.forEach((seg, i) => {
    if (i === path.length - 1) node[seg] = "\u0000RAW\u0000";
    else {
      if (node[seg] === null || typeof node[seg] !== "object") node[seg] = path[i + 1] === "0" ? [] : {};
      node = node[seg];
    }
  });
  return JSON.stringify(root).replace('"\\u0000RAW\\u0000"', literal);
}

const nested = (levels: number) => "[".repeat(levels) + "]".repeat(levels);

/**
 * Sends raw JSON text through the harness (t.req), timed. A refusal slower than FAST_MS is sent
 * twice more and the fastest counts: an input that costs work is slow every time, while a loaded
 * machine's pause (another process, a collection) hits one request, not three.
 */
async function sendRaw(op: Operation, body: string | undefined, ids: Record<string, string> = {}) {
  const path = fill(op.path, { ...Object.fromEntries(op.params.map((p) => [p.name, p.uuid ? UNKNOWN_ID : "probe"])), ...ids });
  const timed = async () => {
    const started = performance.now();
    const res = await t.req(op.method, path, { token: admin.token, raw: body ?? "" });
    return { res, ms: performance.now() - started };
  };
  let { res, ms } = await timed();
  for (let i = 0; i < 2 && res.status === 400 && ms > FAST_MS; i++) {
    const again = await timed();
    if (again.res.status !== res.status) break;
    ms = Math.min(ms, again.ms);
  }
  const json = typeof res.body === "object" ? res.body : null;
  return { status: res.status, ms, text: res.text, json, type: res.headers.get("content-type") ?? "" };
}

/** A refusal as the conventions want it: 400 problem document naming `wanted` (a path or a test of the paths). */
function refusal(label: string, r: Awaited<ReturnType<typeof sendRaw>>, wanted: (path: string) => boolean): string | null {
  if (r.status !== 400) return `${label}: ${r.status} ${r.text.slice(0, 160)}`;
  if (!r.type.includes("problem+json")) return `${label}: 400 is not a problem document`;
  const paths: string[] = (r.json?.errors ?? []).map((e: { path: string }) => e.path);
  if (!paths.some(wanted)) return `${label}: names ${JSON.stringify(paths).slice(0, 160)}`;
  if (r.ms > FAST_MS) return `${label}: took ${r.ms.toFixed(0)} ms`;
  return null;
}

test("defect 2: a 20,000-level body to POST /api/start is 400 naming the field, in milliseconds, memory unchanged", async () => {
  const start = (await operationsOf(t)).find((o) => o.method === "POST" && o.path === "/api/start")!;
  const before = await stateOf();
  const rss = await serviceRss();
  const r = await sendRaw(start, `{"user":${nested(20_000)}}`);
  expect(r.status).toBe(400);
  expect(r.json.errors[0].path).toStartWith("user.0.0");
  expect(r.json.errors[0].message).toContain("deeper than 32 levels");
  expect(r.ms).toBeLessThan(FAST_MS);
  expect((await serviceRss()) - rss).toBeLessThan(64 * MB);
  expect(await stateOf()).toBe(before);
});

test("deep nesting at the top and inside every field of every body: 400 naming the field, fast, nothing changed, memory flat", async () => {
  const failures: string[] = [];
  const before = await stateOf();
  const rss = await serviceRss();
  let requests = 0;
  for (const { op, schema } of await bodyOps()) {
    const label = `${op.method} ${op.path}`;
    for (const levels of [33, 20_000]) {
      requests++;
      const top = await sendRaw(op, `{"deep":${nested(levels)}}`);
      const f = refusal(`${label} top-level ${levels}`, top, (p) => p.startsWith("deep.0"));
      if (f) failures.push(f);
    }
    // Inside each field, free-form ones (t.Any, records) included; the deep value sits under it.
    // 1,000 levels: far over the limit, and small enough that the bodies' own copies (the
    // allocator keeps freed pages a while) do not hide a jump in the serving process's memory.
    for (const field of fieldPaths(schema)) {
      requests++;
      const r = await sendRaw(op, withRaw(example(schema), field.path, nested(1_000)));
      const dotted = field.path.join(".");
      const f = refusal(`${label} inside ${dotted}`, r, (p) => p.startsWith(dotted));
      if (f) failures.push(f);
    }
  }
  const grew = (await serviceRss()) - rss;
  console.log(`deep bodies: ${requests} requests, ${failures.length} failures, RSS +${(grew / MB).toFixed(1)} MB`);
  expect(failures).toEqual([]);
  expect(await stateOf()).toBe(before);
  expect(grew).toBeLessThan(64 * MB);
});

test("defect 5: bodies that are not JSON objects are 400 naming body on every body route; so are empty ones where a field is required", async () => {
  const failures: string[] = [];
  const before = await stateOf();
  let requests = 0;
  for (const { op, schema } of await bodyOps()) {
    // An empty body is `{}` where every field is optional (2FA enable starts with none).
    const empties = schema.required?.length ? ["", "  "] : [];
    for (const raw of ["123", '"x"', "[]", "[{}]", "null", "true", "1e400", ...empties]) {
      requests++;
      const r = await sendRaw(op, raw);
      const f = refusal(`${op.method} ${op.path} ${JSON.stringify(raw)}`, r, (p) => p === "body");
      if (f) failures.push(f);
    }
  }
  console.log(`non-object bodies: ${requests} requests, ${failures.length} failures`);
  expect(failures).toEqual([]);
  expect(await stateOf()).toBe(before);
});

test("every numeric body field declares finite bounds (money, quantities and every other number)", async () => {
  const unbounded: string[] = [];
  for (const { op, schema } of await bodyOps()) {
    for (const field of fieldPaths(schema).filter((f) => isNumeric(f.schema))) {
      for (const part of numericParts(field.schema)) {
        if (part.const !== undefined || part.enum !== undefined) continue;
        const low = part.minimum ?? part.exclusiveMinimum;
        const high = part.maximum ?? part.exclusiveMaximum;
        if (!Number.isFinite(low) || !Number.isFinite(high) || Math.abs(low) > 2 ** 53 || Math.abs(high) > 2 ** 53) {
          unbounded.push(`${op.method} ${op.path} ${field.path.join(".")}`);
        }
      }
    }
  }
  expect(unbounded).toEqual([]);
});

const EXTREMES = ["1e308", "-1e308", "1e400", "-1e400", "123456789012345678901234567890", "9007199254740993", "-0", "1e-400"];
const OUT_OF_BOUNDS = new Set(["1e308", "-1e308", "1e400", "-1e400", "123456789012345678901234567890"]);

test("extreme and non-finite numbers in every numeric body field: never 5xx, out of bounds 400 naming the field, nothing changed", async () => {
  const failures: string[] = [];
  const rss = await serviceRss();
  let requests = 0;
  for (const { op, schema } of await bodyOps()) {
    if (op.path === "/api/start") continue;
    for (const field of fieldPaths(schema).filter((f) => isNumeric(f.schema))) {
      const dotted = field.path.join(".");
      for (const literal of EXTREMES) {
        requests++;
        const before = await stateOf();
        // The user's own rows (2FA) are reached as the user; elsewhere an unknown id, as the body is checked first.
        const r = await sendRaw(op, withRaw(example(schema), field.path, literal), op.path.startsWith("/api/user/{id}") ? { id: admin.userId } : {});
        const label = `${op.method} ${op.path} ${dotted}=${literal}`;
        if (r.status >= 500) failures.push(`${label}: ${r.status} ${r.text.slice(0, 160)}`);
        else if (r.status >= 400 && !r.type.includes("problem+json")) failures.push(`${label}: not a problem document`);
        else if (r.status >= 400 && (await stateOf()) !== before) failures.push(`${label}: a refused request changed data`);
        else if (OUT_OF_BOUNDS.has(literal)) {
          const f = refusal(label, r, (p) => p === dotted);
          if (f) failures.push(f);
        }
      }
    }
  }
  const grew = (await serviceRss()) - rss;
  console.log(`extreme numbers: ${requests} requests, ${failures.length} failures, RSS +${(grew / MB).toFixed(1)} MB`);
  expect(failures).toEqual([]);
  expect(grew).toBeLessThan(64 * MB);
});

test("a number beyond a double's range is 400 naming its path anywhere in a body, free-form fields included", async () => {
  const failures: string[] = [];
  const before = await stateOf();
  let requests = 0;
  for (const { op, schema } of await bodyOps()) {
    const label = `${op.method} ${op.path}`;
    requests++;
    const top = await sendRaw(op, '{"probe":1e400}');
    const f = refusal(`${label} probe=1e400`, top, (p) => p === "probe");
    if (f) failures.push(f);
    // Free-form fields (t.Any: the contract's JSON documents) would otherwise keep it as null.
    for (const field of fieldPaths(schema).filter((x) => !x.schema.type && !x.schema.anyOf)) {
      requests++;
      const dotted = field.path.join(".");
      const r = await sendRaw(op, withRaw(example(schema), field.path, '{"n":[-1e400]}'));
      const g = refusal(`${label} ${dotted}.n.0=-1e400`, r, (p) => p === `${dotted}.n.0`);
      if (g) failures.push(g);
    }
  }
  console.log(`numbers beyond a double: ${requests} requests, ${failures.length} failures`);
  expect(failures).toEqual([]);
  expect(await stateOf()).toBe(before);
});

test("defect 4: a price or quantity out of bounds is 400 and a contract's items stay readable", async () => {
  const token = admin.token;
  const city = (await t.req("POST", "/api/city", { token, body: { name: "Bounds City", state: "SP", country: "BR" } })).body;
  const person = (await t.req("POST", "/api/person", { token, body: { name: "Bounds Person", address: null } })).body;
  const contract = await t.req("POST", "/api/contract", {
    token,
    body: { customer_id: person.id, number: "BOUNDS-1", start_date: "2025-01-01", total_value: 10, address: { line1: "Rua 1", city_id: city.id } },
  });
  expect(contract.status).toBe(200);
  const id = contract.body.id;
  const huge = await t.req("POST", "/api/product", { token, raw: '{"identity":"HUGE","name":"Huge","price":1e308}' });
  expect(huge.status).toBe(400);
  expect(huge.body.errors.map((e: { path: string }) => e.path)).toContain("price");
  const product = await t.req("POST", "/api/product", { token, body: { identity: "TOP", name: "Top", price: 1e12 } });
  expect(product.status).toBe(200);
  for (const raw of [
    `{"items":[{"product_id":"${product.body.id}","quantity":1e308}]}`,
    `{"items":[{"product_id":"${product.body.id}","quantity":2,"unit_price":1e400}]}`,
    `{"items":[{"product_id":"${product.body.id}","quantity":1e10}]}`,
  ]) {
    const before = await stateOf();
    const r = await t.req("POST", `/api/contract/${id}/items`, { token, raw });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].path).toMatch(/^items\.0\.(quantity|unit_price)$/);
    expect(await stateOf()).toBe(before);
  }
  // The largest accepted values give a finite total.
  const most = await t.req("POST", `/api/contract/${id}/items`, { token, body: { items: [{ product_id: product.body.id, quantity: 1e9 }] } });
  expect(most.status).toBe(200);
  expect(most.body.items[0].total).toBe(1e21);
  expect((await t.req("GET", `/api/contract/${id}/items`, { token })).status).toBe(200);
  const total = await t.req("PUT", `/api/contract/${id}`, {
    token,
    raw: JSON.stringify({ customer_id: person.id, number: "BOUNDS-1", start_date: "2025-01-01", total_value: 0, address: { line1: "Rua 1", city_id: city.id } }).replace('"total_value":0', '"total_value":1e400'),
  });
  expect(total.status).toBe(400);
  expect(total.body.errors.map((e: { path: string }) => e.path)).toContain("total_value");
});

test("a validation error never serialises the refused value (the patched Elysia)", async () => {
  const { ValidationError, t: types } = await import("elysia");
  const { TypeCompiler } = await import("@sinclair/typebox/compiler");
  const value = { name: Array.from({ length: 20 }, () => Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`k${i}`, [i]]))) };
  const error = new ValidationError("body", TypeCompiler.Compile(types.Object({ name: types.String() })), value);
  expect(error.message.length).toBeLessThan(10_000);
  expect(error.all[0].path).toBe("/name");
});

test("a large, shallow invalid body is 400 naming the field, memory flat", async () => {
  const city = (await operationsOf(t)).find((o) => o.method === "POST" && o.path === "/api/city")!;
  const wide = JSON.stringify({ name: [[[Array.from({ length: 20 }, () => Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`k${i}`, [1]])))]]] });
  expect(wide.length).toBeGreaterThan(900_000);
  const before = await stateOf();
  const rss = await serviceRss();
  for (let i = 0; i < 3; i++) {
    const r = await sendRaw(city, wide);
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { path: string }) => e.path)).toContain("name");
  }
  expect((await serviceRss()) - rss).toBeLessThan(64 * MB);
  expect(await stateOf()).toBe(before);
});
