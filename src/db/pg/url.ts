// Cluster mode's one setting (issue 19): `--database-url` / CORPADMIN_DATABASE_URL. Empty: the
// SQLite files under the data directory, as always; a postgres:// URL: the shared PostgreSQL
// database (src/core/pg/store.ts). src/config.ts declares the setting and calls this.

export const DATABASE_URL_SETTING = {
  flag: "database-url",
  env: "CORPADMIN_DATABASE_URL",
  default: "",
  help: "postgres://user:password@host:port/database of the shared PostgreSQL database (cluster mode; collation C); empty: SQLite files under the data directory",
};

/** The URL, or null for SQLite; a message naming what is wrong otherwise (never echoing a password). */
export function parseDatabaseUrl(raw: string): { url: string | null } | { error: string } {
  const v = raw.trim();
  if (!v) return { url: null };
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return { error: "--database-url must be a postgres://user:password@host:port/database URL" };
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") return { error: `--database-url must be a postgres:// URL (got ${u.protocol}//)` };
  if (!u.hostname) return { error: "--database-url names no host" };
  if (u.pathname.replace(/^\//, "") === "") return { error: "--database-url names no database" };
  return { url: v };
}

/** The URL without its password, for logs. */
export function redactedDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparsable URL)";
  }
}
