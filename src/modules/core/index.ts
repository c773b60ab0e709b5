// Core rows of routes.md owned here: the notepad, module versions and database maintenance.
// (Classifications, also Core rows, live in the registry module.)
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created } from "../../lib/http";
import { IdParams, ListOf, ListQuery, ProblemSchema } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { CorpIdParam, CorpUpdate, DatabaseCheck, DatabaseUpdate, Note, NoteInput, TablesResult, Versions } from "./model";
import { checkDatabases, createNote, createTables, getNote, listNotes, updateAll, updateOne, versions } from "./service";

export function coreModule(ctx: AppContext) {
  return new Elysia({ name: "core", prefix: "/api", tags: ["Core"] })
    .use(authGuard(ctx))
    .post("/notepad", async ({ principal, tenant, body, set }) => created(set, "/api/notepad", await createNote(tenant, principal.userId!, body)), {
      auth: { guard: "token", tenant: true },
      body: NoteInput,
      response: { 200: Note },
      detail: { summary: "Create a notepad note (private to its author in the working corporation)" },
    })
    .get("/notepad", ({ principal, tenant, query }) => listNotes(tenant, principal.userId!, query), {
      auth: { guard: "token", tenant: true },
      query: ListQuery,
      response: { 200: ListOf(Note) },
      detail: { summary: "Recover the caller's notes" },
    })
    .get("/notepad/:id", ({ principal, tenant, params }) => getNote(tenant, principal.userId!, params.id), {
      auth: { guard: "token", tenant: true },
      params: IdParams,
      response: { 200: Note },
      detail: { summary: "Recover one of the caller's notes" },
    })
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
