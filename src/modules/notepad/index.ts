// The notepad rows of routes.md (Core): a user's private notes in the working corporation.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { Note, NoteInput } from "./model";
import { createNote, getNote, listNotes } from "./service";

export function notepadModule(ctx: AppContext) {
  return new Elysia({ name: "notepad", prefix: "/api", tags: ["Core"] })
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
    });
}
