import { t, type Static } from "elysia";
import { Uuid, Enum } from "../../lib/schemas";
import { CorpsMap } from "../user/model";

export const Credentials = t.Object({
  access_token: t.String(),
  token_type: t.Literal("bearer"),
  expires_in: t.Integer(),
  credentials: t.Object({
    user: t.Object({
      id: Uuid,
      name: t.String(),
      email: t.String(),
      login: t.String(),
      status: t.Boolean(),
      two_factor_required: t.Boolean(),
      corps: CorpsMap,
    }),
    corp: Uuid,
    permission: t.Object({ admin: t.Array(t.String()), allow: t.Array(t.String()) }),
  }),
});
export type Credentials = Static<typeof Credentials>;

/** A 6-digit string, or an integer that is left-padded to 6 digits. */
export const TwoFactorCode = t.Union([t.Integer({ minimum: 0, maximum: 999999 }), t.String({ pattern: "^[0-9]{6}$" })]);

export const LoginBody = t.Object({
  corp: t.String({ minLength: 1, maxLength: 64, description: "auth_name or id of the corporation" }),
  login: t.String({ minLength: 1, maxLength: 64 }),
  password: t.String({ minLength: 1, maxLength: 128 }),
  two_factor_code: t.Optional(t.Union([TwoFactorCode, t.Null()])),
  remember_device: t.Optional(t.Union([t.Boolean(), t.Null()])),
});
export type LoginBody = Static<typeof LoginBody>;

export const ChangeCorpBody = t.Object({
  corp: t.String({ minLength: 1, maxLength: 64, description: "auth_name or id of the corporation" }),
});

export const OidcExchangeBody = t.Object({
  id_token: t.String({ minLength: 1, maxLength: 16384 }),
  corp: t.Optional(t.Union([t.String({ minLength: 1, maxLength: 64, description: "auth_name or id of the corporation" }), t.Null()])),
  two_factor_code: t.Optional(t.Union([TwoFactorCode, t.Null()])),
  remember_device: t.Optional(t.Union([t.Boolean(), t.Null()])),
});
export type OidcExchangeBody = Static<typeof OidcExchangeBody>;

export const OidcLinkBody = t.Object({ id_token: t.String({ minLength: 1, maxLength: 16384 }) });

export const OidcParams = t.Object({ provider: t.String({ maxLength: 32 }) });

export const ExternalIdentity = t.Object({
  id: Uuid,
  provider: Enum(["google", "microsoft"]),
  subject: t.String(),
  email: t.Union([t.String(), t.Null()]),
  user_id: Uuid,
  created_at: t.String(),
  updated_at: t.String(),
});
export type ExternalIdentity = Static<typeof ExternalIdentity>;

export const SafeIpRange = t.Object({
  id: Uuid,
  domain: t.String(),
  range: t.String(),
  description: t.Union([t.String(), t.Null()]),
  created_at: t.String(),
  updated_at: t.String(),
});
export type SafeIpRange = Static<typeof SafeIpRange>;

export const SafeIpBody = t.Object({
  range: t.String({ minLength: 1, maxLength: 64, description: "CIDR, IPv4 or IPv6; a bare address means /32 or /128" }),
  description: t.Optional(t.Union([t.String({ maxLength: 200 }), t.Null()])),
});

export const DomainParams = t.Object({ domain: t.String({ maxLength: 64 }) });
export const DomainIdParams = t.Object({ domain: t.String({ maxLength: 64 }), id: Uuid });
