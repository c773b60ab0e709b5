// Logos, campaigns and categories (qr_logos, qr_campaigns, qr_categories): the things a QR code
// may point at. Deleting one that a code uses is a 409 (the foreign keys would refuse it anyway;
// this says which). They raise no events.
import { count, eq, getTableColumns } from "drizzle-orm";
import { trackedWrite } from "../../core/history";
import type { TenantDoor } from "../../core/store";
import { qrCampaigns, qrCategories, qrCodes, qrLogos } from "../../db/tenant/schema";
import type { TenantDb } from "../../db/sqlite";
import { listClausesOn, listRows, paging, type ListParams } from "../../db/list";
import { conflict, invalid, notFound } from "../../lib/problem";
import { canonicalDate } from "../../lib/time";
import { decodeLogo, MAX_LOGO_SIDE, sniffImage } from "./image";
import { MAX_LOGO_BYTES, type QrCampaign, type QrCampaignInput, type QrCategory, type QrCategoryInput, type QrLogo, type QrLogoInput } from "./model";

type LogoRow = typeof qrLogos.$inferSelect;

// ---- logos ----

function logoView(row: LogoRow, withData: boolean): QrLogo {
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

async function findLogo(db: TenantDb, id: string): Promise<LogoRow> {
  const row = await db.select().from(qrLogos).where(eq(qrLogos.id, id)).get();
  if (!row) throw notFound("Logo");
  return row;
}

/** A logo, with its data (404 when unknown). */
export function getLogo(tenant: TenantDoor, id: string): Promise<QrLogo> {
  return tenant.read(async (db) => logoView(await findLogo(db, id), true));
}

export function listLogos(tenant: TenantDoor, query: ListParams) {
  const { data: _data, ...columns } = getTableColumns(qrLogos);
  const spec = { q: [qrLogos.name] };
  const { page, limit, offset } = paging(query);
  return tenant.read(async (db) => {
    const { where, order } = listClausesOn(db, qrLogos, spec, query);
    const total = (await db.select({ n: count() }).from(qrLogos).where(where).get())!.n;
    const items = await db.select(columns).from(qrLogos).where(where).orderBy(...order).limit(limit).offset(offset).all();
    return { items, page, limit, total };
  });
}

export function createLogo(tenant: TenantDoor, input: QrLogoInput): Promise<QrLogo> {
  const data = logoData(input);
  return trackedWrite(tenant, "logo", null, logoSnapshot, async (tx) => {
    const row = await tx.insert(qrLogos).values({ name: input.name, content_type: input.content_type, data, size: data.length }).returning().get();
    return logoView(row, true);
  });
}

export function updateLogo(tenant: TenantDoor, id: string, input: QrLogoInput): Promise<QrLogo> {
  return trackedWrite(tenant, "logo", id, logoSnapshot, async (tx) => {
    await findLogo(tx, id);
    const data = logoData(input);
    const row = await tx
      .update(qrLogos)
      .set({ name: input.name, content_type: input.content_type, data, size: data.length })
      .where(eq(qrLogos.id, id))
      .returning()
      .get();
    return logoView(row, true);
  });
}

export function deleteLogo(tenant: TenantDoor, id: string): Promise<void> {
  return trackedWrite(tenant, "logo", id, logoSnapshot, async (tx) => {
    await findLogo(tx, id);
    if (await tx.select({ id: qrCodes.id }).from(qrCodes).where(eq(qrCodes.logo_id, id)).limit(1).get()) throw conflict("The logo is used by a QR code");
    await tx.delete(qrLogos).where(eq(qrLogos.id, id)).run();
  });
}

// The records as their history compares them (core/history.ts); a logo's image as its digest.
const logoSnapshot = async (db: TenantDb, id: string) => {
  const row = await db.select().from(qrLogos).where(eq(qrLogos.id, id)).get();
  return row ? { ...row, data: Buffer.from(row.data as Uint8Array).toString("base64") } : null;
};
const campaignSnapshot = async (db: TenantDb, id: string) => (await db.select().from(qrCampaigns).where(eq(qrCampaigns.id, id)).get()) ?? null;
const categorySnapshot = async (db: TenantDb, id: string) => (await db.select().from(qrCategories).where(eq(qrCategories.id, id)).get()) ?? null;

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

async function nameTaken(db: TenantDb, table: typeof qrCampaigns | typeof qrCategories, name: string, exceptId: string | null): Promise<boolean> {
  const row = await db.select({ id: table.id }).from(table).where(eq(table.name, name)).get();
  return !!row && row.id !== exceptId;
}

async function findCampaign(db: TenantDb, id: string): Promise<CampaignRow> {
  const row = await db.select().from(qrCampaigns).where(eq(qrCampaigns.id, id)).get();
  if (!row) throw notFound("Campaign");
  return row;
}

export const getCampaign = (tenant: TenantDoor, id: string): Promise<QrCampaign> => tenant.read((db) => findCampaign(db, id));

export const listCampaigns = (tenant: TenantDoor, query: ListParams) =>
  tenant.read((db) => listRows(db, qrCampaigns, { q: [qrCampaigns.name] }, query, (r: CampaignRow): QrCampaign => r));

export function createCampaign(tenant: TenantDoor, input: QrCampaignInput): Promise<QrCampaign> {
  const values = campaignValues(input);
  return trackedWrite(tenant, "campaign", null, campaignSnapshot, async (tx) => {
    if (await nameTaken(tx, qrCampaigns, values.name, null)) throw conflict(`campaign name '${values.name}' is taken`);
    return tx.insert(qrCampaigns).values(values).returning().get();
  });
}

export function updateCampaign(tenant: TenantDoor, id: string, input: QrCampaignInput): Promise<QrCampaign> {
  return trackedWrite(tenant, "campaign", id, campaignSnapshot, async (tx) => {
    await findCampaign(tx, id);
    const values = campaignValues(input);
    if (await nameTaken(tx, qrCampaigns, values.name, id)) throw conflict(`campaign name '${values.name}' is taken`);
    return tx.update(qrCampaigns).set(values).where(eq(qrCampaigns.id, id)).returning().get();
  });
}

export function deleteCampaign(tenant: TenantDoor, id: string): Promise<void> {
  return trackedWrite(tenant, "campaign", id, campaignSnapshot, async (tx) => {
    await findCampaign(tx, id);
    if (await tx.select({ id: qrCodes.id }).from(qrCodes).where(eq(qrCodes.campaign_id, id)).limit(1).get()) throw conflict("The campaign is used by a QR code");
    await tx.delete(qrCampaigns).where(eq(qrCampaigns.id, id)).run();
  });
}

// ---- categories ----

type CategoryRow = typeof qrCategories.$inferSelect;

async function findCategory(db: TenantDb, id: string): Promise<CategoryRow> {
  const row = await db.select().from(qrCategories).where(eq(qrCategories.id, id)).get();
  if (!row) throw notFound("Category");
  return row;
}

export const getCategory = (tenant: TenantDoor, id: string): Promise<QrCategory> => tenant.read((db) => findCategory(db, id));

export const listCategories = (tenant: TenantDoor, query: ListParams) =>
  tenant.read((db) => listRows(db, qrCategories, { q: [qrCategories.name] }, query, (r: CategoryRow): QrCategory => r));

export function createCategory(tenant: TenantDoor, input: QrCategoryInput): Promise<QrCategory> {
  return trackedWrite(tenant, "category", null, categorySnapshot, async (tx) => {
    if (await nameTaken(tx, qrCategories, input.name, null)) throw conflict(`category name '${input.name}' is taken`);
    return tx.insert(qrCategories).values({ name: input.name, description: input.description ?? null }).returning().get();
  });
}

export function updateCategory(tenant: TenantDoor, id: string, input: QrCategoryInput): Promise<QrCategory> {
  return trackedWrite(tenant, "category", id, categorySnapshot, async (tx) => {
    await findCategory(tx, id);
    if (await nameTaken(tx, qrCategories, input.name, id)) throw conflict(`category name '${input.name}' is taken`);
    return tx.update(qrCategories).set({ name: input.name, description: input.description ?? null }).where(eq(qrCategories.id, id)).returning().get();
  });
}

export function deleteCategory(tenant: TenantDoor, id: string): Promise<void> {
  return trackedWrite(tenant, "category", id, categorySnapshot, async (tx) => {
    await findCategory(tx, id);
    if (await tx.select({ id: qrCodes.id }).from(qrCodes).where(eq(qrCodes.category_id, id)).limit(1).get()) throw conflict("The category is used by a QR code");
    await tx.delete(qrCategories).where(eq(qrCategories.id, id)).run();
  });
}
