// GET /api/history (routes.md, Network operations additions): who changed what, for operators.
// Guarded in the handler: platform.corp, or the permission of target_type's area when given.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { permits } from "../../core/permissions";
import { forbidden } from "../../lib/problem";
import { ListOf } from "../../lib/schemas";
import { actionOf, authGuard } from "../../http/guard";
import { Change, ChangeQuery } from "./model";
import { historyGuard, listHistory } from "./service";

export function historyModule(ctx: AppContext) {
  return new Elysia({ name: "history", prefix: "/api", tags: ["History"] })
    .use(authGuard(ctx))
    .get(
      "/history",
      ({ query, principal, tenant, request, route }) => {
        const guard = historyGuard(query.target_type);
        if (!permits(principal.permission, guard, actionOf(request, route))) throw forbidden(`Requires ${guard}`);
        return listHistory(ctx, tenant, principal, query);
      },
      {
        auth: { guard: "token", tenant: true },
        query: ChangeQuery,
        response: { 200: ListOf(Change) },
        detail: {
          summary:
            "List the changes of records (default newest first): platform.corp, or the permission of target_type's area when target_type is given; the working corporation's changes only",
        },
      },
    );
}
