// RADIUS authorize attempts: who tried to connect through which NAS, and why they were refused
// (the "why can't this customer connect" screen). Authorize only appends to memory; the buffer is
// committed in one transaction per corporation every 100 ms, or at once when it reaches 200
// attempts, and when the service stops; small batches keep each write (on the event loop) to
// about a millisecond at 1,000 attempts a second. Those commits skip the fsync (synchronous =
// NORMAL for that transaction; WAL keeps the file consistent): the next ordinary commit on the
// database, or a checkpoint, makes them durable. Bound on loss: a crash or power cut loses the
// attempts not yet committed (≤ 100 ms, ≤ 200 per corporation) plus, on power loss only, those
// committed since that database's last fsync; an attempt is a diagnostic, nobody is billed by it.
// Under a flood only a budget per corporation and second is stored (REFUSALS_PER_SECOND,
// ACCEPTS_PER_SECOND below). No password is ever part of an attempt. The list route commits the buffer before it reads, so
// what it shows is complete up to the request.
import { Elysia, t } from "elysia";
import { and, gte, lte, type SQL } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { writeTx, type TenantDb } from "../../db/sqlite";
import { ispRadiusAttempts } from "../../db/tenant/schema";
import { newId } from "../../lib/ids";
import { listRows, type ListParams } from "../../lib/list";
import { invalid } from "../../lib/problem";
import { Enum, Instant, ListOf, ListQuery, Nullable, Uuid } from "../../lib/schemas";
import { canonicalInstant, toIso } from "../../lib/time";
import type { authGuard } from "../auth/guard";

export const OUTCOMES = ["accept", "reject", "notfound"] as const;
export type AttemptOutcome = (typeof OUTCOMES)[number];

export interface Attempt {
  username: string;
  nas_id: string | null;
  nas_ip: string;
  outcome: AttemptOutcome;
  /** A short code: ok, bad-password, contract-inactive, user-unknown, nas-unknown, ... */
  reason: string;
}

type Row = typeof ispRadiusAttempts.$inferSelect;

const FLUSH_MS = 100;
const FLUSH_AT = 200;
/**
 * Attempts kept per corporation and second: refusals (what the screen is for) up to REFUSALS,
 * accepts up to ACCEPTS; past that a second's attempts are counted, not stored. Measured: storing
 * every attempt at the bench's 24,000 authorizations a second halved authorize's throughput (each
 * commit on the event loop, and each one a change that renews the NAS/layout snapshot).
 */
const REFUSALS_PER_SECOND = 200;
const ACCEPTS_PER_SECOND = 20;

interface SecondBudget {
  second: number;
  accepts: number;
  refusals: number;
}

export class AttemptLog {
  private buffers = new Map<TenantDb, Row[]>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private budgets = new Map<TenantDb, SecondBudget>();

  constructor(private ctx: AppContext) {
    ctx.onClose(() => {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.flushAll();
    });
  }

  record(db: TenantDb, a: Attempt): void {
    const now = this.ctx.now();
    const second = Math.floor(now / 1000);
    let budget = this.budgets.get(db);
    if (!budget || budget.second !== second) this.budgets.set(db, (budget = { second, accepts: 0, refusals: 0 }));
    if (a.outcome === "accept" ? budget.accepts++ >= ACCEPTS_PER_SECOND : budget.refusals++ >= REFUSALS_PER_SECOND) {
      return;
    }
    let buf = this.buffers.get(db);
    if (!buf) this.buffers.set(db, (buf = []));
    buf.push({ id: newId(), at: toIso(now), ...a, username: a.username.slice(0, 253), nas_ip: a.nas_ip.slice(0, 64) });
    if (buf.length >= FLUSH_AT) this.flush(db);
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flushAll();
      }, FLUSH_MS);
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  flush(db: TenantDb): void {
    const rows = this.buffers.get(db);
    if (!rows?.length) return;
    this.buffers.delete(db);
    const sqlite = db.$client;
    try {
      const insert = sqlite.query("INSERT INTO isp_radius_attempts (id, at, username, nas_id, nas_ip, outcome, reason) VALUES (?, ?, ?, ?, ?, ?, ?)");
      sqlite.exec("PRAGMA synchronous = NORMAL");
      try {
        writeTx(db, () => {
          for (const r of rows) insert.run(r.id, r.at, r.username, r.nas_id, r.nas_ip, r.outcome, r.reason);
        });
      } finally {
        sqlite.exec("PRAGMA synchronous = FULL");
      }
    } catch (err) {
      // A closed or failing database: the attempts are diagnostics, logged and let go.
      this.ctx.logger.warn("writing RADIUS attempts failed", { error: String(err), attempts: rows.length });
    }
  }

  flushAll(): void {
    for (const db of [...this.buffers.keys()]) this.flush(db);
    const second = Math.floor(this.ctx.now() / 1000);
    for (const [db, budget] of this.budgets) if (budget.second < second) this.budgets.delete(db);
  }
}

export const RadiusAttempt = t.Object({
  id: Uuid,
  at: t.String(),
  username: t.String(),
  nas_id: Nullable(Uuid),
  nas_ip: t.String(),
  outcome: Enum([...OUTCOMES]),
  reason: t.String(),
});

export const AttemptListQuery = t.Object(
  { ...ListQuery.properties, outcome: t.Optional(Enum([...OUTCOMES])), from: t.Optional(Instant), to: t.Optional(Instant) },
  { additionalProperties: true },
);

function instant(query: ListParams, key: "from" | "to"): string | null {
  if (query[key] === undefined) return null;
  const iso = canonicalInstant(String(query[key]));
  if (!iso) throw invalid(key, "must be an ISO 8601 instant with offset");
  return iso;
}

export function listAttempts(db: TenantDb, query: ListParams) {
  const where: (SQL | undefined)[] = [];
  const from = instant(query, "from");
  const to = instant(query, "to");
  if (from && to && from > to) throw invalid("from", "must not be after to");
  if (from) where.push(gte(ispRadiusAttempts.at, from));
  if (to) where.push(lte(ispRadiusAttempts.at, to));
  // Newest first: -id is -at with the order of arrival among equal instants (the id is a UUIDv7
  // taken with `at`), which ?sort=-at would break by id ascending.
  return listRows(db, ispRadiusAttempts, { q: [ispRadiusAttempts.username], defaultSort: "-id", extraKeys: ["from", "to"] }, query, (r: Row) => ({ ...r, outcome: r.outcome as AttemptOutcome }), [and(...where)]);
}

export function attemptRoutes(log: AttemptLog, guard: ReturnType<typeof authGuard>) {
  return new Elysia({ name: "isp-radius-attempts", prefix: "/api/isp/radius", tags: ["ISP"] })
    .use(guard)
    .get(
      "/attempts",
      ({ tenantDb, query }) => {
        log.flush(tenantDb);
        return listAttempts(tenantDb, query);
      },
      {
        auth: "platform.isp",
        query: AttemptListQuery,
        response: { 200: ListOf(RadiusAttempt) },
        detail: {
          summary: "List recent RADIUS authorize attempts (default sort -at)",
          description: "Filters: outcome (accept, reject, notfound), username, nas_id, from/to on at. Kept --radius-attempt-retention-days (default 30). No password is ever stored.",
        },
      },
    );
}
