// The console's operations screens (issue 32): NAS health and its RFC 5176 test against a NAS
// stand-in, the background jobs with Run now, the doctor, the history of changes; in a real
// browser against the compiled binary (CONSOLE_E2E_SOURCE=1: the source server), light and dark,
// English and pt-BR, desktop and phone.
// source-only: it builds and drives dist/corpadmin itself. SQLite only (not in test/pg-backend.txt).
import { afterAll, beforeAll, expect } from "bun:test";
import type { Page } from "playwright-core";
import { startResponder } from "../../support/coa-harness";
import { freeUdpPort } from "../../support/freeradius-harness";
import { api, axeViolations, shot, uiLogin, newPage as openPage, openConsole, browserTest as test, BROWSER_RUNS } from "../../support/console";

const { server, browser, token, call, accounting: nasRecord } = await openConsole();
let responder: Awaited<ReturnType<typeof startResponder>>;
let person: { id: string };
let nas: { id: string };
let quietNas: { id: string };
let city: { id: string };
const SECRET = "nas-secret-ops-1";

const post = (path: string, body: unknown) => call("POST", path, body);

/** An accounting Start from the NAS stand-in (127.0.0.1), as FreeRADIUS would post it. */
async function accountingStart(username: string, sessionId: string, ip: string) {
  await nasRecord(SECRET, { "Acct-Status-Type": "Start", "User-Name": username, "Acct-Session-Id": sessionId, "Framed-IP-Address": ip });
}

beforeAll(async () => {
  if (!BROWSER_RUNS) return;
  // The NAS stand-in NAKs the test's made-up session with Error-Cause 503, as a real NAS does.
  responder = await startResponder(SECRET, () => ({ code: "Disconnect-NAK", attributes: [{ name: "Error-Cause", value: 503 }] }));
  city = await post("/api/city", { name: "Campinas", state: "SP", country: "BR" });
  person = await post("/api/person", { name: "João da Silva", doc_identity: "12345678909", tp_doc_identity: "CPF" });
  const contract = await post("/api/contract", { number: "C-3001", customer_id: person.id, start_date: "2026-01-01", total_value: 99.9, address: { line1: "Rua das Flores, 10", city_id: city.id } });
  await post(`/api/contract/${contract.id}/config`, { username: "joao.silva" });
  const layout = await post("/api/isp/layout", { name: "Default" });
  nas = await post("/api/isp/nas", { name: "bras-centro", ip: "127.0.0.1", secret: SECRET, coa_port: responder.port, layout_id: layout.id });
  // Nothing answers there: a NAS dropping what a wrong secret signed looks the same.
  quietNas = await post("/api/isp/nas", { name: "bras-norte", ip: "127.0.0.2", secret: SECRET, coa_port: await freeUdpPort() });
  await accountingStart("joao.silva", "ops-1", "100.64.0.10");
  await accountingStart("visitante", "ops-2", "100.64.0.11");
}, 240_000);

afterAll(async () => {
  responder?.stop();
});

async function newPage(opts: { phone?: boolean; lang?: "en" | "pt-BR"; dark?: boolean } = {}): Promise<Page> {
  const page = await openPage(browser, opts);
  await uiLogin(page, server.base);
  return page;
}

async function settle(page: Page) {
  await page.locator("#page-title").waitFor();
  await page.waitForFunction(() => !(globalThis as any).document.querySelector("[aria-busy=true]"));
}

/** axe in light and dark, screenshots of both. */
async function checkA11y(page: Page, name: string) {
  for (const dark of [false, true]) {
    await page.emulateMedia({ colorScheme: dark ? "dark" : "light" });
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, `${name}-${dark ? "dark" : "light"}`);
  }
  await page.emulateMedia({ colorScheme: "light" });
}

/** The Portuguese screen: no dictionary key of these screens and none of their English texts. */
async function portugueseOnly(page: Page, screen: string) {
  const text = await page.evaluate(() => {
    const clone = (globalThis as any).document.body.cloneNode(true);
    clone.querySelectorAll("code, select option").forEach((e: any) => e.remove());
    return clone.innerText as string;
  });
  expect(`${screen}: ${/\b(nas|jobs|doctor|history|ops|conflict)\.[a-zA-Z][\w.-]*/.exec(text)?.[0] ?? ""}`).toBe(`${screen}: `);
  for (const english of ["Health", "Online sessions", "Test", "Run now", "Schedule", "Last error", "Next run", "Failure", "Warning", "Check", "What to do", "Created", "Updated", "Deleted", "Record type", "Changes", "never", "ago", "the", "and", "is", "not", "Expected"]) {
    expect(`${screen}: ${new RegExp(`\\b${english}\\b`).exec(text)?.[0] ?? ""}`).toBe(`${screen}: `);
  }
}

