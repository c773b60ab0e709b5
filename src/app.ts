// createApp builds the whole service from its configuration: the context (databases, caches,
// background work) and the Elysia app with every module. Nothing is module-level, so each test
// builds its own app over its own data directory.
import { Elysia, ValidationError } from "elysia";
import type { Config } from "./config";
import { createContext, type AppContext, type ContextOptions } from "./core/context";
import { beginRequest } from "./core/history";
import { corpLookups } from "./modules/corp/service";
import { userFlags } from "./modules/user/service";
import { enabledServiceIds, loadPermissions } from "./modules/workgroup/service";
import { readBounded } from "./lib/bounded-body";
import { MAX_BODY_BYTES } from "./lib/http";
import { jsonShapeProblem } from "./lib/json-limits";
import { allowedMethods } from "./lib/allowed-methods";
import { EdgeRoutes } from "./lib/edge";
import { csvExporter, describeCsvLists } from "./lib/list-csv";
import { embeddedOpenApi } from "./modules/system/embedded-openapi";
import { precompressed } from "./modules/system/precompressed";
import { compressAnswer, encodedFileAnswer } from "./lib/compression";
import { publishedOpenApi, type RouteHooks } from "./modules/system/openapi-publish";
import { newId } from "./lib/ids";
import { FIELD_MESSAGE } from "./lib/schemas";
import {
  internal,
  invalid,
  invalidMany,
  methodNotAllowed,
  notFound,
  payloadTooLarge,
  Problem,
  problemResponse,
  unsupportedMediaType,
  conflict,
  type FieldError,
} from "./lib/problem";
import { auditModule } from "./modules/audit";
import { historyModule } from "./modules/history";
import { authModule } from "./modules/auth";
import { catalogModule } from "./modules/catalog";
import { maintenanceModule } from "./modules/maintenance";
import { notepadModule } from "./modules/notepad";
import { corpModule } from "./modules/corp";
import { serverModule } from "./modules/server";
import { opsModule, recordRequest } from "./modules/ops";
import { ispModule } from "./modules/isp";
import { cityModule } from "./modules/city";
import { externalAppModule } from "./modules/externalapp";
import { personModule } from "./modules/person";
import { classificationModule } from "./modules/classification";
import { productModule } from "./modules/product";
import { contractModule } from "./modules/contract";
import { qrcodeModule } from "./modules/qrcode";
import { metricModule } from "./modules/metric";
import { startModule } from "./modules/start";
import { userModule } from "./modules/user";
import { workgroupModule } from "./modules/workgroup";
import { docsModule, healthModule, operationsRoutes } from "./modules/system";
import { searchModule } from "./modules/search";
import { socketModule } from "./modules/socket";
import { webhookModule } from "./modules/webhook";
import { retentionModule } from "./modules/retention";
import { consoleModule } from "./modules/console";

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

type UnionAwareError = { path?: string; message: string; schema?: { [FIELD_MESSAGE]?: string }; errors?: Iterable<UnionAwareError>[] };

/**
 * A failed union (an optional-or-null object such as `customer.address`) is reported at the
 * union's own path; name the nested field instead, taken from the variant that got furthest. An
 * optional scalar of a kind with its own message (`Opt(Money())`) is reported with that message.
 */
function expandUnions(errors: UnionAwareError[]): UnionAwareError[] {
  const out: UnionAwareError[] = [];
  for (const e of errors) {
    const variants = (e.errors ?? []).map((it) => [...it]);
    const depth = (v: UnionAwareError[]) => Math.max(0, ...v.map((x) => (x.path ?? "").split("/").length));
    const best = variants.filter((v) => v.length > 0).sort((a, b) => depth(b) - depth(a))[0];
    if (best && depth(best) > (e.path ?? "").split("/").length) out.push(...expandUnions(best));
    else out.push(variants.flat().find((x) => x.path === e.path && x.schema?.[FIELD_MESSAGE]) ?? e);
  }
  return out;
}

function queryKeyOf(request: Request, value: unknown): string | null {
  // The value may come back coerced: `1e308` as 1e+308, `1e20` as 100000000000000000000.
  const carried = (v: string) => v === String(value) || (typeof value === "number" && v.trim() !== "" && Number(v) === value);
  const keys = [...new URL(request.url).searchParams].filter(([, v]) => carried(v)).map(([k]) => k);
  return keys.length === 1 ? keys[0] : null;
}

