// Schemas of the QRCode group (routes.md: QrCode, QrAccess, QrLogo, QrCampaign, QrCategory).
import { t, type Static } from "elysia";
import { DateText, Enum, Instant, Int, ListQuery, Nullable, Opt, Uuid } from "../../lib/schemas";

export const SLUG_PATTERN = "^[A-Za-z0-9_-]{3,64}$";
export const HEX_COLOUR = "^#?[0-9A-Fa-f]{6}$";
/** 512 KiB decoded (routes.md, QrLogo). */
export const MAX_LOGO_BYTES = 512 * 1024;

export const QrCode = t.Object({
  id: Uuid,
  name: t.String(),
  kind: Enum(["static", "dynamic"]),
  content: Nullable(t.String()),
  target: Nullable(t.String()),
  slug: Nullable(t.String()),
  url: Nullable(t.String()),
  encoded: t.String(),
  campaign_id: Nullable(Uuid),
  category_id: Nullable(Uuid),
  logo_id: Nullable(Uuid),
  status: t.Boolean(),
  scans: Int(),
  created_at: t.String(),
  updated_at: t.String(),
});
export type QrCode = Static<typeof QrCode>;

export const QrCodeInput = t.Object({
  name: t.String({ minLength: 1, maxLength: 200 }),
  kind: Enum(["static", "dynamic"]),
  content: Opt(t.String({ minLength: 1, maxLength: 2000 })),
  target: Opt(t.String({ minLength: 1, maxLength: 2000 })),
  slug: Opt(t.String({ pattern: SLUG_PATTERN })),
  campaign_id: Opt(Uuid),
  category_id: Opt(Uuid),
  logo_id: Opt(Uuid),
});
export type QrCodeInput = Static<typeof QrCodeInput>;

export const QrAccess = t.Object({
  id: Uuid,
  qrcode_id: Uuid,
  at: t.String(),
  ip: t.String(),
  user_agent: Nullable(t.String()),
  referer: Nullable(t.String()),
  bot: t.Boolean(),
  created_at: t.String(),
  updated_at: t.String(),
});
export type QrAccess = Static<typeof QrAccess>;

/** `from`/`to`: an instant with offset, or a date in the corporation's timezone. */
const Range = {
  from: t.Optional(Instant),
  to: t.Optional(Instant),
};
export const RangeQuery = t.Object(Range);
export const AccessListQuery = t.Composite([ListQuery, t.Object(Range)], { additionalProperties: true });
export const AccessExportQuery = t.Object({ format: Enum(["csv"]), ...Range });

export const Report = t.Object({
  qrcode_id: Uuid,
  from: t.String(),
  to: t.String(),
  total: t.Integer(),
  unique_visitors: t.Integer(),
  days: t.Array(t.Object({ date: t.String(), total: t.Integer(), unique_visitors: t.Integer() })),
});
export type Report = Static<typeof Report>;

export const AllReportQuery = t.Object({
  ...Range,
  group_by: t.Optional(Enum(["qrcode", "campaign", "category"])),
  campaign_id: t.Optional(Uuid),
  category_id: t.Optional(Uuid),
});
export const AllReport = t.Object({
  from: t.String(),
  to: t.String(),
  total: t.Integer(),
  unique_visitors: t.Integer(),
  groups: t.Array(t.Object({ id: Nullable(Uuid), name: Nullable(t.String()), total: t.Integer(), unique_visitors: t.Integer() })),
});
export type AllReport = Static<typeof AllReport>;

export const ImageQuery = t.Object({
  format: t.Optional(Enum(["png", "svg"])),
  // Ranges are checked by the handler: Elysia reports a coerced query number out of range without
  // its field name, and a 400 must name the field.
  size: t.Optional(t.Integer({ description: "pixels, 64..4096 (default 512)" })),
  margin: t.Optional(t.Integer({ description: "modules, 0..16 (default 4)" })),
  dark: t.Optional(t.String({ pattern: HEX_COLOUR })),
  light: t.Optional(t.String({ pattern: HEX_COLOUR })),
  ecc: t.Optional(Enum(["L", "M", "Q", "H"])),
  logo: t.Optional(t.Boolean()),
});
export type ImageQuery = Static<typeof ImageQuery>;

export const ExportQuery = t.Composite([ListQuery, t.Object({ format: Enum(["csv"]) })], { additionalProperties: true });

export const QrLogo = t.Object({
  id: Uuid,
  name: t.String(),
  content_type: Enum(["image/png", "image/jpeg"]),
  data: t.Optional(t.String()),
  size: Int(),
  created_at: t.String(),
  updated_at: t.String(),
});
export type QrLogo = Static<typeof QrLogo>;
/**
 * Schemas the routes derive from the named ones. Kept under one object so that the OpenAPI
 * document does not publish them by name (system/openapi-schemas.ts names exported schemas).
 */
export const derived = {
  /** A logo as lists show it: without its data. */
  QrLogoListed: t.Omit(QrLogo, ["data"]),
};

export const QrLogoInput = t.Object({
  name: t.String({ minLength: 1, maxLength: 200 }),
  content_type: Enum(["image/png", "image/jpeg"]),
  // The 512 KiB limit is checked on the decoded bytes, with a message that says so.
  data: t.String({ minLength: 1, maxLength: 1_000_000 }),
});
export type QrLogoInput = Static<typeof QrLogoInput>;

export const QrCampaign = t.Object({
  id: Uuid,
  name: t.String(),
  description: Nullable(t.String()),
  start_date: Nullable(t.String()),
  end_date: Nullable(t.String()),
  created_at: t.String(),
  updated_at: t.String(),
});
export type QrCampaign = Static<typeof QrCampaign>;

export const QrCampaignInput = t.Object({
  name: t.String({ minLength: 1, maxLength: 200 }),
  description: Opt(t.String({ maxLength: 2000 })),
  start_date: Opt(DateText),
  end_date: Opt(DateText),
});
export type QrCampaignInput = Static<typeof QrCampaignInput>;

export const QrCategory = t.Object({
  id: Uuid,
  name: t.String(),
  description: Nullable(t.String()),
  created_at: t.String(),
  updated_at: t.String(),
});
export type QrCategory = Static<typeof QrCategory>;

export const QrCategoryInput = t.Object({
  name: t.String({ minLength: 1, maxLength: 200 }),
  description: Opt(t.String({ maxLength: 2000 })),
});
export type QrCategoryInput = Static<typeof QrCategoryInput>;
