// POST /api/start: the first run of a fresh installation creates the built-in super-admin and
// the first corporation. Answers 409 once any user exists, so it cannot be replayed.
import { Elysia, t } from "elysia";
import type { AppContext } from "../../core/context";
import { ProblemSchema } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { Corporation } from "../corp/model";
import { User } from "../user/model";
import { StartBody } from "./model";
import { Starter } from "./service";

export function startModule(ctx: AppContext) {
  const starter = new Starter(ctx);
  return new Elysia({ name: "start", prefix: "/api", tags: ["Start"] }).use(authGuard(ctx)).post("/start", ({ body }) => starter.start(body), {
    // Public, so limited per client IP like the other public rows (each try hashes a password).
    publicAuth: true,
    body: StartBody,
    response: { 200: t.Object({ user: User, corp: Corporation }), 429: ProblemSchema },
    detail: { summary: "Create the built-in user and the first corporation" },
  });
}
