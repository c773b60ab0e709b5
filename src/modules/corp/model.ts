import { t, type Static } from "elysia";
import { Opt, Uuid, Enum } from "../../lib/schemas";
import { Action } from "../catalog/model";

export const AUTH_NAME_PATTERN = "^[a-z0-9][a-z0-9-]{1,62}$";
export const CORP_STATUSES = ["ENABLED", "BLOCKED", "MAINTENANCE", "NEEDS_UPDATE"] as const;

export const Corporation = t.Object({
  id: Uuid,
  auth_name: t.String(),
  company_name: t.String(),
  trade_name: t.Union([t.String(), t.Null()]),
  doc_identity: t.Union([t.String(), t.Null()]),
  email: t.Union([t.String(), t.Null()]),
  /** The NOC's address: e-mailed when a NAS of the corporation turns quiet. */
  noc_email: t.Union([t.String(), t.Null()]),
  phone: t.Union([t.String(), t.Null()]),
  timezone: t.String(),
  server_id: Uuid,
  status: Enum([...CORP_STATUSES]),
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
  noc_email: Opt(t.String({ format: "email", maxLength: 254 })),
  phone: Opt(t.String({ maxLength: 40 })),
  timezone: Opt(t.String({ minLength: 1, maxLength: 64 })),
  server_id: Opt(Uuid),
});
export type CorporationInput = Static<typeof CorporationInput>;

export const CorpIdParams = t.Object({ id: Uuid });
export const CorpUserParams = t.Object({ id: Uuid, userId: Uuid });
export const CorpServiceParams = t.Object({ id: Uuid, serviceId: Uuid });
export const AuthNameParams = t.Object({ authName: t.String({ minLength: 1, maxLength: 64 }) });

export const CorpCheckBody = t.Object({ auth_name: t.String({ minLength: 1, maxLength: 64 }) });
export const CorpCheck = t.Object({
  auth_name: t.String(),
  exists: t.Boolean(),
  status: t.Union([t.String(), t.Null()]),
  usable: t.Boolean(),
});
export type CorpCheck = Static<typeof CorpCheck>;

export const CorpTree = t.Object({
  services: t.Array(
    t.Object({
      id: Uuid,
      identifier: t.String(),
      name: t.String(),
      features: t.Array(t.Object({ id: Uuid, name: t.String(), actions: t.Array(Action) })),
    }),
  ),
});
export type CorpTree = Static<typeof CorpTree>;
