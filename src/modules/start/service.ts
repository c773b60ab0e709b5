// The first start: the built-in super-admin and the first corporation, once.
import type { AppContext } from "../../core/context";
import { newId } from "../../lib/ids";
import { conflict } from "../../lib/problem";
import { corpView, createCorporation } from "../corp/service";
import type { Corporation } from "../corp/model";
import type { User } from "../user/model";
import { anyUserExists, deleteUserRow, findUser, insertBuiltinUser } from "../user/service";
import { userView } from "../user/view";
import type { StartBody } from "./model";

const alreadyStarted = () => conflict("The service has already been started");

/** One start at a time per app: the check for "no user yet" and the insert must not interleave. */
export class Starter {
  private starting = false;

  constructor(private ctx: AppContext) {}

  async start(body: StartBody): Promise<{ user: User; corp: Corporation }> {
    const ctx = this.ctx;
    if (this.starting || (await ctx.store.platform.read(anyUserExists))) throw alreadyStarted();
    this.starting = true;
    try {
      const password_hash = await ctx.passwords.hash(body.user.password);
      const userId = newId();
      await ctx.store.platform.write(async (tx, w) => {
        if (await anyUserExists(tx)) throw alreadyStarted();
        const row = await insertBuiltinUser(tx, { id: userId, name: body.user.name, email: body.user.email, login: body.user.login, password_hash });
        w.record({ type: "user", id: userId, action: "create", before: null, after: { ...row, two_factor_last_step: undefined } });
      });
      let corp;
      try {
        corp = await createCorporation(ctx, { auth_name: body.corp.auth_name, company_name: body.corp.company_name, timezone: body.corp.timezone }, userId);
      } catch (err) {
        await ctx.store.platform.write(async (tx, w) => {
          await deleteUserRow(tx, userId);
          w.record({ type: "user", id: userId, action: "delete", before: { id: userId, login: body.user.login }, after: null });
        });
        throw err;
      }
      const user = await ctx.store.platform.read(async (db) => userView(db, (await findUser(db, userId))!));
      return { user, corp: corpView(corp) };
    } finally {
      this.starting = false;
    }
  }
}
