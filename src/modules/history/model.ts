import { t, type Static } from "elysia";
import { Instant, ListQuery, Nullable, Uuid } from "../../lib/schemas";

const FieldChange = t.Object({
  field: t.String({ description: "dotted path, as the record's GET names it (config.max_upload, address.city_id, items.0.quantity)" }),
  before: t.Unknown({ description: "null when it had none; secrets, passwords and keys as ********; large JSON fields as a sha256 digest" }),
  after: t.Unknown(),
  keys: t.Optional(t.Array(t.String(), { description: "large JSON fields: the top-level keys whose values differ" })),
});

export const Change = t.Object({
  id: Uuid,
  at: t.String(),
  actor: t.String({ description: "the user's login, the external app's name, or system:<job>" }),
  actor_user_id: Nullable(t.String()),
  actor_app_id: Nullable(t.String()),
  target_type: t.String({ description: "the area's singular name: city, person, product, contract, nas, user, workgroup, corp, ..." }),
  target_id: t.String(),
  action: t.String({ description: "create, update, delete, or the operation: status, config, items, flags, address, link, key, secret, ..." }),
  fields: t.String({ description: "the changed fields, comma-separated (the CSV export's view of `changes`)" }),
  changes: t.Array(FieldChange),
  request_id: Nullable(t.String({ description: "the x-request-id of the request, as on its request log line" })),
});
export type Change = Static<typeof Change>;

export const ChangeQuery = t.Composite(
  [
    ListQuery,
    t.Object({
      target_type: t.Optional(t.String({ minLength: 1, maxLength: 40 })),
      target_id: t.Optional(t.String({ maxLength: 200 })),
      actor_user_id: t.Optional(t.String({ maxLength: 200 })),
      action: t.Optional(t.String({ maxLength: 40 })),
      from: t.Optional(Instant),
      to: t.Optional(Instant),
    }),
  ],
  { additionalProperties: true },
);
