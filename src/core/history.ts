// The history of records (routes.md, Network operations additions: Change; DESIGN.md "History"):
// who changed what, one Change per record per write, written by the store's write path in the
// write's own transaction (core/store.ts and core/pg/door.ts flush a write's `ChangeLog` beside its
// events). Services hand their write scope the record before and after (`w.record(...)`); the diff,
// the masking of secrets, the actor and the row are this file's. A write that changed nothing
// records nothing; a write that rolls back records nothing.
//
// The actor comes from the request's context (AsyncLocalStorage): app.ts's request hook begins a
// context per request, the auth guard names the principal in it (`actAs`), background jobs run
// as `system:<job>` (core/jobs.ts). Code with no context at all (start-up) acts as `system`.
//
// Tables: `history` (each corporation's database; cluster mode: its rows) and `platform_history`
// (the platform database: users, workgroups, corporations, services, safe IP ranges), both owned
// by the kernel; GET /api/history (modules/history) lists them through listHistoryRows.
import { AsyncLocalStorage } from "node:async_hooks";
import { and, eq, gte, lte, type SQL } from "drizzle-orm";
import { platformHistory } from "../db/platform/schema";
import { history } from "../db/tenant/schema";
import type { AnyDb, TenantDb } from "../db/sqlite";
import { newId } from "../lib/ids";
import { listRows, type ListParams, type Page } from "../db/list";
import { nowIso } from "../lib/time";

/** Who a write acts for. */
export interface Actor {
  /** The user's login, the external app's name, `system:<job>`, `system` or `anonymous`. */
  name: string;
  userId: string | null;
  appId: string | null;
  /** The working corporation (platform changes are listed per corporation). */
  corpId: string | null;
  requestId: string | null;
}

const SYSTEM: Actor = { name: "system", userId: null, appId: null, corpId: null, requestId: null };
const actors = new AsyncLocalStorage<{ actor: Actor }>();

/**
 * A request's context, begun by app.ts's request hook before anything of the request awaits: every
 * continuation of the request sees it (and only of this request: the next request begins its own).
 */
export function beginRequest(requestId: string): void {
  actors.enterWith({ actor: { name: "anonymous", userId: null, appId: null, corpId: null, requestId } });
}

/** The auth guard names the request's principal once it is known. */
export function actAs(name: string, userId: string | null, appId: string | null, corpId: string): void {
  const holder = actors.getStore();
  if (holder) holder.actor = { name, userId, appId, corpId, requestId: holder.actor.requestId };
}

/** Runs `fn` (and whatever it schedules) as `name` (a job: `system:<job>`). */
export function runAs<T>(name: string, fn: () => T): T {
  return actors.run({ actor: { ...SYSTEM, name } }, fn);
}

export function currentActor(): Actor {
  return actors.getStore()?.actor ?? SYSTEM;
}

// ---- the diff ---------------------------------------------------------------------------------

export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
  /** Large JSON fields (given as a digest): the top-level keys whose values differ. */
  keys?: string[];
}

export const MASK = "********";

/** Field names whose values never enter a Change (the last dotted segment is tested). */
const SECRET = /(password|secret|token|key_hash|api_key|totp|two_factor_pending|^key$|_key$)/i;
/** Columns of bookkeeping, not of the record. */
const IGNORED = new Set(["updated_at", "created_at", "corp_id"]);
/** Large JSON fields: a digest and the changed keys instead of the values. */
const LARGE = new Set(["json_original", "json", "payload", "data", "body"]);
const LARGE_TEXT = 2048;

const plain = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
const norm = (v: unknown): unknown => (v === undefined ? null : typeof v === "boolean" ? (v ? 1 : 0) : v);

function leafEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const x = norm(a);
  const y = norm(b);
  if (x === y) return true;
  if (typeof x === "object" && typeof y === "object" && x !== null && y !== null) return JSON.stringify(x) === JSON.stringify(y);
  return false;
}

const shown = (v: unknown): unknown => (v === undefined ? null : v);

function digest(v: unknown): string | null {
  if (v == null) return null;
  const text = typeof v === "string" ? v : JSON.stringify(v);
  return `sha256:${(Bun.SHA256.hash(text, "hex") as string).slice(0, 16)}`;
}

function parsedObject(v: unknown): Record<string, unknown> | null {
  if (plain(v)) return v;
  if (typeof v !== "string" || !v.startsWith("{")) return null;
  try {
    const o = JSON.parse(v) as unknown;
    return plain(o) ? o : null;
  } catch {
    return null;
  }
}

