import { t, type Static } from "elysia";
import { Int, Opt, Uuid } from "../../lib/schemas";

export const SERVICE_IDENTIFIER_PATTERN = "^[a-z][a-z0-9]*(\\.[a-z][a-z0-9-]*)+$";
/**
 * `<host>:<port>/api/<path>/<METHOD>`, the form the permission check builds from a request:
 * a host name or bracketed IPv6 address, a port, a path under /api (route parameters as `{name}`).
 */
export const ACTION_PATTERN = "^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}/api(/[^/\\s]+)+/(GET|POST|PUT|PATCH|DELETE)$";

export const Service = t.Object({
  id: Uuid,
  identifier: t.String(),
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  builtin: t.Boolean(),
  created_at: t.String(),
  updated_at: t.String(),
});
export type Service = Static<typeof Service>;

export const ServiceInput = t.Object({
  identifier: t.String({ pattern: SERVICE_IDENTIFIER_PATTERN, maxLength: 128 }),
  name: t.String({ minLength: 1, maxLength: 200 }),
  description: Opt(t.String({ maxLength: 2000 })),
});
export type ServiceInput = Static<typeof ServiceInput>;

export const Action = t.Object({
  id: Uuid,
  feature_id: Uuid,
  action: t.String(),
  name: t.Union([t.String(), t.Null()]),
  created_at: t.String(),
  updated_at: t.String(),
});
export type Action = Static<typeof Action>;

export const ActionInput = t.Object({
  action: t.String({ pattern: ACTION_PATTERN, maxLength: 512 }),
  name: Opt(t.String({ maxLength: 200 })),
});
export type ActionInput = Static<typeof ActionInput>;

export const Feature = t.Object({
  id: Uuid,
  service_id: Uuid,
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  actions: t.Array(Action),
  created_at: t.String(),
  updated_at: t.String(),
});
export type Feature = Static<typeof Feature>;

export const FeatureInput = t.Object({
  service_id: Uuid,
  name: t.String({ minLength: 1, maxLength: 200 }),
  description: Opt(t.String({ maxLength: 2000 })),
});
export type FeatureInput = Static<typeof FeatureInput>;

export const ServiceWithFeatures = t.Object({ ...Service.properties, features: t.Array(Feature) });

export const FeatureUpload = t.Object({
  features: t.Array(
    t.Object({
      name: t.String({ minLength: 1, maxLength: 200 }),
      description: Opt(t.String({ maxLength: 2000 })),
      actions: t.Array(ActionInput, { maxItems: 1000 }),
    }),
    { maxItems: 1000 },
  ),
});
export type FeatureUpload = Static<typeof FeatureUpload>;

export const Menu = t.Object({
  id: Uuid,
  parent_id: t.Union([Uuid, t.Null()]),
  name: t.String(),
  icon: t.Union([t.String(), t.Null()]),
  url: t.Union([t.String(), t.Null()]),
  position: Int(),
  feature_id: t.Union([Uuid, t.Null()]),
  created_at: t.String(),
  updated_at: t.String(),
});
export type Menu = Static<typeof Menu>;

export const MenuInput = t.Object({
  id: Opt(Uuid),
  parent_id: Opt(Uuid),
  name: t.String({ minLength: 1, maxLength: 200 }),
  icon: Opt(t.String({ maxLength: 200 })),
  url: Opt(t.String({ maxLength: 2000 })),
  position: Opt(t.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
  feature_id: Opt(Uuid),
});
export type MenuInput = Static<typeof MenuInput>;

export interface MenuNode extends Menu {
  actions: Action[];
  allowed: boolean;
  children: MenuNode[];
}

export const MenuNode = t.Recursive(
  (self) =>
    t.Object({
      ...Menu.properties,
      actions: t.Array(Action),
      allowed: t.Boolean(),
      children: t.Array(self),
    }),
  { $id: "MenuNode" },
);


export const MenuWorkgroupParams = t.Object({ id: Uuid, workgroupId: Uuid });
export const FeatureActionParams = t.Object({ id: Uuid, actionId: Uuid });
