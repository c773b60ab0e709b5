import { t } from "elysia";
import { Enum, Nullable } from "../../lib/schemas";

export const Health = t.Object({
  status: t.Literal("ok"),
  version: t.String(),
  /** The storage engine: SQLite files, or the shared PostgreSQL database (cluster mode). */
  engine: t.Union([t.Literal("sqlite"), t.Literal("postgres")]),
});

/** routes.md, Network operations additions: Job. */
export const Job = t.Object({
  name: t.String(),
  /** How it runs: an interval, a cron expression, "on every commit with events", ... */
  schedule: t.String(),
  /** Cluster mode: the node that holds (last ran) it; null on one node. */
  node: Nullable(t.String()),
  running: t.Boolean(),
  last_started_at: Nullable(t.String()),
  last_finished_at: Nullable(t.String()),
  last_outcome: Nullable(Enum(["ok", "failed"])),
  last_error: Nullable(t.String()),
  next_at: Nullable(t.String()),
});

export const JobParams = t.Object({ name: t.String({ minLength: 1, maxLength: 64 }) });

/** routes.md, Network operations additions: DoctorCheck. */
export const DoctorCheck = t.Object({
  name: t.String(),
  status: Enum(["ok", "warn", "fail"]),
  detail: t.String(),
  fix: Nullable(t.String()),
});
