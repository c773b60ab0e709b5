import { t, type Static } from "elysia";
import { Enum, Instant, ListQuery, Nullable, Uuid } from "../../lib/schemas";

export const AuditEntry = t.Object({
  id: Uuid,
  at: t.String(),
  actor_user_id: Nullable(t.String()),
  actor: Nullable(t.String({ description: "the actor's login (null when none, or the user was deleted)" })),
  corp_id: Nullable(t.String()),
  action: t.String({ description: "<area>.<verb>, e.g. auth.login, user.password_change, webhook.recover" }),
  target: Nullable(t.String()),
  outcome: Enum(["success", "failure", "requested"]),
  reason: Nullable(t.String({ description: "why it failed, as the problem slug" })),
  ip: Nullable(t.String()),
  request_id: Nullable(t.String({ description: "the x-request-id of the request, as on its request log line" })),
});
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditQuery = t.Composite(
  [
    ListQuery,
    t.Object({
      action: t.Optional(t.String({ maxLength: 200 })),
      actor_user_id: t.Optional(t.String({ maxLength: 200 })),
      corp_id: t.Optional(t.String({ maxLength: 200 })),
      outcome: t.Optional(Enum(["success", "failure", "requested"])),
      from: t.Optional(Instant),
      to: t.Optional(Instant),
    }),
  ],
  { additionalProperties: true },
);
