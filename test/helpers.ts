// Test harness: a real app over real SQLite files in a fresh temporary directory per test file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { createApp, type AppOptions } from "../src/app";
import { loadConfig, type Config } from "../src/config";
import { actions, corpMembers, features, services, users, workgroupFeatures, workgroupMembers, workgroupServices, workgroups } from "../src/db/platform/schema";
import { newId } from "../src/lib/ids";
import { silentLogger } from "../src/lib/log";

export const ADMIN = { login: "admin", password: "admin-password-1", name: "Admin", email: "admin@example.com" };

export interface Res<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface ReqOptions {
  token?: string;
  apiKey?: string;
  body?: unknown;
  /** Raw body text (sent as is, with the given or a JSON content type). */
  raw?: string;
  headers?: Record<string, string>;
  ip?: string;
}

export type TestApp = Awaited<ReturnType<typeof makeApp>>;

export function tempDir(prefix = "corpadmin-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * A fresh app. `ip` of a request becomes the client address through the app's client-IP
 * resolver (the `x-test-peer` header), so tests can act from IPv4, IPv6 or mapped addresses.
 */
export async function makeApp(opts: { config?: Partial<Config>; env?: Record<string, string>; options?: AppOptions; dir?: string } = {}) {
  const dir = opts.dir ?? tempDir();
  const config: Config = { ...loadConfig(new Map(), { CORPADMIN_DATA_DIR: dir, CORPADMIN_TOKEN_SECRET: "test-secret-key-0123456789abcdef", ...opts.env }), ...opts.config };
  const { app, ctx, serveRoutes } = createApp(config, {
    logger: silentLogger,
    clientIp: (request, peer) => request.headers.get("x-test-peer") ?? peer ?? "127.0.0.1",
    // Suites log in far more than 60 times a minute; the rate-limit tests use the real default.
    publicAuthLimit: 100_000,
    startDelayMs: 0,
    ...opts.options,
  });
  async function req<T = any>(method: string, path: string, o: ReqOptions = {}): Promise<Res<T>> {
    const headers: Record<string, string> = { host: "localhost", ...o.headers };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.apiKey) headers["x-api-key"] = o.apiKey;
    if (o.ip) headers["x-test-peer"] = o.ip;
    let body: string | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
    const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed as T, text, headers: res.headers };
  }
  return {
    app,
    ctx,
    serveRoutes,
    dir,
    config,
    req,
    async close(removeDir = true) {
      await ctx.close();
      if (removeDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** POST /api/start and log the built-in admin in: a super-admin token in the first corporation. */
export async function startAndLogin(t: TestApp, corp = { auth_name: "acme", company_name: "ACME Telecom", timezone: "America/Sao_Paulo" }) {
  const start = await t.req("POST", "/api/start", { body: { user: ADMIN, corp } });
  if (start.status !== 200) throw new Error(`start failed: ${start.status} ${start.text}`);
  const login = await t.req("POST", "/api/login", { body: { corp: corp.auth_name, login: ADMIN.login, password: ADMIN.password } });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`);
  return { token: login.body.access_token as string, corpId: start.body.corp.id as string, userId: start.body.user.id as string };
}

/** Another corporation, created by the super-admin through the platform service layer. */
export async function addCorp(t: TestApp, authName: string, timezone = "UTC"): Promise<string> {
  const { createCorporation } = await import("../src/modules/corp/service");
  return createCorporation(t.ctx, { auth_name: authName, company_name: authName.toUpperCase(), timezone }).id;
}

/**
 * A user who is a member of `corpId`, in a workgroup granted `services` (identifiers, e.g.
 * "platform.city") and `actions` (e.g. "localhost:80/api/city/GET"); logged in there.
 * Fixture set-up goes straight to the database so module tests do not depend on each other.
 */
export async function addUser(
  t: TestApp,
  corpId: string,
  o: { login?: string; password?: string; services?: string[]; actions?: string[]; superAdmin?: boolean } = {},
) {
  const login = o.login ?? `user-${newId().slice(-8)}`;
  const password = o.password ?? "user-password-1";
  const userId = newId();
  const db = t.ctx.platform;
  db.insert(users).values({ id: userId, name: login, email: `${login}@example.com`, login, password_hash: await t.ctx.passwords.hash(password), super_admin: !!o.superAdmin }).run();
  db.insert(corpMembers).values({ corp_id: corpId, user_id: userId }).run();
  if (o.services?.length || o.actions?.length) {
    const wgId = newId();
    db.insert(workgroups).values({ id: wgId, corp_id: corpId, name: `wg-${login}` }).run();
    db.insert(workgroupMembers).values({ workgroup_id: wgId, user_id: userId }).run();
    for (const identifier of o.services ?? []) {
      const s = db.select().from(services).where(eq(services.identifier, identifier)).get();
      if (!s) throw new Error(`unknown service ${identifier}`);
      db.insert(workgroupServices).values({ workgroup_id: wgId, service_id: s.id }).run();
    }
    if (o.actions?.length) {
      const svc = db.select().from(services).where(eq(services.identifier, "platform.core")).get()!;
      const featureId = newId();
      db.insert(features).values({ id: featureId, service_id: svc.id, name: `feature-${login}` }).run();
      for (const action of o.actions) db.insert(actions).values({ feature_id: featureId, action }).run();
      db.insert(workgroupFeatures).values({ workgroup_id: wgId, feature_id: featureId }).run();
    }
  }
  t.ctx.permissions.invalidate();
  const corp = t.ctx.corps.get(corpId)!;
  const res = await t.req("POST", "/api/login", { body: { corp: corp.auth_name, login, password } });
  if (res.status !== 200) throw new Error(`login of ${login} failed: ${res.status} ${res.text}`);
  return { userId, login, password, token: res.body.access_token as string };
}

export const UNKNOWN_ID = "01900000-0000-7000-8000-000000000000";
