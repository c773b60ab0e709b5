import { t, type Static } from "elysia";
import { Nullable, Uuid } from "../../lib/schemas";

/** `{<auth_name>: {id, company_name}}`: the corporations a user can access. */
export const CorpsMap = t.Record(t.String(), t.Object({ id: Uuid, company_name: t.String() }));

export const User = t.Object({
  id: Uuid,
  name: t.String(),
  email: t.String(),
  login: t.String(),
  super_admin: t.Boolean(),
  status: t.Boolean(),
  two_factor_required: t.Boolean(),
  builtin: t.Boolean(),
  corps: CorpsMap,
  created_at: t.String(),
  updated_at: t.String(),
});
export type User = Static<typeof User>;

export const LOGIN_PATTERN = "^[A-Za-z0-9._@-]{3,64}$";

const Name = t.String({ minLength: 1, maxLength: 200 });
const Email = t.String({ format: "email", maxLength: 254 });
const Password = t.String({ minLength: 8, maxLength: 128 });
/** An integer code is left-padded to 6 digits; a 6-digit string is accepted too. */
const Code = t.Union([t.Integer({ minimum: 0, maximum: 999999 }), t.String({ pattern: "^[0-9]{6}$" })]);

export const UserCreate = t.Object({
  name: Name,
  email: Email,
  login: t.String({ pattern: LOGIN_PATTERN }),
  password: Password,
  super_admin: t.Optional(t.Union([t.Boolean(), t.Null()])),
});
export type UserCreate = Static<typeof UserCreate>;

export const UserUpdate = t.Object({
  name: Name,
  email: Email,
  login: t.String({ pattern: LOGIN_PATTERN }),
  super_admin: t.Optional(t.Union([t.Boolean(), t.Null()])),
});
export type UserUpdate = Static<typeof UserUpdate>;

export const PasswordChange = t.Object({
  current_password: t.Optional(t.Union([t.String({ minLength: 1, maxLength: 128 }), t.Null()])),
  new_password: Password,
});

export const ResetKeyBody = t.Object({ login: t.String({ minLength: 1, maxLength: 64 }) });
export const ResetBody = t.Object({ key: t.String({ minLength: 1, maxLength: 200 }), new_password: Password });

export const LoginParams = t.Object({ login: t.String({ minLength: 1, maxLength: 64 }) });
export const PermissionsQuery = t.Object({ corp_id: t.Optional(Uuid) });

export const Permissions = t.Object({
  user_id: Uuid,
  corp: Uuid,
  admin: t.Array(t.String()),
  allow: t.Array(t.String()),
  services: t.Record(t.String(), t.Object({ admin: t.Boolean(), allow: t.Array(t.String()) })),
});
export type Permissions = Static<typeof Permissions>;

export const TwoFactorSecret = t.Object({ secret: t.String(), otpauth_uri: t.String() });
export const TwoFactorEnableBody = t.Object({ code: t.Optional(t.Union([Code, t.Null()])) });
export const TwoFactorDisableBody = t.Object({ code: Code });

/**
 * The session rows' schemas. Grouped in a plain object so that the OpenAPI document keeps
 * listing them inline, as it always has (system/openapi-schemas.ts names every exported object
 * schema of a model).
 */
export const sessionSchemas = {
  UserSession: t.Object({
    id: Uuid,
    user_id: Uuid,
    corp_id: Uuid,
    created_at: t.String(),
    last_seen_at: Nullable(t.String({ description: "last authenticated request (to the minute)" })),
    expires_at: t.String(),
    ip: Nullable(t.String()),
    user_agent: Nullable(t.String()),
    current: t.Boolean({ description: "the session of the token making this request" }),
  }),
  UserIdParams: t.Object({ id: Uuid }),
  SessionParams: t.Object({ id: Uuid, sessionId: Uuid }),
};
