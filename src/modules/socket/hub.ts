// The realtime socket's state: single-use tickets (in the platform settings, so that any node
// redeems them), the open sockets of each corporation, and the stream of outbox events to them. Sockets read the outbox by `seq` themselves (not through the
// webhook queue), so a socket sees each event committed while it is open, once.
import { createHash, randomBytes } from "node:crypto";
import type { ServerWebSocket } from "bun";
import type { AppContext } from "../../core/context";
import { EVENT_AREAS, eventsAfter, lastEventSeq } from "../../core/events";
import { dropSettingRange, getSetting, putSetting, takeSetting } from "../../core/settings";
import { actionOf } from "../../http/guard";
import type { Principal } from "../../core/principal";
import { parseSessionChange, SESSIONS_TOPIC, type SessionChange } from "../isp/session-changes";

export const TICKET_SECONDS = 30 as const;
/** Close code for a socket whose session was revoked or expired (4000-4999: application codes). */
export const CLOSE_SESSION_ENDED = 4401;
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
const BATCH = 5000;
/** The permission area of RADIUS session messages: GET /api/isp/session. */
const SESSION_AREA = "ISP_SESSION";

/**
 * Tickets live in the platform's settings (so that any node redeems one another node issued), under
 * `socket-ticket:<expiry, 15 digits>:<SHA-256 of the ticket's secret>`: expired ones are one key
 * range, and the stored keys do not give the tickets away. The ticket is `<expiry base 36>.<secret>`.
 */
interface HeldTicket {
  userId: string;
  sessionId: string;
  corpId: string;
  superAdmin: boolean;
}

const TICKET_PREFIX = "socket-ticket:";
const stamp = (ms: number) => String(ms).padStart(15, "0");
const ticketKey = (expiresAt: number, secret: string) => `${TICKET_PREFIX}${stamp(expiresAt)}:${createHash("sha256").update(secret).digest("hex")}`;

export interface SocketClient {
  raw: ServerWebSocket<unknown>;
  userId: string;
  sessionId: string;
  corpId: string;
  superAdmin: boolean;
  /** `GET /api/<area>` as a permission action (`host:port/api/city/GET`), per event area. */
  listActions: Map<string, string>;
  /**
   * The last outbox seq this socket was given (or had no right to): at first the corporation's
   * last seq read at redeem, then moved by each stream pass that included the socket.
   */
  since: number;
}

export class SocketHub {
  private byCorp = new Map<string, Set<SocketClient>>();
  private pendingCorps = new Set<string>();
  /** Corporations being streamed now, and those to stream again when that pass ends. */
  private streaming = new Set<string>();
  private again = new Set<string>();
  private checking = false;
  private flushScheduled = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private unsubscribe: (() => void) | null = null;
  private unsubscribeSessions: (() => void) | null = null;

  constructor(private ctx: AppContext) {}

