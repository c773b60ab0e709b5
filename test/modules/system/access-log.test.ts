// source-only: reads the in-process app's log lines.
// The access log is opt-in (issue 29 defect 10): without --access-log no line per request, while
// warnings and audit lines are still written; with it, one info line per request.
import { afterAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../../src/lib/log";
import { makeApp, sourceOnly, startAndLogin, type TestApp } from "../../support/helpers";

async function appLogging(accessLog: boolean): Promise<{ t: TestApp; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger("info", (line) => {
    for (const l of line.split("\n").filter(Boolean)) lines.push(JSON.parse(l));
  });
  const t = await makeApp({ config: { accessLog }, options: { logger } });
  return { t, lines };
}

const apps: TestApp[] = [];
afterAll(async () => {
  for (const t of apps) await t.close();
});

sourceOnly("--access-log: one info line per request, off by default", () => {
  test("off (the default): requests leave no line; audit lines and warnings still do", async () => {
    const { t, lines } = await appLogging(false);
    apps.push(t);
    await startAndLogin(t);
    for (let i = 0; i < 5; i++) expect((await t.req("GET", "/api/health")).status).toBe(200);
    await Bun.sleep(100);
    expect(lines.filter((l) => l.msg === "request")).toEqual([]);
    // The login is an audit event: its line is written whatever the access log says.
    expect(lines.some((l) => l.msg === "audit" && l.action === "auth.login")).toBe(true);
  });

  test("on: each request gets its line with method, path, route, status and request id", async () => {
    const { t, lines } = await appLogging(true);
    apps.push(t);
    const res = await t.req("GET", "/api/health");
    // Elysia runs after-response hooks once the response is handed over.
    for (let i = 0; i < 50 && !lines.some((l) => l.msg === "request"); i++) await Bun.sleep(10);
    const line = lines.find((l) => l.msg === "request" && l.path === "/api/health");
    expect(line).toMatchObject({ method: "GET", route: "/api/health", status: 200, request_id: res.headers.get("x-request-id") });
  });

  test("the setting is read from the flag and the environment; a bad value stops the start", async () => {
    const { loadConfig } = await import("../../../src/config");
    expect(loadConfig(new Map()).accessLog).toBe(false);
    expect(loadConfig(new Map([["access-log", "true"]])).accessLog).toBe(true);
    expect(loadConfig(new Map(), { CORPADMIN_ACCESS_LOG: "on" }).accessLog).toBe(true);
    expect(() => loadConfig(new Map([["access-log", "maybe"]]))).toThrow(/access-log/);
  });
});