test("NAS list: health badge, online count and last accounting; the NAS page: online sessions linked to the customer, the test button's NAK 503 and timeout explained", async () => {
  const page = await newPage();
  await page.goto(`${server.base}/console/nas`);
  await settle(page);
  const row = page.locator("tr", { has: page.getByRole("link", { name: "bras-centro" }) });
  expect(await row.locator("td[data-label='Health']").textContent()).toBe("OK");
  expect(await row.locator("td[data-label='Online']").textContent()).toBe("2");
  expect(await row.locator("td[data-label='Last accounting']").textContent()).toMatch(/^(now|\d+ seconds? ago)$/);
  const quiet = page.locator("tr", { has: page.getByRole("link", { name: "bras-norte" }) });
  expect(await quiet.locator("td[data-label='Health']").textContent()).toBe("No records yet");
  expect(await quiet.locator("td[data-label='Last accounting']").textContent()).toBe("never");
  await checkA11y(page, "ops-nas-list");
  // Filtered by health (the server's ?health), kept in the URL.
  await page.getByLabel("Health").selectOption({ label: "No records yet" });
  await page.waitForURL(/health=unknown/);
  await page.waitForFunction(() => (globalThis as any).document.querySelectorAll("tbody tr").length === 1);
  expect(await page.getByRole("link", { name: "bras-norte" }).count()).toBe(1);
  await page.getByLabel("Health").selectOption({ label: "All" });
  await page.waitForFunction(() => (globalThis as any).document.querySelectorAll("tbody tr").length === 2);

  await row.getByRole("link", { name: "bras-centro" }).click();
  await page.waitForURL(/\/console\/nas\/[0-9a-f-]{36}$/);
  const sessions = page.locator("section", { has: page.getByRole("heading", { name: "Online sessions" }) });
  await sessions.getByRole("cell", { name: "100.64.0.10" }).waitFor();
  // A session with a contract leads to its customer's page; one without shows none.
  const customer = sessions.getByRole("link", { name: "João da Silva · C-3001" });
  expect(await customer.getAttribute("href")).toBe(`/console/customers/${person.id}`);
  expect(await sessions.locator("tr", { hasText: "visitante" }).locator("td[data-label='Customer']").textContent()).toBe("—");

  await page.getByRole("button", { name: "Test", exact: true }).click();
  await page.getByText(/^The NAS answered NAK with Error-Cause 503 \(session not found\) in \d+ ms/).waitFor();
  const result = page.locator("#nas-test-result");
  expect(await result.textContent()).toContain("Refused (NAK)");
  expect(await result.textContent()).toContain("503");
  expect(responder.received.length).toBe(1);
  expect(responder.received[0].attributes.find((a) => a.name === "User-Name")?.value).toBe("corpadmin-nas-test");
  await checkA11y(page, "ops-nas-detail");
  const phone = await newPage({ phone: true });
  await phone.goto(page.url());
  await settle(phone);
  await phone.getByRole("button", { name: "Test", exact: true }).click();
  await phone.getByText(/Error-Cause 503/).first().waitFor();
  await shot(phone, "ops-nas-detail-phone");
  await phone.context().close();

  // A NAS that never answers: the test times out and says why that usually is.
  await page.goto(`${server.base}/console/nas/${quietNas.id}`);
  await settle(page);
  await page.getByRole("button", { name: "Test", exact: true }).click();
  await page.getByText(/^No answer within \d+ ms: usually a wrong secret/).waitFor({ timeout: 30_000 });
  await page.context().close();

  // In Portuguese.
  const pt = await newPage({ lang: "pt-BR" });
  await pt.goto(`${server.base}/console/nas/${nas.id}`);
  await settle(pt);
  await pt.getByRole("button", { name: "Testar", exact: true }).click();
  await pt.getByText(/^O NAS respondeu NAK com causa 503/).waitFor();
  await portugueseOnly(pt, "/nas/detail");
  await shot(pt, "ops-nas-detail-pt-BR");
  await pt.goto(`${server.base}/console/nas`);
  await settle(pt);
  await portugueseOnly(pt, "/nas");
  await shot(pt, "ops-nas-list-pt-BR");
  await pt.context().close();
}, 120_000);

