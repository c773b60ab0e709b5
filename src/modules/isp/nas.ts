// NAS (the routers PPPoE users connect through). The secret is write-only: a salted SHA-256 checks
// the HTTP Basic credential FreeRADIUS presents on the RADIUS rows, and a copy sealed with the data
// key (lib/secret-box.ts) signs the RFC 5176 requests corpadmin sends to the NAS.
import { Elysia } from "elysia";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { and, eq, ne } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { writeTx, type TenantDb } from "../../db/sqlite";
import { ispLayouts, ispManufacturers, ispNas, ispPools, ispPops } from "../../db/tenant/schema";
import { created, noContent } from "../../lib/http";
import { listRows, type ListParams } from "../../lib/list";
import { conflict, invalid } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { newId } from "../../lib/ids";
import type { SecretBox } from "../../lib/secret-box";
import { nowIso } from "../../lib/time";
import type { authGuard } from "../auth/guard";
import { canonicalIp, checkRef, checkUniqueName, isUsed, requireRow, setStatus, type Q } from "./common";
import { Nas, NasCreateInput, NasUpdateInput } from "./model";

export type NasRow = typeof ispNas.$inferSelect;
const AUTH = "platform.isp" as const;

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

export function nasView(row: NasRow) {
  const { secret_hash: _h, secret_salt: _s, secret_enc: _e, ...rest } = row;
  return rest;
}

/** The sealed secret is bound to its NAS: a copy pasted into another row does not open. */
const sealContext = (nasId: string) => `isp_nas.secret:${nasId}`;

/** The NAS's secret in clear, or null when it was set before secrets were kept (set it again). */
export function nasSecret(secrets: SecretBox, row: Pick<NasRow, "id" | "secret_enc">): string | null {
  return row.secret_enc ? secrets.open(row.secret_enc, sealContext(row.id)) : null;
}

function values(db: Q, input: NasUpdateInput, exceptId: string | null) {
  const ip = canonicalIp(input.ip);
  if (!ip) throw invalid("ip", "is not an IPv4 or IPv6 address");
  const sameIp = exceptId ? and(eq(ispNas.ip, ip), ne(ispNas.id, exceptId)) : eq(ispNas.ip, ip);
  const v = {
    name: input.name,
    ip,
    manufacturer_id: checkRef(db, ispManufacturers, input.manufacturer_id, "manufacturer_id", "manufacturer"),
    pop_id: checkRef(db, ispPops, input.pop_id, "pop_id", "POP"),
    layout_id: checkRef(db, ispLayouts, input.layout_id, "layout_id", "layout"),
    coa_port: input.coa_port ?? 3799,
  };
  checkUniqueName(db, ispNas, input.name, exceptId, "NAS");
  if (db.select({ id: ispNas.id }).from(ispNas).where(sameIp).get()) throw conflict(`A NAS with IP ${ip} already exists`);
  return v;
}

function secretColumns(secrets: SecretBox, nasId: string, secret: string) {
  const salt = randomBytes(16).toString("hex");
  return { secret_salt: salt, secret_hash: hashSecret(secret, salt), secret_enc: secrets.seal(secret, sealContext(nasId)) };
}

export function listNas(db: TenantDb, query: ListParams) {
  return listRows(db, ispNas, { q: [ispNas.name, ispNas.ip], hidden: ["secret_hash", "secret_salt", "secret_enc"] }, query, nasView);
}

export function getNas(db: Q, id: string) {
  return nasView(requireRow<NasRow>(db, ispNas, id, "NAS"));
}

export function createNas(db: TenantDb, secrets: SecretBox, input: typeof NasCreateInput.static) {
  const id = newId();
  return writeTx(db, (tx) => nasView(tx.insert(ispNas).values({ id, ...values(tx, input, null), ...secretColumns(secrets, id, input.secret) }).returning().get()));
}

/** A PUT without `secret` keeps the stored one (routes.md: `(wo)` secrets). */
export function updateNas(db: TenantDb, secrets: SecretBox, id: string, input: NasUpdateInput) {
  return writeTx(db, (tx) => {
    requireRow(tx, ispNas, id, "NAS");
    const v = values(tx, input, id);
    const row = tx
      .update(ispNas)
      .set({ ...v, ...(input.secret ? secretColumns(secrets, id, input.secret) : {}), updated_at: nowIso() })
      .where(eq(ispNas.id, id))
      .returning()
      .get();
    return nasView(row);
  });
}

export function deleteNas(db: TenantDb, id: string): void {
  writeTx(db, (tx) => {
    requireRow(tx, ispNas, id, "NAS");
    if (isUsed(tx, ispPools, ispPools.nas_id, id)) throw conflict("The NAS is used by a pool");
    tx.delete(ispNas).where(eq(ispNas.id, id)).run();
  });
}

export function nasRoutes(ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-nas", prefix: "/api/isp/nas", tags: ["ISP"] })
    .use(guard)
    .get("", ({ tenantDb, query }) => listNas(tenantDb, query), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(Nas) },
      detail: { summary: "List NAS" },
    })
    .post("", ({ tenantDb, body, set }) => created(set, "/api/isp/nas", createNas(tenantDb, ctx.secrets, body)), {
      auth: AUTH,
      body: NasCreateInput,
      response: { 200: Nas },
      detail: { summary: "Create a NAS" },
    })
    .get("/:id", ({ tenantDb, params }) => getNas(tenantDb, params.id), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Nas },
      detail: { summary: "Get a NAS" },
    })
    .put("/:id", ({ tenantDb, params, body }) => updateNas(tenantDb, ctx.secrets, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: NasUpdateInput,
      response: { 200: Nas },
      detail: { summary: "Update a NAS" },
    })
    .delete(
      "/:id",
      ({ tenantDb, params, set }) => {
        deleteNas(tenantDb, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a NAS" } },
    )
    .put("/:id/active", ({ tenantDb, params }) => nasView(setStatus<NasRow>(tenantDb, ispNas, params.id, true, "NAS")), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Nas },
      detail: { summary: "Activate a NAS" },
    })
    .put("/:id/inactive", ({ tenantDb, params }) => nasView(setStatus<NasRow>(tenantDb, ispNas, params.id, false, "NAS")), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Nas },
      detail: { summary: "Deactivate a NAS (RADIUS rejects requests through it)" },
    });
}
