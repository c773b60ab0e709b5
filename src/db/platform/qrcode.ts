import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { corporations } from "./corporations";

/**
 * The QR slug index: slugs are unique across every corporation, and the public redirect finds a
 * slug's corporation here before opening its database. Deleting a corporation frees its slugs.
 */
export const qrSlugs = sqliteTable(
  "qr_slugs",
  {
    slug: text("slug").primaryKey(),
    corp_id: text("corp_id")
      .notNull()
      .references(() => corporations.id, { onDelete: "cascade" }),
    qrcode_id: text("qrcode_id").notNull(),
    created_at: text("created_at").notNull(),
  },
  (t) => [index("qr_slugs_corp").on(t.corp_id)],
);
