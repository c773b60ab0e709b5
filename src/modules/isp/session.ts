// RADIUS sessions (kept by the accounting writer, accounting.ts) and RFC 5176 Disconnect and CoA
// towards the NAS: the operator's "who is online" and "kick this session", and what the service
// does itself when a contract changes (contractWatchers): a contract that leaves ACTIVE has its
// sessions disconnected; a change of what its NAS's layout renders for it (speeds, pools,
// addresses; not the password) sends the re-rendered attributes in a CoA-Request.
import { Elysia, t } from "elysia";
import { and, eq, gte, lt, lte, or, isNull, sql, type SQL } from "drizzle-orm";
import type { AppContext, ContractChange } from "../../core/context";
import type { TenantDb } from "../../db/sqlite";
import { ispNas, ispRadiusSessions } from "../../db/tenant/schema";
import { listRows, type ListParams } from "../../lib/list";
import { conflict, invalid, notFound } from "../../lib/problem";
import { Enum, IdParams, Instant, ListOf, ListQuery, Nullable, Uuid } from "../../lib/schemas";
import { canonicalInstant, toIso } from "../../lib/time";
import type { authGuard } from "../auth/guard";
import { contractConnection, findContract, type ContractConnection } from "../contract/service";
import { sendDynamicAuth, type DynamicAuthKind, type DynamicAuthResult } from "./coa-client";
import { nasSecret, type NasRow } from "./nas";
import { renderLayout, type RenderedAttribute } from "./render";
import { dictionaryName, RadiusCodecError, valueName, type Attribute } from "./rfc5176";

type SessionRow = typeof ispRadiusSessions.$inferSelect;
const STATES = ["online", "stale", "closed"] as const;
type State = (typeof STATES)[number];

export const RadiusSession = t.Object({
  id: Uuid,
  nas_id: Uuid,
  nas_name: Nullable(t.String()),
  acct_session_id: t.String(),
  username: t.String(),
  contract_id: Nullable(Uuid),
  framed_ip: Nullable(t.String()),
  calling_station_id: Nullable(t.String()),
  started_at: t.String(),
  updated_at: t.String(),
  stopped_at: Nullable(t.String()),
  state: Enum([...STATES]),
  input_bytes: t.Integer(),
  output_bytes: t.Integer(),
  input_packets: t.Integer(),
  output_packets: t.Integer(),
  session_time: t.Integer(),
  terminate_cause: Nullable(t.String()),
  created_at: t.String(),
});

export const DisconnectResult = t.Object({
  session_id: Uuid,
  kind: Enum(["disconnect", "coa"]),
  outcome: Enum(["ack", "nak", "timeout"]),
  error_cause: Nullable(t.Integer()),
  attempts: t.Integer(),
  at: t.String(),
});

export const SessionListQuery = t.Object(
  {
    ...ListQuery.properties,
    state: t.Optional(Enum([...STATES])),
    from: t.Optional(Instant),
    to: t.Optional(Instant),
  },
  { additionalProperties: true },
);

const stateExpr = (now: string) =>
  sql<string>`CASE WHEN ${ispRadiusSessions.open} = 0 THEN 'closed' WHEN ${ispRadiusSessions.stale_at} < ${now} THEN 'stale' ELSE 'online' END`;

function stateOf(row: Pick<SessionRow, "open" | "stale_at">, now: string): State {
  if (!row.open) return "closed";
  return row.stale_at < now ? "stale" : "online";
}

function nasNames(db: TenantDb, ids: string[]): Map<string, string> {
  const unique = [...new Set(ids)];
  if (!unique.length) return new Map();
  const rows = db.$client.query<{ id: string; name: string }, string[]>(`SELECT id, name FROM isp_nas WHERE id IN (${unique.map(() => "?").join(",")})`).all(...unique);
  return new Map(rows.map((r) => [r.id, r.name]));
}

function sessionView(row: SessionRow, now: string, names: Map<string, string>) {
  const { open: _o, stale_at: _s, received_at: _r, ...rest } = row;
  return { ...rest, nas_name: names.get(row.nas_id) ?? null, state: stateOf(row, now) };
}

/** The conditions of ?state, ?from and ?to, written so that the indexes answer them. */
function stateCondition(state: State, now: string): SQL {
  if (state === "closed") return eq(ispRadiusSessions.open, false);
  if (state === "online") return and(eq(ispRadiusSessions.open, true), gte(ispRadiusSessions.stale_at, now))!;
  return and(eq(ispRadiusSessions.open, true), lt(ispRadiusSessions.stale_at, now))!;
}

