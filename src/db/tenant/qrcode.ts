import { blob, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { bool, idColumn, timestamps } from "../columns";

export const qrCampaigns = sqliteTable("qr_campaigns", {
  id: idColumn(),
  name: text("name").notNull().unique(),
  description: text("description"),
  start_date: text("start_date"),
  end_date: text("end_date"),
  ...timestamps,
});

export const qrCategories = sqliteTable("qr_categories", {
  id: idColumn(),
  name: text("name").notNull().unique(),
  description: text("description"),
  ...timestamps,
});

export const qrLogos = sqliteTable("qr_logos", {
  id: idColumn(),
  name: text("name").notNull(),
  content_type: text("content_type", { enum: ["image/png", "image/jpeg"] }).notNull(),
  data: blob("data", { mode: "buffer" }).notNull(),
  size: integer("size").notNull(),
  ...timestamps,
});

/**
 * A QR code. `url` and `encoded` are derived (PUBLIC_URL + slug, or content), never stored.
 * `scans` counts every scan the code ever had: kept by the access flusher so that lists sort by it
 * without counting, and not lowered when housekeeping prunes old accesses.
 * Campaigns, categories and logos are referenced without cascade: deleting a used one is a 409.
 */
export const qrCodes = sqliteTable(
  "qr_codes",
  {
    id: idColumn(),
    name: text("name").notNull(),
    kind: text("kind", { enum: ["static", "dynamic"] }).notNull(),
    content: text("content"),
    target: text("target"),
    slug: text("slug").unique(),
    campaign_id: text("campaign_id").references(() => qrCampaigns.id),
    category_id: text("category_id").references(() => qrCategories.id),
    logo_id: text("logo_id").references(() => qrLogos.id),
    status: bool("status").notNull().default(true),
    scans: integer("scans").notNull().default(0),
    ...timestamps,
  },
  (t) => [
    index("qr_codes_campaign").on(t.campaign_id),
    index("qr_codes_category").on(t.category_id),
    index("qr_codes_logo").on(t.logo_id),
  ],
);

/**
 * One scan of a dynamic code. `visitor` is a 64-bit hash of (ip, user agent), null for bots, so
 * that `COUNT(DISTINCT visitor)` is the unique-visitor count straight from the covering index.
 * Scans are the one table written at request rate, so each row costs as few b-tree inserts as
 * possible: the table itself keyed by an integer (appended at the end), and one index that serves
 * every query (the all-codes report walks it code by code). `id` is a plain column: the writer
 * checks it only when a batch is sent again after an unclear failure (access-writer.ts).
 */
export const qrAccesses = sqliteTable(
  "qr_accesses",
  {
    seq: integer("seq").primaryKey(),
    id: text("id").notNull(),
    qrcode_id: text("qrcode_id")
      .notNull()
      .references(() => qrCodes.id, { onDelete: "cascade" }),
    at: text("at").notNull(),
    ip: text("ip").notNull(),
    user_agent: text("user_agent"),
    referer: text("referer"),
    bot: bool("bot").notNull().default(false),
    visitor: integer("visitor"),
  },
  (t) => [index("qr_accesses_code_at").on(t.qrcode_id, t.at, t.visitor)],
);
