// The console's customer page, the phone layout and Portuguese, in a real browser against the
// compiled binary (CONSOLE_E2E_SOURCE=1: the source server).
// source-only: it builds and drives dist/corpadmin itself. SQLite only (not in test/pg-backend.txt).
import { afterAll, beforeAll, expect } from "bun:test";
import type { Page } from "playwright-core";
import { startResponder } from "../../support/coa-harness";
import { waitFor } from "../../support/wait";
import { api, axeViolations, CORP, shot, uiLogin, newPage as openPage, openConsole, browserTest as test, BROWSER_RUNS } from "../../support/console";

const { server, browser, token, call, accounting: nasRecord } = await openConsole();
let responder: Awaited<ReturnType<typeof startResponder>>;
let person: { id: string };
let contract: { id: string; number: string };
const SECRET = "nas-secret-cust-1";

const post = (path: string, body: unknown) => call("POST", path, body);

/** An accounting record from the NAS stand-in (127.0.0.1), as FreeRADIUS would post it. */
async function accounting(status: "Start" | "Interim-Update" | "Stop", username: string, sessionId: string, ip: string, octets = { input: 123456, output: 9876543 }) {
  await nasRecord(SECRET, { "Acct-Status-Type": status, "User-Name": username, "Acct-Session-Id": sessionId, "Framed-IP-Address": ip, "Acct-Input-Octets": octets.input, "Acct-Output-Octets": octets.output });
}

beforeAll(async () => {
  if (!BROWSER_RUNS) return;
  responder = await startResponder(SECRET, () => ({ code: "Disconnect-ACK" }));
  const city = await post("/api/city", { name: "Campinas", state: "SP", country: "BR" });
  person = await post("/api/person", { name: "João da Silva", doc_identity: "12345678909", tp_doc_identity: "CPF", email: "joao@example.com", phone: "+55 19 99999-0000" });
  contract = await post("/api/contract", { number: "C-2001", customer_id: person.id, start_date: "2026-01-01", total_value: 1234.56, contract_stage: "INSTALLED", address: { line1: "Rua das Flores, 10", district: "Centro", city_id: city.id } });
  await post(`/api/contract/${contract.id}/config`, { username: "joao.silva", max_download: "300M", max_upload: "150M", pool_name_ipv4: "clientes" });
  await post("/api/contract", { number: "C-2002", customer_id: person.id, start_date: "2025-06-01", total_value: 79.9, contract_status: "SUSPENDED", address: { line1: "Rua B, 20", city_id: city.id } });
  const layout = await post("/api/isp/layout", { name: "Default" });
  const pop = await post("/api/isp/pop", { name: "POP Centro" });
  await post("/api/isp/pop", { name: "POP Norte" });
  await post("/api/isp/nas", { name: "bras-centro", ip: "127.0.0.1", secret: SECRET, coa_port: responder.port, layout_id: layout.id, pop_id: pop.id });
  await post("/api/isp/pool", { name: "cgnat-board", version: 4, cidr: "100.64.0.20/31" });
  await post("/api/isp/nas", { name: "bras-quiet", ip: "127.0.0.3", secret: SECRET, layout_id: layout.id });
  await accounting("Start", "joao.silva", "cust-1", "100.64.0.10");
  await accounting("Start", "joao.silva", "cust-0", "100.64.0.11");
  await accounting("Stop", "joao.silva", "cust-0", "100.64.0.11");
  // A rejected login: the wrong password.
  const authorize = await fetch(`${server.base}/api/isp/radius/authorize?username=joao.silva&password=wrong-one&nas_ip=127.0.0.1`, {
    headers: { authorization: `Basic ${Buffer.from(`${CORP.auth_name}:${SECRET}`).toString("base64")}` },
  });
  expect(authorize.status).toBe(401);
}, 240_000);

afterAll(async () => {
  responder?.stop();
});

async function newPage(opts: { phone?: boolean; lang?: "en" | "pt-BR"; dark?: boolean } = {}): Promise<Page> {
  const page = await openPage(browser, opts);
  return page;
}

