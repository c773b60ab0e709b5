// Tokens are HS256 JWTs whose `jti` names a session row. On SQLite the row is read on every
// request (a few µs), so revoking it (logout, refresh, change of corporation, password change, ...)
// takes effect at once. On PostgreSQL that read is a transaction of four round trips, so the live
// rows are kept per node and every write that ends a session or changes the user's flags the guard
// reads publishes SESSIONS_TOPIC (`ctx.changes`): every node drops them within one NOTIFY delivery,
// the writing node before the write answers. Expiry is checked against the clock on every request.
import { timingSafeEqual } from "node:crypto";
import type { PlatformDb } from "../db/sqlite";
import type { Logger } from "../lib/log";
import type { Changes } from "./changes";
import type { PlatformDoor, WriteScope } from "./store";
import { newId } from "../lib/ids";
import { nowIso, toIso } from "../lib/time";

const HEADER = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url");

export interface SessionClaims {
  sub: string;
  corp: string;
  jti: string;
  iat: number;
  exp: number;
}

export interface UserFlags {
  status: number;
  super_admin: number;
  /** The actor of the user's changes in the history (core/history.ts). */
  login: string;
}

export interface LiveSession {
  id: string;
  user_id: string;
  corp_id: string;
  expires_at: string;
  user_status: number;
  super_admin: number;
  user_login: string;
}

/**
 * `ctx.changes` topic of live sessions. Keys: `session:<id>` (one session), `user:<id>` (every
 * session of the user: revoked, or the user's status or super_admin changed, or the user deleted),
 * `corp:<id>` (every session working in the corporation).
 */
export const SESSIONS_TOPIC = "sessions";

/** Inside a write that changes a user's status or super_admin, or deletes the user: every node drops the user's kept sessions. */
export function publishUserSessions(changes: Changes, tx: PlatformDb, w: WriteScope, userId: string): Promise<void> {
  return changes.publish(tx, w, SESSIONS_TOPIC, `user:${userId}`);
}

/** Verified tokens remembered at most (≈ 300 bytes each); the whole memory is dropped when full. */
const VERIFIED_MAX = 8192;
/** last_seen_at is written at most this often per session: one write a minute, not one a request. */
const SEEN_EVERY_MS = 60_000;
const USER_AGENT_MAX = 500;

/** Where a token was obtained: shown in the user's session list. */
export interface SessionClient {
  ip: string | null;
  userAgent: string | null;
}

export interface SessionRow {
  id: string;
  user_id: string;
  corp_id: string;
  created_at: string;
  last_seen_at: string | null;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
}

/**
 * The one base64url spelling of some bytes: no padding, no standard-alphabet characters, and a
 * last character without stray low bits (which decode to the same bytes). Re-encoding the decoded
 * bytes gives exactly that spelling, so any other spelling of a token is not the token.
 */
function canonicalBase64url(text: string): boolean {
  return text.length > 0 && /^[A-Za-z0-9_-]+$/.test(text) && Buffer.from(text, "base64url").toString("base64url") === text;
}

export class Sessions {
  private verified = new Map<string, SessionClaims>();
  /** When each session's last_seen_at was last written by this process (ms). */
  private seenWritten = new Map<string, number>();
  /** Live rows kept (PostgreSQL), by session id; null: read on every request (SQLite). */
  private kept: Map<string, LiveSession> | null;
  /** Moves on every invalidation: a row read before a change committed and returned after it was dropped is not kept. */
  private epoch = 0;

  constructor(
    private platform: PlatformDoor,
    private key: Uint8Array,
    private ttlSeconds: number,
    /** The user's flags, from the user module (which owns `users`). */
    private userFlags: (db: PlatformDb, userId: string) => Promise<UserFlags | null>,
    private logger: Logger,
    /** Where revocations are published (null: a bare session store, as unit tests build). */
    private changes: Changes | null = null,
    /** Keep live rows per node (PostgreSQL); needs `changes`. */
    keepLive = false,
  ) {
    this.kept = keepLive && changes ? new Map() : null;
    changes?.subscribe(SESSIONS_TOPIC, { changed: (key) => this.forget(key), resync: () => this.forget() });
  }

  get ttl(): number {
    return this.ttlSeconds;
  }

  /** Creates a session and its token. */
  async issue(userId: string, corpId: string, client: SessionClient = { ip: null, userAgent: null }): Promise<{ token: string; sessionId: string; expiresIn: number }> {
    const id = newId();
    const iat = Math.floor(Date.now() / 1000);
    const exp = iat + this.ttlSeconds;
    await this.platform.write((tx) =>
      tx.$client
        .query(INSERT)
        .run(id, userId, corpId, nowIso(), toIso(exp * 1000), client.ip, client.userAgent?.slice(0, USER_AGENT_MAX) || null),
    );
    this.seenWritten.set(id, Date.now());
    const signingInput = `${HEADER}.${Buffer.from(JSON.stringify({ corp: corpId, sub: userId, jti: id, iat, exp })).toString("base64url")}`;
    const token = `${signingInput}.${this.sign(signingInput).toString("base64url")}`;
    return { token, sessionId: id, expiresIn: this.ttlSeconds };
  }

