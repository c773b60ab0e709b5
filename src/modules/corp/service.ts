// Corporations: the platform rows and their databases.
import { eq } from "drizzle-orm";
import type { AppContext } from "../../context";
import { corpMembers, corpServices, corporations, servers, services } from "../../db/platform/schema";
import { newId } from "../../lib/ids";
import { conflict, invalid } from "../../lib/problem";
import { isValidTimeZone } from "../../lib/time";
import type { CorpRow } from "../auth/corp-cache";
import type { Corporation, CorporationInput } from "./model";

export function corpView(row: CorpRow): Corporation {
  return { ...row };
}

/**
 * Creates a corporation on its server (the built-in one by default) with every built-in service
 * enabled, then creates and migrates its database. `tx` work is synchronous; the database file is
 * made after the platform commit, and a failure there removes the platform row again.
 */
export function createCorporation(ctx: AppContext, input: CorporationInput, memberUserId?: string): CorpRow {
  const timezone = input.timezone ?? "UTC";
  if (!isValidTimeZone(timezone)) throw invalid("timezone", "is not an IANA time zone name");
  const serverId = input.server_id ?? ctx.builtinServerId;
  if (!ctx.platform.select({ id: servers.id }).from(servers).where(eq(servers.id, serverId)).get()) {
    throw invalid("server_id", "unknown server");
  }
  const id = newId();
  ctx.platform.transaction(
    (tx) => {
      if (tx.select({ id: corporations.id }).from(corporations).where(eq(corporations.auth_name, input.auth_name)).get()) {
        throw conflict(`auth_name '${input.auth_name}' is taken`);
      }
      tx.insert(corporations)
        .values({
          id,
          auth_name: input.auth_name,
          company_name: input.company_name,
          trade_name: input.trade_name ?? null,
          doc_identity: input.doc_identity ?? null,
          email: input.email ?? null,
          phone: input.phone ?? null,
          timezone,
          server_id: serverId,
        })
        .run();
      const builtins = tx.select({ id: services.id }).from(services).where(eq(services.builtin, true)).all();
      if (builtins.length) tx.insert(corpServices).values(builtins.map((s) => ({ corp_id: id, service_id: s.id }))).run();
      if (memberUserId) tx.insert(corpMembers).values({ corp_id: id, user_id: memberUserId }).run();
    },
    { behavior: "immediate" },
  );
  try {
    ctx.tenants.migrate(id);
  } catch (err) {
    ctx.tenants.close(id);
    ctx.platform.delete(corporations).where(eq(corporations.id, id)).run();
    throw err;
  }
  ctx.permissions.invalidate();
  return ctx.corps.get(id)!;
}
