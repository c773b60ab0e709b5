import { t } from "elysia";
import { Opt } from "../../lib/schemas";
import { AUTH_NAME_PATTERN } from "../corp/model";
import { LOGIN_PATTERN } from "../user/model";

export const StartBody = t.Object({
  user: t.Object({
    name: t.String({ minLength: 1, maxLength: 200 }),
    email: t.String({ format: "email", maxLength: 254 }),
    login: t.String({ pattern: LOGIN_PATTERN }),
    password: t.String({ minLength: 8, maxLength: 128 }),
  }),
  corp: t.Object({
    auth_name: t.String({ pattern: AUTH_NAME_PATTERN }),
    company_name: t.String({ minLength: 1, maxLength: 200 }),
    timezone: Opt(t.String({ minLength: 1, maxLength: 64 })),
  }),
});
export type StartBody = typeof StartBody.static;
