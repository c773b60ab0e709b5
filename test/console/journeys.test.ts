// End-to-end journeys of the operator console in a real browser against the compiled binary.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import type { Browser, Page } from "playwright-core";
import { ADMIN } from "../helpers";
import { api, axeViolations, buildOnce, CORP, firstStart, launch, shot, startServer, totpNow, uiLogin, type Server } from "./harness";

let server: Server;
let browser: Browser;
let token: string;

beforeAll(async () => {
  buildOnce();
  server = await startServer();
  token = await firstStart(server.base);
  browser = await launch();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: "en-US" });
  return context.newPage();
}

test("served at /console with strict headers, / redirects there, the assets are hashed and small", async () => {
  const root = await fetch(`${server.base}/`, { redirect: "manual" });
  expect(root.status).toBe(302);
  expect(root.headers.get("location")).toBe("/console");
  const html = await fetch(`${server.base}/console`);
  expect(html.status).toBe(200);
  expect(html.headers.get("content-security-policy")).toContain("script-src 'self'");
  expect(html.headers.get("x-frame-options")).toBe("DENY");
  expect(html.headers.get("cache-control")).toBe("no-store");
  const page = await html.text();
  // A screen's own URL answers the app too (the URL is the state).
  expect(await (await fetch(`${server.base}/console/contracts?page=2`)).text()).toBe(page);
  const assets = [...page.matchAll(/(?:src|href)="(\/console\/[^"]+)"/g)].map((m) => m[1]);
  expect(assets.length).toBeGreaterThanOrEqual(2);
  let gzipped = gzipSync(page).length;
  for (const a of assets) {
    expect(a).toMatch(/-[a-z0-9]{8}\.(js|css)$/);
    const res = await fetch(server.base + a);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toContain("immutable");
    gzipped += gzipSync(new Uint8Array(await res.arrayBuffer())).length;
  }
  console.log(`console first load: ${(gzipped / 1024).toFixed(1)} KiB gzipped`);
  expect(gzipped).toBeLessThan(150 * 1024);
  // Nothing from another origin: no CDN, no web fonts.
  expect(page).not.toMatch(/https?:\/\//);
  expect((await fetch(`${server.base}/console/index-00000000.js`)).status).toBe(404);
  // A page, not an API operation.
  const doc = await (await fetch(`${server.base}/api/openapi.json`)).json();
  expect(Object.keys(doc.paths).some((p) => p === "/" || p.startsWith("/console"))).toBe(false);
});

test("login, 2FA enrolment, 2FA login with the keyboard only, session expiry returns where the operator was", async () => {
  const page = await newPage();
  await uiLogin(page, server.base);
  await expect(page.getByRole("heading", { level: 1 })).toBeTruthy();
  expect(await page.locator("h1").textContent()).toBe("Dashboard");
  await shot(page, "dashboard-light");
  // Enrol: QR code and secret, confirmed with a code.
  await page.getByRole("link", { name: "Turn on two-factor authentication" }).click();
  await page.getByRole("button", { name: "Turn on two-factor authentication" }).click();
  const secret = (await page.locator("code.secret-value").textContent())!.trim();
  expect(secret).toMatch(/^[A-Z2-7]+=*$/);
  expect(await page.locator("img.totp-qr").getAttribute("src")).toStartWith("data:image/svg+xml");
  await shot(page, "account-enrol-light");
  await page.getByLabel("Authentication code").fill(totpNow(secret));
  await page.getByRole("button", { name: "Confirm" }).click();
  await page.getByText("Two-factor authentication is now on.").waitFor();
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/console\/login/);

  // Keyboard only: type, Tab and Enter.
  await page.locator("#login-corp").focus();
  // The corporation of the last login is filled in already.
  expect(await page.locator("#login-corp").inputValue()).toBe(CORP.auth_name);
  await page.keyboard.press("Tab");
  await page.keyboard.type(ADMIN.login);
  await page.keyboard.press("Tab");
  await page.keyboard.type(ADMIN.password);
  await page.keyboard.press("Enter");
  await page.locator("#login-code").waitFor();
  // The code field has the focus once the server asks for it.
  expect(await page.evaluate(() => document.activeElement?.id)).toBe("login-code");
  // A code different from the one the enrolment used (each is accepted once).
  await Bun.sleep(Math.max(0, 30_500 - (Date.now() % 30_000)));
  await page.keyboard.type(totpNow(secret));
  await page.keyboard.press("Tab");
  await page.keyboard.press("Space");
  await page.keyboard.press("Enter");
  await page.waitForURL((u) => u.pathname === "/console" || u.pathname === "/console/");
  const cookies = await page.context().cookies();
  expect(cookies.some((c) => c.name === "corpadmin_device")).toBe(true);

  // The session is revoked elsewhere: the next call sends the operator to the login, and back.
  await page.goto(`${server.base}/console/cities?q=abc`);
  await page.locator("table").waitFor();
  const stored = await page.evaluate(() => JSON.parse(sessionStorage.getItem("corpadmin.session")!).access_token as string);
  expect((await api(server.base, "DELETE", "/api/logout", undefined, stored)).status).toBe(204);
  await page.getByLabel("Search", { exact: true }).fill("abcd");
  await page.getByRole("button", { name: "Search" }).click();
  await page.waitForURL(/\/console\/login\?next=/);
  await page.getByText("Your session ended").waitFor();
  // The remembered device skips the code.
  await page.locator("#login-password").fill(ADMIN.password);
  await page.locator("#login-user").fill(ADMIN.login);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/console\/cities\?q=abcd$/);
  await page.context().close();
}, 90_000);