function largeChange(field: string, before: unknown, after: unknown): FieldChange {
  const b = parsedObject(before);
  const a = parsedObject(after);
  // The top-level keys of either side whose values differ (each side's own keys, once).
  const keys: string[] = [];
  if (a) for (const k in a) if (Object.hasOwn(a, k) && !leafEqual(b?.[k], a[k])) keys.push(k);
  if (b) for (const k in b) if (Object.hasOwn(b, k) && !(a && Object.hasOwn(a, k)) && !leafEqual(b[k], a?.[k])) keys.push(k);
  return { field, before: digest(before), after: digest(after), keys: keys.sort() };
}

/**
 * What a field name is, found once per name (the upsert records dozens of fields per write, the
 * same names every time): secret, large or plain, and its field at the top level of a record
 * (null: bookkeeping, not recorded; an embedded address's address_* column named as the API nests
 * it).
 */
const SECRET_NAME = 1;
const LARGE_NAME = 2;
interface NameInfo {
  kind: number;
  top: string | null;
}
const names = new Map<string, NameInfo>();
function infoOf(name: string): NameInfo {
  let info = names.get(name);
  if (info === undefined) {
    info = {
      kind: SECRET.test(name) ? SECRET_NAME : LARGE.has(name) || name.startsWith("json_") ? LARGE_NAME : 0,
      top: IGNORED.has(name) ? null : name.startsWith("address_") ? `address.${name.slice(8)}` : name,
    };
    if (names.size < 10_000) names.set(name, info);
  }
  return info;
}
const isLarge = (kind: number, v: unknown) => kind === LARGE_NAME || (typeof v === "string" && v.length > LARGE_TEXT);
const NOTHING: Record<string, unknown> = {};

/** Fields of `before` and `after` that differ, with dotted paths; secrets masked; large fields digested. */
export function diffRecords(before: object | null, after: object | null, prefix = "", out: FieldChange[] = []): FieldChange[] {
  const b = (before ?? NOTHING) as Record<string, unknown>;
  const a = (after ?? NOTHING) as Record<string, unknown>;
  for (const k in a) if (Object.hasOwn(a, k)) diffKey(k, b[k], a[k], prefix, out);
  if (before) for (const k in b) if (Object.hasOwn(b, k) && !Object.hasOwn(a, k)) diffKey(k, b[k], a[k], prefix, out);
  return out;
}

function diffKey(name: string, bv: unknown, av: unknown, prefix: string, out: FieldChange[]): void {
  // Unchanged scalars (most fields of an update, every null of a create) cost no more than this.
  if (bv === av || (bv == null && av == null)) return;
  const info = infoOf(name);
  const field = prefix ? prefix + name : info.top;
  if (field !== null) diffValue(field, info.kind, bv, av, out);
}

function diffValue(field: string, kind: number, before: unknown, after: unknown, out: FieldChange[]): void {
  if (kind === SECRET_NAME) {
    if (!leafEqual(before, after)) out.push({ field, before: before == null ? null : MASK, after: after == null ? null : MASK });
    return;
  }
  if (isLarge(kind, before) || isLarge(kind, after)) {
    if (!leafEqual(before, after)) out.push(largeChange(field, before, after));
    return;
  }
  const pb = plain(before);
  const pa = plain(after);
  if (pb || pa) {
    // An object on one side at least: its fields, each a dotted path; a scalar on the other side
    // is its own entry.
    if (!pb && before != null) out.push({ field, before: shown(before), after: null });
    diffRecords(pb ? before : null, pa ? after : null, `${field}.`, out);
    if (!pa && after != null) out.push({ field, before: null, after: shown(after) });
    return;
  }
  if (Array.isArray(before) && Array.isArray(after) && [...before, ...after].some(plain)) {
    const n = Math.max(before.length, after.length);
    for (let i = 0; i < n; i++) diffValue(`${field}.${i}`, 0, before[i], after[i], out);
    return;
  }
  if (!leafEqual(before, after)) out.push({ field, before: shown(before), after: shown(after) });
}

// ---- the changes of one write --------------------------------------------------------------------

export interface ChangeInput {
  /** The area's singular name: city, person, contract, nas, user, ... */
  type: string;
  id: string;
  /** create, update, delete, or the operation (status, config, items, key, secret, ...). */
  action: string;
  /** The record before (null: created) and after (null: deleted), as rows or views; secrets are masked here. */
  before: object | null;
  after: object | null;
  /** Platform changes: the corporation the record belongs to (default: the actor's working one). */
  corpId?: string | null;
}

