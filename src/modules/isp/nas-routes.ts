// NAS routes (routes.md, Resources: Nas); the work is in nas-service.ts.
import { Elysia, t } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { Enum, IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { testNas } from "./dynamic-auth";
import type { NasHealthJob } from "./nas-health";
import type { authGuard } from "../../http/guard";
import { Nas, NasCreateInput, NasTestResult, NasUpdateInput, RadiusLogSchemas } from "./model";
import { listNasSessions } from "./session-service";
import { createNas, deleteNas, getNas, listNas, setNasStatus, updateNas } from "./nas-service";

const AUTH = "platform.isp" as const;

/** The list convention's parameters and field filters, ?health checked against its values. */
const NasListQuery = t.Object({ ...ListQuery.properties, health: t.Optional(Enum(["ok", "quiet", "unknown"])) }, { additionalProperties: true });

/** The list convention's parameters and field filters; the state is always online. */
const NasSessionQuery = t.Object({ ...ListQuery.properties }, { additionalProperties: true });

export function nasRoutes(ctx: AppContext, guard: ReturnType<typeof authGuard>, health: NasHealthJob) {
  return new Elysia({ name: "isp-nas", prefix: "/api/isp/nas", tags: ["ISP"] })
    .use(guard)
    .get("", ({ tenant, query }) => listNas(tenant, query, ctx.now()), {
      auth: AUTH,
      query: NasListQuery,
      response: { 200: ListOf(Nas) },
      detail: { summary: "List NAS" },
    })
    .post("", async ({ tenant, body, set, principal }) => {
      const nas = await createNas(tenant, ctx.secrets, body);
      health.watch(principal.corpId);
      return created(set, "/api/isp/nas", nas);
    }, {
      auth: AUTH,
      body: NasCreateInput,
      response: { 200: Nas },
      detail: { summary: "Create a NAS" },
    })
    .get("/:id", ({ tenant, params }) => getNas(tenant, params.id, ctx.now()), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Nas },
      detail: { summary: "Get a NAS" },
    })
    .put("/:id", ({ tenant, params, body }) => updateNas(tenant, ctx.secrets, params.id, body), {
      auth: AUTH,
      params: IdParams,
      body: NasUpdateInput,
      response: { 200: Nas },
      detail: { summary: "Update a NAS" },
    })
    .delete(
      "/:id",
      async ({ tenant, params, set }) => {
        await deleteNas(tenant, params.id);
        noContent(set);
      },
      { auth: AUTH, params: IdParams, detail: { summary: "Delete a NAS" } },
    )
    .put("/:id/active", ({ tenant, params }) => setNasStatus(tenant, params.id, true), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Nas },
      detail: { summary: "Activate a NAS" },
    })
    .put("/:id/inactive", ({ tenant, params }) => setNasStatus(tenant, params.id, false), {
      auth: AUTH,
      params: IdParams,
      response: { 200: Nas },
      detail: { summary: "Deactivate a NAS (RADIUS rejects requests through it)" },
    })
    .get("/:id/sessions", ({ tenant, params, query }) => listNasSessions(tenant, params.id, query, ctx.now()), {
      auth: AUTH,
      params: IdParams,
      query: NasSessionQuery,
      response: { 200: ListOf(RadiusLogSchemas.RadiusSession) },
      detail: { summary: "List the NAS's online sessions (default sort -started_at)" },
    })
    .post("/:id/test", ({ tenant, params, principal }) => testNas(ctx, tenant, params.id, { corpId: principal.corpId, userId: principal.userId, ip: principal.ip, cause: null }), {
      auth: AUTH,
      params: IdParams,
      response: { 200: NasTestResult },
      detail: {
        summary: "Test the NAS's RFC 5176 port and secret",
        description:
          "Sends a Disconnect-Request for a session that does not exist (3 attempts, 2 s apart). A NAK with Error-Cause 503 (Session-Context-Not-Found) proves address, port and secret (any answer is signed with the secret); a timeout usually means a wrong secret or address, since a NAS drops requests it cannot authenticate. ms: the time until the answer or the timeout. 400: the NAS has no secret stored (set it again). Audited as isp.nas_test.",
      },
    });
}
