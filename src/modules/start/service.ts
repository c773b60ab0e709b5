// The first start: the built-in super-admin and the first corporation, once.
import { count, eq } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { users } from "../../db/platform/schema";
import type { PlatformDb } from "../../db/sqlite";
import { newId } from "../../lib/ids";
import { conflict } from "../../lib/problem";
import { corpView, createCorporation } from "../corp/service";
import type { Corporation } from "../corp/model";
import type { User } from "../user/model";
import { userView, type UserRow } from "../user/view";
import type { StartBody } from "./model";

// owner: user — moves to user/service.ts at merge
function anyUser(db: PlatformDb): boolean {
  return db.select({ n: count() }).from(users).get()!.n > 0;
}

// owner: user — moves to user/service.ts at merge
function insertBuiltinAdmin(tx: PlatformDb, id: string, input: StartBody["user"], password_hash: string): void {
  tx.insert(users).values({ id, name: input.name, email: input.email, login: input.login, password_hash, super_admin: true, builtin: true }).run();
}

// owner: user — moves to user/service.ts at merge
function deleteUserRow(tx: PlatformDb, id: string): void {
  tx.delete(users).where(eq(users.id, id)).run();
}

// owner: user — moves to user/service.ts at merge
function userRow(db: PlatformDb, id: string): UserRow {
  return db.select().from(users).where(eq(users.id, id)).get()!;
}

const alreadyStarted = () => conflict("The service has already been started");

/** One start at a time per app: the check for "no user yet" and the insert must not interleave. */
export class Starter {
  private starting = false;

  constructor(private ctx: AppContext) {}

  async start(body: StartBody): Promise<{ user: User; corp: Corporation }> {
    const ctx = this.ctx;
    if (this.starting || (await ctx.store.platform.read(anyUser))) throw alreadyStarted();
    this.starting = true;
    try {
      const password_hash = await ctx.passwords.hash(body.user.password);
      const userId = newId();
      await ctx.store.platform.write((tx) => {
        if (anyUser(tx)) throw alreadyStarted();
        insertBuiltinAdmin(tx, userId, body.user, password_hash);
      });
      let corp;
      try {
        corp = await createCorporation(ctx, { auth_name: body.corp.auth_name, company_name: body.corp.company_name, timezone: body.corp.timezone }, userId);
      } catch (err) {
        await ctx.store.platform.write((tx) => deleteUserRow(tx, userId));
        throw err;
      }
      const user = await ctx.store.platform.read((db) => userView(db, userRow(db, userId)));
      return { user, corp: corpView(corp) };
    } finally {
      this.starting = false;
    }
  }
}