/** What a write scope offers to record a Change (the store's `WriteScope` is one). */
export interface ChangeRecorder {
  /**
   * Records the change of one record (its before and after, rows or views) in the history, in this
   * write's transaction: nothing when they do not differ, secrets masked.
   */
  record(change: ChangeInput): void;
}

/**
 * The part of a corporation's door `trackedWrite` uses (core/store.ts TenantDoor is one): declared
 * here so the history, which the store's write path uses, does not import the store back.
 */
export interface RecordingDoor {
  write<T>(fn: (tx: TenantDb, w: ChangeRecorder) => Promise<T>): Promise<T>;
}

interface Pending {
  type: string;
  id: string;
  action: string;
  /** The fields in the order first changed. */
  fields: FieldChange[];
  /** Each field's place in `fields`, made when a second record of the write merges into it. */
  places: Map<string, number> | null;
  corpId: string | null;
}

const TENANT_COLUMNS = "id, at, actor, actor_user_id, actor_app_id, target_type, target_id, action, fields, changes, request_id";
const PLATFORM_COLUMNS = "id, at, actor, actor_user_id, actor_app_id, corp_id, target_type, target_id, action, fields, changes, request_id";
const MAX_ROWS = 8;
const insertTexts = new Map<string, string>();

/** A corporation's history rows at most one statement carries. */
export const HISTORY_MAX_ROWS = MAX_ROWS;
/** The values of one corporation's history row (TENANT_COLUMNS). */
export const HISTORY_WIDTH = 11;

/** `INSERT INTO history (...) VALUES (?1, ...), (...)` for `n` rows (numbered: both engines' placeholders). */
export function historyInsertSql(n: number): string {
  return insertSql(false, n);
}

function insertSql(platform: boolean, n: number): string {
  const key = `${platform ? "p" : "t"}${n}`;
  let text = insertTexts.get(key);
  if (!text) {
    const width = platform ? 12 : HISTORY_WIDTH;
    const values = Array.from({ length: n }, (_, r) => `(${Array.from({ length: width }, (_, c) => `?${r * width + c + 1}`).join(", ")})`).join(", ");
    text = `INSERT INTO ${platform ? "platform_history" : "history"} (${platform ? PLATFORM_COLUMNS : TENANT_COLUMNS}) VALUES ${values}`;
    insertTexts.set(key, text);
  }
  return text;
}

/** What one write records; flushed into its transaction just before COMMIT. */
export class ChangeLog {
  private pending: Map<string, Pending> | null = null;

  /** `actor`: taken when the write was asked for (a grouped write runs in another's turn). */
  constructor(private readonly actor: Actor = currentActor()) {}

  /**
   * One record's change. Called twice for one record in a write, the Change holds the first
   * before and the last after of each field (and the first action); a field back where it was is
   * left out, and a Change left with no field is not written.
   */
  record(c: ChangeInput): void {
    const diff = diffRecords(c.before, c.after);
    const key = `${c.type}\n${c.id}`;
    const held: Pending | undefined = (this.pending ??= new Map()).get(key);
    if (!held) {
      if (!diff.length && c.action !== "delete") return;
      this.pending.set(key, { type: c.type, id: c.id, action: c.action, fields: diff, places: null, corpId: c.corpId ?? this.actor.corpId });
      return;
    }
    const places = (held.places ??= new Map(held.fields.map((f, i) => [f.field, i])));
    for (const f of diff) {
      const at = places.get(f.field);
      if (at === undefined) {
        places.set(f.field, held.fields.length);
        held.fields.push(f);
      } else held.fields[at] = { ...f, before: held.fields[at].before };
    }
    if (c.action === "delete") held.action = held.action === "create" ? "" : "delete";
  }

  get size(): number {
    return this.pending?.size ?? 0;
  }

  /** Inside the write's transaction: one row per record that changed. */
  async flush(tx: AnyDb, platform: boolean): Promise<void> {
    const rows = this.take(platform);
    // One statement for the write's Changes (the upsert makes two to four): cached per row count.
    for (let i = 0; i < rows.length; i += MAX_ROWS) {
      const chunk = rows.slice(i, i + MAX_ROWS);
      await tx.$client.query(insertSql(platform, chunk.length)).run(...chunk.flat());
    }
  }

