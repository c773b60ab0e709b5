// The platform's `settings` table: small key/value facts that outlive a process, owned by the
// kernel so that any module can keep one without a table of its own (each module names its keys
// with its own prefix). The metric collector keeps its index of corporations there
// (modules/metric/service.ts).
import type { PlatformDb } from "../db/sqlite";

/** The keys starting with `prefix` (an index range scan of the primary key). */
export async function settingKeys(db: PlatformDb, prefix: string): Promise<string[]> {
  // The upper bound: the prefix with its last character's successor ("a:" → "a;").
  const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  const rows = await db.$client
    .query<{ key: string }, [string, string]>("SELECT key FROM settings WHERE key >= ?1 AND key < ?2")
    .all(prefix, end);
  return rows.map((r) => r.key);
}

export async function hasSetting(db: PlatformDb, key: string): Promise<boolean> {
  return (await db.$client.query("SELECT 1 FROM settings WHERE key = ?1").get(key)) !== null;
}

export async function putSetting(db: PlatformDb, key: string, value: string): Promise<void> {
  await db.$client.query("INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, value);
}

export async function dropSetting(db: PlatformDb, key: string): Promise<void> {
  await db.$client.query("DELETE FROM settings WHERE key = ?1").run(key);
}
