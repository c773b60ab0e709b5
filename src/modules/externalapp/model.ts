// External App rows of routes.md and the links of city, person and contract records to an app's
// identities: request and response schemas.
import { t, type Static } from "elysia";
import { Enum, Opt, Uuid } from "../../lib/schemas";

const APP_NAME_PATTERN = "^[A-Za-z0-9._-]{1,64}$";

export const ExternalAppInput = t.Object({
  name: t.String({ pattern: APP_NAME_PATTERN }),
  description: Opt(t.String({ maxLength: 500 })),
  status: Opt(t.Boolean()),
});
export type ExternalAppInput = Static<typeof ExternalAppInput>;

const fields = {
  id: Uuid,
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  status: t.Boolean(),
  key_prefix: t.String(),
  created_at: t.String(),
  updated_at: t.String(),
};
export const ExternalApp = t.Object(fields);
export type ExternalApp = Static<typeof ExternalApp>;
export const ExternalAppWithKey = t.Object({ ...fields, api_key: t.String() });
export type ExternalAppWithKey = Static<typeof ExternalAppWithKey>;

/** The records an app's identity can name. */
export type RecordType = "city" | "person" | "contract";

export const ExternalLinkInput = t.Object({ external_app_id: Uuid, identity: t.String({ minLength: 1, maxLength: 128 }) });
export type ExternalLinkInput = Static<typeof ExternalLinkInput>;
export const ExternalLinkView = t.Object({
  external_app_id: Uuid,
  identity: t.String(),
  external_app_name: t.String(),
  record_type: Enum(["city", "person", "contract"]),
  record_id: Uuid,
  created_at: t.String(),
});
export type ExternalLinkView = Static<typeof ExternalLinkView>;

export const AppByName = t.Object({ externalAppName: t.String({ minLength: 1, maxLength: 64 }) });
export const AppById = t.Object({ externalAppId: Uuid });
export const AppByNameIdentity = t.Object({ externalAppName: t.String({ minLength: 1, maxLength: 64 }), identity: t.String({ minLength: 1, maxLength: 128 }) });
export const AppByIdIdentity = t.Object({ externalAppId: Uuid, identity: t.String({ minLength: 1, maxLength: 128 }) });
