// The published OpenAPI document: what the openapi plugin generates from the route schemas, with
// the rules below applied to every operation so that a new route comes out right with no extra
// work. The plugin's output is never modified (it holds the live route schemas); a new document
// is built from it.
//  - request bodies read by the app's own JSON parser get their schema (the plugin cannot see it);
//  - schemas named in openapi-schemas.ts become components.schemas and are referenced; list pages
//    of a named item become `<Item>Page` (`<Item>List` without paging);
//  - operationId: `<resource>.<verb><Words><By...>` (operationIdOf), or OPERATION_IDS, or the
//    route's own `detail.operationId`;
//  - tags: the route's group, or its first path segment;
//  - security: the auth guard's (`x-corpadmin-guard`), or the route's own, else public (`[]`);
//  - problem responses (application/problem+json, the Problem schema) by the conventions of
//    routes.md, and 204 for operations that declare no success response.
import { ProblemSchema } from "../../lib/schemas";
import { SCHEMA_NAME, shapeOf, type NamedSchema } from "./openapi-schemas";

export interface RouteHooks {
  method: string;
  path: string;
  hooks: { body?: unknown };
}

type Json = Record<string, any>;
const REF = "#/components/schemas/";

// No licence is granted with the service: a LicenseRef is SPDX's way to say so.
export const LICENSE = { name: "Proprietary", identifier: "LicenseRef-Proprietary" };

const PATH_NOTE =
  "Where a literal path segment and a parameter could both match (`/api/corp/authname/{authName}` beside `/api/corp/{id}/user`), the literal segment wins.";

/** Descriptions of the route groups (tags); a group not listed is described by its path. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  System: "Health and this document",
  Start: "First start: the super-admin and the first corporation",
  Authentication: "Log in, tokens, external identity providers, safe IP ranges",
  Corporation: "Corporations (tenants), their users and services",
  "Service & Feature": "The catalogue of services, features, actions and the menu",
  Server: "Database servers",
  Core: "Notepad, versions, corporation databases, classifications",
  "External App": "External applications (integrators) and their API keys",
  City: "Cities",
  Person: "Persons (customers, agents)",
  Product: "Products",
  Contract: "Contracts, their items, connection settings and flags",
  User: "Users, workgroups and the realtime socket",
  Webhook: "Webhooks and their deliveries",
  QRCode: "Dynamic QR codes, campaigns, categories, logos and reports",
  ISP: "Network records and the FreeRADIUS rows",
  Metric: "Metrics and their values",
};

export const SECURITY_SCHEMES = {
  bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "The access token of POST /api/login." },
  apiKey: { type: "apiKey", in: "header", name: "X-Api-Key", description: "An external app's key (POST /api/externalapp/{id}/key)." },
  nasBasic: { type: "http", scheme: "basic", description: "FreeRADIUS rows only: `<corporation auth_name>:<NAS secret>`." },
};

const retryAfter = { "Retry-After": { description: "Seconds to wait before trying again", schema: { type: "integer" } } };

/** One shared response per problem status (components.responses), named as its title. */
export const PROBLEM_RESPONSES: Record<string, { name: string; description: string; headers?: Json }> = {
  400: { name: "BadRequest", description: "Invalid input: `errors` names each refused field by its dotted path" },
  401: { name: "Unauthorized", description: "No valid credential" },
  403: { name: "Forbidden", description: "The credential does not allow this (or the corporation is blocked)" },
  404: { name: "NotFound", description: "Unknown id or name (a malformed id included)" },
  409: { name: "Conflict", description: "A unique value is taken, or the record is still referenced" },
  410: { name: "Gone", description: "No longer available" },
  413: { name: "PayloadTooLarge", description: "The request body exceeds the size limit" },
  415: { name: "UnsupportedMediaType", description: "The request body is not application/json" },
  429: { name: "TooManyRequests", description: "Rate limited: retry after Retry-After seconds", headers: retryAfter },
  503: { name: "ServiceUnavailable", description: "The corporation is under maintenance or needs a database update, or a dependency is down", headers: retryAfter },
};

const STATUS_TEXT: Record<string, string> = { 200: "OK", 201: "Created", 202: "Accepted", 204: "No content", 302: "Found", 426: "Upgrade required" };

