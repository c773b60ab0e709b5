// The platform's `settings` table: small key/value facts that outlive a process, owned by the
// kernel so that any module can keep one without a table of its own (each module names its keys
// with its own prefix). The metric collector keeps its index of corporations there
// (modules/metric/service.ts).
import type { PlatformDb } from "../db/sqlite";

/** The keys starting with `prefix` (an index range scan of the primary key). */
export function settingKeys(db: PlatformDb, prefix: string): string[] {
  // The upper bound: the prefix with its last character's successor ("a:" → "a;").
  const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  return db.$client
    .query<{ key: string }, [string, string]>("SELECT key FROM settings WHERE key >= ?1 AND key < ?2")
    .all(prefix, end)
    .map((r) => r.key);
}

export function hasSetting(db: PlatformDb, key: string): boolean {
  return db.$client.query("SELECT 1 FROM settings WHERE key = ?1").get(key) !== null;
}

export function putSetting(db: PlatformDb, key: string, value: string): void {
  db.$client.query("INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, value);
}

export function dropSetting(db: PlatformDb, key: string): void {
  db.$client.query("DELETE FROM settings WHERE key = ?1").run(key);
}
