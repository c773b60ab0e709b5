// The console's browser tests: the compiled dist/corpadmin (built here, which proves the console
// is embedded) on a free loopback port over a temporary data directory, driven by Debian's
// Chromium through playwright-core. CONSOLE_E2E_SOURCE=1 runs the source server instead (faster
// while developing; it serves dist/console, the last console build).
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import AxeBuilder from "@axe-core/playwright";
import { TOTP } from "otpauth";
import { ADMIN, freePort, tempDir } from "./helpers";
import { STARTUP_MS, waitFor } from "./wait";

export const ROOT = join(import.meta.dir, "../..");
export const SHOTS = join(ROOT, "test-output/console");
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const CORP = { auth_name: "acme", company_name: "ACME Telecom", timezone: "America/Sao_Paulo" };

/** Whether the browser suites run: where Chromium is, and in CI, where its absence fails them (.ci/run installs it). */
export const BROWSER_RUNS = existsSync(CHROMIUM) || process.env.CI === "true";
if (!BROWSER_RUNS) console.warn(`${CHROMIUM} not found: the browser tests are skipped (apt-get install chromium)`);
/** bun:test's `test` for a browser suite: skipped where the browser suites do not run. */
export const browserTest = BROWSER_RUNS ? test : test.skip;

export interface Server {
  base: string;
  dir: string;
  stop(): Promise<void>;
}

/** Builds dist/corpadmin once per process (both test files share it). */
let built = false;
export function buildOnce(): void {
  if (built || process.env.CONSOLE_E2E_SOURCE === "1" || process.env.CONSOLE_E2E_NO_BUILD === "1") return;
  const build = Bun.spawnSync(["bun", "build.ts"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`);
  built = true;
}

export async function startServer(env: Record<string, string> = {}): Promise<Server> {
  const dir = tempDir("corpadmin-console-");
  const port = freePort();
  const args = ["serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", join(dir, "data")];
  const cmd = process.env.CONSOLE_E2E_SOURCE === "1" ? ["bun", join(ROOT, "src/main.ts"), ...args] : [join(ROOT, "dist/corpadmin"), ...args];
  const proc = Bun.spawn(cmd, {
    cwd: process.env.CONSOLE_E2E_SOURCE === "1" ? ROOT : dir,
    env: { ...process.env, CORPADMIN_LOG_LEVEL: "warn", CORPADMIN_EGRESS_ALLOW: "127.0.0.0/8", ...env },
    stdout: "ignore",
    stderr: "inherit",
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor("the console's server up", () => fetch(`${base}/api/health`).then((r) => r.ok, () => false), STARTUP_MS);
  return {
    base,
    dir,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

/** A JSON API call, as the tests' own setup (never through the console). */
export async function api(base: string, method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

export async function firstStart(base: string): Promise<string> {
  const start = await api(base, "POST", "/api/start", { user: ADMIN, corp: CORP });
  if (start.status !== 200) throw new Error(`start: ${start.status}`);
  const login = await api(base, "POST", "/api/login", { corp: CORP.auth_name, login: ADMIN.login, password: ADMIN.password });
  return login.body.access_token;
}

export function totpNow(secret: string): string {
  return new TOTP({ secret, digits: 6, period: 30, algorithm: "SHA1" }).generate();
}

/** WCAG 2.1 A/AA violations on the page as it is now, as readable lines. */
export async function axeViolations(page: Page, rules?: string[]): Promise<string[]> {
  const builder = new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]);
  const result = await (rules ? builder.withRules(rules) : builder).analyze();
  return result.violations.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(" | ")}`);
}

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** Logs in through the console's form (the keyboard only when asked). */
export async function uiLogin(page: Page, base: string, login = ADMIN.login, password = ADMIN.password, code?: string): Promise<void> {
  await page.goto(`${base}/console/login`);
  await page.getByLabel(/^(Corporation|Empresa)$/).fill(CORP.auth_name);
  await page.getByLabel(/^Login$/).fill(login);
  await page.getByLabel(/^(Password|Senha)$/).fill(password);
  await page.getByRole("button", { name: /^(Sign in|Entrar)$/ }).click();
  if (code !== undefined) {
    await page.getByLabel(/^(Authentication code|Código de autenticação)$/).fill(code);
    await page.getByRole("button", { name: /^(Sign in|Entrar)$/ }).click();
  }
  await page.waitForURL((u) => !u.pathname.endsWith("/login"));
}

/** A page in a fresh browser context: desktop or a phone (390×844, touch), a language, light or dark. */
export async function newPage(browser: Browser, opts: { phone?: boolean; lang?: "en" | "pt-BR"; dark?: boolean } = {}): Promise<Page> {
  const context = await browser.newContext({
    viewport: opts.phone ? { width: 390, height: 844 } : { width: 1280, height: 860 },
    locale: opts.lang === "pt-BR" ? "pt-BR" : "en-US",
    colorScheme: opts.dark ? "dark" : "light",
    isMobile: opts.phone,
    hasTouch: opts.phone,
  });
  const page = await context.newPage();
  await page.addInitScript((l) => localStorage.setItem("corpadmin.lang", l), opts.lang ?? "en");
  return page;
}

export interface ConsoleSuite {
  server: Server;
  browser: Browser;
  /** The admin's API token (empty with `start: false`). */
  token: string;
  /** A JSON call as the admin, for a suite's own arrangement (never through the console): its body; throws unless 200. */
  call(method: string, path: string, body?: unknown): Promise<any>;
  /** An accounting record posted as the NAS stand-in 127.0.0.1 with `secret` would (FreeRADIUS's rlm_rest); expects 204. */
  accounting(secret: string, record: Record<string, unknown>): Promise<void>;
}

/**
 * The opening of the browser suites, at a test file's top: `const { server, browser, token, call }
 * = await openConsole();` — the compiled binary (built once) serving a fresh data directory, first
 * started with the admin logged in (unless `start: false`), and Chromium; both stopped after the
 * file's tests. Where the browser suites do not run, nothing starts and their tests skip.
 */
export async function openConsole(o: { start?: boolean } = {}): Promise<ConsoleSuite> {
  const suite = {
    token: "",
    async call(method: string, path: string, body?: unknown) {
      const r = await api(suite.server.base, method, path, body, suite.token);
      if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async accounting(secret: string, record: Record<string, unknown>) {
      const res = await fetch(`${suite.server.base}/api/isp/radius/accounting`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Basic ${Buffer.from(`${CORP.auth_name}:${secret}`).toString("base64")}` },
        body: JSON.stringify({ "NAS-IP-Address": "127.0.0.1", ...record }),
      });
      expect(res.status).toBe(204);
    },
  } as ConsoleSuite;
  if (!BROWSER_RUNS) return suite;
  afterAll(async () => {
    await suite.browser?.close();
    await suite.server?.stop();
  });
  buildOnce();
  suite.server = await startServer();
  if (o.start !== false) suite.token = await firstStart(suite.server.base);
  suite.browser = await launch();
  return suite;
}