/** operationIds where the rule reads badly (keyed `METHOD path`). */
export const OPERATION_IDS: Record<string, string> = {
  "GET /q/{slug}": "qrcode.redirect",
  "POST /api/contract/create/externalapp/name/{externalAppName}": "contract.upsertFromExternalAppByName",
  "POST /api/contract/create/externalapp/id/{externalAppId}": "contract.upsertFromExternalAppById",
  "GET /api/isp/radius/authorize": "radius.authorize",
  "POST /api/isp/radius/accounting": "radius.accounting",
  "POST /api/login": "auth.login",
  "DELETE /api/logout": "auth.logout",
  "GET /api/auth/refresh": "auth.refresh",
  "POST /api/auth/corp": "auth.changeCorp",
  "POST /api/start": "start.initialize",
  "GET /api/menu/tree": "menu.getTree",
  "POST /api/service/{id}/features": "service.setFeatures",
  "POST /api/contract/{id}/config": "contract.setConfig",
  "POST /api/contract/{id}/items": "contract.setItems",
  "PATCH /api/contract/{id}/flags": "contract.setFlags",
  "PUT /api/product/{id}/classifications": "product.setClassifications",
  "POST /api/metric/{id}/value": "metric.addValue",
  "POST /api/metric/name/{name}/value": "metric.addValueByName",
  "POST /api/contract/{id}/address": "contract.setAddress",
  "POST /api/person/{id}/address": "person.setAddress",
  "POST /api/contract/{id}/externalapp": "contract.linkExternalApp",
  "POST /api/person/{id}/externalapp": "person.linkExternalApp",
  "POST /api/city/{id}/externalapp": "city.linkExternalApp",
  "POST /api/externalapp/{id}/key": "externalapp.createKey",
  "POST /api/user/{id}/password": "user.changePassword",
  "POST /api/user/password/reset-key": "user.requestPasswordReset",
  "POST /api/user/password/reset": "user.resetPassword",
  "GET /api/user/socket": "user.getSocketTicket",
  "GET /api/socket": "socket.open",
  "POST /api/corp/{id}/needs-update": "corp.markNeedsUpdate",
  "POST /api/corp/{id}/maintenance": "corp.maintenance",
  "POST /api/isp/layout/{id}/attribute": "isp.addLayoutAttribute",
  "GET /api/isp/layout/{id}/render/{contractId}": "isp.renderLayout",
  "GET /api/qrcode/report": "qrcode.getAllReport",
  "GET /api/qrcode/export": "qrcode.export",
  "GET /api/qrcode/{id}/accesses/export": "qrcode.exportAccesses",
  "POST /api/core/database/update/{corpId}": "core.updateDatabaseByCorpId",
};

/** Path segments that name actions rather than sub-resources: `corp.enable`, `user.reset2fa`. */
const ACTIONS = new Set(["enable", "disable", "block", "reset", "check", "exchange", "link", "update", "test", "resend", "recover", "disconnect", "restore"]);

/** Literal segments that say which key the following parameter is: `metric/name/{name}`. */
const LOOKUPS = new Set(["id", "name", "identity", "login", "authname"]);

/** `deliveries` → `delivery`, `sessions` → `session`; `nas`, `status` and `access` stay. */
const singular = (s: string) => s.replace(/ies$/, "y").replace(/sses$/, "ss").replace(/([^aus])s$/, "$1");
const isParam = (s: string) => /^\{.+\}$/.test(s);
const camel = (s: string) => s.replace(/[-_]+([A-Za-z0-9])/g, (_, c: string) => c.toUpperCase());
const pascal = (s: string) => {
  const c = camel(s);
  return c.charAt(0).toUpperCase() + c.slice(1);
};

/**
 * `<resource>.<verb><Words><By...>`: the resource is the first segment after /api; its item id is
 * implied (`contract.get`), as is a sub-collection's (`isp.getNas`); a link to another record is
 * added and removed (`corp.addUser`); `id`/`name`/... before a parameter is a lookup key
 * (`metric.getByName`). Verbs: GET list/get,
 * POST create, PUT update, PATCH patch, DELETE delete; add/remove for a sub-collection's item,
 * activate/deactivate for PUT …/active|inactive, the action for an action segment.
 */