function instantParam(query: ListParams, key: "from" | "to"): string | null {
  const raw = query[key];
  if (raw === undefined) return null;
  const iso = canonicalInstant(String(raw));
  if (!iso) throw invalid(key, "must be an ISO 8601 instant with offset");
  return iso;
}

export function listSessions(ctx: AppContext, db: TenantDb, query: ListParams) {
  const now = toIso(ctx.now());
  const where: (SQL | undefined)[] = [];
  if (query.state !== undefined) where.push(stateCondition(query.state as State, now));
  // A session overlapping [from, to]: "who had this address at that time".
  const from = instantParam(query, "from");
  const to = instantParam(query, "to");
  if (from && to && from > to) throw invalid("from", "must not be after to");
  if (to) where.push(lte(ispRadiusSessions.started_at, to));
  if (from) where.push(or(isNull(ispRadiusSessions.stopped_at), gte(ispRadiusSessions.stopped_at, from)));
  const spec = {
    q: [ispRadiusSessions.username, ispRadiusSessions.framed_ip, ispRadiusSessions.calling_station_id],
    hidden: ["open", "stale_at", "received_at"],
    defaultSort: "-started_at",
    extraKeys: ["state", "from", "to"],
    computed: {
      state: { expr: stateExpr(now), dataType: "string" as const },
      nas_name: { expr: sql`(SELECT name FROM isp_nas WHERE isp_nas.id = ${ispRadiusSessions.nas_id})`, dataType: "string" as const },
    },
  };
  const page = listRows(db, ispRadiusSessions, spec, query, (r: SessionRow) => r, where);
  const names = nasNames(db, page.items.map((r) => r.nas_id));
  return { ...page, items: page.items.map((r) => sessionView(r, now, names)) };
}

function requireSession(db: TenantDb, id: string): SessionRow {
  const row = db.select().from(ispRadiusSessions).where(eq(ispRadiusSessions.id, id)).get();
  if (!row) throw notFound("Session");
  return row;
}

export function getSession(ctx: AppContext, db: TenantDb, id: string) {
  const row = requireSession(db, id);
  return sessionView(row, toIso(ctx.now()), nasNames(db, [row.nas_id]));
}

/** The open sessions (online or stale) of a contract. */
function openSessionsOf(db: TenantDb, contractId: string): SessionRow[] {
  return db
    .select()
    .from(ispRadiusSessions)
    .where(and(eq(ispRadiusSessions.contract_id, contractId), eq(ispRadiusSessions.open, true)))
    .all();
}

interface Prepared {
  session: SessionRow;
  nas: NasRow;
  secret: string;
}

/** The session's NAS and its secret in clear; 409 when the NAS is gone, 400 when no secret is kept. */
function prepare(ctx: AppContext, db: TenantDb, session: SessionRow): Prepared {
  const nas = db.select().from(ispNas).where(eq(ispNas.id, session.nas_id)).get();
  if (!nas) throw conflict("The session's NAS no longer exists");
  const secret = nasSecret(ctx.secrets, nas);
  if (secret === null) throw invalid("nas_id", `NAS ${nas.name} has no secret stored; set it again (PUT /api/isp/nas/${nas.id} with secret)`);
  return { session, nas, secret };
}

/** What identifies the session to its NAS (RFC 5176 §3). */
function identification(p: Prepared, withFramedIp: boolean): Attribute[] {
  const v6 = p.nas.ip.includes(":");
  const out: Attribute[] = [
    { name: v6 ? "NAS-IPv6-Address" : "NAS-IP-Address", value: p.nas.ip },
    { name: "User-Name", value: p.session.username },
    { name: "Acct-Session-Id", value: p.session.acct_session_id },
  ];
  if (withFramedIp && p.session.framed_ip && !p.session.framed_ip.includes(":")) out.push({ name: "Framed-IP-Address", value: p.session.framed_ip });
  return out;
}

interface Actor {
  corpId: string;
  userId: string | null;
  ip: string | null;
  /** Why the service sent it on its own (contract left ACTIVE, ...); null: an operator asked. */
  cause: string | null;
}

/**
 * At most this many RFC 5176 requests in flight per app (each holds a UDP socket up to 6 s): a
 * billing run that suspends thousands of contracts at once queues its disconnects instead of
 * running out of file descriptors.
 */
