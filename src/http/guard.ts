// The auth macro. Every route declares its guard (routes.md, "Notes legend"):
//   { auth: "platform.city" }            permission check for the row's service area
//   { auth: "token" }                    any valid token
//   { auth: "*" }                        platform super-admin only
//   { auth: { guard: "platform.user", self: "id" } }   the user named by :id, or the permission
//   { auth: { guard: "self", self: "id" } }            only the user named by :id
//   { auth: { guard: "platform.contract", key: true } } an external app's X-Api-Key is accepted too
//   { publicAuth: true }                 a public row: 60 requests a minute per client IP
// Authentication runs in `transform`, before schema validation, so a request without a credential
// is 401 whatever its body; the principal is then handed to the handler through `resolve`.
import { actAs } from "../core/history";
import { Elysia } from "elysia";
import type { AppContext } from "../core/context";
import type { Principal } from "../core/principal";
import type { TenantDoor } from "../core/store";
import { isUuid } from "../lib/ids";
import { forbidden, notFound, unauthorized, unavailable } from "../lib/problem";
import type { CorpRow } from "../core/corp-cache";
import { permits, type PermissionSets } from "../core/permissions";

/** Areas whose rows act on the working corporation's database (routes.md, "Tenancy"). */
export const TENANT_AREAS = new Set(["city", "externalapp", "person", "product", "contract", "core", "webhook", "metric", "isp", "qrcode"]);

export type Guard = "token" | "*" | "self" | `platform.${string}`;
export type AuthSpec = Guard | { guard: Guard; self?: string; key?: boolean; tenant?: boolean };

/** The corporation gate (routes.md): BLOCKED 403, MAINTENANCE/NEEDS_UPDATE 503, except for `*`. */
export function corpGate(corp: CorpRow, superAdmin: boolean): void {
  if (corp.status === "ENABLED" || superAdmin) return;
  if (corp.status === "BLOCKED") throw forbidden("The corporation is blocked", "corp-blocked");
  throw unavailable(corp.status === "MAINTENANCE" ? "The corporation is under maintenance" : "The corporation's database needs an update", 300);
}

/** The request id the app set on the response (src/app.ts); null outside a request. */
export function requestIdOf(set: { headers: unknown }): string | null {
  const id = (set.headers as Record<string, unknown>)["x-request-id"];
  return typeof id === "string" ? id : null;
}

/** `localhost:80/api/contract/{id}/active/PUT`: host:port from the Host header, the row's path. */
export function actionOf(request: Request, route: string): string {
  // Runs on every permission check: no URL parse when the Host header is there (it always is
  // over HTTP/1.1), and each route pattern is rewritten once.
  const url = request.url;
  const host = request.headers.get("host") ?? new URL(url).host;
  const withPort = /:\d+$/.test(host) && !host.endsWith("]") ? host : `${host}:${url.startsWith("https:") ? 443 : 80}`;
  let path = routePaths.get(route);
  if (path === undefined) {
    path = route.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    if (routePaths.size < 10_000) routePaths.set(route, path);
  }
  return `${withPort}${path}/${request.method.toUpperCase()}`;
}
const routePaths = new Map<string, string>();

/** An API key's secret: base62 characters, as the external app module issues them. */
export const API_KEY_SECRET_LENGTH = 40;
const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const API_KEY = new RegExp(`^(${UUID})\\.(${UUID})\\.([0-9A-Za-z]{${API_KEY_SECRET_LENGTH}})$`);

/** `<corp id>.<app id>.<secret>` exactly as issued (no extra parts, no other spelling), else null. */
export function parseApiKey(text: string): { corpId: string; appId: string; secret: string } | null {
  const m = API_KEY.exec(text);
  return m ? { corpId: m[1], appId: m[2], secret: m[3] } : null;
}

function normalize(spec: AuthSpec): { guard: Guard; self?: string; key?: boolean; tenant: boolean } {
  const s = typeof spec === "string" ? { guard: spec } : spec;
  const area = s.guard.startsWith("platform.") ? s.guard.slice(9) : null;
  return { ...s, tenant: s.tenant ?? (area !== null && TENANT_AREAS.has(area)) };
}

