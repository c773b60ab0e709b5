// NAS (the routers PPPoE users connect through). The secret is write-only: a salted SHA-256 checks
// the HTTP Basic credential FreeRADIUS presents on the RADIUS rows, and a copy sealed with the data
// key (lib/secret-box.ts) signs the RFC 5176 requests corpadmin sends to the NAS.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { and, eq, ne, sql } from "drizzle-orm";
import type { TenantDoor } from "../../core/store";
import { clientOf } from "../../db/rows";
import type { RawStatement } from "../../db/handle";
import type { TenantDb } from "../../db/sqlite";
import { ispLayouts, ispManufacturers, ispNas, ispPools, ispPops } from "../../db/tenant/schema";
import { listRows, type ListParams } from "../../db/list";
import { conflict, invalid } from "../../lib/problem";
import { newId } from "../../lib/ids";
import type { SecretBox } from "../../lib/secret-box";
import { nowIso, toIso } from "../../lib/time";
import { canonicalIp, notASourceAddress } from "./ip";
import type { NasCreateInput, NasUpdateInput } from "./model";
import { checkRef, checkUniqueName, isUsed, requireRow, setStatus, type Q, trackedWrite } from "./record-service";

export type NasRow = typeof ispNas.$inferSelect;

/** What RADIUS authorize and accounting need of a NAS (read by address on every request). */
export interface RadiusNas {
  id: string;
  name: string;
  ip: string;
  secret_hash: string;
  secret_salt: string;
  pop_id: string | null;
  layout_id: string | null;
  status: boolean;
}

/** A prepared NAS-by-IP read per connection (this runs on every RADIUS request whose NAS is not cached). */
const nasStatements = new WeakMap<TenantDb, RawStatement<unknown, unknown[]>>();

export async function nasByIp(db: TenantDb, ip: string): Promise<RadiusNas | null> {
  let stmt = nasStatements.get(db);
  if (!stmt) {
    stmt = clientOf(db).query("SELECT id, name, ip, secret_hash, secret_salt, pop_id, layout_id, status FROM isp_nas WHERE ip = ?");
    nasStatements.set(db, stmt);
  }
  const row = (await stmt.get(ip)) as (Omit<RadiusNas, "status"> & { status: number }) | null;
  return row ? { ...row, status: row.status === 1 } : null;
}

/** The whole NAS row (RFC 5176 requests need its address, port and sealed secret), or undefined. */
export async function nasById(db: TenantDb, id: string): Promise<NasRow | undefined> {
  return await db.select().from(ispNas).where(eq(ispNas.id, id)).get();
}

/**
 * NAS secrets are machine credentials checked on every RADIUS request (a thousand a second), so
 * a slow password hash is out; a per-NAS salt keeps equal secrets from showing as equal hashes.
 */
// Bun's one-shot SHA-256 costs a fraction of node:crypto's streaming hash; RADIUS checks a NAS
// secret on every request. The bytes are those of salt, NUL, secret in UTF-8, as stored before.
const secretDigest = (secret: string, salt: string) => Bun.SHA256.hash(`${salt}\0${secret}`) as Uint8Array;

export function hashSecret(secret: string, salt: string): string {
  return Buffer.from(secretDigest(secret, salt)).toString("hex");
}