export function operationIdOf(method: string, path: string, isList: boolean): string {
  const segs = path.replace(/^\/api\//, "/").split("/").filter(Boolean);
  const resource = camel(segs[0]);
  const words: string[] = [];
  const by: string[] = [];
  let subItem = false;
  let i = 1;
  if (i < segs.length && isParam(segs[i])) i++;
  for (; i < segs.length; i++) {
    const s = segs[i];
    const next = i + 1 < segs.length && isParam(segs[i + 1]) ? segs[i + 1].slice(1, -1) : null;
    subItem = false;
    if (isParam(s)) {
      by.push(pascal(s.slice(1, -1)));
      continue;
    }
    if (next !== null) {
      const lit = camel(s);
      if (next === "id") {
        // `logo/{id}`: an item of a sub-collection, read and written with the usual verbs.
        words.push(pascal(singular(lit)));
        i++;
        continue;
      }
      if (next === `${singular(lit)}Id`) {
        // `user/{userId}`, `deliveries/{deliveryId}`: one record of a sub-collection; a POST or
        // DELETE on it links or unlinks it.
        words.push(pascal(singular(lit)));
        subItem = true;
        i++;
        continue;
      }
      if (next === lit && !LOOKUPS.has(lit)) {
        // `group/{group}`: the same, keyed by its value.
        words.push(pascal(s));
        subItem = true;
        i++;
        continue;
      }
      if (LOOKUPS.has(lit) || next.toLowerCase().endsWith(lit.toLowerCase())) {
        // `externalapp/id/{externalAppId}`: the parameter already says externalapp.
        const last = words.at(-1);
        if (last && next.toLowerCase().startsWith(last.toLowerCase())) words.pop();
        by.push(pascal(next));
        i++;
        continue;
      }
    }
    words.push(pascal(s));
  }
  const lastSeg = segs.at(-1)!;
  let verb = { GET: isList ? "list" : "get", POST: "create", PUT: "update", PATCH: "patch", DELETE: "delete" }[method] ?? method.toLowerCase();
  if (subItem && (method === "POST" || method === "PUT")) verb = "add";
  else if (subItem && method === "DELETE") verb = "remove";
  else if (method === "PUT" && (lastSeg === "active" || lastSeg === "inactive")) {
    verb = lastSeg === "active" ? "activate" : "deactivate";
    words.pop();
  } else if (method === "POST" && !isParam(lastSeg) && ACTIONS.has(lastSeg) && segs.length > 1) {
    verb = lastSeg;
    words.pop();
  }
  return `${resource}.${verb}${words.join("")}${by.length ? `By${by.join("And")}` : ""}`;
}

const upperFirst = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The plugin's own operationId for a route (so one a route sets itself can be told apart). */
function pluginOperationId(method: string, path: string): string {
  let id = method.toLowerCase();
  for (const seg of path.replace(/\{([^}]+)\}/g, ":$1").split("/"))
    id += seg.includes(":") ? "By" + upperFirst(seg.replace(":", "")) : upperFirst(seg);
  return id;
}

/**
 * Elysia's t.Integer and t.Numeric also accept a numeric string (a query parameter is one):
 * `anyOf: [{type: string, format: integer}, {type: integer}]`. On the wire it is the number.
 */
function wireNumber(node: Json): Json | null {
  const any = node.anyOf;
  if (!Array.isArray(any) || any.length !== 2) return null;
  const text = any.find((s: Json) => s?.type === "string" && (s.format === "integer" || s.format === "numeric"));
  const number = any.find((s: Json) => s?.type === "integer" || s?.type === "number");
  if (!text || !number) return null;
  const { anyOf: _, ...rest } = node;
  return { ...rest, ...number };
}

/** Builds components.schemas while copying schemas into the published document. */
class SchemaWriter {
  readonly schemas: Record<string, Json> = {};

  /** A JSON copy of a schema (or any part of the document) with the named schemas referenced. */
  write(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((n) => this.write(n));
    if (!node || typeof node !== "object") return node;
    const named = (node as { [SCHEMA_NAME]?: NamedSchema })[SCHEMA_NAME];
    if (named && named.shape === shapeOf(node as Json)) {
      if (!(named.name in this.schemas)) {
        this.schemas[named.name] = {}; // placeholder: a recursive schema refers to itself
        this.schemas[named.name] = this.copy(node as Json, true);
      }
      const ref = { $ref: REF + named.name };
      const type = (node as Json).type;
      // `t.Union([Party, t.Null()])`, which the plugin folds into Party's own object.
      return Array.isArray(type) && type.includes("null") ? { anyOf: [ref, { type: "null" }] } : ref;
    }
    return this.page(this.copy(node as Json, false));
  }

