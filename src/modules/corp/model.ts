import { t, type Static } from "elysia";
import { Opt, Uuid } from "../../lib/schemas";

export const AUTH_NAME_PATTERN = "^[a-z0-9][a-z0-9-]{1,62}$";
export const CORP_STATUSES = ["ENABLED", "BLOCKED", "MAINTENANCE", "NEEDS_UPDATE"] as const;

export const Corporation = t.Object({
  id: Uuid,
  auth_name: t.String(),
  company_name: t.String(),
  trade_name: t.Union([t.String(), t.Null()]),
  doc_identity: t.Union([t.String(), t.Null()]),
  email: t.Union([t.String(), t.Null()]),
  phone: t.Union([t.String(), t.Null()]),
  timezone: t.String(),
  server_id: Uuid,
  status: t.UnionEnum([...CORP_STATUSES]),
  created_at: t.String(),
  updated_at: t.String(),
});
export type Corporation = Static<typeof Corporation>;

export const CorporationInput = t.Object({
  auth_name: t.String({ pattern: AUTH_NAME_PATTERN }),
  company_name: t.String({ minLength: 1, maxLength: 200 }),
  trade_name: Opt(t.String({ maxLength: 200 })),
  doc_identity: Opt(t.String({ maxLength: 64 })),
  email: Opt(t.String({ format: "email", maxLength: 254 })),
  phone: Opt(t.String({ maxLength: 40 })),
  timezone: Opt(t.String({ minLength: 1, maxLength: 64 })),
  server_id: Opt(Uuid),
});
export type CorporationInput = Static<typeof CorporationInput>;