  start(): void {
    this.unsubscribe = this.ctx.events.subscribe((corpId) => {
      if (this.byCorp.has(corpId)) this.schedule(corpId);
    });
    this.unsubscribeSessions = this.ctx.changes.subscribe(SESSIONS_TOPIC, {
      changed: (key) => {
        const change = parseSessionChange(key);
        if (change && this.byCorp.has(change.corpId)) void this.sendSession(change.corpId, `ISP_SESSION_${change.kind.toUpperCase()}`, sessionData(change));
      },
      // Changes may have been missed (the feed's connection was lost): every board reads again.
      resync: () => {
        for (const corpId of this.byCorp.keys()) void this.sendSession(corpId, "ISP_SESSION_RESYNC", null);
      },
    });
    // Recorded only while sockets are open (an empty check does nothing).
    this.timer = setInterval(() => void (this.byCorp.size ? this.ctx.jobs.track("socket-hub", () => this.check()) : null), this.ctx.dispatchTuning.socketCheckMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribeSessions?.();
    if (this.timer) clearInterval(this.timer);
    for (const set of this.byCorp.values()) for (const c of set) c.raw.close(1001, "server shutting down");
    this.byCorp.clear();
  }

  /** A single-use ticket for the caller's session, valid TICKET_SECONDS. */
  async issue(p: Principal): Promise<{ ticket: string; expires_in: typeof TICKET_SECONDS; url: string }> {
    const now = this.ctx.now();
    const expiresAt = now + TICKET_SECONDS * 1000;
    const secret = randomBytes(32).toString("base64url");
    const held: HeldTicket = { userId: p.userId!, sessionId: p.sessionId!, corpId: p.corpId, superAdmin: p.superAdmin };
    // Not durable: a ticket lost to a crash is asked for again; expired ones go with the next issue.
    await this.ctx.store.platform.write(
      async (tx) => {
        await dropSettingRange(tx, TICKET_PREFIX, TICKET_PREFIX + stamp(now));
        await putSetting(tx, ticketKey(expiresAt, secret), JSON.stringify(held));
      },
      { durable: false },
    );
    const ticket = `${expiresAt.toString(36)}.${secret}`;
    const base = this.ctx.config.publicUrl.replace(/^http/, "ws");
    return { ticket, expires_in: TICKET_SECONDS, url: `${base}/api/socket?ticket=${ticket}` };
  }

  /** Whether a ticket would be accepted now (without consuming it). */
  async peek(ticket: string | undefined): Promise<boolean> {
    const key = this.liveKey(ticket);
    if (!key) return false;
    const value = await this.ctx.store.platform.read((db) => getSetting(db, key));
    return value !== null && (await this.sessionLives((JSON.parse(value) as HeldTicket).sessionId));
  }

  /**
   * Consumes a ticket: null when unknown, used, expired, or its session has ended meanwhile. With
   * the client comes `since`, the corporation's last outbox seq, read before the upgrade answers:
   * the socket streams every event committed after it, so none committed once the client sees
   * the socket open is missed (read after the open, on PostgreSQL a round trip later, the cursor
   * could pass an event committed meanwhile).
   */
  async redeem(ticket: string | undefined, request: Request): Promise<Omit<SocketClient, "raw"> | null> {
    const key = this.liveKey(ticket);
    if (!key) return null;
    // Taken before any other await: single use even under concurrent upgrades, on any node.
    const value = await this.ctx.store.platform.write((tx) => takeSetting(tx, key), { durable: false });
    if (value === null) return null;
    const t = JSON.parse(value) as HeldTicket;
    if (!(await this.sessionLives(t.sessionId))) return null;
    const listActions = new Map<string, string>(EVENT_AREAS.map((a) => [a, actionOf(request, `/api/${a.toLowerCase()}`)]));
    listActions.set(SESSION_AREA, actionOf(request, "/api/isp/session"));
    const since = await this.ctx.store.tenant(t.corpId).read(lastEventSeq);
    return { userId: t.userId, sessionId: t.sessionId, corpId: t.corpId, superAdmin: t.superAdmin, listActions, since };
  }

  /** The settings key of a well-formed ticket not expired yet; null otherwise. */
  private liveKey(ticket: string | undefined): string | null {
    const m = ticket === undefined ? null : /^([0-9a-z]{1,11})\.([A-Za-z0-9_-]{43})$/.exec(ticket);
    if (!m) return null;
    const expiresAt = parseInt(m[1], 36);
    return expiresAt > this.ctx.now() ? ticketKey(expiresAt, m[2]) : null;
  }

  /**
   * Each socket keeps its own position (`since`), and a pass reads from the lowest of the
   * corporation's: a socket joining a corporation whose other sockets were streamed past its
   * redeem (an event committed between its redeem and now) still gets those events.
   */
  add(client: SocketClient): void {
    let set = this.byCorp.get(client.corpId);
    if (!set) {
      set = new Set();
      this.byCorp.set(client.corpId, set);
    }
    set.add(client);
    // Events committed between the redeem and now (the handshake) go out at once.
    this.schedule(client.corpId);
  }

  remove(raw: ServerWebSocket<unknown>): void {
    for (const [corpId, set] of this.byCorp) {
      for (const c of set) if (c.raw === raw) set.delete(c);
      if (set.size === 0) this.byCorp.delete(corpId);
    }
  }

  private async sessionLives(sessionId: string): Promise<boolean> {
    const s = await this.ctx.sessions.live(sessionId);
    return !!s && !!s.user_status;
  }

  private schedule(corpId: string): void {
    this.pendingCorps.add(corpId);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setTimeout(() => {
      this.flushScheduled = false;
      const corps = [...this.pendingCorps];
      this.pendingCorps.clear();
      for (const c of corps) void this.stream(c);
    }, 0);
  }

  /** Closes sockets whose session ended, and catches up on events committed without a wake-up. */
  async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      for (const [corpId, set] of [...this.byCorp]) {
        for (const c of [...set]) await this.ensureLive(c);
        if (this.byCorp.has(corpId)) void this.stream(corpId);
      }
    } catch (err) {
      // The database unreachable (a failover): the sockets stay open and are checked next time.
      // Uncaught, this timer's rejection would end the process.
      this.ctx.logger.warn("socket check failed", { error: String(err) });
    } finally {
      this.checking = false;
    }
  }

  private async ensureLive(c: SocketClient): Promise<boolean> {
    if (await this.sessionLives(c.sessionId)) return true;
    c.raw.close(CLOSE_SESSION_ENDED, "session ended");
    this.remove(c.raw);
    return false;
  }

  /** The event areas of `areas` the client may see: `*`, platform.<area>, or GET /api/<area>. */
  private async allowedAreas(c: SocketClient, areas: Set<string>): Promise<Set<string>> {
    const p = await this.ctx.permissions.get(c.userId, c.corpId, c.superAdmin);
    const out = new Set<string>();
    for (const area of areas) {
      if (p.admin.has("*") || p.allow.has("*") || p.admin.has(`platform.${area.toLowerCase()}`) || p.allow.has(c.listActions.get(area) ?? "")) out.add(area);
    }
    return out;
  }

  /**
   * A RADIUS session message to the corporation's sockets that may list sessions. Sent as it comes
   * (not through the outbox): a socket open at the COMMIT hears it, a later one reads the list.
   */
  private async sendSession(corpId: string, type: string, data: unknown): Promise<void> {
    const set = this.byCorp.get(corpId);
    if (!set) return;
    const payload = JSON.stringify({ type, timestamp: new Date(this.ctx.now()).toISOString(), data });
    try {
      for (const c of [...set]) if ((await this.allowedAreas(c, new Set([SESSION_AREA]))).has(SESSION_AREA)) c.raw.send(payload);
    } catch (err) {
      this.ctx.logger.warn("socket session message failed", { corp_id: corpId, error: String(err) });
    }
  }

  /** One pass at a time per corporation, so that events go out once and in order. */
  private async stream(corpId: string): Promise<void> {
    if (this.streaming.has(corpId)) {
      this.again.add(corpId);
      return;
    }
    this.streaming.add(corpId);
    try {
      await this.streamOnce(corpId);
    } finally {
      this.streaming.delete(corpId);
      if (this.again.delete(corpId)) this.schedule(corpId);
    }
  }

  private async streamOnce(corpId: string): Promise<void> {
    const set = this.byCorp.get(corpId);
    if (!set || set.size === 0) return;
    let cursor = Infinity;
    for (const c of set) cursor = Math.min(cursor, c.since);
    let rows: { seq: number; type: string; payload: string }[];
    const plan: { c: SocketClient; allowed: Set<string> }[] = [];
    try {
      rows = await this.ctx.store.tenant(corpId).read((db) => eventsAfter(db, cursor, BATCH));
      if (rows.length === 0) return;
      // Every database read before the cursor moves: one that fails (a failover) streams nothing
      // now and the same rows on the next pass, and its rejection does not end the process.
      const areas = new Set(rows.map((r) => r.type.slice(0, r.type.indexOf("_AFTER_"))));
      for (const c of [...set]) {
        if (await this.ensureLive(c)) plan.push({ c, allowed: await this.allowedAreas(c, areas) });
      }
    } catch (err) {
      this.ctx.logger.warn("socket stream failed", { corp_id: corpId, error: String(err) });
      return;
    }
    // Every socket of the corporation closed meanwhile: a later one starts from its own position.
    if (this.byCorp.get(corpId) !== set) return;
    const last = rows[rows.length - 1].seq;
    // Only the sockets of the plan move; one that joined during the pass keeps its position, and
    // the pass its add scheduled reads from there.
    for (const { c, allowed } of plan) {
      for (const r of rows) {
        if (r.seq > c.since && allowed.has(r.type.slice(0, r.type.indexOf("_AFTER_")))) c.raw.send(r.payload);
      }
      c.since = Math.max(c.since, last);
      // A client that stops reading would make the server buffer without bound.
      if (c.raw.getBufferedAmount() > MAX_BUFFERED_BYTES) {
        c.raw.close(1008, "the client does not keep up");
        this.remove(c.raw);
      }
    }
    if (rows.length === BATCH) this.schedule(corpId);
  }
}

/** What a session message carries: enough to find the session (the board reads the list again); a NAS restart, the NAS. */
function sessionData(c: SessionChange) {
  if (c.kind === "nas_restart") return { nas_id: c.nasId };
  return { nas_id: c.nasId, acct_session_id: c.acctSessionId, username: c.username, contract_id: c.contractId };
}
