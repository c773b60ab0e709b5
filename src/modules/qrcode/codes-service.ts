// QR codes (qr_codes) and the platform slug index (qr_slugs): create, update, active/inactive,
// delete, list and CSV export, and the redirect's lookups. Dynamic codes also own a row of the
// slug index, written before the tenant row and removed if that fails.
import { and, asc, eq, getTableColumns, sql } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import type { TenantDoor } from "../../core/store";
import { qrCampaigns, qrCategories, qrCodes, qrLogos } from "../../db/tenant/schema";
import type { PlatformDb, TenantDb } from "../../db/sqlite";
import { newId, randomBase62 } from "../../lib/ids";
import { listClausesOn, listRows, type ListParams, type ListSpec } from "../../db/list";
import { clientOf } from "../../db/rows";
import { conflict, invalid, invalidMany, notFound, type FieldError } from "../../lib/problem";
import { nowIso } from "../../lib/time";
import { unchanged } from "../../lib/unchanged";
import { csvLine } from "../../lib/csv";
import { symbolOf } from "./image";
import type { QrCode, QrCodeInput } from "./model";

export type CodeRow = typeof qrCodes.$inferSelect;
type LogoRow = typeof qrLogos.$inferSelect;

const CODE_Q = [qrCodes.name, qrCodes.content, qrCodes.target, qrCodes.slug];

/** The list spec of codes; `url` and `encoded` are derived as codeView derives them, so lists sort and filter by them too. */
export function codeListSpec(publicUrl: string): ListSpec {
  const url = sql`CASE WHEN ${qrCodes.slug} IS NULL THEN NULL ELSE ${publicUrl + "/q/"} || ${qrCodes.slug} END`;
  const encoded = sql`CASE WHEN ${qrCodes.kind} = 'dynamic' THEN ${url} ELSE coalesce(${qrCodes.content}, '') END`;
  // qr_codes_fts: the trigram index of CODE_Q (migrations/tenant/0010_search_fts.sql).
  return { q: CODE_Q, search: "qr_codes_fts", computed: { url: { expr: url, dataType: "string" }, encoded: { expr: encoded, dataType: "string" } } };
}

export interface QrDeps {
  ctx: AppContext;
}

export function codeView(publicUrl: string, row: CodeRow): QrCode {
  const url = row.slug ? `${publicUrl}/q/${row.slug}` : null;
  return { ...row, url, encoded: row.kind === "dynamic" ? url! : (row.content ?? "") };
}

export async function findCode(db: TenantDb, id: string): Promise<CodeRow> {
  const row = await db.select().from(qrCodes).where(eq(qrCodes.id, id)).get();
  if (!row) throw notFound("QR code");
  return row;
}

/** A code as its GET returns it (404 when unknown). */
export function getCode(deps: QrDeps, tenant: TenantDoor, id: string): Promise<QrCode> {
  return tenant.read(async (db) => codeView(deps.ctx.config.publicUrl, await findCode(db, id)));
}

/** What the image of a code is drawn from: the code (404 when unknown) and, when asked for and set, its logo. */
export function imageSource(tenant: TenantDoor, id: string, withLogo: boolean): Promise<{ code: CodeRow; logo: LogoRow | null }> {
  return tenant.read(async (db) => {
    const code = await findCode(db, id);
    const logo = withLogo && code.logo_id ? ((await db.select().from(qrLogos).where(eq(qrLogos.id, code.logo_id)).get()) ?? null) : null;
    return { code, logo };
  });
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "";
  } catch {
    return false;
  }
}

/** Every rule of the QrCode resource that a schema cannot say, reported together. */
async function checkInput(db: TenantDb, input: QrCodeInput, existing: CodeRow | null): Promise<void> {
  const errors: FieldError[] = [];
  if (existing && input.kind !== existing.kind) errors.push({ path: "kind", message: "cannot change" });
  if (input.kind === "static") {
    if (input.content == null) errors.push({ path: "content", message: "is required for a static code" });
    if (input.target != null) errors.push({ path: "target", message: "only a dynamic code has a target" });
    if (input.slug != null) errors.push({ path: "slug", message: "only a dynamic code has a slug" });
  } else {
    if (input.target == null) errors.push({ path: "target", message: "is required for a dynamic code" });
    else if (!isHttpUrl(input.target)) errors.push({ path: "target", message: "must be an http or https URL" });
    if (existing && input.slug != null && input.slug !== existing.slug) errors.push({ path: "slug", message: "cannot change" });
  }
  const refs = [
    ["campaign_id", input.campaign_id, qrCampaigns],
    ["category_id", input.category_id, qrCategories],
    ["logo_id", input.logo_id, qrLogos],
  ] as const;
  for (const [field, id, table] of refs) {
    if (id != null && !(await db.select({ id: table.id }).from(table).where(eq(table.id, id)).get())) {
      errors.push({ path: field, message: "unknown id" });
    }
  }
  if (errors.length) throw invalidMany(errors);
  // Checked last: the level-L capacity is the most generous, so anything longer can never be drawn.
  if (input.kind === "static") symbolOf(input.content!, "L", false, "content");
}

