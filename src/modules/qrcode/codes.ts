// QR codes: create, update, active/inactive, delete, list and CSV export. Dynamic codes also own a
// row of the platform slug index, written before the tenant row and removed if that fails.
import { and, asc, eq, getTableColumns, sql } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { qrCampaigns, qrCategories, qrCodes, qrLogos } from "../../db/tenant/schema";
import { writeTx, type TenantDb } from "../../db/sqlite";
import { recordEvent } from "../../core/events";
import { newId, randomBase62 } from "../../lib/ids";
import { listClauses, listRows, type ListParams, type ListSpec } from "../../lib/list";
import { conflict, invalid, invalidMany, notFound, type FieldError } from "../../lib/problem";
import { nowIso } from "../../lib/time";
import { unchanged } from "../../lib/unchanged";
import { csvLine } from "../../lib/csv";
import { symbolOf } from "./image";
import type { QrCode, QrCodeInput } from "./model";
import type { SlugCache } from "./redirect";

export type CodeRow = typeof qrCodes.$inferSelect;

const CODE_Q = [qrCodes.name, qrCodes.content, qrCodes.target, qrCodes.slug];

/** The list spec of codes; `url` and `encoded` are derived as codeView derives them, so lists sort and filter by them too. */
export function codeListSpec(publicUrl: string): ListSpec {
  const url = sql`CASE WHEN ${qrCodes.slug} IS NULL THEN NULL ELSE ${publicUrl + "/q/"} || ${qrCodes.slug} END`;
  const encoded = sql`CASE WHEN ${qrCodes.kind} = 'dynamic' THEN ${url} ELSE coalesce(${qrCodes.content}, '') END`;
  return { q: CODE_Q, computed: { url: { expr: url, dataType: "string" }, encoded: { expr: encoded, dataType: "string" } } };
}

export interface QrDeps {
  ctx: AppContext;
  slugs: SlugCache;
}

export function codeView(publicUrl: string, row: CodeRow): QrCode {
  const url = row.slug ? `${publicUrl}/q/${row.slug}` : null;
  return { ...row, url, encoded: row.kind === "dynamic" ? url! : (row.content ?? "") };
}

export function findCode(db: TenantDb, id: string): CodeRow {
  const row = db.select().from(qrCodes).where(eq(qrCodes.id, id)).get();
  if (!row) throw notFound("QR code");
  return row;
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
function checkInput(db: TenantDb, input: QrCodeInput, existing: CodeRow | null): void {
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
    if (id != null && !db.select({ id: table.id }).from(table).where(eq(table.id, id)).get()) {
      errors.push({ path: field, message: "unknown id" });
    }
  }
  if (errors.length) throw invalidMany(errors);
  // Checked last: the level-L capacity is the most generous, so anything longer can never be drawn.
  if (input.kind === "static") symbolOf(input.content!, "L", false, "content");
}

const insertSlugSql = "INSERT OR IGNORE INTO qr_slugs (slug, corp_id, qrcode_id, created_at) VALUES (?, ?, ?, ?)";
const deleteSlugSql = "DELETE FROM qr_slugs WHERE slug = ? AND corp_id = ?";

/** Claims a slug in the platform index: the given one (409 when taken) or a fresh random one. */
function claimSlug(ctx: AppContext, corpId: string, codeId: string, wanted: string | null | undefined): string {
  const insert = ctx.platform.$client.query(insertSlugSql);
  if (wanted != null) {
    if (insert.run(wanted, corpId, codeId, nowIso()).changes === 0) throw conflict(`slug '${wanted}' is taken`);
    return wanted;
  }
  for (;;) {
    const slug = randomBase62(8);
    if (insert.run(slug, corpId, codeId, nowIso()).changes === 1) return slug;
  }
}

export function createCode(deps: QrDeps, db: TenantDb, corpId: string, input: QrCodeInput): QrCode {
  const { ctx } = deps;
  checkInput(db, input, null);
  const id = newId();
  const slug = input.kind === "dynamic" ? claimSlug(ctx, corpId, id, input.slug) : null;
  let view: QrCode;
  try {
    view = writeTx(db, (tx) => {
      const row = tx
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
      const v = codeView(ctx.config.publicUrl, row);
      recordEvent(tx, "QRCODE_AFTER_INSERT", id, v);
      return v;
    });
  } catch (err) {
    if (slug) ctx.platform.$client.query(deleteSlugSql).run(slug, corpId);
    throw err;
  }
  ctx.events.committed(corpId);
  if (slug) deps.slugs.forget(slug);
  return view;
}