  private sign(signingInput: string): Buffer {
    // Bun's hasher: the same HMAC-SHA256 bytes as node:crypto's createHmac, in ≈ 60 % of the time.
    return new Bun.CryptoHasher("sha256", this.key).update(signingInput).digest() as Buffer;
  }

  /**
   * Verifies an HS256 JWT synchronously (a WebCrypto round trip per request costs more than the
   * HMAC itself): the header must say HS256, the signature must match in constant time, `exp`
   * must be in the future and `nbf`, when present, in the past. Null for anything else.
   * Synchronous so that the guard, which runs on every request, needs no await.
   */
  verify(token: string): SessionClaims | null {
    // A token seen before skips the decode and the HMAC: its signature and fields were checked
    // then, and the key never changes while the process runs. Only time moves on.
    const known = this.verified.get(token);
    if (known !== undefined) return this.inTime(known) ? known : null;
    const parts = token.split(".");
    if (parts.length !== 3) return null;
    const [h, p, sig] = parts;
    if (!canonicalBase64url(h) || !canonicalBase64url(p) || !canonicalBase64url(sig)) return null;
    try {
      // The header this service issues needs no parse; any other is checked field by field.
      if (h !== HEADER) {
        const header = JSON.parse(Buffer.from(h, "base64url").toString("utf8"));
        if (header?.alg !== "HS256" || (header.typ !== undefined && header.typ !== "JWT") || header.crit !== undefined) return null;
      }
      const expected = this.sign(`${h}.${p}`);
      const given = Buffer.from(sig, "base64url");
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
      const payload = JSON.parse(Buffer.from(p, "base64url").toString("utf8"));
      if (typeof payload?.sub !== "string" || typeof payload.jti !== "string" || typeof payload.corp !== "string") return null;
      if (typeof payload.exp !== "number" || typeof payload.iat !== "number") return null;
      if (payload.nbf !== undefined && typeof payload.nbf !== "number") return null;
      if (this.verified.size >= VERIFIED_MAX) this.verified.clear();
      this.verified.set(token, payload as SessionClaims);
      return this.inTime(payload) ? (payload as SessionClaims) : null;
    } catch {
      return null;
    }
  }

  /** `exp` in the future and `nbf`, when present, in the past. */
  private inTime(claims: SessionClaims & { nbf?: number }): boolean {
    const now = Math.floor(Date.now() / 1000);
    return claims.exp > now && (claims.nbf === undefined || claims.nbf <= now);
  }

  /** The live session row (not revoked, not expired) with its user's status flags. */
  async live(sessionId: string): Promise<LiveSession | null> {
    const kept = this.kept?.get(sessionId);
    if (kept !== undefined) {
      // Kept rows are live when read; time alone can end them since (revocations drop them).
      if (kept.expires_at > nowIso()) return kept;
      this.kept!.delete(sessionId);
      return null;
    }
    const epoch = this.epoch;
    const found = await this.platform.read(async (db) => {
      const row = await db.$client.query<Omit<LiveSession, "user_status" | "super_admin" | "user_login">, [string, string]>(LOOKUP).get(sessionId, nowIso());
      if (!row) return null;
      // A session's user always exists (deleting a user deletes its sessions); were it missing,
      // a null status still refuses.
      const flags = await this.userFlags(db, row.user_id);
      return { ...row, user_status: flags?.status ?? 0, super_admin: flags?.super_admin ?? 0, user_login: flags?.login ?? "" };
    });
    // Only live rows are kept: an unknown or ended session stays a read (its token is refused).
    if (found && this.kept && epoch === this.epoch) {
      if (this.kept.size >= VERIFIED_MAX) this.kept.clear();
      this.kept.set(sessionId, found);
    }
    return found;
  }

  /**
   * Drops kept rows: `session:<id>`, `user:<id>`, `corp:<id>` (SESSIONS_TOPIC's keys), or all.
   * Writes publish SESSIONS_TOPIC instead, so every node drops them.
   */
  forget(key?: string): void {
    this.epoch++;
    const kept = this.kept;
    if (!kept) return;
    const colon = key?.indexOf(":") ?? -1;
    const kind = key?.slice(0, colon);
    const id = key?.slice(colon + 1);
    if (kind === "session") kept.delete(id!);
    else if (kind === "user" || kind === "corp") {
      // Rare (a revocation, a user's change) and at most VERIFIED_MAX rows: a scan.
      for (const [sessionId, row] of kept) if ((kind === "user" ? row.user_id : row.corp_id) === id) kept.delete(sessionId);
    } else kept.clear();
  }