export function authGuard(ctx: AppContext) {
  const principals = new WeakMap<Request, { principal: Principal; tenant: TenantDoor | null }>();

  async function fromApiKey(header: string, ip: string): Promise<Principal> {
    const key = parseApiKey(header);
    const corp = key ? await ctx.corps.get(key.corpId) : null;
    if (!key || !corp || !ctx.apiKeys) throw unauthorized("Invalid API key");
    corpGate(corp, false);
    const check = await ctx.apiKeys(ctx.store.tenant(corp.id), key.appId, key.secret);
    if (!check) throw unauthorized("Invalid API key");
    if (!check.active) throw forbidden("The external application is inactive");
    actAs(check.name, null, check.appId, corp.id);
    const none: PermissionSets = { admin: new Set(), allow: new Set(), lists: { admin: [], allow: [] }, granted: new Map() };
    return { kind: "key", userId: null, sessionId: null, corpId: corp.id, corp, superAdmin: false, permission: none, externalAppId: check.appId, ip, requestId: null };
  }

  async function fromToken(header: string | null, ip: string): Promise<Principal> {
    if (!header?.toLowerCase().startsWith("bearer ")) throw unauthorized();
    const claims = ctx.sessions.verify(header.slice(7).trim());
    if (!claims) throw unauthorized("The token is invalid or expired");
    const session = await ctx.sessions.live(claims.jti);
    if (!session || session.user_id !== claims.sub || session.corp_id !== claims.corp) throw unauthorized("The session has ended");
    if (!session.user_status) throw unauthorized("The account is inactive");
    ctx.sessions.seen(session.id);
    // Cached rows without an await (every authenticated request comes through here).
    const corp = ctx.corps.peek(session.corp_id) ?? (await ctx.corps.get(session.corp_id));
    if (!corp) throw unauthorized("The corporation no longer exists");
    const superAdmin = session.super_admin === 1;
    actAs(session.user_login, session.user_id, null, corp.id);
    const principal: Principal = {
      kind: "user",
      userId: session.user_id,
      sessionId: session.id,
      corpId: corp.id,
      corp,
      superAdmin,
      permission: ctx.permissions.peek(session.user_id, corp.id, superAdmin) ?? (await ctx.permissions.get(session.user_id, corp.id, superAdmin)),
      externalAppId: null,
      ip,
      requestId: null,
    };
    for (const check of ctx.authChecks) {
      const pending = check(principal);
      if (pending) await pending;
    }
    return principal;
  }

  return new Elysia({ name: "auth-guard" }).macro({
    /** A public row: counted against the per-IP limit before anything else happens. */
    publicAuth: (on: boolean) => ({
      // The published document lists 429 for these rows (system/openapi-publish.ts).
      detail: on ? ({ "x-corpadmin-rate-limited": true } as Record<string, unknown>) : {},
      // In memory the count is synchronous and the hook stays so (Elysia awaits only hooks it
      // finds asynchronous); on storage shared by several nodes it is a database write, awaited.
      transform:
        ctx.tenants.sharedByNodes
          ? async function ({ request, server }) {
              if (on) await ctx.publicAuthLimiter.hit(ctx.clientIp(request, server?.requestIP(request)?.address ?? null));
            }
          : function ({ request, server }) {
              if (on) void ctx.publicAuthLimiter.hit(ctx.clientIp(request, server?.requestIP(request)?.address ?? null));
            },
    }),
    auth: (spec: AuthSpec) => {
      const s = normalize(spec);
      return {
        // The OpenAPI document tells clients (and the route-matrix test) how each row is guarded.
        detail: {
          security: s.key ? [{ bearer: [] }, { apiKey: [] }] : [{ bearer: [] }],
          "x-corpadmin-guard": { guard: s.guard, self: s.self ?? null, key: !!s.key, tenant: s.tenant },
        } as Record<string, unknown>,
        async transform({ request, route, params, server, set }) {
          const ip = ctx.clientIp(request, server?.requestIP(request)?.address ?? null);
          const apiKey = s.key ? request.headers.get("x-api-key") : null;
          const principal = apiKey ? await fromApiKey(apiKey, ip) : await fromToken(request.headers.get("authorization"), ip);
          principal.requestId = requestIdOf(set);
          if (principal.kind === "user") {
            const selfParam = s.self ? (params as Record<string, string>)[s.self] : undefined;
            const isSelf = selfParam !== undefined && selfParam === principal.userId;
            if (s.guard === "self") {
              // A malformed id names nobody: 404 as for every malformed path id.
              if (!isSelf) throw selfParam !== undefined && !isUuid(selfParam) ? notFound() : forbidden("Only the user themself may do this");
            } else if (s.guard === "*") {
              if (!principal.superAdmin) throw forbidden("Only a platform administrator may do this");
            } else if (s.guard !== "token" && !isSelf) {
              if (!permits(principal.permission, s.guard, actionOf(request, route))) throw forbidden(`Requires ${s.guard}`);
            }
          }
          if (s.tenant) corpGate(principal.corp, principal.superAdmin);
          principals.set(request, { principal, tenant: s.tenant || principal.kind === "key" ? ctx.store.tenant(principal.corpId) : null });
        },
        resolve({ request }) {
          const found = principals.get(request)!;
          // `tenant`: the working corporation's door (src/core/store.ts).
          return { principal: found.principal, tenant: found.tenant as TenantDoor };
        },
      };
    },
  });
}