  private copy(node: Json, named: boolean): Json {
    const numeric = wireNumber(node);
    if (numeric) return this.copy(numeric, false);
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "$id" && typeof value === "string") continue; // TypeBox's ids would rebase the $refs inside
      if (key === "$ref" && typeof value === "string" && !value.startsWith("#")) out.$ref = REF + value;
      else out[key] = this.write(value);
    }
    // The plugin folds `Named | null` into the named object: the component is the object alone.
    if (named && Array.isArray(out.type)) out.type = out.type.filter((t: string) => t !== "null")[0];
    return out;
  }

  /**
   * A copy of a named schema made before it was named (`t.Optional(AddressInput)` at module load,
   * the clone inside a t.Recursive) carries no name: an inline object equal to a named one
   * becomes its reference. Then list pages of those become `<Item>Page` too.
   */
  referenceCopies(paths: Json): void {
    // Without `additionalProperties`: Elysia sets it in place on a schema it has validated with,
    // so of two copies only one may carry it.
    const content = (schema: unknown) => JSON.stringify(schema, (key, value) => (key === "additionalProperties" ? undefined : value));
    const byContent = new Map<string, string>();
    for (const [name, schema] of Object.entries(this.schemas)) if (!byContent.has(content(schema))) byContent.set(content(schema), name);
    const visit = (node: unknown, root = false): unknown => {
      if (Array.isArray(node)) return node.map((n) => visit(n));
      if (!node || typeof node !== "object") return node;
      const n = node as Json;
      if (!root && n.properties && Object.keys(n.properties).length) {
        const nullable = Array.isArray(n.type) && n.type.length === 2 && n.type.includes("object") && n.type.includes("null");
        const name = byContent.get(content(nullable ? { ...n, type: "object" } : n));
        if (name) return nullable ? { anyOf: [{ $ref: REF + name }, { type: "null" }] } : { $ref: REF + name };
      }
      const out: Json = {};
      for (const [key, value] of Object.entries(n)) out[key] = visit(value);
      return root ? out : this.page(out);
    };
    for (const [name, schema] of Object.entries(this.schemas)) this.schemas[name] = visit(schema, true) as Json;
    for (const [path, methods] of Object.entries(paths)) paths[path] = visit(methods);
  }

  /** `{items: Item[], page, limit, total}` → ItemPage; `{items: Item[]}` → ItemList. */
  page(node: Json): Json {
    const props = node.properties;
    const item = props?.items?.type === "array" ? props.items.items?.$ref : undefined;
    if (typeof item !== "string" || !item.startsWith(REF)) return node;
    const keys = Object.keys(props).sort().join(",");
    const suffix = keys === "items,limit,page,total" ? "Page" : keys === "items" ? "List" : null;
    if (!suffix) return node;
    const name = item.slice(REF.length) + suffix;
    const existing = this.schemas[name];
    if (existing && JSON.stringify(existing) !== JSON.stringify(node)) return node;
    this.schemas[name] = node;
    return { $ref: REF + name };
  }
}

const PROBLEM_SCHEMA_REF = REF + "Problem";

function problemResponse(status: string, used: Set<string>, description?: string): Json {
  const known = PROBLEM_RESPONSES[status];
  if (known && (!description || description === `Response for status ${status}`)) {
    used.add(status);
    return { $ref: `#/components/responses/${known.name}` };
  }
  return { description: description ?? known?.description ?? "Problem", content: { "application/problem+json": { schema: { $ref: PROBLEM_SCHEMA_REF } } } };
}

/** The problem statuses an operation can answer, by routes.md's conventions. */
function problemStatuses(method: string, path: string, op: Json): string[] {
  const guard = op["x-corpadmin-guard"] as { guard: string; tenant: boolean } | undefined;
  const secured = Array.isArray(op.security) && op.security.length > 0;
  const hasQuery = (op.parameters ?? []).some((p: Json) => p.in === "query");
  const out = new Set<string>();
  if (hasQuery || op.requestBody) out.add("400");
  if (secured) out.add("401");
  if (guard) out.add("403");
  if (path.includes("{")) out.add("404");
  if (guard && method !== "GET") out.add("409");
  if (op.requestBody) out.add("413").add("415");
  if (op["x-corpadmin-rate-limited"]) out.add("429");
  if (guard?.tenant) out.add("503");
  return [...out];
}

