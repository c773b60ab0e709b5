// The published OpenAPI document as integrators use it: valid for redocly's recommended rules,
// named schemas, security and problem responses on every operation, method-like operation ids,
// and a typed client (openapi-typescript + openapi-fetch, examples/integrating) that compiles and
// works against the app.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openapiTypes } from "../../../scripts/openapi-types";
import { OPERATION_IDS, operationIdOf } from "../../../src/modules/system/openapi-publish";
import { makeApp, startAndLogin, ADMIN, type TestApp } from "../../support/helpers";

const root = join(import.meta.dir, "../../..");
let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await makeApp();
  doc = (await t.req("GET", "/api/openapi.json")).body;
});
afterAll(() => t.close());

const operations = () =>
  Object.entries<any>(doc.paths).flatMap(([path, methods]) => Object.entries<any>(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })));

/**
 * Warnings that are right for this API: a public operation with no parameter and no body has no
 * client error to answer (GET /api/health); a redirect (302) or a WebSocket upgrade (101, which
 * the generator cannot declare; 426 without it) has no 2xx.
 */
function accepted(rule: string, op: any): boolean {
  if (rule === "operation-4xx-response") return op?.security?.length === 0 && !op.parameters?.length && !op.requestBody;
  if (rule === "operation-2xx-response") return Object.keys(op?.responses ?? {}).some((s) => /^3\d\d$/.test(s) || s === "426");
  return false;
}

