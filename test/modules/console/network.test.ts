// The console's side of fair use, staged suspension and trust unblock, in a real browser against
// the compiled binary (CONSOLE_E2E_SOURCE=1: the source server): the network state on the customer
// page (a contract throttled by real accounting), the trust-unblock button, the allowance form,
// and the network policy screen, in English and Portuguese, light and dark, at phone width.
// source-only: it builds and drives dist/corpadmin itself. SQLite only (not in test/pg-backend.txt).
import { beforeAll, expect } from "bun:test";
import { api, axeViolations, newPage, shot, uiLogin, openConsole, browserTest as test, BROWSER_RUNS } from "../../support/console";

const { server, browser, call, accounting: nasRecord } = await openConsole();
let person: { id: string };
let throttled: { id: string; number: string };
let suspended: { id: string; number: string };
const SECRET = "nas-secret-network-ui";

async function accounting(status: string, time: number, bytes: number) {
  await nasRecord(SECRET, {
    "Acct-Status-Type": status,
    "User-Name": "maria.fair",
    "Acct-Session-Id": "fair-1",
    "Acct-Session-Time": time,
    "Acct-Input-Octets": bytes % 2 ** 32,
    "Acct-Input-Gigawords": Math.floor(bytes / 2 ** 32),
    "Event-Timestamp": Math.floor(Date.now() / 1000),
  });
}

beforeAll(async () => {
  if (!BROWSER_RUNS) return;
  const city = await call("POST", "/api/city", { name: "Sorocaba", state: "SP", country: "BR" });
  person = await call("POST", "/api/person", { name: "Maria Franquia", doc_identity: "98765432100", tp_doc_identity: "CPF" });
  throttled = await call("POST", "/api/contract", { number: "F-3001", customer_id: person.id, start_date: "2026-01-01", total_value: 99.9, address: { line1: "Rua A, 1", city_id: city.id } });
  // 2 GB allowed a cycle; the session below carries 5 GB.
  await call("POST", `/api/contract/${throttled.id}/config`, { username: "maria.fair", max_download: "300M", max_upload: "100M", allowance_gb: 2, throttle_max_download: "5M", throttle_max_upload: "2M" });
  suspended = await call("POST", "/api/contract", { number: "F-3002", customer_id: person.id, start_date: "2025-06-01", total_value: 59.9, contract_status: "SUSPENDED", suspension_date: "2026-11-20", address: { line1: "Rua B, 2", city_id: city.id } });
  await call("PUT", "/api/isp/policy", { suspended_mode: "reduce", suspended_max_download: "1M", suspended_max_upload: "512k", trust_unblock_days: 3 });
  const layout = await call("POST", "/api/isp/layout", { name: "Default" });
  await call("POST", "/api/isp/nas", { name: "bras-norte", ip: "127.0.0.1", secret: SECRET, layout_id: layout.id });
  await accounting("Start", 0, 0);
  await accounting("Interim-Update", 300, 5_000_000_000);
  for (let i = 0; (await call("GET", `/api/contract/${throttled.id}`)).network.state !== "throttled"; i++) {
    if (i > 100) throw new Error("the contract was not throttled within 20 s");
    await Bun.sleep(200);
  }
}, 240_000);

test("customer page: a throttled contract says so with its allowance; a suspended one gets a trust unblock from its button", async () => {
  const page = await newPage(browser);
  await uiLogin(page, server.base);
  await page.goto(`${server.base}/console/customers/${person.id}`);
  const card = page.locator("section.card", { has: page.getByRole("heading", { name: /Contract F-3001/ }) });
  await card.locator(".badge", { hasText: "Throttled" }).waitFor();
  await card.getByText(/^Throttled \(over its allowance\) since /).waitFor();
  await card.getByText("5 GB of 2 GB (250%)").waitFor();
  const other = page.locator("section.card", { has: page.getByRole("heading", { name: /Contract F-3002/ }) });
  await other.getByText(/^Suspended since .*\. Online at reduced speed \(↓ 1M ↑ 512k\)\.$/).waitFor();
  await shot(page, "network-customer-en");
  await other.getByRole("button", { name: "Trust unblock" }).click();
  await page.getByRole("dialog").getByText(/as active for 3 days/).waitFor();
  await page.getByRole("dialog").getByRole("button", { name: "Confirm" }).click();
  await other.getByText(/^Trust unblock given until /).waitFor();
  await other.locator(".badge", { hasText: "Trust unblock" }).waitFor();
  expect(await other.getByRole("button", { name: "Trust unblock" }).count()).toBe(0);
  expect((await call("GET", `/api/contract/${suspended.id}`)).network.state).toBe("trusted");
  expect(await axeViolations(page)).toEqual([]);
  await shot(page, "network-customer-trusted-en");
  await page.context().close();
});

