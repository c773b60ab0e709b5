// Webhook rows of routes.md (10) and the in-process dispatcher that delivers the events.
import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard } from "../auth/guard";
import { WebhookDispatcher } from "./dispatcher";
import { Delivery, GroupParams, Webhook, WebhookAlter, WebhookCreate, WebhookWithSecret } from "./model";
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
