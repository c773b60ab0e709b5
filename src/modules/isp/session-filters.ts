// The session list's place filters (GET /api/isp/session?pop_id=&pool_id=): by the POP of the
// session's NAS, and by the address pool its framed address is in. A pool is about addresses in use
// now (as its usage is: pool-service.ts), so ?pool_id keeps open sessions (online or stale) only;
// the network test is done here, over the open sessions' addresses (SQLite has no inet type).
import ipaddr from "ipaddr.js";
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { TenantDb } from "../../db/sqlite";
import { ispNas, ispPools, ispRadiusSessions } from "../../db/tenant/schema";
import type { ListParams } from "../../db/list";

/** The list's own keys (not fields of a session). */
export const PLACE_KEYS = ["pop_id", "pool_id"] as const;

/** The conditions of ?pop_id and ?pool_id (ids already checked by the route's schema). */
export async function placeConditions(db: TenantDb, query: ListParams): Promise<SQL[]> {
  const out: SQL[] = [];
  const s = ispRadiusSessions;
  if (typeof query.pop_id === "string") out.push(inArray(s.nas_id, db.select({ id: ispNas.id }).from(ispNas).where(eq(ispNas.pop_id, query.pop_id))));
  if (typeof query.pool_id === "string") {
    const pool = await db.select({ cidr: ispPools.cidr }).from(ispPools).where(eq(ispPools.id, query.pool_id)).get();
    if (!pool) {
      out.push(sql`0 = 1`);
      return out;
    }
    const [net, len] = ipaddr.parseCIDR(pool.cidr);
    const open = await db.select({ id: s.id, framed_ip: s.framed_ip }).from(s).where(and(eq(s.open, true), sql`${s.framed_ip} IS NOT NULL`)).all();
    const ids = open.filter((r) => inNetwork(r.framed_ip!, net, len)).map((r) => r.id);
    out.push(ids.length ? inArray(s.id, ids) : sql`0 = 1`);
  }
  return out;
}

function inNetwork(text: string, net: ipaddr.IPv4 | ipaddr.IPv6, len: number): boolean {
  try {
    let a = ipaddr.parse(text.split("/")[0]);
    if (a.kind() === "ipv6" && (a as ipaddr.IPv6).isIPv4MappedAddress()) a = (a as ipaddr.IPv6).toIPv4Address();
    return a.kind() === net.kind() && a.match(net, len);
  } catch {
    return false;
  }
}