  /** Inside a session write: every node forgets `key` once it commits. */
  private async publish(tx: PlatformDb, w: WriteScope, key: string): Promise<void> {
    if (this.changes) await this.changes.publish(tx, w, SESSIONS_TOPIC, key);
  }

  /**
   * Notes an authenticated request of a live session. Runs on every request: a map lookup, and a
   * write only when this process has not written the session's last_seen_at for a minute. The
   * write is not awaited: the request does not depend on it.
   */
  seen(sessionId: string): void {
    const now = Date.now();
    const last = this.seenWritten.get(sessionId);
    if (last !== undefined && now - last < SEEN_EVERY_MS) return;
    if (this.seenWritten.size >= VERIFIED_MAX) this.seenWritten.clear();
    this.seenWritten.set(sessionId, now);
    // One statement, atomic alone: on PostgreSQL it takes no platform writer lock (which every
    // node's logins and user changes queue on), and a last use lost in a crash is only a display.
    this.platform
      .write((tx) => tx.$client.query("UPDATE sessions SET last_seen_at = ?2 WHERE id = ?1").run(sessionId, toIso(now)), { durable: false, exclusive: false })
      .catch((err) => this.logger.warn("recording a session's last use failed", { error: String(err) }));
  }

  /** A user's live sessions (not revoked, not expired), newest first. */
  listLive(userId: string): Promise<SessionRow[]> {
    return this.platform.read((db) =>
      db.$client
        .query<SessionRow, [string, string]>(
          `SELECT id, user_id, corp_id, created_at, last_seen_at, expires_at, ip, user_agent FROM sessions
           WHERE user_id = ?1 AND revoked_at IS NULL AND expires_at > ?2 ORDER BY created_at DESC, id DESC`,
        )
        .all(userId, nowIso()),
    );
  }

  /** False when the session was revoked already (a logout racing a refresh: the refresh must not go on). */
  async revoke(sessionId: string): Promise<boolean> {
    return this.platform.write(async (tx, w) => {
      const { changes } = await tx.$client.query("UPDATE sessions SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL").run(sessionId, nowIso());
      await this.publish(tx, w, `session:${sessionId}`);
      return changes > 0;
    });
  }

  /** Every session of a user, or all but one (a password change keeps the caller's). */
  async revokeAllOfUser(userId: string, exceptSessionId?: string): Promise<void> {
    await this.platform.write(async (tx, w) => {
      if (exceptSessionId)
        await tx.$client.query("UPDATE sessions SET revoked_at = ?3 WHERE user_id = ?1 AND id <> ?2 AND revoked_at IS NULL").run(userId, exceptSessionId, nowIso());
      else await tx.$client.query("UPDATE sessions SET revoked_at = ?2 WHERE user_id = ?1 AND revoked_at IS NULL").run(userId, nowIso());
      // The kept one is dropped too (read again at its next request): simpler than naming the others.
      await this.publish(tx, w, `user:${userId}`);
    });
  }

  async revokeUserInCorp(userId: string, corpId: string): Promise<void> {
    await this.platform.write(async (tx, w) => {
      await tx.$client.query("UPDATE sessions SET revoked_at = ?3 WHERE user_id = ?1 AND corp_id = ?2 AND revoked_at IS NULL").run(userId, corpId, nowIso());
      await this.publish(tx, w, `user:${userId}`);
    });
  }

  async revokeAllInCorp(corpId: string): Promise<void> {
    await this.platform.write(async (tx, w) => {
      await tx.$client.query("UPDATE sessions SET revoked_at = ?2 WHERE corp_id = ?1 AND revoked_at IS NULL").run(corpId, nowIso());
      await this.publish(tx, w, `corp:${corpId}`);
    });
  }

  /**
   * Deletes at most `limit` sessions revoked or expired before `cutoff` (housekeeping); returns how
   * many went. These rows are inserted oldest first, so the rowid scan finds them at its start.
   */
  async prune(tx: PlatformDb, cutoff: string, limit: number): Promise<number> {
    const { changes } = await tx.$client
      .query("DELETE FROM sessions WHERE rowid IN (SELECT rowid FROM sessions WHERE revoked_at < ?1 OR expires_at < ?1 LIMIT ?2)")
      .run(cutoff, limit);
    return changes;
  }
}

const LOOKUP = `SELECT id, user_id, corp_id, expires_at FROM sessions WHERE id = ?1 AND revoked_at IS NULL AND expires_at > ?2`;
const INSERT = "INSERT INTO sessions (id, user_id, corp_id, created_at, expires_at, ip, user_agent, last_seen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?4)";
