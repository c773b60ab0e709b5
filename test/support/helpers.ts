// Test harness: a real app over real SQLite files in a fresh temporary directory per test file.
// CORPADMIN_TEST_TARGET=binary runs the same suites against the compiled executable
// (CORPADMIN_TEST_BINARY, default dist/corpadmin) over real HTTP on a loopback port.
import { afterAll, describe, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createApp, type AppOptions } from "../../src/app";
import { prepareStorage } from "../../src/core/context";
import { testDatabase } from "./backend";
import { pgReaders } from "./pg-files";
import { freePort } from "./ports";
import type { PgStore } from "../../src/core/pg/store";
import { loadConfig, type Config } from "../../src/config";
import { createLogger, silentLogger, type LogLevel } from "../../src/lib/log";

/** Suites import the port helper from here with the rest. */
export { freePort };

export const ADMIN = { login: "admin", password: "admin-password-1", name: "Admin", email: "admin@example.com" };

export const TARGET: "source" | "binary" = process.env.CORPADMIN_TEST_TARGET === "binary" ? "binary" : "source";
const BINARY = resolve(process.env.CORPADMIN_TEST_BINARY ?? join(import.meta.dir, "../../dist/corpadmin"));

/**
 * Suites (or tests) that need the in-process app — its context (`t.ctx`), its options or its
 * Elysia instance — run against the source only.
 */
export const sourceOnly = TARGET === "binary" ? describe.skip : describe;
export const testSourceOnly = TARGET === "binary" ? test.skip : test;
/** In-process options (a clock, a logger) for a suite that also runs against the binary, which
 * does not get them: the tests that depend on them are testSourceOnly. */
export const inProcessOnly = (options: AppOptions): AppOptions | undefined => (TARGET === "source" ? options : undefined);

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

export type MakeAppOptions = { config?: Partial<Config>; env?: Record<string, string>; options?: AppOptions; dir?: string };

export type TestApp = Awaited<ReturnType<typeof makeSourceApp>>;

export function tempDir(prefix = "corpadmin-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

const TEST_ENV = { CORPADMIN_TOKEN_SECRET: "test-secret-key-0123456789abcdef" };

let dataKeyFile: string | null = null;

/**
 * An app over a PostgreSQL database gets this process's one data key file unless its env names
 * one, as every app gets TEST_ENV's token key: apps started over one database with data
 * directories of their own hold the same keys, as cluster nodes must (src/core/keys.ts refuses a
 * node whose keys differ from the first's).
 */
function withSharedKeys(env: Record<string, string>): Record<string, string> {
  if (!env.CORPADMIN_DATABASE_URL || "CORPADMIN_DATA_KEY_FILE" in env) return env;
  if (!dataKeyFile) {
    const dir = tempDir("corpadmin-test-key-");
    dataKeyFile = join(dir, "data.key");
    writeFileSync(dataKeyFile, randomBytes(32).toString("base64") + "\n", { mode: 0o600 });
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  return { ...env, CORPADMIN_DATA_KEY_FILE: dataKeyFile };
}

function requestParts(o: ReqOptions, ipHeader: string) {
  const headers: Record<string, string> = { host: "localhost", ...o.headers };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.apiKey) headers["x-api-key"] = o.apiKey;
  if (o.ip) headers[ipHeader] = o.ip;
  let body: string | undefined;
  if (o.raw !== undefined) body = o.raw;
  else if (o.body !== undefined) body = JSON.stringify(o.body);
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
  return { headers, body };
}

async function toRes<T>(res: Response): Promise<Res<T>> {
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed as T, text, headers: res.headers };
}

/**
 * A fresh app. `ip` of a request becomes the client address: in-process through the app's
 * client-IP resolver (the `x-test-peer` header), against the binary as X-Forwarded-For from a
 * trusted loopback proxy; so tests can act from IPv4, IPv6 or mapped addresses.
 */
export function makeApp(opts: MakeAppOptions = {}): Promise<TestApp> {
  return TARGET === "binary" ? makeBinaryApp(opts) : makeSourceApp(opts);
}

