// Webhook rows of routes.md (10), the replay rows of its Operator additions (resend, recover,
// test) and the in-process dispatcher that delivers the events.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { newId } from "../../lib/ids";
import { invalid } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { canonicalInstant, toIso } from "../../lib/time";
import { authGuard } from "../auth/guard";
import { deliverOnce, WebhookDispatcher } from "./dispatcher";
import { Delivery, DeliveryParams, GroupParams, RecoverBody, RecoverResult, Webhook, WebhookAlter, WebhookCreate, WebhookWithSecret } from "./model";
import * as service from "./service";

export function webhookModule(ctx: AppContext) {
  const dispatcher = new WebhookDispatcher(ctx);
  dispatcher.start();
  ctx.onClose(() => dispatcher.stop());

  return new Elysia({ name: "webhook", prefix: "/api", tags: ["Webhook"] })
    .use(authGuard(ctx))
    .get("/webhook", ({ tenantDb, query }) => service.listWebhooks(tenantDb, query), {
      auth: "platform.webhook",
      query: ListQuery,
      response: { 200: ListOf(Webhook) },
      detail: { summary: "List webhooks" },
    })
    .get("/webhook/:id", ({ tenantDb, params }) => service.getWebhook(tenantDb, params.id), {
      auth: "platform.webhook",
      params: IdParams,
      response: { 200: Webhook },
      detail: { summary: "Show a webhook" },
    })
    .get("/webhook/:id/deliveries", ({ tenantDb, params, query }) => service.listDeliveries(tenantDb, params.id, query), {
      auth: "platform.webhook",
      params: IdParams,
      query: ListQuery,
      response: { 200: ListOf(Delivery) },
      detail: { summary: "Show a webhook's delivery log (recorded only while log_enabled; newest first)" },
    })
    .post(
      "/webhook/:id/deliveries/:deliveryId/resend",
      ({ tenantDb, params, principal }) => {
        const delivery = service.resendDelivery(tenantDb, params.id, params.deliveryId, toIso(ctx.now()));
        ctx.audit.record({ action: "webhook.delivery_resend", outcome: "success", actor_user_id: principal.userId, corp_id: principal.corpId, target: params.deliveryId, ip: principal.ip, request_id: principal.requestId });
        ctx.events.committed(principal.corpId);
        return delivery;
      },
      {
        auth: "platform.webhook",
        params: DeliveryParams,
        response: { 200: Delivery },
        detail: { summary: "Resend one delivery: same webhook-id, a new attempt (409 while pending or when the webhook is inactive)" },
      },
    )
    .post(
      "/webhook/:id/recover",
      ({ tenantDb, params, body, principal }) => {
        const since = canonicalInstant(body.since);
        if (!since) throw invalid("since", "must be an ISO 8601 instant with an offset");
        const result = service.recoverDeliveries(tenantDb, params.id, since, toIso(ctx.now()));
        ctx.audit.record({ action: "webhook.recover", outcome: "success", actor_user_id: principal.userId, corp_id: principal.corpId, target: params.id, ip: principal.ip, request_id: principal.requestId });
        if (result.queued) ctx.events.committed(principal.corpId);
        return result;
      },
      {
        auth: "platform.webhook",
        params: IdParams,
        body: RecoverBody,
        response: { 200: RecoverResult },
        detail: { summary: "Re-queue every failed delivery of the webhook since an instant (409 webhook inactive)" },
      },
    )
    .post(
      "/webhook/:id/test",
      async ({ tenantDb, params, principal }) => {
        const { hook, payload } = service.testPayload(tenantDb, params.id, toIso(ctx.now()));
        const deliveryId = newId();
        const msgId = `msg_${deliveryId}`;
        const attempt = await deliverOnce(ctx, hook, msgId, payload);
        ctx.audit.record({ action: "webhook.test", outcome: attempt.ok ? "success" : "failure", actor_user_id: principal.userId, corp_id: principal.corpId, target: params.id, ip: principal.ip, request_id: principal.requestId, reason: attempt.error });
        return service.recordTestDelivery(tenantDb, hook, msgId, deliveryId, attempt, toIso(ctx.now()));
      },
      {
        auth: "platform.webhook",
        params: IdParams,
        response: { 200: Delivery },
        detail: { summary: "Send a test event (WEBHOOK_TEST, data {webhook_id, name}) now, signed as every event; works while inactive" },
      },
    )
    .post("/webhook", ({ tenantDb, body, set }) => created(set, "/api/webhook", service.createWebhook(tenantDb, body)), {
      auth: "platform.webhook",
      body: WebhookCreate,
      response: { 200: WebhookWithSecret },
      detail: { summary: "Create a webhook; its signing secret is returned this once" },
    })
    .put("/webhook/:id", ({ tenantDb, params, body }) => service.alterWebhook(tenantDb, params.id, body), {
      auth: "platform.webhook",
      params: IdParams,
      body: WebhookAlter,
      response: { 200: Webhook },
      detail: { summary: "Alter a webhook (groups and status unchanged)" },
    })
    .post("/webhook/:id/group/:group", ({ tenantDb, params }) => service.linkGroup(tenantDb, params.id, params.group), {
      auth: "platform.webhook",
      params: GroupParams,
      response: { 200: Webhook },
      detail: { summary: "Link the webhook and a group" },
    })
    .delete("/webhook/:id/group/:group", ({ tenantDb, params }) => service.unlinkGroup(tenantDb, params.id, params.group), {
      auth: "platform.webhook",
      params: GroupParams,
      response: { 200: Webhook },
      detail: { summary: "Remove the link between the webhook and a group" },
    })
    .put("/webhook/:id/active", ({ tenantDb, params }) => service.setStatus(tenantDb, params.id, true), {
      auth: "platform.webhook",
      params: IdParams,
      response: { 200: Webhook },
      detail: { summary: "Make active (failure count reset)" },
    })
    .put("/webhook/:id/inactive", ({ tenantDb, params }) => service.setStatus(tenantDb, params.id, false), {
      auth: "platform.webhook",
      params: IdParams,
      response: { 200: Webhook },
      detail: { summary: "Make inactive (events no longer queued for it)" },
    })
    .delete(
      "/webhook/:id",
      ({ tenantDb, params, set }) => {
        service.deleteWebhook(tenantDb, params.id);
        noContent(set);
      },
      { auth: "platform.webhook", params: IdParams, detail: { summary: "Delete a webhook with its deliveries" } },
    );
}
