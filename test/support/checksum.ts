// A checksum of every table of every database of an app, to prove a request changed nothing.
import type { Database } from "bun:sqlite";
import { SQL } from "bun";
import { superuserUrl } from "./backend";
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
 * PostgreSQL: one connection per database as its superuser (row-level security does not apply to
 * it, so every corporation's rows at once) and one query digesting every table on the server; a
 * few milliseconds, where a `psql` per corporation per checksum made the hostile suites outlast
 * their timeout. The query is built once per database (its tables do not change under a test).
 */
const pgDigests = new Map<string, { sql: SQL; query: Promise<string> }>();

async function pgChecksum(appUrl: string): Promise<string> {
  let db = pgDigests.get(appUrl);
  if (!db) {
    // Closed when idle, so a dropped test database finds nothing of ours still connected.
    const sql = new SQL({ url: superuserUrl(appUrl), max: 1, idleTimeout: 2 });
    const query = sql
      .unsafe(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)
      .then((tables: { name: string }[]) =>
        tables
          .filter(({ name }) => !VOLATILE.has(name))
          .map(({ name }) => `SELECT '${name}' AS name, md5(coalesce(string_agg(r::text, E'\\n' ORDER BY r::text), '')) AS digest FROM (SELECT ${BACKGROUND_COLUMNS[name] ?? "*"} FROM "${name}") r`)
          .join("\nUNION ALL "),
      );
    db = { sql, query };
    pgDigests.set(appUrl, db);
  }
  const rows = await db.sql.unsafe(`${await db.query}\nORDER BY name`);
  return new Bun.CryptoHasher("sha256").update(JSON.stringify(rows)).digest("hex");
}

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

/** Every table of every database of the app (the platform's and each corporation's). */
export async function appChecksum(t: TestApp): Promise<string> {
  if (t.config.databaseUrl) return pgChecksum(t.config.databaseUrl);
  const parts = [tablesChecksum(t.sql())];
  for (const corp of t.sql().query("SELECT id FROM corporations ORDER BY id").all() as { id: string }[]) parts.push(tablesChecksum(t.sql(corp.id)));
  return parts.join(":");
}