export function updateCode(deps: QrDeps, db: TenantDb, corpId: string, id: string, input: QrCodeInput): QrCode {
  const existing = findCode(db, id);
  checkInput(db, input, existing);
  const columns = {
    name: input.name,
    content: input.content ?? null,
    target: existing.kind === "dynamic" ? input.target! : null,
    campaign_id: input.campaign_id ?? null,
    category_id: input.category_id ?? null,
    logo_id: input.logo_id ?? null,
  };
  // Nothing to change: no write, the same updated_at, no event (as setCodeStatus). The row was
  // read in this same synchronous turn; the only other writer of qr_codes (the access writer)
  // changes scans alone, which is not compared.
  if (unchanged(existing, columns)) return codeView(deps.ctx.config.publicUrl, existing);
  const view = writeTx(db, (tx) => {
    const row = tx
      .update(qrCodes)
      .set(columns)
      .where(eq(qrCodes.id, id))
      .returning()
      .get();
    const v = codeView(deps.ctx.config.publicUrl, row);
    recordEvent(tx, "QRCODE_AFTER_UPDATE", id, v);
    return v;
  });
  deps.ctx.events.committed(corpId);
  if (existing.slug) deps.slugs.forget(existing.slug);
  return view;
}

export function setCodeStatus(deps: QrDeps, db: TenantDb, corpId: string, id: string, status: boolean): QrCode {
  const existing = findCode(db, id);
  if (existing.status === status) return codeView(deps.ctx.config.publicUrl, existing);
  const view = writeTx(db, (tx) => {
    const row = tx.update(qrCodes).set({ status }).where(eq(qrCodes.id, id)).returning().get();
    const v = codeView(deps.ctx.config.publicUrl, row);
    recordEvent(tx, "QRCODE_AFTER_UPDATE", id, v);
    return v;
  });
  deps.ctx.events.committed(corpId);
  if (existing.slug) deps.slugs.forget(existing.slug);
  return view;
}

/** Deletes the code with its accesses (foreign-key cascade), then frees its slug. */
export function deleteCode(deps: QrDeps, db: TenantDb, corpId: string, id: string): void {
  const existing = findCode(db, id);
  writeTx(db, (tx) => {
    tx.delete(qrCodes).where(eq(qrCodes.id, id)).run();
    recordEvent(tx, "QRCODE_AFTER_DELETE", id, codeView(deps.ctx.config.publicUrl, existing));
  });
  deps.ctx.events.committed(corpId);
  if (existing.slug) {
    deps.ctx.platform.$client.query(deleteSlugSql).run(existing.slug, corpId);
    deps.slugs.forget(existing.slug);
  }
}

export function listCodes(deps: QrDeps, db: TenantDb, query: ListParams) {
  return listRows(db, qrCodes, codeListSpec(deps.ctx.config.publicUrl), query, (row: CodeRow) => codeView(deps.ctx.config.publicUrl, row));
}

export const CODES_CSV_HEADER = ["id", "name", "kind", "content", "target", "slug", "url", "campaign", "category", "status", "scans", "created_at"];

/** Every code matching the list filters (paging ignored), as CSV with campaign and category names. */
export function exportCodes(deps: QrDeps, db: TenantDb, query: ListParams): string {
  if (query.format !== "csv") throw invalid("format", "must be csv");
  const { format: _format, page: _page, limit: _limit, ...filters } = query;
  const { where, order } = listClauses(qrCodes, codeListSpec(deps.ctx.config.publicUrl), filters);
  const rows = db
    .select({ ...getTableColumns(qrCodes), campaign: qrCampaigns.name, category: qrCategories.name })
    .from(qrCodes)
    .leftJoin(qrCampaigns, eq(qrCampaigns.id, qrCodes.campaign_id))
    .leftJoin(qrCategories, eq(qrCategories.id, qrCodes.category_id))
    .where(and(where))
    .orderBy(...order, asc(qrCodes.id))
    .all();
  const lines = [csvLine(CODES_CSV_HEADER)];
  for (const r of rows) {
    const v = codeView(deps.ctx.config.publicUrl, r);
    lines.push(csvLine([v.id, v.name, v.kind, v.content, v.target, v.slug, v.url, r.campaign, r.category, v.status, v.scans, v.created_at]));
  }
  return lines.join("");
}