test("customer page: the person, their contracts, online now with a live duration, recent sessions and rejected logins; kicking a session makes it leave", async () => {
  const page = await newPage();
  await uiLogin(page, server.base);
  // From the persons list, a row leads to the customer page.
  await page.goto(`${server.base}/console/persons`);
  await page.getByRole("link", { name: "João da Silva" }).click();
  await page.waitForURL(/\/console\/customers\/[0-9a-f-]{36}$/);
  await page.getByRole("heading", { name: "João da Silva", level: 1 }).waitFor();
  const online = page.locator("section", { has: page.getByRole("heading", { name: "Online now" }) });
  await online.getByRole("cell", { name: "100.64.0.10" }).waitFor();
  expect(await online.getByRole("link", { name: "C-2001" }).count()).toBe(1);
  expect(await online.getByRole("cell", { name: "bras-centro" }).count()).toBe(1);
  // The contracts, with status, speeds, pool, address and money in the chosen language.
  const card = page.locator("section.card", { has: page.getByRole("heading", { name: /Contract C-2001/ }) });
  expect(await card.textContent()).toContain("↓ 300M ↑ 150M");
  expect(await card.textContent()).toContain("Rua das Flores, 10, Centro, Campinas / SP");
  expect(await card.textContent()).toContain("R$1,234.56");
  expect(await page.locator("section.card", { has: page.getByRole("heading", { name: /Contract C-2002/ }) }).getByText("Suspended", { exact: true }).count()).toBe(1);
  // Recent sessions and the rejected login, by contract number and in words.
  const recent = page.locator("section", { has: page.getByRole("heading", { name: "Recent sessions" }) });
  await recent.getByRole("link", { name: "C-2001" }).waitFor();
  const rejected = page.locator("section", { has: page.getByRole("heading", { name: "Rejected logins" }) });
  await rejected.getByRole("cell", { name: "Wrong password" }).waitFor();
  // The duration counts up while the page stays open.
  const cellText = () => online.locator("td[data-label='Online for']").first().textContent();
  const first = await cellText();
  expect(first).toMatch(/^\d+ min \d\d s$/);
  await page.waitForFunction((before) => (globalThis as any).document.querySelector("td[data-label='Online for']")?.textContent !== before, first);
  for (const dark of [false, true]) {
    await page.emulateMedia({ colorScheme: dark ? "dark" : "light" });
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, `customer-${dark ? "dark" : "light"}`);
  }
  await page.emulateMedia({ colorScheme: "light" });
  // Kick the session: the NAS stand-in gets the Disconnect-Request and the row leaves once the
  // NAS's Stop arrives.
  await online.getByRole("button", { name: "Disconnect" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Confirm" }).click();
  await page.getByText("Disconnect acknowledged by the NAS after 1 attempt(s).").waitFor();
  expect(responder.received.length).toBe(1);
  await accounting("Stop", "joao.silva", "cust-1", "100.64.0.10");
  await page.reload();
  await online.getByText("Not online.").waitFor();
  expect(await recent.getByRole("link", { name: "C-2001" }).count()).toBe(2);
  await page.context().close();
}, 90_000);

test("customer page: each contract's traffic in its usage cycle (chart and table), and one history of the person and their contracts", async () => {
  for (const variant of [{ lang: "en" as const }, { lang: "pt-BR" as const, dark: true }, { lang: "pt-BR" as const, phone: true }]) {
    const page = await newPage(variant);
    await uiLogin(page, server.base);
    await page.goto(`${server.base}/console/customers/${person.id}`);
    const pt = variant.lang === "pt-BR";
    const card = page.locator("section.card", { has: page.getByRole("heading", { name: pt ? /Contrato C-2001/ : /Contract C-2001/ }) });
    // The accounting records of the set-up: about 10 MB (decimal GB, as allowances are) in the cycle.
    await card.getByText(pt ? "Tráfego no ciclo de uso" : "Traffic in the usage cycle").waitFor();
    await card.getByText(pt ? /^0,0\d GB \(sem franquia\)$/ : /^0\.0\d GB \(no allowance\)$/).waitFor();
    expect(await card.locator("caption", { hasText: pt ? "Tráfego do contrato C-2001 no ciclo" : "Traffic of contract C-2001 in the cycle" }).count()).toBe(1);
    // The timeline: the person's creation and both contracts', the connection settings, by whom.
    const history = page.locator("section", { has: page.getByRole("heading", { name: pt ? "Histórico do cliente e dos seus contratos" : "History of the customer and their contracts" }) });
    await history.getByRole("link", { name: pt ? "Pessoa: João da Silva" : "Person: João da Silva" }).first().waitFor();
    expect(await history.getByRole("link", { name: pt ? "Contrato: C-2001" : "Contract: C-2001" }).count()).toBeGreaterThanOrEqual(2);
    expect(await history.getByRole("link", { name: pt ? "Contrato: C-2002" : "Contract: C-2002" }).count()).toBeGreaterThanOrEqual(1);
    expect(await history.getByText(pt ? "Configuração de conexão" : "Connection settings").count()).toBeGreaterThanOrEqual(1);
    // Money as money, in the chosen language's way.
    expect(await history.textContent()).toMatch(pt ? /Valor total: R\$\s1\.234,56/ : /Total value: R\$1,234\.56/);
    if (!variant.phone) expect(await axeViolations(page)).toEqual([]);
    await shot(page, `customer-usage-history-${variant.lang}${variant.dark ? "-dark" : ""}${variant.phone ? "-phone" : ""}`);
    await page.context().close();
  }
}, 120_000);

test("top-bar search: `/` focuses it; a CPF typed with punctuation and two name words in another order find the customer; arrows and Enter open the page", async () => {
  for (const variant of [{ lang: "en" as const }, { lang: "pt-BR" as const, phone: true }]) {
    const page = await newPage(variant);
    await uiLogin(page, server.base);
    await page.goto(`${server.base}/console/contracts`);
    await page.getByRole("heading", { level: 1 }).first().waitFor();
    await page.keyboard.press("/");
    const box = page.locator("#top-search");
    expect(await box.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
    await page.keyboard.type("123.456.789-09");
    const list = page.getByRole("listbox");
    await list.getByRole("option", { name: /João da Silva/ }).first().waitFor();
    // Two words, in another order, without the accent: the person and their contracts.
    await box.fill("silva joao");
    await list.getByRole("option", { name: /C-2001/ }).waitFor();
    expect(await list.getByRole("option", { name: /João da Silva/ }).first().getAttribute("aria-selected")).toBe("true");
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, `search-box-${variant.lang}${variant.phone ? "-phone" : ""}`);
    await page.keyboard.press("Enter");
    await page.waitForURL(new RegExp(`/console/customers/${person.id}$`));
    await page.getByRole("heading", { name: "João da Silva", level: 1 }).waitFor();
    // Nothing found says so; Escape closes the list.
    await box.fill("zzzz-nobody");
    await list.getByText(variant.lang === "pt-BR" ? "Nada encontrado." : "Nothing found.").waitFor();
    await page.keyboard.press("Escape");
    expect(await page.getByRole("listbox").count()).toBe(0);
    await page.context().close();
  }
}, 120_000);

test("customer page actions: change the speed, suspend and activate, edit the address; amounts typed as 1.234,56", async () => {
  const page = await newPage({ lang: "pt-BR" });
  await uiLogin(page, server.base);
  await page.goto(`${server.base}/console/customers/${person.id}`);
  const card = page.locator("section.card", { has: page.getByRole("heading", { name: /Contrato C-2001/ }) });
  await card.getByText("R$ 1.234,56").waitFor();
  await card.getByText("Alterar velocidade").click();
  await card.getByLabel("Download máx.").fill("500M");
  await card.getByRole("button", { name: "Aplicar velocidade" }).click();
  await card.getByText("↓ 500M ↑ 150M").waitFor();
  expect((await api(server.base, "GET", `/api/contract/${contract.id}`, undefined, token)).body.config.max_download).toBe("500M");
  await card.getByRole("button", { name: "Suspender" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Confirmar" }).click();
  await card.getByText("Suspenso", { exact: true }).waitFor();
  await card.getByRole("button", { name: "Ativar" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Confirmar" }).click();
  await card.getByText("Ativo", { exact: true }).waitFor();
  await card.getByText("Editar endereço").click();
  await card.getByLabel(/^Endereço/).first().fill("Rua Nova, 99");
  await card.getByRole("button", { name: "Salvar" }).click();
  await card.getByText(/Rua Nova, 99/).first().waitFor();
  // The contract's edit form takes an amount typed the Brazilian way.
  await page.goto(`${server.base}/console/contracts/${contract.id}`);
  const value = page.getByLabel(/^Valor total/);
  expect(await value.inputValue()).toBe("1.234,56");
  await value.fill("2.345,67");
  await page.locator("form", { has: value }).getByRole("button", { name: "Salvar" }).click();
  await page.getByText("Salvo").first().waitFor();
  expect((await api(server.base, "GET", `/api/contract/${contract.id}`, undefined, token)).body.total_value).toBe(2345.67);
  await shot(page, "customer-contract-pt");
  await page.context().close();
}, 90_000);

test("phone (390×844): a menu button opens the drawer, a choice closes it, lists are cards", async () => {
  for (const lang of ["en", "pt-BR"] as const) {
    for (const dark of [false, true]) {
      const page = await newPage({ phone: true, lang, dark });
      await uiLogin(page, server.base);
      const menu = page.getByRole("button", { name: "Menu" });
      await menu.waitFor();
      const nav = page.getByRole("navigation", { name: lang === "en" ? "Main menu" : "Menu principal" });
      expect(await nav.isVisible()).toBe(false);
      // Nothing wider than the screen.
      expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await menu.click();
      expect(await menu.getAttribute("aria-expanded")).toBe("true");
      const box = await nav.boundingBox();
      expect(box!.width).toBeGreaterThan(300);
      await shot(page, `phone-menu-${lang}-${dark ? "dark" : "light"}`);
      await nav.getByRole("link", { name: lang === "en" ? "Contracts" : "Contratos" }).click();
      await page.waitForURL(/\/console\/contracts$/);
      expect(await nav.isVisible()).toBe(false);
      const firstCell = page.locator("tbody td").first();
      await firstCell.waitFor();
      // A card: the cell is led by its column's name, the table head is hidden.
      expect(await firstCell.getAttribute("data-label")).toBe(lang === "en" ? "Number" : "Número");
      expect((await page.locator("thead").boundingBox())!.height).toBeLessThanOrEqual(1);
      expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await shot(page, `phone-contracts-${lang}-${dark ? "dark" : "light"}`);
      await page.goto(`${server.base}/console/customers/${person.id}`);
      await page.getByRole("heading", { name: "João da Silva", level: 1 }).waitFor();
      await page.locator("section.card").nth(2).waitFor();
      expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      expect(await axeViolations(page)).toEqual([]);
      await shot(page, `phone-customer-${lang}-${dark ? "dark" : "light"}`);
      await page.context().close();
    }
  }
}, 120_000);

test("pt-BR: the server's messages arrive in Portuguese (an in-use delete, a duplicate, Elysia's field errors), never in English", async () => {
  const page = await newPage({ lang: "pt-BR" });
  await uiLogin(page, server.base);
  const english = /\b(The|is|used|already|exists|Expected|Required|property|string|value|union|must)\b/;
  // A city used by an address cannot be deleted: said as an in-use case, not a conflict.
  const city = (await api(server.base, "GET", "/api/city?q=Campinas", undefined, token)).body.items[0];
  await page.goto(`${server.base}/console/cities/${city.id}`);
  await page.getByRole("button", { name: "Excluir" }).click();
  await page.getByRole("dialog").getByRole("button", { name: /Excluir|Confirmar/ }).click();
  const inUse = page.getByRole("dialog").getByRole("alert");
  await inUse.waitFor();
  expect(await inUse.textContent()).toBe("Está em uso por outros registros: remova esses usos antes.");
  await page.keyboard.press("Escape");
  // A duplicate.
  await page.goto(`${server.base}/console/cities/new`);
  await page.getByLabel(/^Nome/).fill("Campinas");
  await page.getByLabel(/^Estado/).fill("SP");
  await page.getByLabel(/^País/).fill("BR");
  await page.getByRole("button", { name: "Criar" }).click();
  const duplicate = page.locator("form [role=alert]").first();
  await duplicate.waitFor();
  expect(await duplicate.textContent()).toBe("Já existe um registro com o mesmo nome ou identificador.");
  // Elysia's own messages (a wrong type, a missing property) next to their fields.
  const bad = await api(server.base, "POST", "/api/isp/pool", { name: "x", version: 4, cidr: "not-a-cidr" }, token);
  expect(bad.status).toBe(400);
  await page.goto(`${server.base}/console/pools/new`);
  await page.getByLabel(/^Nome/).fill("p1");
  await page.getByLabel(/^CIDR/).fill("não é faixa");
  await page.getByRole("button", { name: "Criar" }).click();
  await page.locator(".field-error").first().waitFor();
  const errors = await page.locator("form").innerText();
  expect(errors).not.toMatch(english);
  await shot(page, "pt-server-messages");
  await page.context().close();
}, 60_000);

test("online board: who is online by customer and contract, filters in the URL, kick a selection", async () => {
  await accounting("Start", "joao.silva", "board-1", "100.64.0.21");
  await accounting("Start", "C-2002", "board-2", "100.64.0.22");
  const page = await newPage();
  await uiLogin(page, server.base);
  await page.getByRole("navigation", { name: "Main menu" }).getByRole("link", { name: "Online now" }).click();
  await page.waitForURL(/\/console\/online$/);
  const row = (ip: string) => page.locator("tbody tr", { has: page.getByRole("cell", { name: ip }) });
  await row("100.64.0.21").waitFor();
  expect(await row("100.64.0.21").getByRole("link", { name: "João da Silva" }).count()).toBe(1);
  expect(await row("100.64.0.21").getByRole("link", { name: "C-2001" }).count()).toBe(1);
  // A suspended contract that is online stands out.
  expect(await row("100.64.0.22").getByText("Suspended").count()).toBe(1);
  // Another client's accounting shows without a reload: a Start appears, an interim update's
  // traffic replaces the row's, a Stop makes it leave.
  await page.evaluate(() => ((globalThis as any).boardNotReloaded = true));
  await accounting("Start", "joao.silva", "board-live", "100.64.0.23");
  await row("100.64.0.23").waitFor({ timeout: 10_000 });
  const traffic = () => row("100.64.0.23").locator("td[data-label='Traffic']").textContent();
  const trafficBefore = await traffic();
  await accounting("Interim-Update", "joao.silva", "board-live", "100.64.0.23", { input: 7_000_000, output: 80_000_000 });
  await waitFor("the interim update's traffic on the board", async () => (await traffic()) !== trafficBefore, 10_000);
  expect(await traffic()).toMatch(/↓ 76[.,]3 MiB/);
  await accounting("Stop", "joao.silva", "board-live", "100.64.0.23", { input: 7_000_000, output: 80_000_000 });
  await row("100.64.0.23").waitFor({ state: "detached", timeout: 10_000 });
  // A contract reactivated, then suspended again, elsewhere: its flag follows (the realtime
  // socket's contract events).
  const suspended = (await api(server.base, "GET", "/api/contract?q=C-2002", undefined, token)).body.items[0];
  const statusBody = (status: string) => ({ number: suspended.number, customer_id: suspended.customer.id, start_date: "2025-06-01", total_value: 79.9, contract_status: status, address: { line1: suspended.address.line1, city_id: suspended.address.city.id } });
  expect((await api(server.base, "PUT", `/api/contract/${suspended.id}`, statusBody("ACTIVE"), token)).status).toBe(200);
  await row("100.64.0.22").getByText("Suspended").waitFor({ state: "detached", timeout: 10_000 });
  expect((await api(server.base, "PUT", `/api/contract/${suspended.id}`, statusBody("SUSPENDED"), token)).status).toBe(200);
  await row("100.64.0.22").getByText("Suspended").waitFor({ timeout: 10_000 });
  expect(await page.evaluate(() => (globalThis as any).boardNotReloaded)).toBe(true);
  for (const dark of [false, true]) {
    await page.emulateMedia({ colorScheme: dark ? "dark" : "light" });
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, `online-${dark ? "dark" : "light"}`);
  }
  // What needs an operator: the suspended contract online, a user name rejected again and again.
  const warnings = page.getByRole("region", { name: "Needs attention" });
  await warnings.getByText("Contract C-2002 is Suspended but C-2002 is online.").waitFor();
  expect(await warnings.getByRole("link", { name: "Open the contract" }).getAttribute("href")).toMatch(/\/console\/contracts\//);
  for (let i = 0; i < 5; i++) {
    const res = await fetch(`${server.base}/api/isp/radius/authorize?username=joao.silva&password=wrong-${i}&nas_ip=127.0.0.1`, {
      headers: { authorization: `Basic ${Buffer.from(`${CORP.auth_name}:${SECRET}`).toString("base64")}` },
    });
    expect(res.status).toBe(401);
  }
  await page.getByRole("button", { name: "Refresh" }).click();
  await warnings.getByText(/joao\.silva: \d+ rejected logins in the last 15 minutes\./).waitFor();
  expect(await warnings.getByRole("link", { name: "See the attempts" }).getAttribute("href")).toContain("q=joao.silva");
  // A NAS whose records stop: quiet after two of the interim intervals it announced (1 s here).
  const quietStart = await fetch(`${server.base}/api/isp/radius/accounting`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Basic ${Buffer.from(`${CORP.auth_name}:${SECRET}`).toString("base64")}` },
    body: JSON.stringify({ "NAS-IP-Address": "127.0.0.3", "Acct-Status-Type": "Start", "User-Name": "quiet.user", "Acct-Session-Id": "quiet-1", "Acct-Interim-Interval": 1 }),
  });
  expect(quietStart.status).toBe(204);
  await Bun.sleep(2500);
  await page.getByRole("button", { name: "Refresh" }).click();
  await warnings.getByText("NAS bras-quiet is quiet: no accounting records lately.").waitFor();
  expect(await warnings.getByRole("link", { name: "Open the NAS" }).getAttribute("href")).toMatch(/\/console\/nas\//);
  // POP, pool and network state narrow the board; each is kept in the URL.
  await page.getByLabel("Pool", { exact: true }).selectOption({ label: "cgnat-board (100.64.0.20/31)" });
  await page.waitForURL(/pool_id=/);
  await row("100.64.0.22").waitFor({ state: "detached" });
  await row("100.64.0.21").waitFor();
  await page.getByLabel("Network", { exact: true }).selectOption({ label: "Normal" });
  await page.waitForURL(/network=normal/);
  await row("100.64.0.21").waitFor();
  await page.reload();
  await row("100.64.0.21").waitFor();
  expect(await page.getByLabel("Pool", { exact: true }).inputValue()).not.toBe("");
  expect(await page.getByLabel("Network", { exact: true }).inputValue()).toBe("normal");
  await page.getByLabel("POP", { exact: true }).selectOption({ label: "POP Norte" });
  await page.waitForURL(/pop_id=/);
  await page.getByText("Nobody is online.").waitFor();
  await page.goto(`${server.base}/console/online`);
  await row("100.64.0.22").waitFor();
  await page.getByLabel("NAS", { exact: true }).selectOption({ label: "bras-centro" });
  await page.waitForURL(/nas_id=/);
  await row("100.64.0.21").waitFor();
  const n = await page.locator("tbody tr").count();
  expect(n).toBeGreaterThanOrEqual(2);
  const before = responder.received.length;
  await page.getByLabel("Select every session").check();
  await page.getByRole("button", { name: `Disconnect ${n} selected` }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Confirm" }).click();
  await page.getByText(/joao\.silva: Disconnect acknowledged by the NAS/).waitFor();
  expect(responder.received.length).toBe(before + n);
  await page.context().close();
  const phone = await newPage({ phone: true, lang: "pt-BR" });
  await uiLogin(phone, server.base);
  await phone.goto(`${server.base}/console/online`);
  await phone.getByRole("heading", { name: "Conectados agora" }).waitFor();
  await phone.locator("tbody tr").first().waitFor();
  expect(await phone.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await shot(phone, "phone-online-pt-BR-light");
  await phone.emulateMedia({ colorScheme: "dark" });
  expect(await axeViolations(phone)).toEqual([]);
  await shot(phone, "phone-online-pt-BR-dark");
  await phone.context().close();
}, 90_000);