const tagOf = (path: string) => pascal(path.replace(/^\/api\//, "/").split("/").filter(Boolean)[0] ?? "api");

/** The published document, built from the plugin's (left untouched). */
export function publishOpenApi(raw: Json, routes: RouteHooks[]): Json {
  const bodies = new Map<string, unknown>();
  for (const r of routes) if (r.hooks.body) bodies.set(`${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`, r.hooks.body);
  const writer = new SchemaWriter();
  writer.write(ProblemSchema);
  const used = new Set<string>();
  const paths: Json = {};
  const tags: string[] = [];
  for (const [path, methods] of Object.entries<Json>(raw.paths ?? {})) {
    paths[path] = {};
    for (const [method, rawOp] of Object.entries<Json>(methods)) {
      const M = method.toUpperCase();
      const key = `${M} ${path}`;
      const op: Json = {};
      for (const [k, v] of Object.entries(rawOp)) if (k !== "responses" && k !== "requestBody") op[k] = writer.write(v);
      if (rawOp.requestBody) {
        const content = Object.keys(rawOp.requestBody.content ?? {}).length ? rawOp.requestBody.content : { "application/json": { schema: bodies.get(key) ?? {} } };
        op.requestBody = writer.write({ ...rawOp.requestBody, content });
      }
      const responses: Json = {};
      let isList = false;
      for (const [status, response] of Object.entries<Json>(rawOp.responses ?? {})) {
        const schema = response?.content?.["application/json"]?.schema;
        if (Number(status) >= 400) {
          const declared = response.content ? writer.write(schema) : null;
          if (!response.content || (declared as Json)?.$ref === PROBLEM_SCHEMA_REF) {
            responses[status] = problemResponse(status, used, response.description);
            continue;
          }
        }
        if (status === "200" && schema?.properties?.items?.type === "array") isList = true;
        responses[status] = writer.write(response);
        // The plugin's placeholder ("Response for status 200") says nothing: the status text does.
        if (response.description === `Response for status ${status}` && STATUS_TEXT[status]) responses[status].description = STATUS_TEXT[status];
      }
      if (Object.keys(responses).length === 0) responses["204"] = { description: "No content" };
      if (!rawOp["x-corpadmin-guard"] && !Array.isArray(rawOp.security)) op.security = [];
      for (const status of problemStatuses(M, path, op)) responses[status] ??= problemResponse(status, used);
      op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
      delete op["x-corpadmin-rate-limited"];
      if (!op.tags?.length) op.tags = [tagOf(path)];
      for (const tag of op.tags) if (!tags.includes(tag)) tags.push(tag);
      if (!rawOp.operationId || rawOp.operationId === pluginOperationId(method, path)) op.operationId = OPERATION_IDS[key] ?? operationIdOf(M, path, isList);
      paths[path][method] = op;
    }
  }
  writer.referenceCopies(paths);
  const responses: Json = {};
  for (const [status, r] of Object.entries(PROBLEM_RESPONSES)) {
    if (!used.has(status)) continue;
    responses[r.name] = { description: r.description, ...(r.headers ? { headers: r.headers } : {}), content: { "application/problem+json": { schema: { $ref: PROBLEM_SCHEMA_REF } } } };
  }
  const info = { ...raw.info, description: `${raw.info?.description ?? ""}\n\n${PATH_NOTE}`.trim(), license: LICENSE };
  return {
    openapi: raw.openapi,
    info,
    servers: [{ url: "/", description: "This service (paths start with /api)" }],
    tags: tags.map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? `Operations of ${name}` })),
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(writer.schemas).sort(([a], [b]) => a.localeCompare(b))),
      responses,
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}

const published = new WeakMap<object, Json>();

/** Once per document the plugin generates (it caches its own until the routes change). */
export function publishedOpenApi(raw: Json, routes: RouteHooks[]): Json {
  let doc = published.get(raw);
  if (!doc) published.set(raw, (doc = publishOpenApi(raw, routes)));
  return doc;
}
