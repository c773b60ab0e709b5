import { t, type Static } from "elysia";
import { Opt, Uuid } from "../../lib/schemas";

export const Versions = t.Object({
  api: t.String(),
  platform_schema: t.Integer(),
  tenant_schema: t.Integer(),
  runtime: t.String(),
});

const Status = { version: t.Integer(), latest: t.Integer(), pending: t.Array(t.String()) };

export const DatabaseCheck = t.Object({
  platform: t.Object(Status),
  corps: t.Array(
    t.Object({
      corp_id: Uuid,
      auth_name: t.String(),
      server_id: Uuid,
      status: t.String(),
      ...Status,
    }),
  ),
});
export type DatabaseCheck = Static<typeof DatabaseCheck>;

const Applied = { from: t.Integer(), to: t.Integer(), applied: t.Array(t.String()) };

export const CorpUpdate = t.Object({ corp_id: Uuid, ...Applied });
export type CorpUpdate = Static<typeof CorpUpdate>;

export const DatabaseUpdate = t.Object({
  platform: t.Object(Applied),
  corps: t.Array(t.Object({ corp_id: Uuid, ...Applied, error: t.Union([t.String(), t.Null()]) })),
});
export type DatabaseUpdate = Static<typeof DatabaseUpdate>;

export const TablesResult = t.Object({ corp_id: Uuid, created: t.Array(t.String()), version: t.Integer() });
export type TablesResult = Static<typeof TablesResult>;

export const CorpIdParam = t.Object({ corpId: Uuid });
