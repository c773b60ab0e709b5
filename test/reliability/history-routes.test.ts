// Every write operation of the OpenAPI document, with a body made from its schema and with junk:
// each refused write (4xx) leaves no Change in the history, and each write that answered 2xx
// leaves at least one, unless it changes no record by design (a login, a metric value, a backup,
// ...) or found the record already as asked (PUT .../active on an active record). New routes are
// covered automatically; one that writes a record and records nothing fails here.
import { beforeAll, describe, expect, test } from "bun:test";
import { openApp } from "../support/helpers";
import { operationsOf, type Operation } from "../support/openapi";
import { pathWith, seedFixtures, type Values } from "../support/reliability";

/** 2xx writes that change no record: sessions, data (metric values, accounting), deliveries, files, notes. */
const NO_RECORD = new Set([
  "POST /api/login",
  "DELETE /api/logout",
  "POST /api/auth/corp",
  "POST /api/corp/check",
  "POST /api/backup",
  "DELETE /api/backup/{name}",
  "POST /api/metric/{id}/value",
  "POST /api/metric/name/{name}/value",
  "POST /api/isp/radius/accounting",
  "POST /api/isp/session/{id}/disconnect",
  "POST /api/contract/{id}/disconnect",
  "POST /api/webhook/{id}/test",
  "POST /api/webhook/{id}/recover",
  "POST /api/webhook/{id}/deliveries/{deliveryId}/resend",
  "DELETE /api/user/{id}/sessions/{sessionId}",
  "POST /api/user/password/reset-key",
  "POST /api/notepad",
  "POST /api/core/database/update",
  "POST /api/core/database/update/{corpId}",
  "POST /api/core/database/tables/{corpId}",
  // A test packet to the NAS (audited as isp.nas_test) and a job's pass run now: no record changes.
  "POST /api/isp/nas/{id}/test",
  "POST /api/system/jobs/{name}/run",
]);

// Operations that end the caller's session when they succeed.
const REVOKING = new Set(["DELETE /api/logout", "POST /api/auth/corp"]);

/**
 * 2xx writes whose generated body (required fields only) asks for what the seeded record already
 * is: nothing changed, so nothing is recorded (the no-op rule). Each is covered changing something
 * in test/modules/history/history.test.ts or the module's own tests.
 */
const ALREADY_AS_ASKED = [
  "POST /api/corp/{id}/user/{userId}", // the seeded user is a member already
  "POST /api/corp/{id}/service/{serviceId}", // the service is enabled already
  "POST /api/service/{id}/features", // an empty upload
  "PUT /api/product/{id}/classifications", // the empty set it has
  "POST /api/contract/{id}/config", // no field present: nothing to change
  "POST /api/contract/{id}/items", // the empty list it has
  "PATCH /api/contract/{id}/flags", // nothing to add or remove
  "POST /api/user/{id}/2fa/reset", // the user has no second factor
];

/** Not called: they end the admin's corporation or start the instance. */
const SKIPPED = new Set(["POST /api/start", "DELETE /api/corp/{id}"]);

const { t, admin } = await openApp();
let ops: Operation[];
let values: Values;
let doc: any;

beforeAll(async () => {
  ops = await operationsOf(t);
  values = await seedFixtures(t, admin.token, ops, "h", admin.corpId);
  doc = (await t.req("GET", "/api/openapi.json")).body;
});

const changes = () =>
  (t.sql(admin.corpId).query("SELECT count(*) AS n FROM history").get() as { n: number }).n +
  (t.sql().query("SELECT count(*) AS n FROM platform_history").get() as { n: number }).n;

let serial = 0;
/** A value for a JSON schema: required properties only, the first of enums and unions, bounds honoured. */
function sample(schema: any, depth = 0): unknown {
  const s = schema?.$ref ? doc.components.schemas[schema.$ref.split("/").pop()] : schema;
  if (!s || depth > 6) return null;
  if (s.anyOf ?? s.oneOf) return sample((s.anyOf ?? s.oneOf).find((x: any) => x.type !== "null") ?? null, depth + 1);
  if (s.allOf) return Object.assign({}, ...s.allOf.map((x: any) => sample(x, depth + 1)));
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  switch (s.type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const name of s.required ?? []) out[name] = sample(s.properties?.[name], depth + 1);
      return out;
    }
    case "array":
      return Array.from({ length: s.minItems ?? 0 }, () => sample(s.items, depth + 1));
    case "integer":
    case "number":
      return s.minimum ?? s.exclusiveMinimum ?? 1;
    case "boolean":
      return true;
    case "string": {
      if (s.format === "email") return `gen${++serial}@example.com`;
      if (s.format === "uuid") return values.city;
      if (s.format === "date-time") return "2025-01-01T00:00:00Z";
      const text = `gen-${++serial}`;
      return text.padEnd(s.minLength ?? 0, "x").slice(0, s.maxLength ?? 200);
    }
  }
  return null;
}

function bodySchema(op: Operation): any {
  return doc.paths[op.path]?.[op.method.toLowerCase()]?.requestBody?.content?.["application/json"]?.schema;
}

describe("history over every write route", () => {
  test("a refused write records nothing; a 2xx write that changed a record records it", async () => {
    const failures: string[] = [];
    const recorded: string[] = [];
    const writes = ops.filter((o) => o.method !== "GET" && !SKIPPED.has(`${o.method} ${o.path}`));
    // Deletes last, so that the other routes find their records; a record made inactive (or a
    // corporation blocked) before it is made active again, so that both change it.
    const rank = (o: Operation) => (o.method === "DELETE" ? 2 : /\/(inactive|block)$/.test(o.path) ? 0 : 1);
    writes.sort((a, b) => rank(a) - rank(b));
    for (const op of writes) {
      const key = `${op.method} ${op.path}`;
      const path = pathWith(op, values);
      if (!path) continue;
      const schema = bodySchema(op);
      for (const body of [{ __junk: [1, { x: "y" }] }, schema ? sample(schema) : undefined]) {
        const before = changes();
        const res = await t.req(op.method, path, { token: admin.token, body: op.method === "DELETE" && !schema ? undefined : body });
        const made = changes() - before;
        if (res.status >= 400 && made !== 0) failures.push(`${key} → ${res.status} but recorded ${made} Change(s)`);
        if (res.status < 300) {
          answered2xx.add(key);
          if (made > 0) recorded.push(key);
          if (made > 0 && NO_RECORD.has(key)) failures.push(`${key} → ${res.status} changes no record but recorded ${made}`);
        }
        if (REVOKING.has(key)) {
          // The admin's session ended: log in again.
          admin.token = (await t.req("POST", "/api/login", { body: { corp: "acme", login: "admin", password: "admin-password-1" } })).body.access_token;
        }
      }
    }
    // Every write that answered 2xx and is not a NO_RECORD route recorded something at least once
    // (a second, identical call may find nothing to change).
    const missing = writes
      .map((o) => `${o.method} ${o.path}`)
      .filter((k) => !NO_RECORD.has(k) && !recorded.includes(k) && answered2xx.has(k));
    console.log(`history over ${writes.length} write operations: ${new Set(recorded).size} recorded Changes; refused/recorded mismatches: ${failures.length}; 2xx without a Change: ${missing.join(", ") || "none"}`);
    expect(failures).toEqual([]);
    expect(missing.sort()).toEqual([...ALREADY_AS_ASKED].sort());
    expect(new Set(recorded).size).toBeGreaterThan(50);
    // Every write operation of the document, twice: ≈ 60 s on PostgreSQL while the other CI lanes run.
  }, 240_000);
});
const answered2xx = new Set<string>();