/** Constant-time check of a presented secret against the stored hash. */
export function secretMatches(row: { secret_hash: string; secret_salt: string }, presented: string): boolean {
  const expected = Buffer.from(row.secret_hash, "hex");
  const actual = secretDigest(presented, row.secret_salt);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

export type NasHealth = "ok" | "quiet" | "unknown";

/**
 * routes.md Nas.health, from what the accounting writer keeps on the row: unknown until a first
 * record; quiet while it has open sessions and its last record is older than quiet_after allows
 * (or the health job announced it quiet and no record came since); ok otherwise.
 */
export function nasHealth(row: Pick<NasRow, "last_accounting_at" | "open_sessions" | "quiet_after" | "quiet_since">, now: string): NasHealth {
  if (row.last_accounting_at === null) return "unknown";
  if (row.quiet_since !== null || (row.open_sessions > 0 && row.quiet_after !== null && row.quiet_after < now)) return "quiet";
  return "ok";
}

/** The same rule in SQL, for the list's ?health filter and sort. */
const healthExpr = (now: string) =>
  sql<string>`CASE WHEN ${ispNas.last_accounting_at} IS NULL THEN 'unknown' WHEN ${ispNas.quiet_since} IS NOT NULL OR (${ispNas.open_sessions} > 0 AND ${ispNas.quiet_after} < ${now}) THEN 'quiet' ELSE 'ok' END`;

/** A NAS as its GET returns it (also the data of ISP_AFTER_NAS_QUIET and ISP_AFTER_NAS_BACK). */
export function nasView(row: NasRow, now: string = nowIso()) {
  const { secret_hash: _h, secret_salt: _s, secret_enc: _e, open_sessions, quiet_after: _q, quiet_since: _qs, ...rest } = row;
  return { ...rest, online: open_sessions, health: nasHealth(row, now) };
}

const HIDDEN = ["secret_hash", "secret_salt", "secret_enc", "open_sessions", "quiet_after", "quiet_since"];

/**
 * The NAS as its history compares it: its stored fields (not the health the accounting keeps, which
 * is not a change of the record), and its secret as ******** (by the hash: set again, it shows).
 */
async function nasSnapshot(db: TenantDb, id: string): Promise<object | null> {
  const row = await nasById(db, id);
  if (!row) return null;
  const { secret_hash, secret_salt: _s, secret_enc: _e, open_sessions: _o, quiet_after: _q, quiet_since: _qs, last_accounting_at: _l, ...stored } = row;
  return { ...stored, secret: secret_hash };
}

/** The sealed secret is bound to its NAS: a copy pasted into another row does not open. */
const sealContext = (nasId: string) => `isp_nas.secret:${nasId}`;

/** The NAS's secret in clear, or null when it was set before secrets were kept (set it again). */
export function nasSecret(secrets: SecretBox, row: Pick<NasRow, "id" | "secret_enc">): string | null {
  return row.secret_enc ? secrets.open(row.secret_enc, sealContext(row.id)) : null;
}

async function values(db: Q, input: NasUpdateInput, exceptId: string | null) {
  const ip = canonicalIp(input.ip);
  if (!ip) throw invalid("ip", "is not an IPv4 or IPv6 address");
  const refusal = notASourceAddress(ip);
  if (refusal) throw invalid("ip", `${refusal}: never the source address of a NAS`);
  const sameIp = exceptId ? and(eq(ispNas.ip, ip), ne(ispNas.id, exceptId)) : eq(ispNas.ip, ip);
  const v = {
    name: input.name,
    ip,
    manufacturer_id: await checkRef(db, ispManufacturers, input.manufacturer_id, "manufacturer_id", "manufacturer"),
    pop_id: await checkRef(db, ispPops, input.pop_id, "pop_id", "POP"),
    layout_id: await checkRef(db, ispLayouts, input.layout_id, "layout_id", "layout"),
    coa_port: input.coa_port ?? 3799,
  };
  await checkUniqueName(db, ispNas, input.name, exceptId, "NAS");
  if (await db.select({ id: ispNas.id }).from(ispNas).where(sameIp).get()) throw conflict(`A NAS with IP ${ip} already exists`);
  return v;
}

function secretColumns(secrets: SecretBox, nasId: string, secret: string) {
  const salt = randomBytes(16).toString("hex");
  return { secret_salt: salt, secret_hash: hashSecret(secret, salt), secret_enc: secrets.seal(secret, sealContext(nasId)) };
}

/** The NAS list's search: by name and address (the list and GET /api/search). */
const NAS_Q = [ispNas.name, ispNas.ip];

export function listNas(tenant: TenantDoor, query: ListParams, at: number) {
  const now = toIso(at);
  const spec = {
    q: NAS_Q,
    hidden: HIDDEN,
    computed: { online: { expr: ispNas.open_sessions, dataType: "number" as const }, health: { expr: healthExpr(now), dataType: "string" as const } },
  };
  return tenant.read((db) => listRows(db, ispNas, spec, query, (row: NasRow) => nasView(row, now)));
}

export function getNas(tenant: TenantDoor, id: string, at: number) {
  return tenant.read(async (db) => nasView(await requireRow<NasRow>(db, ispNas, id, "NAS"), toIso(at)));
}

export function createNas(tenant: TenantDoor, secrets: SecretBox, input: typeof NasCreateInput.static) {
  const id = newId();
  return trackedWrite(tenant, "nas", ispNas, id, async (tx) => nasView(await tx.insert(ispNas).values({ id, ...(await values(tx, input, null)), ...secretColumns(secrets, id, input.secret) }).returning().get()), { snapshot: nasSnapshot });
}

/** A PUT without `secret` keeps the stored one (routes.md: `(wo)` secrets). */
export function updateNas(tenant: TenantDoor, secrets: SecretBox, id: string, input: NasUpdateInput) {
  return trackedWrite(tenant, "nas", ispNas, id, async (tx) => {
    await requireRow(tx, ispNas, id, "NAS");
    const v = await values(tx, input, id);
    const row = await tx
      .update(ispNas)
      .set({ ...v, ...(input.secret ? secretColumns(secrets, id, input.secret) : {}), updated_at: nowIso() })
      .where(eq(ispNas.id, id))
      .returning()
      .get();
    return nasView(row);
  }, { snapshot: nasSnapshot });
}

export function deleteNas(tenant: TenantDoor, id: string): Promise<void> {
  return trackedWrite(tenant, "nas", ispNas, id, async (tx) => {
    await requireRow(tx, ispNas, id, "NAS");
    if (await isUsed(tx, ispPools, ispPools.nas_id, id)) throw conflict("The NAS is used by a pool");
    await tx.delete(ispNas).where(eq(ispNas.id, id)).run();
  }, { snapshot: nasSnapshot });
}

export function setNasStatus(tenant: TenantDoor, id: string, status: boolean) {
  return trackedWrite(tenant, "nas", ispNas, id, async (tx) => nasView(await setStatus<NasRow>(tx, ispNas, id, status, "NAS")), { action: "status", snapshot: nasSnapshot });
}

/** The NAS a ?q finds, as search hits (GET /api/search). */
export async function nasHits(db: TenantDb, q: string, limit: number): Promise<{ id: string; title: string; subtitle: string | null }[]> {
  const page = await listRows(db, ispNas, { q: NAS_Q, hidden: HIDDEN }, { q, limit }, (r: typeof ispNas.$inferSelect) => r);
  return page.items.map((r) => ({ id: r.id, title: r.name, subtitle: r.ip }));
}
