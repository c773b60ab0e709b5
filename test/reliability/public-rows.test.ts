// Every public operation of the OpenAPI document (no guard, no credential of its own) is
// rate-limited per client IP: the next public row is covered without anyone remembering.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeApp, type TestApp } from "../support/helpers";
import { fill, operationsOf } from "../support/openapi";

let t: TestApp;
const LIMIT = 60;

beforeAll(async () => {
  t = await makeApp({ options: { publicAuthLimit: LIMIT } });
});
afterAll(() => t.close());

/**
 * Public operations that are not limited, and why (README, "Rate limits"): the health probe is what
 * load balancers poll; the socket refuses everything but a single-use ticket before any work; a QR
 * redirect is scanned by whole crowds behind one carrier NAT address.
 */
const UNLIMITED = new Set(["GET /api/health", "GET /api/socket", "GET /q/{slug}"]);

test("every public operation answers 429 with Retry-After after the limit, per client IP", async () => {
  const doc = (await t.req("GET", "/api/openapi.json")).body;
  const publicOps = (await operationsOf(t)).filter((op) => {
    if (op.guard) return false;
    const security = doc.paths[op.path][op.method.toLowerCase()].security as Record<string, unknown>[] | undefined;
    // A row with a credential of its own (the NAS's X-Api-Key or Basic secret) is not public.
    return !security?.some((s) => Object.keys(s).length > 0);
  });
  const limited = publicOps.filter((op) => !UNLIMITED.has(`${op.method} ${op.path}`));
  expect(limited.map((op) => `${op.method} ${op.path}`)).toContain("POST /api/start");
  const failures: string[] = [];
  let n = 0;
  for (const op of limited) {
    const ip = `203.0.113.${++n}`;
    const path = fill(op.path, Object.fromEntries(op.params.map((p) => [p.name, p.name === "provider" ? "google" : "probe"])));
    // An invalid body: refused at validation, after the limit was counted, so nothing starts or logs in.
    const send = (from: string) => t.req(op.method, path, { body: op.hasBody ? {} : undefined, ip: from });
    for (let i = 0; i < LIMIT; i++) {
      const r = await send(ip);
      if (r.status === 429 || r.status >= 500) {
        failures.push(`${op.method} ${op.path}: request ${i + 1} answered ${r.status}`);
        break;
      }
    }
    const over = await send(ip);
    if (over.status !== 429) failures.push(`${op.method} ${op.path}: request ${LIMIT + 1} answered ${over.status}`);
    else if (!(Number(over.headers.get("retry-after")) > 0) || over.body?.type !== "urn:corpadmin:problem:rate-limited") {
      failures.push(`${op.method} ${op.path}: 429 without Retry-After or problem document`);
    }
    const other = await send(`198.51.100.${n}`);
    if (other.status === 429) failures.push(`${op.method} ${op.path}: another client IP was limited too`);
  }
  console.log(`public rows: ${limited.length} limited (${limited.map((op) => op.path).join(", ")}), ${failures.length} failures`);
  expect(failures).toEqual([]);
});
