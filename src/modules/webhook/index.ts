// Webhook rows of routes.md (10), the replay rows of its Operator additions (resend, recover,
// test) and the in-process dispatcher that delivers the events.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { WebhookDispatcher } from "./jobs";
import { Delivery, DeliveryParams, GroupParams, RecoverBody, RecoverResult, Webhook, WebhookAlter, WebhookCreate, WebhookWithSecret } from "./model";
import * as service from "./service";

export function webhookModule(ctx: AppContext) {
  // Started with the app's jobs (ctx.jobs.startAll), stopped before the databases close.
  const { sweepMs, fullSweepMs } = ctx.dispatchTuning;
  const dispatcher = ctx.jobs.add(new WebhookDispatcher(ctx), {
    schedule: `on every commit with events; a sweep every ${sweepMs / 1000} s (every corporation with webhooks every ${fullSweepMs / 60_000} min); run now: a full sweep`,
    everyMs: sweepMs,
  });

  return new Elysia({ name: "webhook", prefix: "/api", tags: ["Webhook"] })
    .use(authGuard(ctx))
    .get("/webhook", ({ tenant, query }) => service.listWebhooks(tenant, query), {
      auth: "platform.webhook",
      query: ListQuery,
      response: { 200: ListOf(Webhook) },
      detail: { summary: "List webhooks" },
    })
    .get("/webhook/:id", ({ tenant, params }) => service.getWebhook(tenant, params.id), {
      auth: "platform.webhook",
      params: IdParams,
      response: { 200: Webhook },
      detail: { summary: "Show a webhook" },
    })
    .get("/webhook/:id/deliveries", ({ tenant, params, query }) => service.listDeliveries(tenant, params.id, query), {
      auth: "platform.webhook",
      params: IdParams,
      query: ListQuery,
      response: { 200: ListOf(Delivery) },
      detail: { summary: "Show a webhook's delivery log (recorded only while log_enabled; newest first)" },
    })
    .post(
      "/webhook/:id/deliveries/:deliveryId/resend",
      ({ tenant, params, principal }) =>
        service.resendDeliveryAudited(ctx, tenant, principal, params.id, params.deliveryId, () => dispatcher.wake(principal.corpId)),
      {
        auth: "platform.webhook",
        params: DeliveryParams,
        response: { 200: Delivery },
        detail: { summary: "Resend one delivery: same webhook-id, a new attempt (409 while pending or when the webhook is inactive)" },
      },
    )
    .post(
      "/webhook/:id/recover",
      ({ tenant, params, body, principal }) =>
        service.recoverDeliveriesAudited(ctx, tenant, principal, params.id, body.since, () => dispatcher.wake(principal.corpId)),
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
      ({ tenant, params, principal }) => service.sendTestEventAudited(ctx, tenant, principal, params.id),
      {
        auth: "platform.webhook",
        params: IdParams,
        response: { 200: Delivery },
        detail: { summary: "Send a test event (WEBHOOK_TEST, data {webhook_id, name}) now, signed as every event; works while inactive" },
      },
    )
    .post("/webhook", async ({ tenant, body, set }) => created(set, "/api/webhook", await service.createWebhook(tenant, ctx.store.platform, body)), {
      auth: "platform.webhook",
      body: WebhookCreate,
      response: { 200: WebhookWithSecret },
      detail: { summary: "Create a webhook; its signing secret is returned this once" },
    })
    .put("/webhook/:id", ({ tenant, params, body }) => service.alterWebhook(tenant, params.id, body), {
      auth: "platform.webhook",
      params: IdParams,
      body: WebhookAlter,
      response: { 200: Webhook },
      detail: { summary: "Alter a webhook (groups and status unchanged)" },
    })
    .post("/webhook/:id/group/:group", ({ tenant, params }) => service.linkGroup(tenant, params.id, params.group), {
      auth: "platform.webhook",
      params: GroupParams,
      response: { 200: Webhook },
      detail: { summary: "Link the webhook and a group" },
    })
    .delete("/webhook/:id/group/:group", ({ tenant, params }) => service.unlinkGroup(tenant, params.id, params.group), {
      auth: "platform.webhook",
      params: GroupParams,
      response: { 200: Webhook },
      detail: { summary: "Remove the link between the webhook and a group" },
    })
    .put("/webhook/:id/active", ({ tenant, params }) => service.setStatus(tenant, params.id, true), {
      auth: "platform.webhook",
      params: IdParams,
      response: { 200: Webhook },
      detail: { summary: "Make active (failure count reset)" },
    })
    .put("/webhook/:id/inactive", ({ tenant, params }) => service.setStatus(tenant, params.id, false), {
      auth: "platform.webhook",
      params: IdParams,
      response: { 200: Webhook },
      detail: { summary: "Make inactive (events no longer queued for it)" },
    })
    .delete(
      "/webhook/:id",
      async ({ tenant, params, set }) => {
        await service.deleteWebhook(tenant, ctx.store.platform, params.id);
        noContent(set);
      },
      { auth: "platform.webhook", params: IdParams, detail: { summary: "Delete a webhook with its deliveries" } },
    );
}