test("redocly lint (recommended rules, redocly.yaml) reports no error, and only the accepted warnings", () => {
  const dir = mkdtempSync(join(tmpdir(), "corpadmin-redocly-"));
  try {
    const file = join(dir, "openapi.json");
    writeFileSync(file, JSON.stringify(doc));
    const run = Bun.spawnSync([process.execPath, join(root, "node_modules/.bin/redocly"), "lint", file, "--config", join(root, "redocly.yaml"), "--format", "json"], {
      cwd: dir,
      // Offline: no telemetry, no update check.
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_UPDATE_NOTIFIER: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const report = JSON.parse(run.stdout.toString());
    const problems = (report.problems as any[]).map((p) => {
      const pointer: string = p.location?.[0]?.pointer ?? "";
      const [, path, method] = pointer.match(/^#\/paths\/([^/]+)\/([a-z]+)/) ?? [];
      const where = path ? `${method.toUpperCase()} ${path.replace(/~1/g, "/").replace(/~0/g, "~")}` : pointer;
      const op = path ? doc.paths[path.replace(/~1/g, "/").replace(/~0/g, "~")]?.[method] : undefined;
      return { severity: p.severity as string, text: `${p.ruleId} ${where}`, message: p.message as string, accepted: accepted(p.ruleId, op) };
    });
    expect(problems.filter((p) => p.severity === "error")).toEqual([]);
    expect(problems.filter((p) => !p.accepted)).toEqual([]);
    // Today: health, the QR redirect and the socket.
    expect(problems.map((p) => p.text)).toContain("operation-4xx-response GET /api/health");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test("resources are named schemas, referenced from the operations; recursion resolves", () => {
  const schemas = doc.components.schemas;
  for (const name of ["Contract", "ContractPage", "Party", "Address", "City", "Person", "Product", "Metric", "Webhook", "Delivery", "Credentials", "Problem", "MenuNode"]) {
    expect(schemas[name]).toBeDefined();
  }
  expect(schemas.MenuNode.properties.children.items).toEqual({ $ref: "#/components/schemas/MenuNode" });
  // Copies made before the schemas were named (t.Optional at module load, t.Recursive's clone).
  expect(schemas.PopInput.properties.address).toEqual({ $ref: "#/components/schemas/AddressInput" });
  expect(schemas.MenuNode.properties.actions.items).toEqual({ $ref: "#/components/schemas/Action" });
  expect(doc.paths["/api/contract/{id}"].get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Contract" });
  expect(doc.paths["/api/contract"].get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ContractPage" });
  // `Party | null` stays nullable.
  expect(schemas.Contract.properties.agent).toEqual({ anyOf: [{ $ref: "#/components/schemas/Party" }, { type: "null" }] });
  // Every reference resolves, and no TypeBox $id is left to rebase them.
  const text = JSON.stringify(doc);
  for (const [, name] of text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) expect(schemas[name]).toBeDefined();
  expect(text).not.toContain('"$id"');
});

/**
 * Every component schema the document publishes, by name: a schema exported from a model.ts is
 * published (system/openapi-schemas.ts), and a client generated from the document gains or loses
 * a type with it. Adding or removing one is a change of the API: update this list with it.
 */
const PUBLISHED_SCHEMAS = [
  "Action", "ActionInput", "Address", "AddressExternalInput", "AddressInput", "AllReport", "Bucket",
  "BucketList", "Change", "ChangeCorpBody", "ChangePage", "City", "CityExternalInput", "CityInput", "CityPage", "CityRef",
  "CityWithIdentity", "Classification", "ClassificationInput", "ClassificationPage", "Contract",
  "ContractConfig", "ContractConfigInput", "ContractExternalInput", "ContractInput", "ContractItem",
  "ContractItemInput", "ContractNetwork", "ContractPage", "ContractUsage", "ContractWithIdentity", "ContractWithIdentityPage",
  "CorpCheck", "CorpCheckBody", "CorpTree", "CorpUpdate", "Corporation", "CorporationInput", "CorporationPage",
  "Credentials", "DatabaseCheck", "DatabaseUpdate", "Delivery", "DeliveryPage", "ExternalApp",
  "ExternalAppInput", "ExternalAppPage", "ExternalAppWithKey", "ExternalIdentity", "ExternalLink",
  "ExternalLinkInput", "Feature", "FeatureInput", "FeatureList", "FeaturePage", "FeatureUpload", "FlagsBody",
  "FlagsResponse", "ItemsBody", "ItemsResponse", "Layout", "LayoutAttributeInput", "LayoutInput", "LayoutPage",
  "LayoutVariable", "LayoutVariableList", "LoginBody", "Manufacturer", "ManufacturerInput", "ManufacturerPage",
  "Menu", "MenuInput", "MenuNode", "MenuNodeList", "Metric", "MetricInput", "MetricPage", "MetricValue",
  "MetricValueInput", "MetricValuePage", "Nas", "NasCreateInput", "NasPage", "NasTestResult", "NasUpdateInput", "NetworkPolicy", "NetworkPolicyInput", "Note",
  "NoteInput", "NotePage", "OidcExchangeBody", "OidcLinkBody", "Party", "PartyExternalInput", "PasswordChange",
  "Permissions", "Person", "PersonInput", "PersonPage", "PersonWithIdentity", "PersonWithIdentityPage", "Pool",
  "PoolInput", "PoolPage", "PoolUsage", "Pop", "PopInput", "PopPage", "Problem", "Product", "ProductInput",
  "ProductPage", "QrAccess", "QrAccessPage", "QrCampaign", "QrCampaignInput", "QrCampaignPage", "QrCategory",
  "QrCategoryInput", "QrCategoryPage", "QrCode", "QrCodeInput", "QrCodePage", "QrLogo", "QrLogoInput",
  "RadiusAttribute", "RadiusAttributeInput", "RadiusAttributePage", "RecoverBody", "RecoverResult", "Rendered",
  "Report", "ResetBody", "ResetKeyBody", "SafeIpBody", "SafeIpRange", "SafeIpRangePage", "Server",
  "ServerInput", "ServerPage", "Service", "ServiceInput", "ServicePage", "ServiceWithFeatures", "TablesResult",
  "TwoFactorDisableBody", "TwoFactorEnableBody", "TwoFactorSecret", "UsageCycle", "UsagePeriod", "UsageRow",
  "UsageRowPage", "User", "UserCreate", "UserPage", "UserUpdate", "Versions", "Webhook", "WebhookAlter",
  "WebhookCreate", "WebhookPage", "WebhookWithSecret", "Workgroup", "WorkgroupInput", "WorkgroupPage",
];

test("the component schemas are exactly the pinned set", () => {
  const published = Object.keys(doc.components.schemas);
  const added = published.filter((name) => !PUBLISHED_SCHEMAS.includes(name)).sort();
  const removed = PUBLISHED_SCHEMAS.filter((name) => !published.includes(name));
  const message =
    `component schemas changed: added [${added.join(", ")}], removed [${removed.join(", ")}]; ` +
    "if that is meant, update PUBLISHED_SCHEMAS in test/modules/system/openapi.test.ts";
  expect({ added, removed }, message).toEqual({ added: [], removed: [] });
  expect(PUBLISHED_SCHEMAS, "PUBLISHED_SCHEMAS is kept sorted").toEqual([...PUBLISHED_SCHEMAS].sort());
});

test("every operation: a unique method-like operationId, a tag, security, problem responses", () => {
  const ids = new Map<string, string>();
  const tags = new Set(doc.tags.map((tag: { name: string }) => tag.name));
  for (const { path, method, op } of operations()) {
    const where = `${method} ${path}`;
    expect([where, op.operationId]).toEqual([where, expect.stringMatching(/^[a-z][A-Za-z0-9]*\.[a-z][A-Za-z0-9]*$/)]);
    expect([where, ids.get(op.operationId)]).toEqual([where, undefined]);
    ids.set(op.operationId, where);
    expect(op.tags.every((tag: string) => tags.has(tag))).toBe(true);
    expect(Array.isArray(op.security)).toBe(true);
    // Guarded operations name the guard's schemes; the others are public.
    if (op["x-corpadmin-guard"]) {
      expect(op.security).toEqual(op["x-corpadmin-guard"].key ? [{ bearer: [] }, { apiKey: [] }] : [{ bearer: [] }]);
      for (const status of ["401", "403"]) expect([where, op.responses[status]]).toEqual([where, expect.anything()]);
    }
    if (path.includes("{")) expect([where, op.responses["404"]]).toEqual([where, expect.anything()]);
    if (op.requestBody) for (const status of ["400", "413", "415"]) expect([where, op.responses[status]]).toEqual([where, expect.anything()]);
    for (const [status, response] of Object.entries<any>(op.responses)) {
      if (Number(status) < 400 || status === "426") continue;
      const resolved = response.$ref ? doc.components.responses[response.$ref.split("/").pop()] : response;
      expect([where, status, resolved.content]).toEqual([where, status, { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } }]);
    }
  }
  for (const scheme of ["bearer", "apiKey", "nasBasic"]) expect(doc.components.securitySchemes[scheme]).toBeDefined();
  expect(doc.paths["/api/isp/radius/authorize"].get.security).toEqual([{ nasBasic: [] }, { apiKey: [] }]);
  expect(doc.paths["/api/login"].post.security).toEqual([]);
  expect(doc.paths["/api/login"].post.responses["429"]).toBeDefined();
  expect(doc.paths["/api/contract/create/externalapp/name/{externalAppName}"].post.operationId).toBe("contract.upsertFromExternalAppByName");
  expect(doc.servers).toEqual([{ url: "/", description: expect.any(String) }]);
  expect(doc.info.license.name).toBeTruthy();
});

test("every operationId override names an existing operation", () => {
  const missing = Object.keys(OPERATION_IDS).filter((key) => {
    const [method, path] = key.split(" ");
    return doc.paths[path]?.[method.toLowerCase()]?.operationId !== OPERATION_IDS[key];
  });
  expect(missing).toEqual([]);
});

test("the operationId rule reads as method names", () => {
  expect(operationIdOf("GET", "/api/contract", true)).toBe("contract.list");
  expect(operationIdOf("GET", "/api/contract/{id}", false)).toBe("contract.get");
  expect(operationIdOf("PUT", "/api/contract/{id}/inactive", false)).toBe("contract.deactivate");
  expect(operationIdOf("GET", "/api/contract/externalapp/name/{externalAppName}/identity/{identity}", false)).toBe("contract.getByExternalAppNameAndIdentity");
  expect(operationIdOf("POST", "/api/corp/{id}/user/{userId}", false)).toBe("corp.addUser");
  expect(operationIdOf("DELETE", "/api/webhook/{id}/group/{group}", false)).toBe("webhook.removeGroup");
  expect(operationIdOf("PUT", "/api/isp/nas/{id}", false)).toBe("isp.updateNas");
  expect(operationIdOf("POST", "/api/webhook/{id}/deliveries/{deliveryId}/resend", false)).toBe("webhook.resendDelivery");
  expect(operationIdOf("GET", "/api/metric/name/{name}/history", false)).toBe("metric.getHistoryByName");
  expect(operationIdOf("POST", "/api/isp/radius/sessions/{id}/disconnect", false)).toBe("isp.disconnectRadiusSession");
  expect(operationIdOf("GET", "/api/isp/nas/{id}", false)).toBe("isp.getNas");
});

test("openapi-typescript generates from the document; the README's client type-checks and works", async () => {
  const types = await openapiTypes(doc);
  expect(types).toContain("ContractWithIdentityPage");
  writeFileSync(join(root, "examples/integrating/api.d.ts"), types);
  const tsc = Bun.spawnSync([join(root, "node_modules/.bin/tsc"), "-p", join(root, "examples/integrating/tsconfig.json")], { cwd: root, stdout: "pipe", stderr: "pipe" });
  expect(tsc.stdout.toString() + tsc.stderr.toString()).toBe("");
  expect(tsc.exitCode).toBe(0);

  // The same client, its requests answered by the app (through t.req, whichever app serves it).
  // Imported by a computed path: its api.d.ts is generated just above, so the project's own
  // type check (which runs before the tests, on a clean clone) must not follow this import.
  const clientModule = "../../../examples/integrating/client";
  const { login, createApp, upsertContract, allContracts } = await import(clientModule);
  const viaTestApp = async (request: Request) => {
    const url = new URL(request.url);
    const raw = request.body ? await request.text() : undefined;
    const res = await t.req(request.method, url.pathname + url.search, { headers: Object.fromEntries(request.headers), raw });
    return new Response(res.text, { status: res.status, headers: res.headers });
  };
  const o = { baseUrl: "http://localhost", fetch: viaTestApp };
  await startAndLogin(t);
  const token = await login(o, "acme", ADMIN.login, ADMIN.password);
  const key = await createApp(o, token, "erp");
  for (const identity of ["C-1", "C-2", "C-3"]) expect((await upsertContract(o, key, "erp", identity)).number).toBe(`N-${identity}`);
  expect((await allContracts(o, key, "erp", 2)).map((c: { identity: string }) => c.identity)).toEqual(["C-1", "C-2", "C-3"]);
}, 60_000);

test("a new route follows the rules with no extra work: refs, page wrapper, security, problems, operationId", async () => {
  const { publishOpenApi } = await import("../../../src/modules/system/openapi-publish");
  const { Contract, ContractInput } = await import("../../../src/modules/contract/model");
  const { ListOf } = await import("../../../src/lib/schemas");
  const { t: types } = await import("elysia");
  const body = types.Object({ note: types.String(), contract: ContractInput });
  const raw = {
    openapi: "3.1.2",
    info: { title: "x", version: "1" },
    paths: {
      "/api/contract/{id}/notes/{noteId}": {
        post: {
          operationId: "postApiContractByIdNotesByNoteId",
          "x-corpadmin-guard": { guard: "contract", self: null, key: false, tenant: true },
          security: [{ bearer: [] }],
          parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
          requestBody: { required: true, content: {} },
          responses: { "200": { description: "Response for status 200", content: { "application/json": { schema: ListOf(Contract) } } } },
        },
      },
      "/api/ping": { get: { operationId: "getApiPing", responses: {} } },
    },
  };
  const out = publishOpenApi(raw, [{ method: "POST", path: "/api/contract/:id/notes/:noteId", hooks: { body } }]);
  const op = out.paths["/api/contract/{id}/notes/{noteId}"].post;
  expect(op.operationId).toBe("contract.addNote");
  expect(op.tags).toEqual(["Contract"]);
  expect(op.security).toEqual([{ bearer: [] }]);
  expect(op.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ContractPage" });
  expect(op.requestBody.content["application/json"].schema.properties.contract).toEqual({ $ref: "#/components/schemas/ContractInput" });
  expect(Object.keys(op.responses).sort()).toEqual(["200", "400", "401", "403", "404", "409", "413", "415", "503"]);
  const ping = out.paths["/api/ping"].get;
  expect([ping.operationId, ping.security, ping.tags, Object.keys(ping.responses)]).toEqual(["ping.get", [], ["Ping"], ["204"]]);
  expect(Object.keys(out.components.schemas)).toEqual(expect.arrayContaining(["Contract", "ContractPage", "ContractInput", "Party", "Problem"]));
  // The plugin's document (holding the live route schemas) is left as it was.
  expect(raw.paths["/api/contract/{id}/notes/{noteId}"].post.requestBody.content).toEqual({});
});

test("the document says what the service answers: text/csv on every CSV list, enums where the service has them (issue 29)", async () => {
  // Every list that answers CSV documents text/csv beside JSON (a validating proxy accepts it).
  // An app of its own: the one above is started by another test.
  const app = await makeApp();
  const admin = await startAndLogin(app);
  const lists = Object.entries(doc.paths as Record<string, any>).filter(([, item]) => item.get?.parameters?.some((p: any) => p.name === "format" && p.in === "query" && p.schema?.enum?.includes("json")));
  expect(lists.length).toBeGreaterThan(30);
  for (const [path, item] of lists) expect(Object.keys(item.get.responses["200"].content ?? {}), path).toEqual(expect.arrayContaining(["application/json", "text/csv"]));
  // One of them really answers it.
  const csv = await app.fetch("/api/city?format=csv", { headers: { authorization: `Bearer ${admin.token}` } });
  expect(csv.headers.get("content-type")).toContain("text/csv");
  const inline = (s: any): any => (s?.$ref ? doc.components.schemas[s.$ref.split("/").pop()] : s);
  const enumOf = (s: any): string[] => {
    const x = inline(s);
    return x.enum ?? (x.const !== undefined ? [x.const] : (x.anyOf ?? []).flatMap(enumOf));
  };
  expect(enumOf(doc.paths["/api/qrcode/export"].get.parameters.find((p: any) => p.name === "format").schema)).toEqual(["csv"]);
  const create = inline(doc.paths["/api/webhook"].post.requestBody.content["application/json"].schema);
  const groups = create.properties.groups.anyOf.find((s: any) => s.type === "array");
  expect(enumOf(groups.items)).toContain("CONTRACT_AFTER_UPDATE");
  expect(enumOf(groups.items)).toContain("ISP_AFTER_NAS_QUIET");
  // And the service refuses what the document refuses, naming the field.
  const bad = await app.req("POST", "/api/webhook", { token: admin.token, body: { name: "x", target: "https://example.net/h", email: "a@example.net", groups: ["NOT_AN_EVENT"] } });
  expect(bad.status).toBe(400);
  expect(bad.body.errors.map((e: any) => e.path)).toContain("groups.0");
  expect((await app.req("GET", "/api/qrcode/export?format=pdf", { token: admin.token })).status).toBe(400);
  await app.close();
});