test("Portuguese, dark and phone: the network state in words, no English, and the second trust unblock refused in Portuguese", async () => {
  for (const variant of [{ lang: "pt-BR" as const, dark: true }, { lang: "pt-BR" as const, phone: true }]) {
    const page = await newPage(browser, variant);
    await uiLogin(page, server.base);
    await page.goto(`${server.base}/console/customers/${person.id}`);
    const card = page.locator("section.card", { has: page.getByRole("heading", { name: /Contrato F-3001/ }) });
    await card.locator(".badge", { hasText: "Velocidade reduzida" }).waitFor();
    await card.getByText(/^Velocidade reduzida \(passou da franquia\) desde /).waitFor();
    const other = page.locator("section.card", { has: page.getByRole("heading", { name: /Contrato F-3002/ }) });
    await other.getByText(/^Desbloqueado em confiança até /).waitFor();
    const text = (await page.locator("main").textContent()) ?? "";
    for (const word of ["Throttled", "Trust unblock", "suspended", "allowance", "network"]) expect(text).not.toContain(word);
    await shot(page, `network-customer-pt${variant.dark ? "-dark" : ""}${variant.phone ? "-phone" : ""}`);
    await page.context().close();
  }
  // A page opened before the grace was given elsewhere (the ERP, through the API): its button's
  // answer is the server's 409, with its dates, in Portuguese.
  const city = (await call("GET", "/api/city")).items[0];
  const third = await call("POST", "/api/contract", { number: "F-3003", customer_id: person.id, start_date: "2025-06-01", total_value: 9.9, contract_status: "SUSPENDED", address: { line1: "Rua C, 3", city_id: city.id } });
  const page = await newPage(browser, { lang: "pt-BR" });
  await uiLogin(page, server.base);
  await page.goto(`${server.base}/console/customers/${person.id}`);
  const thirdCard = page.locator("section.card", { has: page.getByRole("heading", { name: /Contrato F-3003/ }) });
  await thirdCard.getByRole("button", { name: "Desbloquear em confiança" }).waitFor();
  await call("POST", `/api/contract/${third.id}/trust-unblock`);
  await thirdCard.getByRole("button", { name: "Desbloquear em confiança" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Confirmar" }).click();
  await page.getByText(/^Este contrato já teve o desbloqueio em confiança em \d\d\/\d\d\/\d{4}; o próximo é possível a partir de \d\d\/\d\d\/\d{4}\.$/).waitFor();
  await shot(page, "network-trust-refused-pt");
  await page.context().close();
}, 120_000);

test("online board: a throttled contract's session carries the network state", async () => {
  const page = await newPage(browser);
  await uiLogin(page, server.base);
  await page.goto(`${server.base}/console/online`);
  const row = page.locator("tr", { has: page.getByRole("link", { name: "maria.fair" }) });
  await row.waitFor();
  expect((await call("GET", `/api/contract/${throttled.id}`)).network.state).toBe("throttled");
  await row.locator(".badge", { hasText: "Throttled" }).waitFor();
  await page.context().close();
});

test("the allowance form on the customer page: a 400 on its field, then saved", async () => {
  const page = await newPage(browser, { lang: "pt-BR" });
  await uiLogin(page, server.base);
  await page.goto(`${server.base}/console/customers/${person.id}`);
  const card = page.locator("section.card", { has: page.getByRole("heading", { name: /Contrato F-3001/ }) });
  await card.getByText("Franquia (uso justo)").click();
  await card.getByLabel(/^Franquia \(GB por ciclo\)/).fill("250");
  await card.getByLabel(/^Download acima da franquia/).fill("");
  await card.getByRole("button", { name: "Salvar franquia" }).click();
  await card.locator("[aria-invalid=true]").first().waitFor();
  expect(await card.getByLabel(/^Download acima da franquia/).getAttribute("aria-invalid")).toBe("true");
  await card.getByLabel(/^Download acima da franquia/).fill("10M");
  await card.getByRole("button", { name: "Salvar franquia" }).click();
  await card.getByText("Salvo").waitFor();
  const saved = await call("GET", `/api/contract/${throttled.id}`);
  expect(saved.config).toMatchObject({ allowance_gb: 250, throttle_max_download: "10M", throttle_max_upload: "2M" });
  // Raised above the usage: fair use restores it within seconds.
  for (let i = 0; (await call("GET", `/api/contract/${throttled.id}`)).network.state !== "normal"; i++) {
    if (i > 100) throw new Error("not restored within 20 s");
    await Bun.sleep(200);
  }
  await page.context().close();
}, 60_000);

test("network policy screen: the modes explained, a 400 placed on its field, saved; Portuguese, dark, phone", async () => {
  const page = await newPage(browser);
  await uiLogin(page, server.base);
  await page.goto(`${server.base}/console/network-policy`);
  await page.getByRole("heading", { name: "Network policy", level: 1 }).waitFor();
  await page.getByText("The customer stays online at the speeds below.").waitFor();
  const mode = page.getByLabel(/^What a suspended contract gets/);
  expect(await mode.inputValue()).toBe("reduce");
  await mode.selectOption("redirect");
  await page.getByLabel(/^Notice pool \(IPv4\)/).fill("");
  await page.getByRole("button", { name: "Save" }).click();
  await page.locator("[aria-invalid=true]").first().waitFor();
  expect(await page.getByLabel(/^Notice pool \(IPv4\)/).getAttribute("aria-invalid")).toBe("true");
  await page.getByLabel(/^Notice pool \(IPv4\)/).fill("aviso");
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByText("Network policy saved. Suspended customers online get the new values now.").waitFor();
  expect((await call("GET", "/api/isp/policy")).suspended_mode).toBe("redirect");
  expect(await axeViolations(page)).toEqual([]);
  await shot(page, "network-policy-en");
  await page.context().close();
  for (const variant of [{ lang: "pt-BR" as const, dark: true }, { lang: "pt-BR" as const, phone: true }]) {
    const pt = await newPage(browser, variant);
    await uiLogin(pt, server.base);
    await pt.goto(`${server.base}/console/network-policy`);
    await pt.getByRole("heading", { name: "Política de rede", level: 1 }).waitFor();
    await pt.getByText(/O cliente recebe um endereço do pool de aviso/).waitFor();
    expect(await pt.getByLabel(/^O que um contrato suspenso recebe/).inputValue()).toBe("redirect");
    const text = (await pt.locator("main").textContent()) ?? "";
    for (const word of ["Network", "policy", "suspended", "Save", "contract.effective"]) expect(text).not.toContain(word);
    await shot(pt, `network-policy-pt${variant.dark ? "-dark" : ""}${variant.phone ? "-phone" : ""}`);
    await pt.context().close();
  }
}, 90_000);