const MAX_IN_FLIGHT = 64;

class Gate {
  private active = 0;
  private waiting: (() => void)[] = [];
  async run<T>(fn: () => Promise<T>): Promise<T> {
    // A finishing request hands its slot to the next waiter directly, so `active` never overshoots.
    if (this.active >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
const gates = new WeakMap<AppContext, Gate>();
const gateOf = (ctx: AppContext) => gates.get(ctx) ?? (gates.set(ctx, new Gate()), gates.get(ctx)!);

async function send(ctx: AppContext, p: Prepared, kind: DynamicAuthKind, attributes: Attribute[], actor: Actor) {
  const action = kind === "disconnect" ? "isp.disconnect" : "isp.coa";
  let result: DynamicAuthResult;
  try {
    result = await gateOf(ctx).run(() =>
      sendDynamicAuth(kind, { ip: p.nas.ip, port: p.nas.coa_port, secret: p.secret }, attributes, { intervalMs: ctx.dispatchTuning.coaRetryMs, now: ctx.now }),
    );
  } catch (err) {
    // An attribute the dictionary cannot encode, or a socket error: nothing (more) was sent.
    ctx.audit.record({ action, outcome: "failure", actor_user_id: actor.userId, corp_id: actor.corpId, target: `session:${p.session.id}`, ip: actor.ip, reason: `not sent: ${(err as Error).message}` });
    // A stored value RADIUS cannot carry (longer than 253 octets, ...): the session's state, not the request, is at fault.
    if (err instanceof RadiusCodecError) throw conflict(`The request cannot be encoded: ${err.message}`);
    throw err;
  }
  const causeName = result.error_cause === null ? null : valueName("Error-Cause", result.error_cause);
  const reason =
    result.outcome === "ack"
      ? actor.cause
      : result.outcome === "nak"
        ? `nak${result.error_cause === null ? "" : ` Error-Cause ${result.error_cause}${causeName ? ` (${causeName})` : ""}`}`
        : `timeout after ${result.attempts} attempts`;
  ctx.audit.record({
    action,
    outcome: result.outcome === "ack" ? "success" : "failure",
    actor_user_id: actor.userId,
    corp_id: actor.corpId,
    target: `session:${p.session.id} nas:${p.nas.id} user:${p.session.username}`,
    ip: actor.ip,
    reason: actor.cause && result.outcome !== "ack" ? `${actor.cause}; ${reason}` : reason,
  });
  return { session_id: p.session.id, ...result };
}

export async function disconnectSession(ctx: AppContext, db: TenantDb, id: string, actor: Actor) {
  const session = requireSession(db, id);
  if (!session.open) throw conflict("The session is not online (it has stopped)");
  const p = prepare(ctx, db, session);
  return send(ctx, p, "disconnect", identification(p, true), actor);
}

/** Every open session of the contract, disconnected at once (in parallel: each may wait 6 s). */
export async function disconnectContract(ctx: AppContext, db: TenantDb, contractId: string, actor: Actor) {
  if (!findContract(db, contractId)) throw notFound("Contract");
  // Checked for every session before anything is sent, so a 400 sends nothing.
  const prepared = openSessionsOf(db, contractId).map((s) => prepare(ctx, db, s));
  return { items: await Promise.all(prepared.map((p) => send(ctx, p, "disconnect", identification(p, true), actor))) };
}

function rendered(db: TenantDb, layoutId: string, state: ContractConnection, password: string, nas: NasRow): RenderedAttribute[] {
  return renderLayout(db, layoutId, { contract: state.contract, config: state.config, password, nas });
}

/**
 * After a committed contract change: disconnect when it left ACTIVE; otherwise a CoA-Request for
 * each open session whose NAS layout renders differently now (the password alone changes
 * nothing: it is rendered as the new one on both sides).
 */
export async function reconcileContract(ctx: AppContext, change: ContractChange): Promise<void> {
  const db = ctx.tenants.get(change.corpId);
  const sessions = openSessionsOf(db, change.contractId);
  if (!sessions.length) return;
  const after = contractConnection(db, change.contractId);
  const before = change.before as ContractConnection | null;
  if (!after || !before) return;
  const actor = (cause: string): Actor => ({ corpId: change.corpId, userId: change.actorUserId, ip: change.ip, cause });
  const leftActive = before.contract.contract_status === "ACTIVE" && after.contract.contract_status !== "ACTIVE";
  const jobs: Promise<unknown>[] = [];
  for (const session of sessions) {
    let p: Prepared;
    try {
      p = prepare(ctx, db, session);
    } catch (err) {
      const kind = leftActive ? "isp.disconnect" : "isp.coa";
      ctx.audit.record({ action: kind, outcome: "failure", actor_user_id: change.actorUserId, corp_id: change.corpId, target: `session:${session.id}`, ip: change.ip, reason: `not sent: ${(err as Error).message}` });
      continue;
    }
    if (leftActive) {
      jobs.push(send(ctx, p, "disconnect", identification(p, true), actor(`contract ${after.contract.contract_status}`)));
      continue;
    }
    if (after.contract.contract_status !== "ACTIVE" || !p.nas.layout_id) continue;
    const now = rendered(db, p.nas.layout_id, after, after.config.password, p.nas);
    const was = rendered(db, p.nas.layout_id, before, after.config.password, p.nas);
    if (JSON.stringify(now) === JSON.stringify(was)) continue;
    // Attributes the dictionary does not know cannot be encoded; the rest still go.
    const attrs = now.filter((a) => dictionaryName(a.name) !== null).map((a) => ({ name: a.name, value: a.value }));
    const renumbers = attrs.some((a) => dictionaryName(a.name) === "Framed-IP-Address");
    jobs.push(send(ctx, p, "coa", [...identification(p, !renumbers), ...attrs], actor("connection settings changed")));
  }
  await Promise.allSettled(jobs);
}

export function sessionRoutes(ctx: AppContext, guard: ReturnType<typeof authGuard>) {
  const pending = new Set<Promise<unknown>>();
  // Runs after the commit, off the request: the answer does not wait up to 6 s for a NAS.
  ctx.contractWatchers.push((change) => {
    const job = reconcileContract(ctx, change).catch((err) => ctx.logger.error("RADIUS session reconcile failed", { error: String(err), contract: change.contractId }));
    pending.add(job);
    void job.finally(() => pending.delete(job));
  });
  ctx.onClose(() => Promise.allSettled([...pending]).then(() => undefined));
  const actorOf = (principal: { corpId: string; userId: string | null; ip: string }): Actor => ({ corpId: principal.corpId, userId: principal.userId, ip: principal.ip, cause: null });

  return new Elysia({ name: "isp-session", prefix: "/api", tags: ["ISP"] })
    .use(guard)
    .get("/isp/session", ({ tenantDb, query }) => listSessions(ctx, tenantDb, query), {
      auth: "platform.isp",
      query: SessionListQuery,
      response: { 200: ListOf(RadiusSession) },
      detail: {
        summary: "List RADIUS sessions (default sort -started_at)",
        description:
          "Filters: state (online, stale: no record for 3 interim intervals or 15 min, closed), contract_id, nas_id, username, and from/to: sessions overlapping that interval (who had an address at a time). Plus the list convention's q, sort and field filters.",
      },
    })
    .get("/isp/session/:id", ({ tenantDb, params }) => getSession(ctx, tenantDb, params.id), {
      auth: "platform.isp",
      params: IdParams,
      response: { 200: RadiusSession },
      detail: { summary: "Show a RADIUS session" },
    })
    .post("/isp/session/:id/disconnect", ({ tenantDb, params, principal }) => disconnectSession(ctx, tenantDb, params.id, actorOf(principal)), {
      auth: "platform.isp",
      params: IdParams,
      response: { 200: DisconnectResult },
      detail: {
        summary: "Send an RFC 5176 Disconnect-Request for the session to its NAS",
        description: "3 attempts, 2 s apart; a NAK (with its Error-Cause) or a timeout is still 200 with that outcome. 409: the session has stopped. 400: the NAS has no secret stored (set it again). Audited as isp.disconnect.",
      },
    })
    .post("/contract/:id/disconnect", ({ tenantDb, params, principal }) => disconnectContract(ctx, tenantDb, params.id, actorOf(principal)), {
      auth: "platform.contract",
      params: IdParams,
      response: { 200: t.Object({ items: t.Array(DisconnectResult) }) },
      detail: {
        summary: "Disconnect every online session of the contract",
        description:
          "Also done by the service when the contract leaves ACTIVE; a change of what the NAS's layout renders for it (speeds, pools, addresses) sends a CoA-Request with the re-rendered attributes instead. 400: a session's NAS has no secret stored.",
        tags: ["Contract"],
      },
    });
}