  /**
   * The rows flush would insert (in the columns' order of historyInsertSql), the log left empty:
   * for a door that sends them inside a statement of its own (core/pg/door.ts, with the events).
   */
  take(platform: boolean): (string | null)[][] {
    if (!this.pending) return [];
    const at = nowIso();
    const a = this.actor;
    const rows: (string | null)[][] = [];
    for (const p of this.pending.values()) {
      // A record created and deleted in one write left nothing.
      if (!p.action) continue;
      // A field back where it was in this write is left out; a secret (masked on both sides) and a
      // large field (digests) were compared before masking.
      // (Only a merged field can be back where it was: the diff keeps changed fields only.)
      const changes = p.places ? p.fields.filter((f) => f.keys !== undefined || f.after === MASK || !leafEqual(f.before, f.after)) : p.fields;
      if (!changes.length && p.action !== "delete") continue;
      // Stored as [field, before, after, keys?] triples (a create's two dozen fields in half the
      // bytes of {field, before, after} objects); storedChanges turns them back.
      const triples: unknown[][] = [];
      let fields = "";
      for (const f of changes) {
        triples.push(f.keys ? [f.field, f.before, f.after, f.keys] : [f.field, f.before, f.after]);
        fields = fields ? `${fields}, ${f.field}` : f.field;
      }
      const text = JSON.stringify(triples);
      rows.push(
        platform
          ? [newId(), at, a.name, a.userId, a.appId, p.corpId, p.type, p.id, p.action, fields, text, a.requestId]
          : [newId(), at, a.name, a.userId, a.appId, p.type, p.id, p.action, fields, text, a.requestId],
      );
    }
    this.pending = null;
    return rows;
  }
}

/**
 * One write of one record with its Change: `snapshot` reads the record (null when absent) before
 * and after `fn`; the action is `action`, or create/update/delete by which side is absent. `id`
 * null: a create, whose id is the `id` of what `fn` returns. For services whose writes are
 * whole-record (the ISP records, QR campaigns...); others call `w.record` where they write.
 */
export function trackedWrite<T>(
  door: RecordingDoor,
  type: string,
  id: string | null,
  snapshot: (tx: TenantDb, id: string) => Promise<object | null>,
  fn: (tx: TenantDb) => Promise<T>,
  action?: string,
): Promise<T> {
  return door.write(async (tx, w) => {
    const before = id ? await snapshot(tx, id) : null;
    const out = await fn(tx);
    const recordId = id ?? (out as { id: string }).id;
    const after = await snapshot(tx, recordId);
    w.record({ type, id: recordId, action: action ?? (!before ? "create" : after ? "update" : "delete"), before, after });
    return out;
  });
}

// ---- reading and pruning -------------------------------------------------------------------------

/** A stored `changes` text as the API shows it: [{field, before, after, keys?}]. */
export function storedChanges(text: string): FieldChange[] {
  return (JSON.parse(text) as [string, unknown, unknown, string[]?][]).map(([field, before, after, keys]) => (keys ? { field, before, after, keys } : { field, before, after }));
}

export type HistoryRow = typeof history.$inferSelect;

/** Target types whose Changes live in the platform database. */
export const PLATFORM_TARGETS = new Set(["user", "workgroup", "corp", "service", "feature", "menu", "server", "saferange"]);

/**
 * A page of Changes by the list convention (default newest first), in the caller's read of the
 * corporation's database, or of the platform's (`corpId`: that corporation's changes only).
 */
export async function listHistoryRows(db: AnyDb, query: ListParams, bounds: { from?: string; to?: string; platformCorpId?: string }): Promise<Page<HistoryRow>> {
  const table = bounds.platformCorpId === undefined ? history : platformHistory;
  const where: (SQL | undefined)[] = [bounds.from ? gte(table.at, bounds.from) : undefined, bounds.to ? lte(table.at, bounds.to) : undefined];
  if (bounds.platformCorpId !== undefined) where.push(eq(platformHistory.corp_id, bounds.platformCorpId));
  return await listRows<HistoryRow, HistoryRow>(
    db,
    table as typeof history,
    { q: [table.target_id], defaultSort: "-at", extraKeys: ["from", "to"], hidden: ["changes", "corp_id"] },
    query,
    (r) => r,
    [and(...where)],
  );
}

/** Deletes up to `limit` Changes made before `cutoff` (housekeeping, a batch per call); returns how many went. */
export async function pruneHistory(db: AnyDb, cutoff: string, limit: number, platform: boolean): Promise<number> {
  const table = platform ? "platform_history" : "history";
  return (await db.$client.query(`DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE at < ?1 ORDER BY at LIMIT ?2)`).run(cutoff, limit)).changes;
}
