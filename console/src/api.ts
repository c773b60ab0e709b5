// The typed client of the service's own API (types generated from its OpenAPI document into
// api.gen.ts) and the session: the token lives in memory and sessionStorage only.
import createClient, { type Middleware } from "openapi-fetch";
import { signal, computed } from "@preact/signals";
import type { components, operations, paths } from "./api.gen";

export type Credentials = components["schemas"]["Credentials"];
export type Contract = components["schemas"]["Contract"];
export type Person = components["schemas"]["Person"];
export type NetworkPolicy = components["schemas"]["NetworkPolicy"];
/** A schema of the service's OpenAPI document by its component name. */
export type Schema<K extends keyof components["schemas"]> = components["schemas"][K];
export type Json<Op extends keyof operations> = operations[Op]["responses"] extends { 200: { content: { "application/json": infer T } } } ? T : never;
type ItemOf<Op extends keyof operations> = Json<Op> extends { items: (infer T)[] } ? T : never;
export type RadiusSession = ItemOf<"isp.listSession">;
export type RadiusAttempt = ItemOf<"isp.listRadiusAttempts">;
export type Nas = ItemOf<"isp.listNas">;
export type DisconnectResult = Json<"isp.disconnectSession">;

const STORE_KEY = "corpadmin.session";

function loadSession(): Credentials | null {
  try {
    const raw = sessionStorage.getItem(STORE_KEY);
    return raw ? (JSON.parse(raw) as Credentials) : null;
  } catch {
    return null;
  }
}

export const session = signal<Credentials | null>(loadSession());
/** Set when a call answered 401 with a token: the screen shows the login with a notice. */
export const expired = signal(false);

export function setSession(c: Credentials | null): void {
  session.value = c;
  if (c) sessionStorage.setItem(STORE_KEY, JSON.stringify(c));
  else sessionStorage.removeItem(STORE_KEY);
}

export const isSuper = computed(() => session.value?.credentials.permission.admin.includes("*") ?? false);

/** The caller may use an area: its service in `admin`, or the area's list action in `allow`. */
export function can(area: string, listPath?: string): boolean {
  const p = session.value?.credentials.permission;
  if (!p) return false;
  if (p.admin.includes("*") || p.admin.includes(`platform.${area}`)) return true;
  if (p.allow.includes("*")) return true;
  const host = location.port ? location.host : `${location.hostname}:${location.protocol === "https:" ? 443 : 80}`;
  return p.allow.includes(`${host}${listPath ?? `/api/${area}`}/GET`);
}

const auth: Middleware = {
  onRequest({ request }) {
    const token = session.value?.access_token;
    if (token) request.headers.set("authorization", `Bearer ${token}`);
    return request;
  },
  onResponse({ request, response }) {
    // A revoked or expired session: back to the login, which returns here afterwards.
    if (response.status === 401 && request.headers.has("authorization")) {
      setSession(null);
      expired.value = true;
    }
    return response;
  },
};

export const api = createClient<paths, `application/${string}json`>({ baseUrl: location.origin });
api.use(auth);

export interface FieldError {
  path: string;
  message: string;
}

export interface Problem {
  type?: string;
  title?: string;
  status: number;
  detail?: string;
  errors?: FieldError[];
}

/** What an error answer says, as a problem document (network failures included). */
export function problemOf(error: unknown, status: number): Problem {
  if (error && typeof error === "object" && "status" in error) return error as Problem;
  return { status, title: typeof error === "string" ? error : undefined };
}

export interface Page<T> {
  items: T[];
  page: number;
  limit: number;
  total: number;
}

/** A record whose shape is only known at run time (the generic screens): its fields are narrowed where read. */
export type Row = Record<string, unknown> & { id: string };

/** What GET `<api>/{id}` answers, from the generated client (`/api/webhook` → Webhook). */
export type RecordOf<P extends string> = string extends P
  ? Row
  : `${P}/{id}` extends keyof paths
  ? paths[`${P}/{id}`] extends { get: { responses: { 200: { content: { "application/json": infer R } } } } }
    ? R
    : never
  : never;

/** A path template with its `{param}`s as any text (`/api/webhook/{id}` → `/api/webhook/${string}`). */
type PathPattern<K extends string> = K extends `${infer A}{${string}}${infer B}` ? `${A}${string}${PathPattern<B>}` : K;

/** The paths a concrete path may be (`/api/webhook/${string}/deliveries` → its template). */
type RouteOf<P extends string> = { [K in keyof paths & string]: P extends PathPattern<K> ? K : never }[keyof paths & string];

type PageItemOf<K> = K extends keyof paths
  ? paths[K] extends { get: { responses: { 200: { content: { "application/json": { items: (infer R)[] } } } } } }
    ? R
    : never
  : never;

/** A row of GET `<api>`'s page (`/api/webhook` → its items; an id in the path is matched by its template). */
export type ListItemOf<P extends string> = string extends P ? Row : P extends keyof paths ? PageItemOf<P> : PageItemOf<RouteOf<P>>;

/** A run-time-typed value as text: strings as they are, numbers written out, anything else "". */
export function asText(v: unknown): string {
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : "";
}

/** A run-time-typed value as a number, or null when it is none. */
export function asNumber(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * A call whose path is only known at run time (the generic list and form screens): the same
 * client, session and error handling, without the per-path types.
 */
export async function call<T = unknown>(method: Method, path: string, options: { query?: Record<string, unknown>; body?: unknown } = {}): Promise<T> {
  const init: Record<string, unknown> = { params: { query: options.query } };
  if (options.body !== undefined) init.body = options.body;
  const client = api as unknown as Record<Method, (p: string, i: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>>;
  let result;
  try {
    result = await client[method](path, init);
  } catch {
    throw { status: 0, title: "network" } satisfies Problem;
  }
  if (!result.response.ok) throw problemOf(result.error, result.response.status);
  return result.data as T;
}

/** A binary answer (images, CSV), with the token. */
export async function fetchBlob(path: string): Promise<Blob> {
  const headers: Record<string, string> = {};
  if (session.value) headers.authorization = `Bearer ${session.value.access_token}`;
  const res = await fetch(path, { headers });
  if (res.status === 401 && session.value) {
    setSession(null);
    expired.value = true;
  }
  if (!res.ok) throw { status: res.status } satisfies Problem;
  return res.blob();
}