/** `ctx.changes` topic of QR slugs (key: the slug): every node's redirect cache forgets it (slug-cache.ts). */
export const SLUG_TOPIC = "qr-slugs";

const insertSlugSql = "INSERT OR IGNORE INTO qr_slugs (slug, corp_id, qrcode_id, created_at) VALUES (?, ?, ?, ?)";
const deleteSlugSql = "DELETE FROM qr_slugs WHERE slug = ? AND corp_id = ?";

/** Claims a slug in the platform index: the given one (409 when taken) or a fresh random one. */
async function claimSlug(db: PlatformDb, corpId: string, codeId: string, wanted: string | null | undefined): Promise<string> {
  const insert = clientOf(db).query(insertSlugSql);
  if (wanted != null) {
    if ((await insert.run(wanted, corpId, codeId, nowIso())).changes === 0) throw conflict(`slug '${wanted}' is taken`);
    return wanted;
  }
  for (;;) {
    const slug = randomBase62(8);
    if ((await insert.run(slug, corpId, codeId, nowIso())).changes === 1) return slug;
  }
}

/** Frees a slug of the platform index; every node's redirect cache forgets it at the COMMIT. */
function releaseSlug(deps: QrDeps, slug: string, corpId: string): Promise<void> {
  return deps.ctx.store.platform.write(async (tx, w) => {
    await clientOf(tx).query(deleteSlugSql).run(slug, corpId);
    await deps.ctx.changes.publish(tx, w, SLUG_TOPIC, slug);
  });
}

function insertCode(deps: QrDeps, tenant: TenantDoor, id: string, input: QrCodeInput, slug: string | null): Promise<QrCode> {
  return tenant.write(async (tx, w) => {
    await checkInput(tx, input, null);
    const row = await tx
      .insert(qrCodes)
      .values({
        id,
        name: input.name,
        kind: input.kind,
        content: input.content ?? null,
        target: input.kind === "dynamic" ? input.target! : null,
        slug,
        campaign_id: input.campaign_id ?? null,
        category_id: input.category_id ?? null,
        logo_id: input.logo_id ?? null,
      })
      .returning()
      .get();
    const view = codeView(deps.ctx.config.publicUrl, row);
    w.emit("QRCODE_AFTER_INSERT", id, view);
    w.record({ type: "qrcode", id, action: "create", before: null, after: row });
    if (slug) await deps.ctx.changes.publish(tx, w, SLUG_TOPIC, slug);
    return view;
  });
}

/**
 * A dynamic code's slug is claimed in the platform index before the code row is written (one
 * database's write never waits inside another's) and freed again if that write fails. Its input
 * is checked first too, so that a bad body is a 400 before a taken slug is a 409, and checked
 * again inside the write, which is what decides.
 */
export async function createCode(deps: QrDeps, tenant: TenantDoor, corpId: string, input: QrCodeInput): Promise<QrCode> {
  const id = newId();
  if (input.kind !== "dynamic") return insertCode(deps, tenant, id, input, null);
  await tenant.read((db) => checkInput(db, input, null));
  const slug = await deps.ctx.store.platform.write((tx) => claimSlug(tx, corpId, id, input.slug));
  try {
    return await insertCode(deps, tenant, id, input, slug);
  } catch (err) {
    // The write's own error is the answer; a slug that could not be freed stays taken, and says so.
    await releaseSlug(deps, slug, corpId).catch((e) => deps.ctx.logger.error("freeing a QR slug failed", { slug, corp_id: corpId, error: String(e) }));
    throw err;
  }
}

export function updateCode(deps: QrDeps, tenant: TenantDoor, id: string, input: QrCodeInput): Promise<QrCode> {
  return tenant.write(async (tx, w) => {
    const existing = await findCode(tx, id);
    await checkInput(tx, input, existing);
    const columns = {
      name: input.name,
      content: input.content ?? null,
      target: existing.kind === "dynamic" ? input.target! : null,
      campaign_id: input.campaign_id ?? null,
      category_id: input.category_id ?? null,
      logo_id: input.logo_id ?? null,
    };
    // Nothing to change: no write, the same updated_at, no event (as setCodeStatus). The only
    // other writer of qr_codes (the access writer) changes scans alone, which is not compared.
    if (unchanged(existing, columns)) return codeView(deps.ctx.config.publicUrl, existing);
    const row = await tx.update(qrCodes).set(columns).where(eq(qrCodes.id, id)).returning().get();
    const view = codeView(deps.ctx.config.publicUrl, row);
    w.emit("QRCODE_AFTER_UPDATE", id, view);
    w.record({ type: "qrcode", id, action: "update", before: existing, after: row });
    if (existing.slug) await deps.ctx.changes.publish(tx, w, SLUG_TOPIC, existing.slug!);
    return view;
  });
}

