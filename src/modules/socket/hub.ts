// The realtime socket's state: single-use tickets, the open sockets of each corporation, and the
// stream of outbox events to them. Sockets read the outbox by `seq` themselves (not through the
// webhook queue), so a socket sees each event committed while it is open, once.
import { randomBytes } from "node:crypto";
import type { ServerWebSocket } from "bun";
import type { AppContext } from "../../core/context";
import { EVENT_AREAS } from "../../core/events";
import { actionOf } from "../auth/guard";
import type { Principal } from "../../core/principal";

export const TICKET_SECONDS = 30 as const;
/** Close code for a socket whose session was revoked or expired (4000-4999: application codes). */
export const CLOSE_SESSION_ENDED = 4401;
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

interface Ticket {
  userId: string;
  sessionId: string;
  corpId: string;
  superAdmin: boolean;
  expiresAt: number;
}

export interface SocketClient {
  raw: ServerWebSocket<unknown>;
  userId: string;
  sessionId: string;
  corpId: string;
  superAdmin: boolean;
  /** `GET /api/<area>` as a permission action (`host:port/api/city/GET`), per event area. */
  listActions: Map<string, string>;
}

export class SocketHub {
  private tickets = new Map<string, Ticket>();
  private byCorp = new Map<string, Set<SocketClient>>();
  /** Last outbox seq streamed, per corporation with open sockets. */
  private cursors = new Map<string, number>();
  private pendingCorps = new Set<string>();
  private flushScheduled = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(private ctx: AppContext) {}

  start(): void {
    this.unsubscribe = this.ctx.events.subscribe((corpId) => {
      if (this.byCorp.has(corpId)) this.schedule(corpId);
    });
    this.timer = setInterval(() => this.check(), this.ctx.dispatchTuning.socketCheckMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
    for (const set of this.byCorp.values()) for (const c of set) c.raw.close(1001, "server shutting down");
    this.byCorp.clear();
  }

  /** A single-use ticket for the caller's session, valid TICKET_SECONDS. */
  issue(p: Principal): { ticket: string; expires_in: typeof TICKET_SECONDS; url: string } {
    const now = this.ctx.now();
    for (const [k, t] of this.tickets) if (t.expiresAt <= now) this.tickets.delete(k);
    const ticket = randomBytes(32).toString("base64url");
    this.tickets.set(ticket, { userId: p.userId!, sessionId: p.sessionId!, corpId: p.corpId, superAdmin: p.superAdmin, expiresAt: now + TICKET_SECONDS * 1000 });
    const base = this.ctx.config.publicUrl.replace(/^http/, "ws");
    return { ticket, expires_in: TICKET_SECONDS, url: `${base}/api/socket?ticket=${ticket}` };
  }

  /** Whether a ticket would be accepted now (without consuming it). */
  peek(ticket: string | undefined): boolean {
    const t = ticket ? this.tickets.get(ticket) : undefined;
    return !!t && t.expiresAt > this.ctx.now() && this.sessionLives(t.sessionId);
  }

  /** Consumes a ticket: null when unknown, used, expired, or its session has ended meanwhile. */
  redeem(ticket: string | undefined, request: Request): Omit<SocketClient, "raw"> | null {
    if (!ticket) return null;
    const t = this.tickets.get(ticket);
    if (!t) return null;
    this.tickets.delete(ticket);
    if (t.expiresAt <= this.ctx.now()) return null;
    if (!this.sessionLives(t.sessionId)) return null;
    const listActions = new Map(EVENT_AREAS.map((a) => [a, actionOf(request, `/api/${a.toLowerCase()}`)]));
    return { userId: t.userId, sessionId: t.sessionId, corpId: t.corpId, superAdmin: t.superAdmin, listActions };
  }

  add(client: SocketClient): void {
    let set = this.byCorp.get(client.corpId);
    if (!set) {
      set = new Set();
      this.byCorp.set(client.corpId, set);
      // Start after what is already in the outbox: a socket streams what happens while it is open.
      try {
        const row = this.ctx.tenants.get(client.corpId).$client.query<{ seq: number | null }, []>("SELECT MAX(seq) AS seq FROM events").get();
        this.cursors.set(client.corpId, row?.seq ?? 0);
      } catch {
        this.cursors.set(client.corpId, 0);
      }
    }
    set.add(client);
  }

  remove(raw: ServerWebSocket<unknown>): void {
    for (const [corpId, set] of this.byCorp) {
      for (const c of set) if (c.raw === raw) set.delete(c);
      if (set.size === 0) {
        this.byCorp.delete(corpId);
        this.cursors.delete(corpId);
      }
    }
  }

  private sessionLives(sessionId: string): boolean {
    const s = this.ctx.sessions.live(sessionId);
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
      for (const c of corps) this.stream(c);
    }, 0);
  }

  /** Closes sockets whose session ended, and catches up on events committed without a wake-up. */
  private check(): void {
    for (const [corpId, set] of [...this.byCorp]) {
      for (const c of [...set]) this.ensureLive(c);
      if (this.byCorp.has(corpId)) this.stream(corpId);
    }
  }

  private ensureLive(c: SocketClient): boolean {
    if (this.sessionLives(c.sessionId)) return true;
    c.raw.close(CLOSE_SESSION_ENDED, "session ended");
    this.remove(c.raw);
    return false;
  }

  private allowed(c: SocketClient, area: string): boolean {
    const p = this.ctx.permissions.get(c.userId, c.corpId, c.superAdmin);
    return p.admin.has("*") || p.allow.has("*") || p.admin.has(`platform.${area.toLowerCase()}`) || p.allow.has(c.listActions.get(area) ?? "");
  }

  private stream(corpId: string): void {
    const set = this.byCorp.get(corpId);
    if (!set) return;
    let rows: { seq: number; type: string; payload: string }[];
    try {
      rows = this.ctx.tenants
        .get(corpId)
        .$client.query<{ seq: number; type: string; payload: string }, [number]>("SELECT seq, type, payload FROM events WHERE seq > ?1 ORDER BY seq LIMIT 5000")
        .all(this.cursors.get(corpId) ?? 0);
    } catch (err) {
      this.ctx.logger.warn("socket stream failed", { corp_id: corpId, error: String(err) });
      return;
    }
    if (rows.length === 0) return;
    this.cursors.set(corpId, rows[rows.length - 1].seq);
    for (const c of [...set]) {
      if (!this.ensureLive(c)) continue;
      for (const r of rows) {
        const area = r.type.slice(0, r.type.indexOf("_AFTER_"));
        if (this.allowed(c, area)) c.raw.send(r.payload);
      }
      // A client that stops reading would make the server buffer without bound.
      if (c.raw.getBufferedAmount() > MAX_BUFFERED_BYTES) {
        c.raw.close(1008, "the client does not keep up");
        this.remove(c.raw);
      }
    }
    if (rows.length === 5000) this.schedule(corpId);
  }
}