/** Elysia's validation error → 400 naming every bad field by its dotted path. */
function validationProblem(error: ValidationError, request: Request): Problem {
  const seen = new Set<string>();
  // Elysia checks a coerced query number on its own ("property") and forgets its name: find the
  // query parameter that carried the refused value.
  const unnamed = error.type === "property" ? queryKeyOf(request, (error as { value?: unknown }).value) : null;
  const errors: FieldError[] = [];
  for (const e of expandUnions(error.all as UnionAwareError[])) {
    const path = (e.path ?? "").replace(/^\//, "").replace(/\//g, ".").replace(/~1/g, "/").replace(/~0/g, "~") || unnamed || error.type;
    if (seen.has(path)) continue;
    seen.add(path);
    errors.push({ path, message: e.schema?.[FIELD_MESSAGE] ?? e.message });
  }
  return invalidMany(errors.length ? errors : [{ path: error.type, message: "is invalid" }]);
}

const STARTED = Symbol("started");
const REQUEST_ID = Symbol("request id");
type Started = { [STARTED]?: number; [REQUEST_ID]?: string };

/** A body the app refuses before reading it: too large, or not JSON. */
function refusedBody(request: Request, set: { status?: number | string }): Response | undefined {
  const length = request.headers.get("content-length");
  const hasBody = length !== null ? length !== "0" : request.body !== null;
  if (!hasBody) return undefined;
  let refused: Problem | null = null;
  const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (length !== null && Number(length) > MAX_BODY_BYTES) refused = payloadTooLarge(MAX_BODY_BYTES);
  else if (type !== "application/json" && !type.endsWith("+json")) refused = unsupportedMediaType();
  if (!refused) return undefined;
  set.status = refused.status;
  return problemResponse(refused);
}

/**
 * Reads a JSON body with the size limit enforced while reading (chunked bodies have no length),
 * and its nesting and number of values bounded before it is parsed (lib/json-limits.ts). Every
 * body the API takes is a JSON object: anything else is 400 naming `body` (Elysia skips validating
 * an all-optional body that is not an object and would hand `123` to the handler). An empty body
 * is `{}` where every field is optional (POST /api/user/{id}/2fa/enable starts with none), and
 * 400 naming `body` where the route requires a field.
 */
async function readJsonBody(request: Request, required: boolean): Promise<unknown> {
  const missing = () => invalid("body", "is required: a JSON object");
  if (!request.body) {
    if (required) throw missing();
    return {};
  }
  // A declared length (over MAX_BODY_BYTES refused before: refusedBody) bounds the body by HTTP's
  // framing, so it is read whole, without a ReadableStream, its reader and a promise per chunk
  // (measured: ≈ 10 µs less CPU per POST /api/metric/{id}/value, and fewer objects for the GC).
  // A chunked body has no length: the limit is enforced while reading it.
  const declared = request.headers.get("content-length");
  const bytes = declared !== null && Number(declared) <= MAX_BODY_BYTES ? new Uint8Array(await request.arrayBuffer()) : await readBounded(request.body, MAX_BODY_BYTES);
  if (!bytes) throw payloadTooLarge(MAX_BODY_BYTES);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw invalid("body", "is not valid UTF-8");
  }
  if (text.trim() === "") {
    if (required) throw missing();
    return {};
  }
  const tooLarge = jsonShapeProblem(text);
  if (tooLarge) throw tooLarge;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalid("body", `malformed JSON: ${(err as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalid("body", "must be a JSON object");
  return value;
}

export interface AppOptions extends ContextOptions {}

/** What the kernel asks the modules for (corporations, user flags, permissions): the app's, and the CLI's contexts without routes (`corpadmin doctor`, `corpadmin usage rebuild`). */
export const kernelQueries = { corps: corpLookups, userFlags, permissions: { load: loadPermissions, enabledServices: enabledServiceIds } };

/**
 * The context alone: the store and the caches, no module, no route, no background job. For
 * commands that work on the data (corpadmin usage rebuild) without serving it.
 */
export function createDataContext(config: Config, options: AppOptions = {}): AppContext {
  return createContext(config, kernelQueries, options);
}

export function createApp(config: Config, options: AppOptions = {}) {
  const ctx = createContext(config, kernelQueries, options);
  const edge = new EdgeRoutes();
  // The binary carries the document its build generated (the same routes, the same hooks' work):
  // served from Bun's router, the plugin's route behind it is never asked to generate it again.
  // Its brotli and gzip forms were compressed by the build too (src/modules/system/precompressed.ts).
  if (embeddedOpenApi !== null) {
    const document = { identity: new TextEncoder().encode(embeddedOpenApi), ...precompressed?.openapi };
    edge.get("/api/openapi.json", (request) => encodedFileAnswer(request, document, { "content-type": "application/json" }));
  }

  // Which routes need a body (a schema with a required field), read once the modules are mounted:
  // parse runs on every POST/PUT/PATCH/DELETE, and an empty body is `{}` everywhere else.
  let bodyRoutes: Set<string> | null = null;
  const requiresBody = (method: string, route: string) => {
    bodyRoutes ??= new Set(
      app.routes.filter((r) => ((r.hooks.body as { required?: string[] } | undefined)?.required?.length ?? 0) > 0).map((r) => `${r.method} ${r.path}`),
    );
    return bodyRoutes.has(`${method} ${route}`);
  };

  const allowedOn = allowedMethods((): { method: string; path: string }[] => app.routes);

  const requestIdOf = (request: Request) => request.headers.get("x-request-id")?.slice(0, 64) || newId();

  /** The problem document for any error (validation, parse, constraint, unexpected). */
  function problemOf(code: unknown, error: unknown, request: Request): Problem {
    if (error instanceof Problem) return error;
    if (code === "PARSE" && (error as { cause?: unknown }).cause instanceof Problem) return (error as { cause: Problem }).cause;
    if (code === "VALIDATION") {
      const v = error as ValidationError;
      if (v.type === "params") return notFound();
      if (v.type === "response") {
        ctx.logger.error("response failed its schema", { path: new URL(request.url).pathname, error: v.message.slice(0, 2000) });
        return internal();
      }
      return validationProblem(v, request);
    }
    if (code === "PARSE") return invalid("body", "malformed request body");
    if (code === "NOT_FOUND") {
      const allow = allowedOn(new URL(request.url).pathname);
      return allow.length ? methodNotAllowed(request.method, allow) : notFound("Route");
    }
    const sqliteCode = (error as { code?: string } | null)?.code;
    if (sqliteCode === "SQLITE_CONSTRAINT_UNIQUE" || sqliteCode === "SQLITE_CONSTRAINT_PRIMARYKEY") {
      return conflict("A record with the same unique value already exists");
    }
    if (sqliteCode === "SQLITE_CONSTRAINT_FOREIGNKEY") return conflict("The record is still referenced, or references a record that does not exist");
    ctx.logger.error("unexpected error", {
      path: new URL(request.url).pathname,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      stack: error instanceof Error ? error.stack?.split("\n").slice(0, 8).join("\n") : undefined,
    });
    return internal();
  }

  /** After every response: the request metrics, and the access log line when --access-log is on. */
  function finished(request: Request, id: string, at: number, route: string | undefined, status: number): void {
    const ms = performance.now() - at;
    recordRequest(ctx.serviceMetrics, request.method, route, status, ms / 1000);
    // Opt-in: one line per request drowns journald (it rate-limits a unit and drops the warnings and
    // audit lines along with them); the request metrics count every request anyway.
    if (!config.accessLog || ctx.logger.enabled?.("info") === false) return;
    ctx.logger.info("request", {
      request_id: id,
      method: request.method,
      path: new URL(request.url).pathname,
      route,
      status,
      duration_ms: Math.round(ms * 100) / 100,
    });
  }

  const routesOf = (): RouteHooks[] => app.routes as never;
  const csvAnswer = csvExporter((): never => app.routes as never);
  const app = new Elysia({ name: "corpadmin" })
    // The start time and request id ride on the request's context (the object every later hook of
    // the request receives) rather than in a WeakMap keyed by the Request.
    .onRequest(function (c) {
      const { request, set } = c;
      const id = requestIdOf(request);
      // Who the request's writes act for (core/history.ts); the auth guard names the principal.
      beginRequest(id);
      (c as Started)[STARTED] = performance.now();
      (c as Started)[REQUEST_ID] = id;
      set.headers["x-request-id"] = id;
      return BODY_METHODS.has(request.method) ? refusedBody(request, set) : undefined;
    })
    .onParse({ as: "global" }, async ({ request, route }) => readJsonBody(request, requiresBody(request.method, route)))
    .onError({ as: "global" }, ({ code, error, request, set }) => {
      const problem = problemOf(code, error, request);
      set.status = problem.status;
      return problemResponse(problem);
    })
    .onAfterResponse({ as: "global" }, (c) => {
      const { request, set, route } = c;
      const at = (c as Started)[STARTED];
      if (at === undefined) return;
      // A handler that returns a Response (redirects, images, problems) sets its status there.
      const value = (c as { responseValue?: unknown }).responseValue;
      const status = value instanceof Response ? value.status : typeof set.status === "number" ? set.status : 200;
      finished(request, (c as Started)[REQUEST_ID]!, at, route, status);
    })
    // The document the plugin generates, with the publishing rules applied (system/openapi-publish.ts).
    // Written so that Elysia's source-text guess (`return f(` or `=> f(`) does not take it for
    // async: an async after-handle hook costs every request of the app an await (measured: the
    // contract GET fell from 0.33 to 0.23 of the ceiling with `return publishedOpenApi(...)`).
    // Also the CSV form of every list (lib/list-csv.ts), here rather than in hooks of its own.
    // Destructured on purpose: Elysia reads a hook's parameters to decide what every request must
    // parse, and a context taken whole (`(c) => ...`) makes it parse headers, cookies and query of
    // every request (measured: the contract GET at 0.23 of the ceiling instead of 0.35). The CSV
    // export needs the whole context to call the list's handler again: it takes it from
    // `arguments`, which that reading does not see.
    .onAfterHandle({ as: "global" }, function ({ route, response, request }): unknown {
      if (route === "/api/openapi.json") {
        const published = describeCsvLists(publishedOpenApi(response as never, routesOf()), app.routes as never);
        return published;
      }
      if (request.method !== "GET") return;
      const csv = csvAnswer(arguments[0]);
      if (csv !== undefined) return csv;
    })
    .use(docsModule());

  // Elysia guesses from a hook's source text whether to await it (any `return f(...)` counts) and
  // caches the guess on the hook. The request hook above is synchronous: saying so spares every
  // request an await in Elysia's entry function.
  for (const hook of app.event.request ?? []) (hook as { isAsync?: boolean }).isAsync = false;

  // Every answer of the app compressed when the client asks for it and it is large enough
  // (lib/compression.ts): wrapped around Elysia's whole handler (its general fetch, and each route
  // it hands Bun's router), so that problems, 404s and CSV streams are covered by the one rule,
  // after the response schema has cleaned the value. A hook would not do: mapResponse sees the
  // handler's value before that cleaning. Edge routes (lib/edge.ts) are not wrapped.
  // Elysia calls the wrapper per request with the handler it wraps (the general one, or a route's
  // for Bun's router): one compressing function per handler, made at its first request.
  type Handler = (request: Request) => Response | Promise<Response>;
  const compressing = new WeakMap<Handler, Handler>();
  app.wrap(((map: Handler) => {
    let wrapped = compressing.get(map);
    if (!wrapped) compressing.set(map, (wrapped = (request: Request) => compressAnswer(request, map(request))));
    return wrapped;
  }) as never);

  // One line per module: each is an Elysia instance built from the context.
  const modules = [
    healthModule(ctx),
    startModule(ctx),
    authModule(ctx),
    corpModule(ctx),
    catalogModule(ctx),
    serverModule(ctx),
    notepadModule(ctx),
    maintenanceModule(ctx),
    opsModule(ctx),
    operationsRoutes(ctx),
    auditModule(ctx),
    historyModule(ctx),
    externalAppModule(ctx),
    cityModule(ctx),
    personModule(ctx),
    classificationModule(ctx),
    productModule(ctx),
    contractModule(ctx),
    userModule(ctx),
    workgroupModule(ctx),
    webhookModule(ctx),
    socketModule(ctx),
    qrcodeModule(ctx, edge),
    ispModule(ctx, edge),
    metricModule(ctx),
    searchModule(ctx),
    retentionModule(ctx),
    consoleModule(),
  ];
  for (const m of modules) app.use(m);
  // Background work starts once, here, after every module has registered its jobs.
  ctx.jobs.startAll();

  /** Bun.serve routes answered in front of Elysia (src/lib/edge.ts), with the same hooks' work. */
  const serveRoutes = () =>
    edge.bunRoutes({
      begin: requestIdOf,
      finish: finished,
      error: (error, request) => problemResponse(problemOf(undefined, error, request)),
      elysia: (request) => app.handle(request),
    });

  return { app, ctx, serveRoutes };
}

export type App = ReturnType<typeof createApp>["app"];
export type { AppContext };