export function setCodeStatus(deps: QrDeps, tenant: TenantDoor, id: string, status: boolean): Promise<QrCode> {
  return tenant.write(async (tx, w) => {
    const existing = await findCode(tx, id);
    if (existing.status === status) return codeView(deps.ctx.config.publicUrl, existing);
    const row = await tx.update(qrCodes).set({ status }).where(eq(qrCodes.id, id)).returning().get();
    const view = codeView(deps.ctx.config.publicUrl, row);
    w.emit("QRCODE_AFTER_UPDATE", id, view);
    w.record({ type: "qrcode", id, action: "status", before: existing, after: row });
    if (existing.slug) await deps.ctx.changes.publish(tx, w, SLUG_TOPIC, existing.slug!);
    return view;
  });
}

/** Deletes the code with its accesses (foreign-key cascade), then frees its slug. */
export async function deleteCode(deps: QrDeps, tenant: TenantDoor, corpId: string, id: string): Promise<void> {
  const existing = await tenant.write(async (tx, w) => {
    const row = await findCode(tx, id);
    await tx.delete(qrCodes).where(eq(qrCodes.id, id)).run();
    w.emit("QRCODE_AFTER_DELETE", id, codeView(deps.ctx.config.publicUrl, row));
    w.record({ type: "qrcode", id, action: "delete", before: row, after: null });
    if (row.slug) await deps.ctx.changes.publish(tx, w, SLUG_TOPIC, row.slug!);
    return row;
  });
  if (existing.slug) await releaseSlug(deps, existing.slug, corpId);
}

export function listCodes(deps: QrDeps, tenant: TenantDoor, query: ListParams) {
  const publicUrl = deps.ctx.config.publicUrl;
  return tenant.read((db) => listRows(db, qrCodes, codeListSpec(publicUrl), query, (row: CodeRow) => codeView(publicUrl, row)));
}

export const CODES_CSV_HEADER = ["id", "name", "kind", "content", "target", "slug", "url", "campaign", "category", "status", "scans", "created_at"];

/** Every code matching the list filters (paging ignored), as CSV with campaign and category names. */
export function exportCodes(deps: QrDeps, tenant: TenantDoor, query: ListParams): Promise<string> {
  if (query.format !== "csv") throw invalid("format", "must be csv");
  const { format: _format, page: _page, limit: _limit, ...filters } = query;
  const publicUrl = deps.ctx.config.publicUrl;
  return tenant.read(async (db) => {
    const { where, order } = listClausesOn(db, qrCodes, codeListSpec(publicUrl), filters);
    const rows = await db
      .select({ ...getTableColumns(qrCodes), campaign: qrCampaigns.name, category: qrCategories.name })
      .from(qrCodes)
      .leftJoin(qrCampaigns, eq(qrCampaigns.id, qrCodes.campaign_id))
      .leftJoin(qrCategories, eq(qrCategories.id, qrCodes.category_id))
      .where(and(where))
      .orderBy(...order, asc(qrCodes.id))
      .all();
    const lines = [csvLine(CODES_CSV_HEADER)];
    for (const r of rows) {
      const v = codeView(publicUrl, r);
      lines.push(csvLine([v.id, v.name, v.kind, v.content, v.target, v.slug, v.url, r.campaign, r.category, v.status, v.scans, v.created_at]));
    }
    return lines.join("");
  });
}

// ---- the public redirect's lookups (slug-cache.ts) ----

/** A slug's corporation and code in the platform index; null when no code has it. */
export function slugIndexEntry(db: PlatformDb, slug: string): Promise<{ corp_id: string; qrcode_id: string } | null> {
  return clientOf(db).query<{ corp_id: string; qrcode_id: string }, [string]>("SELECT corp_id, qrcode_id FROM qr_slugs WHERE slug = ?").get(slug);
}

/** What the redirect needs of a code; null when the row is gone. */
export function redirectRow(db: TenantDb, codeId: string): Promise<{ target: string | null; status: number } | null> {
  return clientOf(db).query<{ target: string | null; status: number }, [string]>("SELECT target, status FROM qr_codes WHERE id = ?").get(codeId);
}

/** The QR codes a ?q finds, as search hits (GET /api/search). */
export async function qrCodeHits(db: TenantDb, publicUrl: string, q: string, limit: number): Promise<{ id: string; title: string; subtitle: string | null }[]> {
  const page = await listRows(db, qrCodes, codeListSpec(publicUrl), { q, limit }, (r: CodeRow) => r);
  return page.items.map((r) => ({ id: r.id, title: r.name, subtitle: r.slug ? `${publicUrl}/q/${r.slug}` : r.content ?? null }));
}
