// A checksum of every table of every database of an app, to prove a request changed nothing.
import type { Database } from "bun:sqlite";
import type { TestApp } from "./helpers";

/**
 * Tables that legitimately change on a refused request (sessions of re-logins, audit trails,
 * counters) or beside it: `settings` holds the background jobs' indexes of corporations (the metric
 * collector's, the webhook dispatcher's), which their start-up pass writes whenever it runs.
 */
const VOLATILE = new Set(["sessions", "audit_log", "login_failures", "__drizzle_migrations", "webhook_deliveries", "settings"]);
/** Columns background work changes after an earlier accepted request (the dispatcher's marks). */
const BACKGROUND_COLUMNS: Record<string, string> = { events: "seq, id, type, record_id, payload, created_at" };

function tablesChecksum(db: Database): string {
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
