// Traffic usage routes (routes.md, "Network operations additions"): a contract's usage by day or
// month, and usage per contract over a period; the work is in usage-service.ts.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { IdParams, ListOf } from "../../lib/schemas";
import type { authGuard } from "../../http/guard";
import { ContractUsage, UsageListQuery, UsageQuery, UsageRow } from "./model";
import { contractUsage, usageByContract } from "./usage-service";

export function usageRoutes(ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-usage", prefix: "/api", tags: ["ISP"] })
    .use(guard)
    .get("/contract/:id/usage", ({ tenant, params, query, principal }) => contractUsage(tenant, params.id, query, principal.corp.timezone, ctx.now()), {
      auth: { guard: "platform.contract", key: true },
      params: IdParams,
      query: UsageQuery,
      response: { 200: ContractUsage },
      detail: {
        summary: "Traffic usage of a contract",
        description:
          "Bytes and session seconds by day or month (bucket), every bucket of the range included, from RADIUS accounting: each record adds its session's counter growth since the previous record, split over the days it spans in the corporation's timezone. from/to are dates (inclusive); by default the current usage cycle.",
        tags: ["Contract"],
      },
    })
    .get("/isp/usage", ({ tenant, query, principal }) => usageByContract(tenant, query, principal.corp.timezone, ctx.now()), {
      auth: "platform.isp",
      query: UsageListQuery,
      response: { 200: ListOf(UsageRow) },
      detail: {
        summary: "Usage per contract over a period (default sort -total_bytes)",
        description: "Contracts with traffic between from and to (dates, inclusive; default the current usage cycle). List conventions: q over number, username and customer_name, sort and exact filters on any field; CSV with Accept: text/csv.",
      },
    });
}
