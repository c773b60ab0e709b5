// The platform's `settings` table: small key/value facts that outlive a process, owned by the
// kernel so that any module can keep one without a table of its own (each module names its keys
// with its own prefix). The metric collector and the webhook dispatcher keep their indexes of
// corporations there (`CorpIndex` below; modules/metric/service.ts, modules/webhook/service.ts),
// the realtime socket its tickets (modules/socket/hub.ts), the jobs registry each job's last pass
// (`job:<name>`, core/jobs.ts).
import type { PlatformDb } from "../db/sqlite";
import { nowIso } from "../lib/time";
import type { PlatformDoor } from "./store";

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

/** The key's value, or null. */
export async function getSetting(db: PlatformDb, key: string): Promise<string | null> {
  return (await db.$client.query<{ value: string }, [string]>("SELECT value FROM settings WHERE key = ?1").get(key))?.value ?? null;
}

/** Deletes the key and returns its value (null: there was none): of writers racing for it, on any node, one gets it. */
export async function takeSetting(db: PlatformDb, key: string): Promise<string | null> {
  return (await db.$client.query<{ value: string }, [string]>("DELETE FROM settings WHERE key = ?1 RETURNING value").get(key))?.value ?? null;
}

/** Deletes the keys from `from` (included) to `to` (excluded). */
export async function dropSettingRange(db: PlatformDb, from: string, to: string): Promise<void> {
  await db.$client.query("DELETE FROM settings WHERE key >= ?1 AND key < ?2").run(from, to);
}

/**
 * An index of corporations in settings: a `<name>:corp:<id>` key per corporation that may have the
 * indexed thing, and `<name>:indexed` once every corporation has been looked at. A module keeps it
 * in step under the corporation's write lock: added before the COMMIT that creates the thing,
 * dropped when none is left; so a crash can leave a key too many, never one too few. Without
 * `indexed` (a data directory from before the index, or a restored backup whose platform copy is
 * older than its corporations'), the next start-up reads every corporation once and completes it.
 */
export class CorpIndex {
  private readonly prefix: string;
  private readonly completeKey: string;

  constructor(name: string) {
    this.prefix = `${name}:corp:`;
    this.completeKey = `${name}:indexed`;
  }

  /** The corporations indexed, and whether every corporation is. */
  async read(db: PlatformDb): Promise<{ corps: string[]; complete: boolean }> {
    return { corps: (await settingKeys(db, this.prefix)).map((k) => k.slice(this.prefix.length)), complete: await hasSetting(db, this.completeKey) };
  }

  /** Adds and drops corporations (start-up), and says the index is complete when it is. */
  async update(db: PlatformDb, add: string[], drop: string[], complete: boolean): Promise<void> {
    const now = nowIso();
    for (const id of add) await putSetting(db, this.prefix + id, now);
    for (const id of drop) await dropSetting(db, this.prefix + id);
    if (complete) await putSetting(db, this.completeKey, now);
  }

  /** The next start-up reads every corporation again (a restored backup). */
  async forget(db: PlatformDb): Promise<void> {
    await dropSetting(db, this.completeKey);
  }

  /** Indexes one corporation, from inside its write (a platform read when it already is: rare writes only). */
  async add(platform: PlatformDoor, corpId: string): Promise<void> {
    const key = this.prefix + corpId;
    if (!(await platform.read((db) => hasSetting(db, key)))) await platform.write((db) => putSetting(db, key, nowIso()));
  }

  async drop(platform: PlatformDoor, corpId: string): Promise<void> {
    await platform.write((db) => dropSetting(db, this.prefix + corpId));
  }
}