async function makeSourceApp(opts: MakeAppOptions = {}) {
  const dir = opts.dir ?? tempDir();
  const database = await testDatabase(dir);
  const config: Config = { ...loadConfig(new Map(), withSharedKeys({ CORPADMIN_DATA_DIR: dir, ...TEST_ENV, ...database.env, ...opts.env })), ...opts.config };
  const { app, ctx, serveRoutes } = createApp(config, {
    ...(await prepareStorage(config)),
    // CORPADMIN_TEST_LOG=error (or warn, ...): the in-process app's log on stdout, to see a 500's cause.
    logger: process.env.CORPADMIN_TEST_LOG ? createLogger(process.env.CORPADMIN_TEST_LOG as LogLevel) : silentLogger,
    clientIp: (request, peer) => request.headers.get("x-test-peer") ?? peer ?? "127.0.0.1",
    // Suites log in far more than 60 times a minute; the rate-limit tests use the real default.
    publicAuthLimit: 100_000,
    startDelayMs: 0,
    ...opts.options,
  });
  // A write through sqlWrite moves the app's change stamp of that corporation at once (pg-files.ts).
  const files = database.env.CORPADMIN_DATABASE_URL ? pgReaders(database.env.CORPADMIN_DATABASE_URL, (corpId) => (ctx.store as PgStore).pg.generations.changed(corpId)) : readers(dir);
  async function req<T = any>(method: string, path: string, o: ReqOptions = {}): Promise<Res<T>> {
    const { headers, body } = requestParts(o, "x-test-peer");
    return toRes<T>(await app.handle(new Request(`http://localhost${path}`, { method, headers, body })));
  }
  return {
    app,
    ctx,
    serveRoutes,
    dir,
    config,
    req,
    /** A raw request (the Response as it is: binary bodies, streams); Host defaults to localhost. */
    fetch: (path: string, init: RequestInit = {}): Promise<Response> => app.handle(new Request(`http://localhost${path}`, init)),
    /** The base URL of the app on a real loopback socket (for clients in other processes). */
    listen(): string {
      if (!app.server) app.listen({ hostname: "127.0.0.1", port: 0 });
      return `http://127.0.0.1:${app.server!.port}`;
    },
    /** Resident memory of the process serving the requests, in bytes. */
    rss: (): number => process.memoryUsage().rss,
    /** A read-only connection to the platform database, or to a corporation's. */
    sql: files.sql,
    sqlWrite: files.sqlWrite,
    async close(removeDir = true) {
      files.closeAll();
      if (app.server) await app.stop();
      await ctx.close();
      if (removeDir) {
        rmSync(dir, { recursive: true, force: true });
        await database.drop();
      }
    },
  };
}

/**
 * Read-only connections to the app's database files (the platform one, or a corporation's on the
 * built-in server), for checks of what was stored: they work against the binary too.
 */
function readers(dir: string) {
  const open = new Map<string, Database>();
  const get = (corpId: string | undefined, mode: "r" | "w"): Database => {
    const file = corpId ? join(dir, "corps", `${corpId}.db`) : join(dir, "platform.db");
    const key = `${mode}:${file}`;
    let db = open.get(key);
    if (!db) {
      db = mode === "r" ? new Database(file, { readonly: true }) : new Database(file, { readwrite: true, create: false });
      // Both wait out the app's own locks, as a second process would: a reader meets SQLITE_BUSY
      // while the binary's checkpoint restarts the WAL, a writer while it writes.
      db.exec("PRAGMA busy_timeout = 10000");
      if (mode === "w") db.exec("PRAGMA foreign_keys = ON");
      open.set(key, db);
    }
    return db;
  };
  return {
    /** A read-only connection to the platform database, or to a corporation's (built-in server). */
    sql: (corpId?: string): Database => get(corpId, "r"),
    /**
     * A connection that writes behind the app's back (a test arranging a state the API cannot
     * reach: a corrupted row, an old schema). The app's caches do not learn of it by themselves.
     */
    sqlWrite: (corpId?: string): Database => get(corpId, "w"),
    closeAll() {
      for (const db of open.values()) db.close();
      open.clear();
    },
  };
}


/**
 * Another app node over the same PostgreSQL database as `t` (cluster mode, issue 19), with a data
 * directory of its own holding `t`'s data key (the nodes of a cluster share their keys; the token
 * key is TEST_ENV's); close it before `t`, whose close drops the database.
 */
export function makePeerApp(t: TestApp, opts: Omit<MakeAppOptions, "dir"> = {}): Promise<TestApp> {
  const url = t.config.databaseUrl;
  if (!url) throw new Error("a peer app shares a PostgreSQL database: the first app must run on one");
  // Its keys are the first app's: every app over a database gets the process's ones (withSharedKeys).
  return makeApp({ ...opts, dir: tempDir(), env: { ...opts.env, CORPADMIN_DATABASE_URL: url } });
}

