// Metric rows of routes.md (12): CRUD by id and by name, values, history; plus the collector
// (jobs.ts), whose jobs follow every change made here.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import type { TenantWriteScope } from "../../core/store";
import type { TenantDb } from "../../db/sqlite";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery, ProblemSchema } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { MetricScheduler } from "./jobs";
import { HistoryQuery, HistoryResponse, Metric, MetricInput, MetricValue, MetricValueInput, NameParams } from "./model";
import { addValue, createMetric, deleteMetric, getMetric, history, listMetrics, METRICS_TOPIC, metricView, updateMetric } from "./service";

const AUTH = "platform.metric" as const;
const errors = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 404: ProblemSchema };

export function metricModule(ctx: AppContext) {
  // Started with the app's jobs (ctx.jobs.startAll), stopped before the databases close; in
  // cluster mode on one node at a time (a value collected once per tick, not once per node).
  const scheduler = ctx.jobs.add(new MetricScheduler(ctx), {
    singleNode: true,
    schedule:
      ctx.tenants.sharedByNodes
        ? `one timer per metric with an endpoint, at its periodicity; every ${ctx.dispatchTuning.metricResyncMs / 1000} s the stored metrics read again`
        : "one timer per metric with an endpoint, at its periodicity; run now: the stored metrics read again",
    everyMs: ctx.tenants.sharedByNodes ? ctx.dispatchTuning.metricResyncMs : undefined,
  });
  // After the COMMIT of a change: the metric's job is rebuilt (or removed).
  const changed = scheduler.sync.bind(scheduler);
  // In the change's transaction: the node running the scheduler (maybe another) hears of it.
  const publish = (tx: TenantDb, w: TenantWriteScope, metricId: string) => ctx.changes.publish(tx, w, METRICS_TOPIC, `${w.corpId}/${metricId}`);
  const hooks = { platform: ctx.store.platform, changed, publish };

  return new Elysia({ name: "metric", prefix: "/api", tags: ["Metric"] })
    .use(authGuard(ctx))
    .get("/metric", ({ tenant, query }) => listMetrics(tenant, query), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(Metric), ...errors },
      detail: { summary: "List metrics" },
    })
    .post("/metric", async ({ tenant, body, set }) => created(set, "/api/metric", metricView(await createMetric(tenant, body, hooks))), {
      auth: AUTH,
      body: MetricInput,
      response: { 200: Metric, 409: ProblemSchema, ...errors },
      detail: { summary: "Create a metric" },
    })
    .get("/metric/:id", ({ tenant, params }) => getMetric(tenant, { id: params.id }), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Metric, ...errors },
      detail: { summary: "Get a metric by id" },
    })
    .get("/metric/name/:name", ({ tenant, params }) => getMetric(tenant, { name: params.name }), {
      auth: AUTH,
      params: NameParams,
      response: { 200: Metric, ...errors },
      detail: { summary: "Get a metric by name" },
    })
    .put("/metric/:id", ({ tenant, params, body }) => updateMetric(tenant, { id: params.id }, body, hooks), {
      auth: AUTH,
      params: IdParams,
      body: MetricInput,
      response: { 200: Metric, 409: ProblemSchema, ...errors },
      detail: { summary: "Update a metric by id (every field replaced)" },
    })
    .put("/metric/name/:name", ({ tenant, params, body }) => updateMetric(tenant, { name: params.name }, body, hooks), {
      auth: AUTH,
      params: NameParams,
      body: MetricInput,
      response: { 200: Metric, 409: ProblemSchema, ...errors },
      detail: { summary: "Update a metric by name (the body's name may rename it)" },
    })
    .delete(
      "/metric/:id",
      async ({ tenant, params, set }) => {
        await deleteMetric(tenant, { id: params.id }, hooks);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a metric by id, with its values" } },
    )
    .delete(
      "/metric/name/:name",
      async ({ tenant, params, set }) => {
        await deleteMetric(tenant, { name: params.name }, hooks);
        noContent(set);
      },
      { auth: AUTH, params: NameParams, detail: { summary: "Delete a metric by name, with its values" } },
    )
    .post("/metric/:id/value", ({ tenant, params, body }) => addValue(tenant, { id: params.id }, body, ctx.now()), {
      auth: AUTH,
      params: IdParams,
      body: MetricValueInput,
      response: { 200: MetricValue, ...errors },
      detail: { summary: "Add a value to a metric" },
    })
    .post("/metric/name/:name/value", ({ tenant, params, body }) => addValue(tenant, { name: params.name }, body, ctx.now()), {
      auth: AUTH,
      params: NameParams,
      body: MetricValueInput,
      response: { 200: MetricValue, ...errors },
      detail: { summary: "Add a value to a metric named in the path" },
    })
    .get("/metric/:id/history", ({ tenant, params, query }) => history(tenant, { id: params.id }, query, ctx.now()), {
      auth: AUTH,
      params: IdParams,
      query: HistoryQuery,
      response: { 200: HistoryResponse, ...errors },
      detail: {
        summary: "Retrieve a metric's history",
        description: "Without bucket: the values by `at` (paged). With bucket: epoch-aligned buckets {start, count, min, max, avg, sum}, empty ones left out.",
      },
    })
    .get("/metric/name/:name/history", ({ tenant, params, query }) => history(tenant, { name: params.name }, query, ctx.now()), {
      auth: AUTH,
      params: NameParams,
      query: HistoryQuery,
      response: { 200: HistoryResponse, ...errors },
      detail: { summary: "Retrieve the history of a metric named in the path", description: "As GET /api/metric/{id}/history." },
    });
}
