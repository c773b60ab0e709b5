// The audit log: security events as JSON lines on stdout (msg "audit") and rows in the platform
// table audit_log, kept for the configured number of days.
//
// API (ctx.audit):
//   ctx.audit.record({ action: "user.password_change", actor_user_id, corp_id, target: userId,
//                      ip: principal.ip, request_id: principal.requestId, outcome: "success" });
// - action: "<area>.<verb>" in snake_case (auth.login, auth.logout, auth.refresh,
//   auth.corp_change, user.password_change, user.password_reset, user.two_factor_enable,
//   workgroup.grant, corp.status_change, externalapp.key_rotate, ...).
// - target: what was acted on (a user id, a login name, a corporation id), never a secret.
// - reason: why it failed, as the problem slug (`invalid-credentials`, `rate-limited`, ...).
// - Call it after the change's transaction has committed (a failure record must survive the
//   rollback of the change it reports). Passwords, tokens, keys, TOTP codes and request bodies
//   never go into any field; values are cut to 200 characters.
import { eq, gte, lte, type SQL } from "drizzle-orm";
import { auditLog } from "../db/platform/schema";
import type { PlatformDb } from "../db/sqlite";
import { listRows, type ListParams, type Page } from "../db/list";
import type { Logger } from "../lib/log";
import { newId } from "../lib/ids";
import { toIso } from "../lib/time";
import { Problem } from "../lib/problem";
import type { Principal } from "./principal";
import type { PlatformDoor } from "./store";

export interface AuditEntry {
  action: string;
  /** `requested`: asked for, result not disclosed (a password reset key for a login). */
  outcome: "success" | "failure" | "requested";
  actor_user_id?: string | null;
  corp_id?: string | null;
  target?: string | null;
  ip?: string | null;
  reason?: string | null;
  /** The request's x-request-id (Principal.requestId), so the entry leads to its request log line. */
  request_id?: string | null;
}

const MAX_FIELD = 200;

/** Who did it, where, from which request: the entry's common fields for a signed-in caller. */
export const auditBy = (p: Principal) => ({ actor_user_id: p.userId, corp_id: p.corpId, ip: p.ip, request_id: p.requestId });

/** The audit reason of a failure: the problem's slug (`invalid-credentials`, `corp-blocked`, ...). */
export const problemReason = (err: unknown): string => (err instanceof Problem ? err.slug : "error");
const DAY_MS = 86_400_000;

const clip = (v: string | null | undefined): string | null => (v == null || v === "" ? null : String(v).slice(0, MAX_FIELD));

export class AuditLog {
  constructor(
    private platform: PlatformDoor,
    private logger: Logger,
    private retentionDays: number,
    private now: () => number,
  ) {}

  /**
   * Writes the entry (awaited: the row is durable when this resolves). Never rejects: a failed
   * write is logged, and the log line has gone out first in any case.
   */
  async record(entry: AuditEntry): Promise<void> {
    const row = {
      id: newId(),
      at: toIso(new Date(this.now())),
      action: clip(entry.action) ?? "unknown",
      outcome: entry.outcome,
      actor_user_id: clip(entry.actor_user_id),
      corp_id: clip(entry.corp_id),
      target: clip(entry.target),
      ip: clip(entry.ip),
      reason: clip(entry.reason),
      request_id: clip(entry.request_id),
    };
    // The log line goes out even when the database write fails: the event must not vanish.
    this.logger.info("audit", row);
    try {
      // Grouped: a burst of failed logins is one transaction, not one fsync each.
      await this.platform.writeGrouped((tx) =>
        tx.$client
          .query(
            "INSERT INTO audit_log (id, at, action, outcome, actor_user_id, corp_id, target, ip, reason, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          )
          .run(row.id, row.at, row.action, row.outcome, row.actor_user_id, row.corp_id, row.target, row.ip, row.reason, row.request_id),
      );
    } catch (err) {
      this.logger.error("audit log write failed", { action: row.action, error: String(err) });
    }
  }

  /**
   * Runs `run`; when it throws, records `entry` as a failure with the reason (by default the
   * problem's slug, `error` for anything else) and rethrows. The success, when there is one to
   * record, is the caller's: it often comes later (after the token is issued).
   */
  async failureOf<T>(entry: Omit<AuditEntry, "outcome" | "reason">, run: () => Promise<T>, reasonOf: (err: unknown) => string = problemReason): Promise<T> {
    try {
      return await run();
    } catch (err) {
      await this.record({ ...entry, outcome: "failure", reason: reasonOf(err) });
      throw err;
    }
  }

  /** Deletes entries older than the retention; returns how many went. */
  async pruneExpired(): Promise<number> {
    const cutoff = toIso(new Date(this.now() - this.retentionDays * DAY_MS));
    return this.platform.write(async (tx) => (await tx.$client.query("DELETE FROM audit_log WHERE at < ?").run(cutoff)).changes);
  }

  /** Prunes now and then once a day until stopped. */
  /** One retention pass (the audit-retention job's). */
  async retentionPass(): Promise<number> {
    const removed = await this.pruneExpired();
    if (removed) this.logger.info("audit log pruned", { removed, retention_days: this.retentionDays });
    return removed;
  }

  /** Prunes now and daily; `wrap` runs each pass (ctx.jobs.track, which keeps its outcome). */
  startRetention(wrap: (pass: () => Promise<number>) => Promise<number> = (pass) => pass()): () => void {
    const run = async () => {
      try {
        await wrap(() => this.retentionPass());
      } catch (err) {
        this.logger.error("audit log pruning failed", { error: String(err) });
      }
    };
    void run();
    const timer = setInterval(run, DAY_MS);
    timer.unref?.();
    return () => clearInterval(timer);
  }
}

export type AuditRow = typeof auditLog.$inferSelect;

/**
 * A page of audit_log rows by the list convention (default newest first; `from`/`to` are the
 * query's extra keys), in the caller's read. `from`/`to` bound `at` (canonical instants, already
 * checked); `corpId`, when given, confines the page to one corporation's entries.
 */
export async function listAuditRows(db: PlatformDb, query: ListParams, bounds: { from?: string; to?: string; corpId: string | null }): Promise<Page<AuditRow>> {
  const where: (SQL | undefined)[] = [bounds.from ? gte(auditLog.at, bounds.from) : undefined, bounds.to ? lte(auditLog.at, bounds.to) : undefined];
  if (bounds.corpId !== null) where.push(eq(auditLog.corp_id, bounds.corpId));
  return await listRows<AuditRow, AuditRow>(db, auditLog, { q: [auditLog.action, auditLog.target], defaultSort: "-at", extraKeys: ["from", "to"] }, query, (r) => r, where);
}
