import { t, type Static } from "elysia";
import { Int, Opt, Uuid } from "../../lib/schemas";

export const Server = t.Object({
  id: Uuid,
  name: t.String(),
  path: t.String(),
  description: t.Union([t.String(), t.Null()]),
  builtin: t.Boolean(),
  corp_count: Int(),
  created_at: t.String(),
  updated_at: t.String(),
});
export type Server = Static<typeof Server>;

export const ServerInput = t.Object({
  name: t.String({ minLength: 1, maxLength: 200 }),
  path: t.String({ minLength: 1, maxLength: 1024, description: "absolute directory; created when missing; must be writable" }),
  description: Opt(t.String({ maxLength: 2000 })),
});
export type ServerInput = Static<typeof ServerInput>;
