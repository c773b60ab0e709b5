// Logos, campaigns and categories: the things a QR code may point at. Deleting one that a code
// uses is a 409 (the foreign keys would refuse it anyway; this says which).
import { count, eq, getTableColumns } from "drizzle-orm";
import { qrCampaigns, qrCategories, qrCodes, qrLogos } from "../../db/tenant/schema";
import type { TenantDb } from "../../db/sqlite";
import { listClauses, listRows, paging, type ListParams } from "../../lib/list";
import { conflict, invalid, notFound } from "../../lib/problem";
import { canonicalDate } from "../../lib/time";
import { decodeLogo, MAX_LOGO_SIDE, sniffImage } from "./image";
import { MAX_LOGO_BYTES, type QrCampaign, type QrCampaignInput, type QrCategory, type QrCategoryInput, type QrLogo, type QrLogoInput } from "./model";

type LogoRow = typeof qrLogos.$inferSelect;

// ---- logos ----

export function logoView(row: LogoRow, withData: boolean): QrLogo {
  const { data, ...rest } = row;
  return withData ? { ...rest, data: Buffer.from(data).toString("base64") } : rest;
}

/** Decodes and checks an upload: base64, at most 512 KiB, a PNG or JPEG (by its magic bytes) that decodes. */
function logoData(input: QrLogoInput): Buffer {
  const text = input.data.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) throw invalid("data", "is not base64");
  const data = Buffer.from(text, "base64");
  if (data.length === 0) throw invalid("data", "is empty");
  if (data.length > MAX_LOGO_BYTES) throw invalid("data", `is ${data.length} bytes; at most ${MAX_LOGO_BYTES} (512 KiB) are accepted`);
  const kind = sniffImage(data);
  if (!kind) throw invalid("data", "is not a PNG or JPEG image");
  if (kind !== input.content_type) throw invalid("content_type", `does not match the data, which is ${kind}`);
  try {
    decodeLogo({ content_type: kind, data });
  } catch (err) {
    throw invalid("data", `cannot be decoded as ${kind} (corrupt, or larger than ${MAX_LOGO_SIDE} px a side)`);
  }
  return data;
}

export function findLogo(db: TenantDb, id: string): LogoRow {
  const row = db.select().from(qrLogos).where(eq(qrLogos.id, id)).get();
  if (!row) throw notFound("Logo");
  return row;
}

export function listLogos(db: TenantDb, query: ListParams) {
  const { data: _data, ...columns } = getTableColumns(qrLogos);
  const spec = { q: [qrLogos.name] };
  const { page, limit, offset } = paging(query);
  const { where, order } = listClauses(qrLogos, spec, query);
  const total = db.select({ n: count() }).from(qrLogos).where(where).get()!.n;
  const items = db.select(columns).from(qrLogos).where(where).orderBy(...order).limit(limit).offset(offset).all();
  return { items, page, limit, total };
}

export function createLogo(db: TenantDb, input: QrLogoInput): QrLogo {
  const data = logoData(input);
  const row = db.insert(qrLogos).values({ name: input.name, content_type: input.content_type, data, size: data.length }).returning().get();
  return logoView(row, true);
}

export function updateLogo(db: TenantDb, id: string, input: QrLogoInput): QrLogo {
  findLogo(db, id);
  const data = logoData(input);
  const row = db
    .update(qrLogos)
    .set({ name: input.name, content_type: input.content_type, data, size: data.length })
    .where(eq(qrLogos.id, id))
    .returning()
    .get();
  return logoView(row, true);
}

export function deleteLogo(db: TenantDb, id: string): void {
  findLogo(db, id);
  if (db.select({ id: qrCodes.id }).from(qrCodes).where(eq(qrCodes.logo_id, id)).limit(1).get()) throw conflict("The logo is used by a QR code");
  db.delete(qrLogos).where(eq(qrLogos.id, id)).run();
}

// ---- campaigns ----

