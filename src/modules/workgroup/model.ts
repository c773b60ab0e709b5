import { t, type Static } from "elysia";
import { Uuid } from "../../lib/schemas";

export const Workgroup = t.Object({
  id: Uuid,
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  corp_id: Uuid,
  user_ids: t.Array(Uuid),
  service_ids: t.Array(Uuid),
  feature_ids: t.Array(Uuid),
  created_at: t.String(),
  updated_at: t.String(),
});
export type Workgroup = Static<typeof Workgroup>;

export const WorkgroupInput = t.Object({
  name: t.String({ minLength: 1, maxLength: 200 }),
  description: t.Optional(t.Union([t.String({ maxLength: 2000 }), t.Null()])),
});
export type WorkgroupInput = Static<typeof WorkgroupInput>;

export const MemberParams = t.Object({ id: Uuid, userId: Uuid });
export const ServiceParams = t.Object({ id: Uuid, serviceId: Uuid });
export const FeatureParams = t.Object({ id: Uuid, featureId: Uuid });
