// Server rows of routes.md: the directories where corporation databases live.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery, ProblemSchema } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { Server, ServerInput } from "./model";
import { createServer, deleteServer, getServer, listServers, updateServer } from "./service";

export function serverModule(ctx: AppContext) {
  return new Elysia({ name: "server", prefix: "/api", tags: ["Server"] })
    .use(authGuard(ctx))
    .get("/server", ({ query }) => listServers(ctx, query), {
      auth: "*",
      query: ListQuery,
      response: { 200: ListOf(Server) },
      detail: { summary: "List database servers" },
    })
    .post("/server", async ({ body, set }) => created(set, "/api/server", await createServer(ctx, body)), {
      auth: "*",
      body: ServerInput,
      response: { 200: Server, 409: ProblemSchema },
      detail: { summary: "Create a server (a data directory for corporation databases)" },
    })
    .get("/server/:id", ({ params }) => getServer(ctx, params.id), {
      auth: "*",
      params: IdParams,
      response: { 200: Server },
      detail: { summary: "Show a server" },
    })
    .put("/server/:id", ({ params, body }) => updateServer(ctx, params.id, body), {
      auth: "*",
      params: IdParams,
      body: ServerInput,
      response: { 200: Server, 409: ProblemSchema },
      detail: { summary: "Update a server (the path is fixed on the built-in one and on one holding corporations)" },
    })
    .delete(
      "/server/:id",
      async ({ params, set }) => {
        await deleteServer(ctx, params.id);
        noContent(set);
      },
      { auth: "*", params: IdParams, detail: { summary: "Delete a server (409 built-in or holding corporations)" } },
    );
}