test("jobs: every job with schedule, last run and next run; Run now starts one and its last start changes", async () => {
  const page = await newPage();
  await page.goto(`${server.base}/console/jobs`);
  await settle(page);
  const row = page.locator("tr", { has: page.getByRole("rowheader", { name: /NAS health/ }) });
  expect(await row.locator("td[data-label='Schedule']").textContent()).toBe("every 60 s");
  const before = await row.locator("td[data-label='Last started'] time").getAttribute("datetime");
  expect(before).toMatch(/^\d{4}-/);
  await page.getByRole("button", { name: "Run now: NAS health" }).click();
  await page.getByText("NAS health started.").waitFor();
  await page.waitForFunction(
    (b) => {
      const time = [...(globalThis as any).document.querySelectorAll("tr")].find((tr: any) => tr.textContent.includes("NAS health"))?.querySelector("td[data-label='Last started'] time");
      return time && time.getAttribute("datetime") !== b;
    },
    before,
    { timeout: 15_000 },
  );
  await page.waitForFunction(() => [...(globalThis as any).document.querySelectorAll("tr")].find((tr: any) => tr.textContent.includes("NAS health"))?.querySelector("td[data-label='Outcome']")?.textContent === "Succeeded");
  // The server agrees.
  const jobs = (await api(server.base, "GET", "/api/system/jobs", undefined, token)).body.items as { name: string; last_started_at: string }[];
  expect(jobs.find((j) => j.name === "nas-health")!.last_started_at > before!).toBe(true);
  await checkA11y(page, "ops-jobs");
  await page.context().close();

  const pt = await newPage({ lang: "pt-BR" });
  await pt.goto(`${server.base}/console/jobs`);
  await settle(pt);
  expect(await pt.locator("tr", { hasText: "Saúde dos NAS" }).locator("td[data-label='Agenda']").textContent()).toBe("a cada 60 s");
  await portugueseOnly(pt, "/jobs");
  await shot(pt, "ops-jobs-pt-BR");
  await pt.context().close();
  const phone = await newPage({ phone: true });
  await phone.goto(`${server.base}/console/jobs`);
  await settle(phone);
  await shot(phone, "ops-jobs-phone");
  await phone.context().close();
  // The cards' labels at phone width, in Portuguese and dark.
  const ptPhone = await newPage({ phone: true, lang: "pt-BR", dark: true });
  await ptPhone.goto(`${server.base}/console/jobs`);
  await settle(ptPhone);
  await portugueseOnly(ptPhone, "/jobs");
  await shot(ptPhone, "ops-jobs-pt-BR-phone-dark");
  await ptPhone.context().close();
}, 120_000);

test("doctor: each check with its status, what was found and what to do; run again", async () => {
  const page = await newPage();
  await page.goto(`${server.base}/console/doctor`);
  await settle(page);
  const checks = (await api(server.base, "GET", "/api/system/doctor", undefined, token)).body.checks as { name: string; status: string }[];
  expect(await page.locator("tbody tr").count()).toBe(checks.length);
  const dataDir = page.locator("tr", { has: page.getByRole("rowheader", { name: "Data directory" }) });
  const status = checks.find((c) => c.name === "data-dir")!.status;
  expect(await dataDir.locator("td[data-label='Status'] .badge").textContent()).toBe({ ok: "OK", warn: "Warning", fail: "Failure" }[status]!);
  await page.getByRole("rowheader", { name: "Database integrity" }).waitFor();
  await page.getByRole("button", { name: "Run the checks again" }).click();
  await settle(page);
  expect(await page.locator("tbody tr").count()).toBe(checks.length);
  await checkA11y(page, "ops-doctor");
  await page.context().close();

  const pt = await newPage({ lang: "pt-BR" });
  await pt.goto(`${server.base}/console/doctor`);
  await settle(pt);
  await pt.getByRole("rowheader", { name: "Integridade dos bancos" }).waitFor();
  await portugueseOnly(pt, "/doctor");
  await shot(pt, "ops-doctor-pt-BR");
  await pt.context().close();
  const phone = await newPage({ phone: true });
  await phone.goto(`${server.base}/console/doctor`);
  await settle(phone);
  await shot(phone, "ops-doctor-phone");
  await phone.context().close();
}, 120_000);

