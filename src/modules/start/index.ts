// POST /api/start: the first run of a fresh installation creates the built-in super-admin and
// the first corporation. Answers 409 once any user exists, so it cannot be replayed.
import { Elysia, t } from "elysia";
import { count } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { users } from "../../db/platform/schema";
import { newId } from "../../lib/ids";
import { conflict } from "../../lib/problem";
import { Opt, ProblemSchema } from "../../lib/schemas";
import { authGuard } from "../auth/guard";
import { AUTH_NAME_PATTERN, Corporation } from "../corp/model";
import { corpView, createCorporation } from "../corp/service";
import { LOGIN_PATTERN, User } from "../user/model";
import { userView } from "../user/view";

const StartBody = t.Object({
  user: t.Object({
    name: t.String({ minLength: 1, maxLength: 200 }),
    email: t.String({ format: "email", maxLength: 254 }),
    login: t.String({ pattern: LOGIN_PATTERN }),
    password: t.String({ minLength: 8, maxLength: 128 }),
  }),
  corp: t.Object({
    auth_name: t.String({ pattern: AUTH_NAME_PATTERN }),
    company_name: t.String({ minLength: 1, maxLength: 200 }),
    timezone: Opt(t.String({ minLength: 1, maxLength: 64 })),
  }),
});

export function startModule(ctx: AppContext) {
  // One start at a time: the check for "no user yet" and the insert must not interleave.
  let starting = false;
  return new Elysia({ name: "start", prefix: "/api", tags: ["Start"] }).use(authGuard(ctx)).post(
    "/start",
    async ({ body }) => {
      const anyUser = () => ctx.platform.select({ n: count() }).from(users).get()!.n > 0;
      if (starting || anyUser()) throw conflict("The service has already been started");
      starting = true;
      try {
        const password_hash = await ctx.passwords.hash(body.user.password);
        if (anyUser()) throw conflict("The service has already been started");
        const userId = newId();
        ctx.platform
          .insert(users)
          .values({ id: userId, name: body.user.name, email: body.user.email, login: body.user.login, password_hash, super_admin: true, builtin: true })
          .run();
        let corp;
        try {
          corp = createCorporation(ctx, { auth_name: body.corp.auth_name, company_name: body.corp.company_name, timezone: body.corp.timezone }, userId);
        } catch (err) {
          ctx.platform.delete(users).run();
          throw err;
        }
        const user = ctx.platform.select().from(users).get()!;
        return { user: userView(ctx.platform, user), corp: corpView(corp) };
      } finally {
        starting = false;
      }
    },
    {
      // Public, so limited per client IP like the other public rows (each try hashes a password).
      publicAuth: true,
      body: StartBody,
      response: { 200: t.Object({ user: User, corp: Corporation }), 429: ProblemSchema },
      detail: { summary: "Create the built-in user and the first corporation" },
    },
  );
}
