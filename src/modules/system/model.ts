import { t } from "elysia";

export const Health = t.Object({
  status: t.Literal("ok"),
  version: t.String(),
  /** The storage engine: SQLite files, or the shared PostgreSQL database (cluster mode). */
  engine: t.Union([t.Literal("sqlite"), t.Literal("postgres")]),
});
