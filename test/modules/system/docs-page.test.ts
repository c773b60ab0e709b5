// The docs page's protections (issue 29 defect 5): it sends requests with a bearer token, so it
// gets the console's headers, a CSP that lets only its own script run, and a proper charset; and it
// still renders under that CSP in a real browser (Chromium, against the compiled binary).
// source-only: the browser part builds and drives dist/corpadmin itself.
import { expect } from "bun:test";
import { shot, openConsole, browserTest as test } from "../../support/console";

const { server, browser } = await openConsole({ start: false });

test("GET /api/docs: CSP (own script only, by hash for its inline element), no framing, nosniff, utf-8", async () => {
  const res = await fetch(`${server.base}/api/docs`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(res.headers.get("x-frame-options")).toBe("DENY");
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  const csp = res.headers.get("content-security-policy") ?? "";
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
  expect(csp).not.toMatch(/script-src[^;]*'unsafe-(inline|eval)'/);
  const script = await fetch(`${server.base}/api/docs/scalar.js`);
  expect(script.headers.get("x-content-type-options")).toBe("nosniff");
});

test("the page renders its operations under that CSP with no violation", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  const violations: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
  });
  await page.goto(`${server.base}/api/docs`);
  // Scalar fetches the document from this origin and renders its title and its tags' sections.
  await page.getByRole("heading", { name: "corpadmin" }).first().waitFor({ timeout: 30_000 });
  await page.getByRole("heading", { name: "Authentication" }).first().waitFor({ timeout: 30_000 });
  await shot(page, "docs-page");
  expect(violations).toEqual([]);
  await context.close();
}, 60_000);
