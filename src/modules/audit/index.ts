// GET /api/audit (routes.md, Operator additions): the audit log the service records, for
// operators. `*` sees every entry; a holder of platform.corp sees the working corporation's only.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { ListOf } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { AuditEntry, AuditQuery } from "./model";
import { listAudit } from "./service";

export function auditModule(ctx: AppContext) {
  return new Elysia({ name: "audit", prefix: "/api", tags: ["Audit"] })
    .use(authGuard(ctx))
    .get("/audit", ({ query, principal }) => listAudit(ctx, query, principal.superAdmin ? null : principal.corpId), {
      auth: "platform.corp",
      query: AuditQuery,
      response: { 200: ListOf(AuditEntry) },
      detail: {
        summary: "List the audit log (default newest first); platform.corp without `*` sees the working corporation's entries only",
      },
    });
}
