import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { renderMigrationsModule } from "../../../scripts/embed-migrations";
import { requireSqliteClient } from "../../../src/db/sqlite";
import { makeApp, testSourceOnly, type TestApp } from "../../support/helpers";
import { TEST_BACKEND } from "../../support/backend";

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(() => t.close());

test("health names the storage engine: SQLite files, or PostgreSQL with --database-url", async () => {
  const ok = await t.req("GET", "/api/health");
  expect(ok.body).toMatchObject({ status: "ok", engine: TEST_BACKEND === "pg" ? "postgres" : "sqlite" });
});

// In-process: closes the app's platform database under it.
// SQLite-only too: it closes the platform door's SQLite connections.
(TEST_BACKEND === "pg" ? test.skip : testSourceOnly)("health is 200 while the platform database answers, 503 when it does not", async () => {
  const ok = await t.req("GET", "/api/health");
  expect(ok.status).toBe(200);
  expect(ok.body.status).toBe("ok");
  const other = await makeApp();
  // Both connections of the platform door: health reads on the read connection.
  await other.ctx.store.platform.write((db) => void setImmediate(() => requireSqliteClient(db).close()));
  await other.ctx.store.platform.read((db) => requireSqliteClient(db).close());
  const down = await other.req("GET", "/api/health");
  expect(down.status).toBe(503);
  expect(down.body.type).toBe("urn:corpadmin:problem:unavailable");
});

test("the OpenAPI document lists the routes with their schemas", async () => {
  const res = await t.req("GET", "/api/openapi.json");
  expect(res.status).toBe(200);
  const paths = res.body.paths;
  for (const [path, method] of [["/api/login", "post"], ["/api/logout", "delete"], ["/api/auth/credentials", "get"], ["/api/auth/refresh", "get"], ["/api/auth/corp", "post"], ["/api/start", "post"], ["/api/health", "get"]]) {
    expect(paths[path]?.[method]).toBeDefined();
  }
  expect(paths["/api/login"].post.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/LoginBody" });
  expect(JSON.stringify(res.body.components.schemas.LoginBody)).toContain("two_factor_code");
  expect(paths["/api/docs/scalar.js"]).toBeUndefined();
});

test("the docs page loads its script from the service itself, not from a CDN", async () => {
  const page = await t.req("GET", "/api/docs");
  expect(page.status).toBe(200);
  expect(page.text).toContain('src="/api/docs/scalar.js"');
  expect(page.text).not.toMatch(/<script[^>]+src="https?:/);
  expect(page.text).not.toMatch(/<link[^>]+href="https?:/);
  // None of Scalar's hosted services: they are dead ends on an offline box.
  const config = JSON.parse(page.text.match(/data-configuration='([^']*)'/)![1]);
  expect(config).toMatchObject({ agent: { disabled: true }, mcp: { disabled: true }, showDeveloperTools: "never", telemetry: false, hideClientButton: true, withDefaultFonts: false });
  const script = await t.fetch("/api/docs/scalar.js");
  expect(script.status).toBe(200);
  expect(script.headers.get("content-type")).toContain("javascript");
  expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
});

test("unknown routes are 404 problem documents", async () => {
  const res = await t.req("GET", "/api/nothing-here");
  expect(res.status).toBe(404);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(res.body.type).toBe("urn:corpadmin:problem:not-found");
});

test("the embedded migrations module is in step with migrations/", () => {
  expect(readFileSync("src/db/migrations.generated.ts", "utf8")).toBe(renderMigrationsModule());
});

test("each operation says how it is guarded: public rows say `security: []`", async () => {
  const { paths } = (await t.req("GET", "/api/openapi.json")).body;
  expect(paths["/api/login"].post.security).toEqual([]);
  expect(paths["/api/start"].post.security).toEqual([]);
  expect(paths["/api/auth/credentials"].get.security).toEqual([{ bearer: [] }]);
  expect(paths["/api/auth/credentials"].get["x-corpadmin-guard"].guard).toBe("token");
});

test("README's configuration table lists every setting", async () => {
  const { SETTINGS } = await import("../../../src/config");
  const readme = await Bun.file("README.md").text();
  for (const s of SETTINGS) expect(readme).toContain(`\`--${s.flag}\` / \`${s.env}\``);
});
