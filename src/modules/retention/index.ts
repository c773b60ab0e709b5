// Housekeeping of the databases (see housekeeping.ts): no routes, only the background job,
// started with the app's jobs and stopped before the databases close.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { Housekeeping } from "./housekeeping";

export function retentionModule(ctx: AppContext) {
  const housekeeping = new Housekeeping(ctx);
  let stop: (() => Promise<void>) | null = null;
  // In cluster mode one node prunes the shared database.
  ctx.jobs.add(
    {
      name: "housekeeping",
      start: () => void (stop = housekeeping.start()),
      stop: () => stop?.(),
    },
    { singleNode: true },
  );
  return new Elysia({ name: "retention" });
}
