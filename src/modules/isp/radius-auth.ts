// Who may call the RADIUS rows (routes.md, GET /api/isp/radius/authorize): FreeRADIUS with HTTP
// Basic `<corp auth_name>:<NAS secret>`, or an external app's X-Api-Key; never a user token. The
// NAS is the one registered with the request's NAS address either way. Every refusal is 401, which
// rlm_rest turns into a reject.
import type { AppContext } from "../../core/context";
import type { CorpRow } from "../../core/corp-cache";
import type { TenantDoor } from "../../core/store";
import type { TenantDb } from "../../db/sqlite";
import { unauthorized } from "../../lib/problem";
import { corpGate, parseApiKey } from "../../http/guard";
import { canonicalIp } from "./ip";
import { hashSecret, nasByIp, secretMatches, type RadiusNas } from "./nas-service";
import { cachedNas, type Snapshot } from "./radius-cache";

export interface RadiusCaller {
  corp: CorpRow;
  tenant: TenantDoor;
  /** The external app whose X-Api-Key authenticated the request; null for HTTP Basic. */
  keyApp: string | null;
  /** The NAS secret of an HTTP Basic credential, checked against the NAS once it is known. */
  basicSecret: string | null;
}

/** A 401 that carries the attempt log's reason code. */
export function refused(reason: string, detail: string) {
  return Object.assign(unauthorized(detail), { radiusReason: reason });
}

const canonicalIps = new Map<string, string | null>();

const DUMMY = { secret_salt: "0", secret_hash: hashSecret("", "0") };

/**
 * Checks the credential's first half: which corporation, and for a key the whole check. Runs
 * before the request is validated, so a request without a credential is 401 whatever it holds.
 */
export async function radiusCaller(ctx: AppContext, request: Request): Promise<RadiusCaller> {
  const key = request.headers.get("x-api-key");
  if (key) {
    const parsed = parseApiKey(key);
    const corp = parsed ? await ctx.corps.get(parsed.corpId) : null;
    if (!parsed || !corp || !ctx.apiKeys) throw unauthorized("Invalid API key");
    corpGate(corp, false);
    const tenant = ctx.store.tenant(corp.id);
    const check = await ctx.apiKeys(tenant, parsed.appId, parsed.secret);
    if (!check || !check.active) throw unauthorized("Invalid API key");
    return { corp, tenant, keyApp: check.appId, basicSecret: null };
  }
  const auth = request.headers.get("authorization") ?? "";
  if (!/^basic /i.test(auth)) throw unauthorized("HTTP Basic <corporation>:<NAS secret> or X-Api-Key is required");
  let decoded: string;
  try {
    decoded = Buffer.from(auth.slice(6).trim(), "base64").toString("utf8");
  } catch {
    throw unauthorized("Malformed Basic credential");
  }
  const colon = decoded.indexOf(":");
  if (colon <= 0) throw unauthorized("Malformed Basic credential");
  const corp = await ctx.corps.find(decoded.slice(0, colon));
  if (!corp) throw unauthorized("Invalid corporation or NAS secret");
  corpGate(corp, false);
  return { corp, tenant: ctx.store.tenant(corp.id), keyApp: null, basicSecret: decoded.slice(colon + 1) };
}

/**
 * The credential's second half, inside the caller's read (`db`, whose snapshot `snap` is): the NAS
 * registered at `nasIp`, its secret (Basic) and its status. An unknown NAS still costs a hash
 * comparison, so timing does not tell which NAS addresses exist.
 */
export async function radiusNas(caller: RadiusCaller, db: TenantDb, snap: Snapshot, nasIp: string): Promise<RadiusNas> {
  return checkedNas(caller, await nasAt(db, snap, nasIp), nasIp);
}

/** The NAS registered at `nasIp` (any spelling of the address), from the snapshot; null: none. */
export async function nasAt(db: TenantDb, snap: Snapshot, nasIp: string): Promise<RadiusNas | null> {
  let ip = canonicalIps.get(nasIp);
  if (ip === undefined) {
    ip = canonicalIp(nasIp);
    // A NAS sends its own address on every request: a handful of distinct texts.
    if (canonicalIps.size >= 1_000) canonicalIps.clear();
    canonicalIps.set(nasIp, ip);
  }
  return ip ? await cachedNas(snap, db, ip, nasByIp) : null;
}

/**
 * The checks of radiusNas on a NAS already looked up (null: none at that address), also run on a
 * NAS kept by authorize's decision cache (radius-service.ts).
 */
export function checkedNas(caller: RadiusCaller, nas: RadiusNas | null, nasIp: string): RadiusNas {
  if (caller.basicSecret !== null) {
    const ok = secretMatches(nas ?? DUMMY, caller.basicSecret);
    // The answer does not tell an unknown NAS from a wrong secret; the operator's attempt log does.
    if (!nas || !ok) throw refused(nas ? "credential-invalid" : "nas-unknown", "Invalid corporation or NAS secret");
  }
  if (!nas) throw refused("nas-unknown", `No NAS is registered with address ${nasIp}`);
  if (!nas.status) throw refused("nas-inactive", "The NAS is inactive");
  return nas;
}
