// Housekeeping of the databases (see housekeeping.ts): no routes, only the background job,
// started with the app and stopped before the databases close.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { Housekeeping } from "./housekeeping";

export function retentionModule(ctx: AppContext) {
  ctx.onClose(new Housekeeping(ctx).start());
  return new Elysia({ name: "retention" });
}
