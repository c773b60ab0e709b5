// Tokens are HS256 JWTs whose `jti` names a session row. The row is read on every request, so
// revoking it (logout, refresh, change of corporation, password change, ...) takes effect at once.
import type { Database } from "bun:sqlite";
import { jwtVerify, SignJWT, errors as joseErrors } from "jose";
import { newId } from "../../lib/ids";
import { nowIso, toIso } from "../../lib/time";

export interface SessionClaims {
  sub: string;
  corp: string;
  jti: string;
  iat: number;
  exp: number;
}

export interface LiveSession {
  id: string;
  user_id: string;
  corp_id: string;
  expires_at: string;
  user_status: number;
  super_admin: number;
}

export class Sessions {
  private lookupStmt;
  private insertStmt;
  private revokeOneStmt;
  private revokeUserStmt;
  private revokeUserExceptStmt;
  private revokeUserInCorpStmt;
  private revokeCorpStmt;

  constructor(
    private sqlite: Database,
    private key: Uint8Array,
    private ttlSeconds: number,
  ) {
    this.lookupStmt = sqlite.query<LiveSession, [string, string]>(`
      SELECT s.id, s.user_id, s.corp_id, s.expires_at, u.status AS user_status, u.super_admin
      FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE s.id = ?1 AND s.revoked_at IS NULL AND s.expires_at > ?2`);
    this.insertStmt = sqlite.query(
      "INSERT INTO sessions (id, user_id, corp_id, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    );
    this.revokeOneStmt = sqlite.query("UPDATE sessions SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL");
    this.revokeUserStmt = sqlite.query("UPDATE sessions SET revoked_at = ?2 WHERE user_id = ?1 AND revoked_at IS NULL");
    this.revokeUserExceptStmt = sqlite.query(
      "UPDATE sessions SET revoked_at = ?3 WHERE user_id = ?1 AND id <> ?2 AND revoked_at IS NULL",
    );
    this.revokeUserInCorpStmt = sqlite.query(
      "UPDATE sessions SET revoked_at = ?3 WHERE user_id = ?1 AND corp_id = ?2 AND revoked_at IS NULL",
    );
    this.revokeCorpStmt = sqlite.query("UPDATE sessions SET revoked_at = ?2 WHERE corp_id = ?1 AND revoked_at IS NULL");
  }

  get ttl(): number {
    return this.ttlSeconds;
  }

  /** Creates a session and its token. */
  async issue(userId: string, corpId: string): Promise<{ token: string; sessionId: string; expiresIn: number }> {
    const id = newId();
    const iat = Math.floor(Date.now() / 1000);
    const exp = iat + this.ttlSeconds;
    this.insertStmt.run(id, userId, corpId, nowIso(), toIso(exp * 1000));
    const token = await new SignJWT({ corp: corpId })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(userId)
      .setJti(id)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, sessionId: id, expiresIn: this.ttlSeconds };
  }

  /** Verifies signature, algorithm and expiry; null for anything forged, expired or malformed. */
  async verify(token: string): Promise<SessionClaims | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ["HS256"] });
      if (typeof payload.sub !== "string" || typeof payload.jti !== "string" || typeof payload.corp !== "string") return null;
      if (typeof payload.exp !== "number" || typeof payload.iat !== "number") return null;
      return payload as unknown as SessionClaims;
    } catch (err) {
      if (err instanceof joseErrors.JOSEError || err instanceof TypeError || err instanceof SyntaxError) return null;
      throw err;
    }
  }

  /** The live session row (not revoked, not expired) with its user's status flags. */
  live(sessionId: string): LiveSession | null {
    return this.lookupStmt.get(sessionId, nowIso());
  }

  revoke(sessionId: string): void {
    this.revokeOneStmt.run(sessionId, nowIso());
  }

  /** Every session of a user, or all but one (a password change keeps the caller's). */
  revokeAllOfUser(userId: string, exceptSessionId?: string): void {
    if (exceptSessionId) this.revokeUserExceptStmt.run(userId, exceptSessionId, nowIso());
    else this.revokeUserStmt.run(userId, nowIso());
  }

  revokeUserInCorp(userId: string, corpId: string): void {
    this.revokeUserInCorpStmt.run(userId, corpId, nowIso());
  }

  revokeAllInCorp(corpId: string): void {
    this.revokeCorpStmt.run(corpId, nowIso());
  }
}