test("history: a few edits appear with who, the record's name and link, the action and before → after; filters; the record screen's History section", async () => {
  const product = await post("/api/product", { identity: "FIBRA-500", name: "Fibra 500M", price: 129.9 });
  expect((await api(server.base, "PUT", `/api/city/${city.id}`, { name: "Campinas Norte", state: "SP", country: "BR" }, token)).status).toBe(200);
  expect((await api(server.base, "DELETE", `/api/product/${product.id}`, undefined, token)).status).toBe(204);

  const page = await newPage();
  await page.goto(`${server.base}/console/history`);
  await settle(page);
  const update = page.locator("tbody tr", { has: page.getByRole("link", { name: "City: Campinas Norte" }) }).filter({ hasText: "Updated" });
  expect(await update.count()).toBe(1);
  expect(await update.getByRole("link", { name: "City: Campinas Norte" }).getAttribute("href")).toBe(`/console/cities/${city.id}`);
  expect((await update.locator("td[data-label='Changes']").textContent())!.replace(/\s+/g, " ")).toContain("Name: Campinas → Campinas Norte");
  expect(await update.locator("td[data-label='Who']").textContent()).toBe("admin");
  // A deleted record keeps its name from the change, without a link to a screen that is gone.
  const deleted = page.locator("tbody tr", { hasText: "Product: Fibra 500M" }).filter({ hasText: "Deleted" });
  expect(await deleted.count()).toBe(1);
  expect(await deleted.getByRole("link", { name: /Product/ }).count()).toBe(0);
  // A reference by the name of the record it names.
  const nasCreated = page.locator("tbody tr", { has: page.getByRole("link", { name: "NAS: bras-centro" }) }).filter({ hasText: "Created" });
  expect(await nasCreated.locator("td[data-label='Changes']").textContent()).toContain("Layout: Default");
  await checkA11y(page, "ops-history");

  // Filters go to the URL and the server.
  await page.getByLabel("Action").selectOption("delete");
  await page.getByRole("button", { name: "Filter", exact: true }).click();
  await page.waitForURL(/action=delete/);
  await settle(page);
  await page.waitForFunction(() => [...(globalThis as any).document.querySelectorAll("tbody td[data-label='Action']")].every((td: any) => td.textContent === "Deleted"));
  expect(await page.locator("tbody tr").count()).toBe(1);
  await page.getByLabel("Record type").selectOption("city");
  await page.getByLabel("Action").selectOption("");
  await page.getByRole("button", { name: "Filter", exact: true }).click();
  await page.waitForURL(/target_type=city/);
  await settle(page);
  await page.waitForFunction(() => (globalThis as any).document.querySelectorAll("tbody tr").length === 2);
  // A date range that ends before today: nothing.
  await page.getByLabel("To", { exact: true }).fill("2020-01-01");
  await page.getByRole("button", { name: "Filter", exact: true }).click();
  await page.getByText("No changes.").waitFor();

  // The city's own screen lists its changes.
  await page.goto(`${server.base}/console/cities/${city.id}`);
  await settle(page);
  const own = page.locator("section", { has: page.getByRole("heading", { name: "History", exact: true }) });
  await own.getByText("Campinas Norte").first().waitFor();
  expect(await own.locator("tbody tr").count()).toBe(2);
  await checkA11y(page, "ops-history-record");
  await page.context().close();

  const pt = await newPage({ lang: "pt-BR" });
  await pt.goto(`${server.base}/console/history`);
  await settle(pt);
  await pt.getByRole("link", { name: "Cidade: Campinas Norte" }).first().waitFor();
  await portugueseOnly(pt, "/history");
  await shot(pt, "ops-history-pt-BR");
  await pt.context().close();
  const phone = await newPage({ phone: true });
  await phone.goto(`${server.base}/console/history`);
  await settle(phone);
  await shot(phone, "ops-history-phone");
  await phone.context().close();
}, 120_000);
