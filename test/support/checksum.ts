// A checksum of every table of every database of an app, to prove a request changed nothing.
import type { Database } from "bun:sqlite";
import type { TestApp } from "./helpers";

/**
 * Tables that legitimately change on a refused request (sessions of re-logins, audit trails,
 * counters) or beside it: `settings` holds the background jobs' indexes of corporations (the metric
 * collector's, the webhook dispatcher's), which their start-up pass writes whenever it runs.
 */
const VOLATILE = new Set(["sessions", "audit_log", "login_failures", "rate_limit_windows", "__drizzle_migrations", "webhook_deliveries", "settings"]);
/** Columns background work changes after an earlier accepted request (the dispatcher's marks). */
const BACKGROUND_COLUMNS: Record<string, string> = { events: "seq, id, type, record_id, payload, created_at" };

/**
 * PostgreSQL (test/support/pg-files.ts): every table's rows digested by the server in one query,
 * as this connection sees them (one corporation's, or none for the platform's tenant tables).
 */
function pgChecksum(pgRows: (sql: string) => Record<string, unknown>[]): string {
  const skip = [...VOLATILE].map((n) => `'${n}'`).join(", ");
  const cols = Object.entries(BACKGROUND_COLUMNS).map(([t, c]) => `WHEN '${t}' THEN '${c}'`).join(" ");
  const rows = pgRows(
    `SELECT table_name AS name, md5(query_to_xml(format('SELECT %s FROM %I', CASE table_name ${cols} ELSE '*' END, table_name), true, false, '')::text) AS digest
     FROM information_schema.tables WHERE table_schema = current_schema() AND table_name NOT IN (${skip}) ORDER BY table_name`,
  );
  return new Bun.CryptoHasher("sha256").update(JSON.stringify(rows)).digest("hex");
}

function tablesChecksum(db: Database): string {
  const pgRows = (db as { pgRows?: (sql: string) => Record<string, unknown>[] }).pgRows;
  if (pgRows) return pgChecksum(pgRows);
  const hasher = new Bun.CryptoHasher("sha256");
  const tables = db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[];
  for (const { name } of tables) {
    if (VOLATILE.has(name)) continue;
    hasher.update(name);
    for (const row of db.query(`SELECT ${BACKGROUND_COLUMNS[name] ?? "*"} FROM "${name}"`).values()) hasher.update(JSON.stringify(row, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString("base64") : typeof v === "bigint" ? String(v) : v)));
  }
  return hasher.digest("hex");
}

export function appChecksum(t: TestApp): string {
  const parts = [tablesChecksum(t.sql())];
  for (const corp of t.sql().query("SELECT id FROM corporations ORDER BY id").all() as { id: string }[]) parts.push(tablesChecksum(t.sql(corp.id)));
  return parts.join(":");
}
