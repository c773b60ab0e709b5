// Metric rows of routes.md (12): CRUD by id and by name, values, history; plus the collector,
// whose jobs follow every change made here.
import { Elysia, t } from "elysia";
import type { AppContext } from "../../core/context";
import type { TenantDb } from "../../db/sqlite";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery, ProblemSchema } from "../../lib/schemas";
import { authGuard } from "../auth/guard";
import { Bucket, HistoryQuery, Metric, MetricInput, MetricValue, MetricValueInput, NameParams } from "./model";
import { MetricScheduler } from "./scheduler";
import {
  addValue,
  createMetric,
  deleteMetric,
  getMetric,
  getMetricByName,
  history,
  listMetrics,
  metricView,
  updateMetric,
  type MetricRow,
} from "./service";

/** The collector of each app, for tests and diagnostics. */
export const metricSchedulers = new WeakMap<AppContext, MetricScheduler>();

const AUTH = "platform.metric" as const;
const HistoryResponse = t.Union([ListOf(MetricValue), t.Object({ items: t.Array(Bucket) })]);
const errors = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 404: ProblemSchema };

export function metricModule(ctx: AppContext) {
  const scheduler = new MetricScheduler(ctx);
  ctx.deferStart(() => scheduler.start());
  ctx.onClose(() => scheduler.stop());
  metricSchedulers.set(ctx, scheduler);

  const afterWrite = (corpId: string, row: MetricRow | null, id: string) => {
    ctx.events.committed(corpId);
    scheduler.sync(corpId, row, id);
  };
  const update = (corpId: string, db: TenantDb, id: string, body: MetricInput) => {
    const { row, changed } = updateMetric(db, id, body);
    if (changed) afterWrite(corpId, row, id);
    return metricView(row);
  };
  const remove = (corpId: string, db: TenantDb, id: string) => {
    deleteMetric(db, id);
    afterWrite(corpId, null, id);
  };

  return new Elysia({ name: "metric", prefix: "/api", tags: ["Metric"] })
    .use(authGuard(ctx))
    .get("/metric", ({ tenantDb, query }) => listMetrics(tenantDb, query), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(Metric), ...errors },
      detail: { summary: "List metrics" },
    })
    .post(
      "/metric",
      ({ principal, tenantDb, body, set }) => {
        const row = createMetric(tenantDb, body);
        afterWrite(principal.corpId, row, row.id);
        return created(set, "/api/metric", metricView(row));
      },
      {
        auth: AUTH,
        body: MetricInput,
        response: { 200: Metric, 409: ProblemSchema, ...errors },
        detail: { summary: "Create a metric" },
      },
    )
    .get("/metric/:id", ({ tenantDb, params }) => metricView(getMetric(tenantDb, params.id)), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Metric, ...errors },
      detail: { summary: "Get a metric by id" },
    })
    .get("/metric/name/:name", ({ tenantDb, params }) => metricView(getMetricByName(tenantDb, params.name)), {
      auth: AUTH,
      params: NameParams,
      response: { 200: Metric, ...errors },
      detail: { summary: "Get a metric by name" },
    })
    .put("/metric/:id", ({ principal, tenantDb, params, body }) => update(principal.corpId, tenantDb, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: MetricInput,
      response: { 200: Metric, 409: ProblemSchema, ...errors },
      detail: { summary: "Update a metric by id (every field replaced)" },
    })
    .put(
      "/metric/name/:name",
      ({ principal, tenantDb, params, body }) => update(principal.corpId, tenantDb, getMetricByName(tenantDb, params.name).id, body),
      {
        auth: AUTH,
        params: NameParams,
        body: MetricInput,
        response: { 200: Metric, 409: ProblemSchema, ...errors },
        detail: { summary: "Update a metric by name (the body's name may rename it)" },
      },
    )
    .delete(
      "/metric/:id",
      ({ principal, tenantDb, params, set }) => {
        remove(principal.corpId, tenantDb, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a metric by id, with its values" } },
    )
    .delete(
      "/metric/name/:name",
      ({ principal, tenantDb, params, set }) => {
        remove(principal.corpId, tenantDb, getMetricByName(tenantDb, params.name).id);
        noContent(set);
      },
      { auth: AUTH, params: NameParams, detail: { summary: "Delete a metric by name, with its values" } },
    )
    .post("/metric/:id/value", ({ tenantDb, params, body }) => addValue(tenantDb, getMetric(tenantDb, params.id), body, ctx.now()), {
      auth: AUTH,
      params: IdParams,
      body: MetricValueInput,
      response: { 200: MetricValue, ...errors },
      detail: { summary: "Add a value to a metric" },
    })
    .post("/metric/name/:name/value", ({ tenantDb, params, body }) => addValue(tenantDb, getMetricByName(tenantDb, params.name), body, ctx.now()), {
      auth: AUTH,
      params: NameParams,
      body: MetricValueInput,
      response: { 200: MetricValue, ...errors },
      detail: { summary: "Add a value to a metric named in the path" },
    })
    .get("/metric/:id/history", ({ tenantDb, params, query }) => history(tenantDb, getMetric(tenantDb, params.id), query, ctx.now()), {
      auth: AUTH,
      params: IdParams,
      query: HistoryQuery,
      response: { 200: HistoryResponse, ...errors },
      detail: {
        summary: "Retrieve a metric's history",
        description: "Without bucket: the values by `at` (paged). With bucket: epoch-aligned buckets {start, count, min, max, avg, sum}, empty ones left out.",
      },
    })
    .get(
      "/metric/name/:name/history",
      ({ tenantDb, params, query }) => history(tenantDb, getMetricByName(tenantDb, params.name), query, ctx.now()),
      {
        auth: AUTH,
        params: NameParams,
        query: HistoryQuery,
        response: { 200: HistoryResponse, ...errors },
        detail: { summary: "Retrieve the history of a metric named in the path", description: "As GET /api/metric/{id}/history." },
      },
    );
}
