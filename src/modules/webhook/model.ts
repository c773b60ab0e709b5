import { t, type Static } from "elysia";
import { EVENT_GROUPS } from "../../core/events";
import { Enum, Instant, Int, Opt, Uuid } from "../../lib/schemas";

/** An event group name: the OpenAPI document lists the ones the service has (routes.md, Events). */
const EventGroupName = Enum(EVENT_GROUPS, { description: "an event group (routes.md, Events)" });

export const Webhook = t.Object({
  id: Uuid,
  name: t.String(),
  target: t.String(),
  email: t.String(),
  body_content: t.Union([t.String(), t.Null()]),
  log_enabled: t.Boolean(),
  groups: t.Array(EventGroupName),
  status: t.Boolean(),
  created_at: t.String(),
  updated_at: t.String(),
});
export type Webhook = Static<typeof Webhook>;

export const WebhookWithSecret = t.Composite([Webhook, t.Object({ secret: t.String() })]);
export type WebhookWithSecret = Static<typeof WebhookWithSecret>;

const fields = {
  name: t.String({ minLength: 1, maxLength: 200 }),
  target: t.String({ minLength: 8, maxLength: 2000, description: "http(s) URL the deliveries are POSTed to" }),
  email: t.String({ format: "email", maxLength: 254 }),
  body_content: Opt(t.String({ maxLength: 65536, description: "body template with {{path.to.field}} placeholders" })),
  log_enabled: Opt(t.Boolean()),
};

export const WebhookCreate = t.Object({
  ...fields,
  groups: Opt(t.Array(EventGroupName, { maxItems: 64 })),
});
export type WebhookCreate = Static<typeof WebhookCreate>;

export const WebhookAlter = t.Object(fields);
export type WebhookAlter = Static<typeof WebhookAlter>;

export const GroupParams = t.Object({ id: Uuid, group: t.String({ maxLength: 200 }) });

export const Delivery = t.Object({
  id: Uuid,
  event_id: t.String({ description: "the webhook-id header of the delivery" }),
  type: t.String(),
  status: Enum(["pending", "succeeded", "failed"]),
  attempts: Int(),
  response_status: t.Union([t.Integer(), t.Null()]),
  error: t.Union([t.String(), t.Null()]),
  next_attempt_at: t.Union([t.String(), t.Null()]),
  created_at: t.String(),
  updated_at: t.String(),
});
export type Delivery = Static<typeof Delivery>;

export const DeliveryParams = t.Object({ id: Uuid, deliveryId: Uuid });

export const RecoverBody = t.Object({ since: Instant });
export const RecoverResult = t.Object({ queued: t.Integer({ description: "failed deliveries queued again" }) });