function sourceOnlyError(what: string): never {
  throw new Error(`${what} exists in-process only: mark the test testSourceOnly, or the file \`// source-only: <why>\``);
}

/** Binaries still running when the test process ends (a suite that never closed its app) are stopped. */
const running = new Set<ReturnType<typeof Bun.spawn>>();
process.on("exit", () => {
  for (const p of running) p.kill("SIGKILL");
});

/** The compiled binary serving on a free loopback port, with the settings the in-process app gets. */
async function makeBinaryApp(opts: MakeAppOptions = {}): Promise<TestApp> {
  // The auth rate limit is a setting of the binary too; every other in-process option is not.
  const { publicAuthLimit, ...inProcess } = opts.options ?? {};
  if (opts.config || Object.keys(inProcess).length) sourceOnlyError("makeApp's config/options");
  const dir = opts.dir ?? tempDir();
  const database = await testDatabase(dir);
  const log = join(tmpdir(), `corpadmin-test-${crypto.randomUUID()}`);
  const output = () => ["out", "err"].map((k) => readFileSync(`${log}.${k}`, "utf8")).join("");
  const removeLogs = () => ["out", "err"].forEach((k) => rmSync(`${log}.${k}`, { force: true }));
  let proc: ReturnType<typeof Bun.spawn> | null = null;
  let base = "";
  let env: Record<string, string> = {};
  for (let attempt = 0; attempt < 3 && !proc; attempt++) {
    const port = freePort();
    env = withSharedKeys({
      CORPADMIN_HOST: "127.0.0.1",
      CORPADMIN_PORT: String(port),
      CORPADMIN_DATA_DIR: dir,
      // The in-process app's public URL (the default port), so links compare alike in both modes.
      CORPADMIN_PUBLIC_URL: "http://localhost:8080",
      CORPADMIN_LOG_LEVEL: "warn",
      // Suites log in far more than 60 times a minute; the rate-limit tests use the real default.
      CORPADMIN_AUTH_RATE_LIMIT: String(publicAuthLimit ?? 100_000),
      // Requests come from this process; `ip` travels as X-Forwarded-For.
      CORPADMIN_TRUSTED_PROXIES: "127.0.0.1/32",
      ...TEST_ENV,
      ...database.env,
      ...opts.env,
    });
    const p = Bun.spawn([BINARY, "serve"], { cwd: dir, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env }, stdout: Bun.file(`${log}.out`), stderr: Bun.file(`${log}.err`) });
    base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 15_000;
    let up = false;
    while (!up && p.exitCode === null && Date.now() < deadline) {
      up = await fetch(`${base}/api/health`).then((r) => r.ok, () => false);
      if (!up) await Bun.sleep(20);
    }
    if (up) proc = p;
    else {
      p.kill("SIGKILL");
      await p.exited;
      const out = output();
      removeLogs();
      // A bad setting is the test's point (e.g. rejected configuration): report it as the source does.
      if (/corpadmin: /.test(out) && p.exitCode === 2) throw new Error(out.trim());
      if (attempt === 2) throw new Error(`${BINARY} did not start: ${out}`);
    }
  }
  const server = proc!;
  running.add(server);
  const config = loadConfig(new Map(), env);
  async function req<T = any>(method: string, path: string, o: ReqOptions = {}): Promise<Res<T>> {
    const { headers, body } = requestParts(o, "x-forwarded-for");
    // fetch would send its own User-Agent; an in-process request carries none, which "" stands for.
    if (!Object.keys(headers).some((h) => h.toLowerCase() === "user-agent")) headers["user-agent"] = "";
    return toRes<T>(await fetch(base + path, { method, headers, body, redirect: "manual", decompress: false } as RequestInit));
  }
  let closed = false;
  const files = database.env.CORPADMIN_DATABASE_URL ? pgReaders(database.env.CORPADMIN_DATABASE_URL) : readers(dir);
  const t = {
    get app(): TestApp["app"] {
      return sourceOnlyError("t.app");
    },
    get ctx(): TestApp["ctx"] {
      return sourceOnlyError("t.ctx");
    },
    get serveRoutes(): TestApp["serveRoutes"] {
      return sourceOnlyError("t.serveRoutes");
    },
    dir,
    config,
    req,
    fetch: (path: string, init: RequestInit = {}): Promise<Response> => {
      const headers = new Headers(init.headers);
      if (!headers.has("host")) headers.set("host", "localhost");
      if (!headers.has("user-agent")) headers.set("user-agent", "");
      return fetch(base + path, { ...init, headers, redirect: "manual" });
    },
    listen: (): string => base,
    pid: server.pid,
    sql: files.sql,
    sqlWrite: files.sqlWrite,
    rss(): number {
      const status = readFileSync(`/proc/${server.pid}/status`, "utf8");
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
    },
    async close(removeDir = true) {
      files.closeAll();
      if (!closed) {
        closed = true;
        server.kill("SIGTERM");
        const stopped = await Promise.race([server.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
        if (!stopped) {
          server.kill("SIGKILL");
          await server.exited;
        }
        running.delete(server);
        removeLogs();
      }
      if (removeDir) {
        rmSync(dir, { recursive: true, force: true });
        await database.drop();
      }
    },
  };
  return t;
}

/** Logs `login` into `corp` (auth_name or id), from `ip` with `userAgent` when given; its access token. */
export async function logIn(t: TestApp, corp: string, login: string, password: string, o: { ip?: string; userAgent?: string } = {}): Promise<string> {
  const headers = o.userAgent !== undefined ? { "user-agent": o.userAgent } : undefined;
  const res = await t.req("POST", "/api/login", { body: { corp, login, password }, ip: o.ip, headers });
  if (res.status !== 200) throw new Error(`login of ${login} into ${corp} failed: ${res.status} ${res.text}`);
  return res.body.access_token as string;
}

/** Requests of one token's holder: `req(method, path, body?)`, answered whatever the status. */
export const requestsOf =
  (t: TestApp, token: string) =>
  <T = any>(method: string, path: string, body?: unknown): Promise<Res<T>> =>
    t.req<T>(method, path, { token, body });

/** The built-in admin (super_admin) working in a corporation: one session per app and corporation. */
const adminSessions = new WeakMap<object, Map<string, string>>();

/** POST /api/start and log the built-in admin in: a super-admin token in the first corporation. */
export async function startAndLogin(t: TestApp, corp = { auth_name: "acme", company_name: "ACME Telecom", timezone: "America/Sao_Paulo" }) {
  const start = await t.req("POST", "/api/start", { body: { user: ADMIN, corp } });
  if (start.status !== 200) throw new Error(`start failed: ${start.status} ${start.text}`);
  const token = await logIn(t, corp.auth_name, ADMIN.login, ADMIN.password);
  const admin = { token, corpId: start.body.corp.id as string, userId: start.body.user.id as string, req: requestsOf(t, token) };
  if (!adminSessions.has(t)) adminSessions.set(t, new Map([[admin.corpId, admin.token]]));
  return admin;
}

/** What startAndLogin gives: the built-in admin's token, corporation, user id and request helper. */
export type Admin = Awaited<ReturnType<typeof startAndLogin>>;

/**
 * The opening of most suites, at a test file's top: `const { t, admin } = await openApp();` — a
 * started app (source or binary, SQLite or PostgreSQL as backend.ts decides) with the built-in
 * admin logged in to its first corporation, closed after the file's tests. The suite's own set-up
 * stays in beforeAll: users created at a file's top (serviceRoles there) left later password hashes
 * of users.test.ts waiting 60 s, unexplained; in beforeAll they run as before.
 */
export async function openApp(opts: MakeAppOptions & { corp?: Parameters<typeof startAndLogin>[1] } = {}): Promise<{ t: TestApp; admin: Admin }> {
  const { corp, ...appOpts } = opts;
  const t = await makeApp(appOpts);
  afterAll(() => t.close());
  return { t, admin: await startAndLogin(t, corp) };
}

/** A request of the built-in admin working in `corpId` (logged in there once); throws unless 2xx. */
export async function adminIn(t: TestApp, corpId: string, method: string, path: string, body?: unknown): Promise<Res> {
  let sessions = adminSessions.get(t);
  if (!sessions) adminSessions.set(t, (sessions = new Map()));
  for (let attempt = 0; attempt < 2; attempt++) {
    let token = sessions.get(corpId);
    if (!token) sessions.set(corpId, (token = await logIn(t, corpId, ADMIN.login, ADMIN.password)));
    const res = await t.req(method, path, { token, body });
    if (res.status === 401) {
      sessions.delete(corpId); // revoked by the test: log in again
      continue;
    }
    if (res.status >= 300) throw new Error(`${method} ${path} failed: ${res.status} ${res.text}`);
    return res;
  }
  throw new Error(`${method} ${path}: the admin's session keeps being refused`);
}

/** Another corporation, created by the super-admin through the HTTP API. */
export async function addCorp(t: TestApp, authName: string, timezone = "UTC"): Promise<string> {
  const via = await anyAdminCorp(t);
  return (await adminIn(t, via, "POST", "/api/corp", { auth_name: authName, company_name: authName.toUpperCase(), timezone })).body.id as string;
}

/** Makes `userId` a member of `corpId` too (as the built-in admin, through the HTTP API). */
export async function addMember(t: TestApp, corpId: string, userId: string): Promise<void> {
  await adminIn(t, await anyAdminCorp(t), "POST", `/api/corp/${corpId}/user/${userId}`);
}

/** A corporation the built-in admin works in: startAndLogin's, or `acme` on an app reopened over its data. */
async function anyAdminCorp(t: TestApp): Promise<string> {
  const known = adminSessions.get(t);
  if (known?.size) return known.keys().next().value!;
  const login = await t.req("POST", "/api/login", { body: { corp: "acme", login: ADMIN.login, password: ADMIN.password } });
  if (login.status !== 200) throw new Error(`addCorp/addMember need startAndLogin first (${login.status} ${login.text})`);
  const corpId = login.body.credentials.corp as string;
  adminSessions.set(t, new Map([[corpId, login.body.access_token as string]]));
  return corpId;
}

const serviceIds = new WeakMap<object, Map<string, string>>();
async function serviceId(t: TestApp, corpId: string, identifier: string): Promise<string> {
  let ids = serviceIds.get(t);
  if (!ids) serviceIds.set(t, (ids = new Map()));
  if (!ids.has(identifier)) {
    const found = (await adminIn(t, corpId, "GET", `/api/service?identifier=${encodeURIComponent(identifier)}`)).body.items as { id: string }[];
    if (!found.length) throw new Error(`unknown service ${identifier}`);
    ids.set(identifier, found[0].id);
  }
  return ids.get(identifier)!;
}

/**
 * A user who is a member of `corpId`, in a workgroup granted `services` (identifiers, e.g.
 * "platform.city") and `actions` (e.g. "localhost:80/api/city/GET"); logged in there.
 * Set up by the built-in admin through the HTTP API, so it works against the binary too.
 */
export async function addUser(
  t: TestApp,
  corpId: string,
  o: { login?: string; password?: string; services?: string[]; actions?: string[]; superAdmin?: boolean } = {},
) {
  const login = o.login ?? `user-${crypto.randomUUID().slice(-8)}`;
  const password = o.password ?? "user-password-1";
  const as = (method: string, path: string, body?: unknown) => adminIn(t, corpId, method, path, body);
  const userId = (await as("POST", "/api/user", { name: login, email: `${login}@example.com`, login, password, super_admin: !!o.superAdmin })).body.id as string;
  if (o.services?.length || o.actions?.length) {
    const wgId = (await as("POST", "/api/workgroup", { name: `wg-${login}` })).body.id as string;
    await as("POST", `/api/workgroup/${wgId}/user/${userId}`);
    for (const identifier of o.services ?? []) await as("POST", `/api/workgroup/${wgId}/service/${await serviceId(t, corpId, identifier)}`);
    if (o.actions?.length) {
      const featureId = (await as("POST", "/api/feature", { service_id: await serviceId(t, corpId, "platform.core"), name: `feature-${login}` })).body.id as string;
      for (const action of o.actions) await as("POST", `/api/feature/${featureId}/action`, { action });
      await as("POST", `/api/workgroup/${wgId}/feature/${featureId}`);
    }
  }
  const token = await logIn(t, corpId, login, password);
  return { userId, login, password, token, req: requestsOf(t, token) };
}

/**
 * The members a module's suite checks its rules with (STYLE.md habit 7): in `corpId` a manager
 * granted `service` and a plain member without it; another corporation ("other-isp") and an
 * outsider there, granted `service` too. Logins: `${prefix}manager`, `${prefix}plain`, `${prefix}outsider`.
 */
export async function serviceRoles(t: TestApp, corpId: string, service: string, prefix = "") {
  const manager = await addUser(t, corpId, { login: `${prefix}manager`, services: [service] });
  const plain = await addUser(t, corpId, { login: `${prefix}plain` });
  const otherCorp = await addCorp(t, "other-isp");
  const outsider = await addUser(t, otherCorp, { login: `${prefix}outsider`, services: [service] });
  return { manager, plain, otherCorp, outsider };
}

/** What addUser gives: a logged-in member with its token and request helper. */
export type User = Awaited<ReturnType<typeof addUser>>;

export const UNKNOWN_ID = "01900000-0000-7000-8000-000000000000";
