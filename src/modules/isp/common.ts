// Helpers shared by the ISP record types: lookups that 404, body references that 400, unique
// names that 409, the active/inactive toggle, and strict IP address and CIDR parsing.
import { and, eq, ne } from "drizzle-orm";
import type { BaseSQLiteDatabase, SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import ipaddr from "ipaddr.js";
import { writeTx, type TenantDb } from "../../db/sqlite";

import { conflict, invalid, notFound } from "../../lib/problem";
import { nowIso } from "../../lib/time";

/** A corporation database or a transaction on it. */
export type Q = BaseSQLiteDatabase<"sync", any>;

/** A table with the columns every ISP record has. */
export type RecordTable = SQLiteTable & { id: SQLiteColumn; status: SQLiteColumn; updated_at: SQLiteColumn };
type NamedTable = RecordTable & { name: SQLiteColumn };

export function findRow<R>(db: Q, table: RecordTable, id: string): R | undefined {
  return (db as any).select().from(table).where(eq(table.id, id)).get() as R | undefined;
}

export function requireRow<R>(db: Q, table: RecordTable, id: string, what: string): R {
  const row = findRow<R>(db, table, id);
  if (!row) throw notFound(what);
  return row;
}

/** An id inside a body that names nothing is 400 naming the field (routes.md, "Errors"). */
export function checkRef(db: Q, table: RecordTable, id: string | null | undefined, field: string, what: string): string | null {
  if (id === undefined || id === null) return null;
  if (!findRow(db, table, id)) throw invalid(field, `no ${what} with id ${id}`);
  return id;
}

export function checkUniqueName(db: Q, table: NamedTable, name: string, exceptId: string | null, what: string): void {
  const where = exceptId ? and(eq(table.name, name), ne(table.id, exceptId)) : eq(table.name, name);
  if ((db as any).select({ id: table.id }).from(table).where(where).get()) throw conflict(`A ${what} named '${name}' already exists`);
}

/** True when some row of `table` has `column = id`: the record is still in use. */
export function isUsed(db: Q, table: SQLiteTable, column: SQLiteColumn, id: string): boolean {
  return (db as any).select({ one: column }).from(table).where(eq(column, id)).limit(1).get() !== undefined;
}

export function setStatus<R>(db: TenantDb, table: RecordTable, id: string, status: boolean, what: string): R {
  return writeTx(db, (tx) => {
    requireRow(tx, table, id, what);
    (tx as any).update(table).set({ status, updated_at: nowIso() }).where(eq(table.id, id)).run();
    return requireRow<R>(tx, table, id, what);
  });
}

/**
 * A single IP address in canonical text, or null: IPv4 only in dotted four-part decimal (ipaddr.js
 * would also take `10` or `0x0a.1`), IPv6 in RFC 5952 form, an IPv4-mapped IPv6 address as IPv4.
 */
export function canonicalIp(text: string): string | null {
  const s = text.trim().replace(/^\[(.*)\]$/, "$1");
  if (ipaddr.IPv4.isValidFourPartDecimal(s)) return ipaddr.IPv4.parse(s).toString();
  if (!s.includes(":") || !ipaddr.IPv6.isValid(s)) return null;
  const v6 = ipaddr.IPv6.parse(s);
  if (v6.zoneId) return null;
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address().toString() : v6.toRFC5952String();
}

/**
 * A CIDR of the given IP version in canonical form (host bits cleared), or an error message.
 * A bare address is a single host (/32 or /128).
 */
export function canonicalCidr(text: string, version: 4 | 6): { cidr: string } | { error: string } {
  const [addrText, bitsText, extra] = text.trim().split("/");
  if (extra !== undefined) return { error: "is not a CIDR" };
  if (version === 4) {
    if (!ipaddr.IPv4.isValidFourPartDecimal(addrText)) return { error: ipaddr.IPv6.isValid(addrText) ? "is an IPv6 network, not IPv4" : "is not an IPv4 CIDR" };
  } else if (!addrText.includes(":") || !ipaddr.IPv6.isValid(addrText) || ipaddr.IPv6.parse(addrText).zoneId) {
    return { error: ipaddr.IPv4.isValidFourPartDecimal(addrText) ? "is an IPv4 network, not IPv6" : "is not an IPv6 CIDR" };
  }
  const max = version === 4 ? 32 : 128;
  let bits = max;
  if (bitsText !== undefined) {
    if (!/^\d{1,3}$/.test(bitsText) || Number(bitsText) > max) return { error: `has a prefix length outside 0..${max}` };
    bits = Number(bitsText);
  }
  const net =
    version === 4
      ? ipaddr.IPv4.networkAddressFromCIDR(`${addrText}/${bits}`).toString()
      : ipaddr.IPv6.networkAddressFromCIDR(`${addrText}/${bits}`).toRFC5952String();
  return { cidr: `${net}/${bits}` };
}
