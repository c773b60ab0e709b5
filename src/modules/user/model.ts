import { t, type Static } from "elysia";
import { Uuid } from "../../lib/schemas";

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
