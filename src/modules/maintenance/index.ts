// The maintenance rows of routes.md (Core): versions, and the databases' migrations checked and
// applied. (Classifications, also Core rows, live in their own module.)
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { ProblemSchema } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { CorpIdParam, CorpUpdate, DatabaseCheck, DatabaseUpdate, TablesResult, Versions } from "./model";
import { checkDatabases, createTables, updateAll, updateOne, versions } from "./service";

export function maintenanceModule(ctx: AppContext) {
  return new Elysia({ name: "maintenance", prefix: "/api", tags: ["Core"] })
    .use(authGuard(ctx))
    .get("/core/versions", () => versions(ctx), {
      auth: "token",
      response: { 200: Versions },
      detail: { summary: "Versions of the application modules and schemas" },
    })
    .get("/core/database", () => checkDatabases(ctx), {
      auth: "*",
      response: { 200: DatabaseCheck },
      detail: { summary: "Check the databases: applied and pending migrations" },
    })
    .post("/core/database/update", () => updateAll(ctx), {
      auth: "*",
      response: { 200: DatabaseUpdate },
      detail: { summary: "Update all databases, the platform one first; a failing corporation is rolled back and set NEEDS_UPDATE" },
    })
    .post("/core/database/update/:corpId", ({ params }) => updateOne(ctx, params.corpId), {
      auth: "*",
      params: CorpIdParam,
      response: { 200: CorpUpdate, 409: ProblemSchema },
      detail: { summary: "Update one corporation's database (409 when its migration fails)" },
    })
    .post("/core/database/tables/:corpId", ({ params }) => createTables(ctx, params.corpId), {
      auth: "*",
      params: CorpIdParam,
      response: { 200: TablesResult, 409: ProblemSchema },
      detail: { summary: "Create a corporation database's tables (and the file when missing); idempotent" },
    });
}