type CampaignRow = typeof qrCampaigns.$inferSelect;

function campaignValues(input: QrCampaignInput) {
  const date = (field: "start_date" | "end_date") => {
    const v = input[field];
    if (v == null) return null;
    const d = canonicalDate(v);
    if (!d) throw invalid(field, "is not a date (YYYY-MM-DD)");
    return d;
  };
  const start_date = date("start_date");
  const end_date = date("end_date");
  if (start_date && end_date && end_date < start_date) throw invalid("end_date", "must not be before start_date");
  return { name: input.name, description: input.description ?? null, start_date, end_date };
}

function nameTaken(db: TenantDb, table: typeof qrCampaigns | typeof qrCategories, name: string, exceptId: string | null): boolean {
  const row = db.select({ id: table.id }).from(table).where(eq(table.name, name)).get();
  return !!row && row.id !== exceptId;
}

export function findCampaign(db: TenantDb, id: string): CampaignRow {
  const row = db.select().from(qrCampaigns).where(eq(qrCampaigns.id, id)).get();
  if (!row) throw notFound("Campaign");
  return row;
}

export const listCampaigns = (db: TenantDb, query: ListParams) =>
  listRows(db, qrCampaigns, { q: [qrCampaigns.name] }, query, (r: CampaignRow): QrCampaign => r);

export function createCampaign(db: TenantDb, input: QrCampaignInput): QrCampaign {
  const values = campaignValues(input);
  if (nameTaken(db, qrCampaigns, values.name, null)) throw conflict(`campaign name '${values.name}' is taken`);
  return db.insert(qrCampaigns).values(values).returning().get();
}

export function updateCampaign(db: TenantDb, id: string, input: QrCampaignInput): QrCampaign {
  findCampaign(db, id);
  const values = campaignValues(input);
  if (nameTaken(db, qrCampaigns, values.name, id)) throw conflict(`campaign name '${values.name}' is taken`);
  return db.update(qrCampaigns).set(values).where(eq(qrCampaigns.id, id)).returning().get();
}

export function deleteCampaign(db: TenantDb, id: string): void {
  findCampaign(db, id);
  if (db.select({ id: qrCodes.id }).from(qrCodes).where(eq(qrCodes.campaign_id, id)).limit(1).get()) throw conflict("The campaign is used by a QR code");
  db.delete(qrCampaigns).where(eq(qrCampaigns.id, id)).run();
}

// ---- categories ----

type CategoryRow = typeof qrCategories.$inferSelect;

export function findCategory(db: TenantDb, id: string): CategoryRow {
  const row = db.select().from(qrCategories).where(eq(qrCategories.id, id)).get();
  if (!row) throw notFound("Category");
  return row;
}

export const listCategories = (db: TenantDb, query: ListParams) =>
  listRows(db, qrCategories, { q: [qrCategories.name] }, query, (r: CategoryRow): QrCategory => r);

export function createCategory(db: TenantDb, input: QrCategoryInput): QrCategory {
  if (nameTaken(db, qrCategories, input.name, null)) throw conflict(`category name '${input.name}' is taken`);
  return db.insert(qrCategories).values({ name: input.name, description: input.description ?? null }).returning().get();
}

export function updateCategory(db: TenantDb, id: string, input: QrCategoryInput): QrCategory {
  findCategory(db, id);
  if (nameTaken(db, qrCategories, input.name, id)) throw conflict(`category name '${input.name}' is taken`);
  return db.update(qrCategories).set({ name: input.name, description: input.description ?? null }).where(eq(qrCategories.id, id)).returning().get();
}

export function deleteCategory(db: TenantDb, id: string): void {
  findCategory(db, id);
  if (db.select({ id: qrCodes.id }).from(qrCodes).where(eq(qrCodes.category_id, id)).limit(1).get()) throw conflict("The category is used by a QR code");
  db.delete(qrCategories).where(eq(qrCategories.id, id)).run();
}
