// POP routes (routes.md, Resources: Pop); the work is in pop-service.ts.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import type { authGuard } from "../../http/guard";
import { Pop, PopInput } from "./model";
import { createPop, deletePop, getPop, listPops, setPopStatus, updatePop } from "./pop-service";

const AUTH = "platform.isp" as const;

function dropNullAddress({ body }: { body: unknown }) {
  if (body && typeof body === "object" && (body as { address?: unknown }).address === null) delete (body as { address?: unknown }).address;
}

export function popRoutes(_ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-pop", prefix: "/api/isp/pop", tags: ["ISP"] })
    .use(guard)
    .get("", ({ tenant, query }) => listPops(tenant, query), {
      auth: AUTH,
      query: ListQuery,
      response: { 200: ListOf(Pop) },
      detail: { summary: "List points of presence" },
    })
    .post("", async ({ tenant, body, set }) => created(set, "/api/isp/pop", await createPop(tenant, body)), {
      auth: AUTH,
      body: PopInput,
      transform: dropNullAddress,
      response: { 200: Pop },
      detail: { summary: "Create a POP" },
    })
    .get("/:id", ({ tenant, params }) => getPop(tenant, params.id), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pop },
      detail: { summary: "Get a POP" },
    })
    .put("/:id", ({ tenant, params, body }) => updatePop(tenant, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: PopInput,
      transform: dropNullAddress,
      response: { 200: Pop },
      detail: { summary: "Update a POP" },
    })
    .delete(
      "/:id",
      async ({ tenant, params, set }) => {
        await deletePop(tenant, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a POP" } },
    )
    .put("/:id/active", ({ tenant, params }) => setPopStatus(tenant, params.id, true), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pop },
      detail: { summary: "Activate a POP" },
    })
    .put("/:id/inactive", ({ tenant, params }) => setPopStatus(tenant, params.id, false), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Pop },
      detail: { summary: "Deactivate a POP" },
    });
}
