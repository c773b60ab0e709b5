// The nas-health job (routes.md, "Network operations additions": Nas.health and the events
// ISP_AFTER_NAS_QUIET / ISP_AFTER_NAS_BACK). The accounting writer keeps each NAS's health
// columns in the transaction of every record (accounting-service.ts NasTally), so a NAS's
// health is read from its row, never from its sessions; this job only notices the silence no
// record announces: every minute it reads the NAS rows of the corporations that have NAS, and a
// NAS whose silence passed its quiet_after (with open sessions) is announced once, in one write:
// quiet_since set, ISP_AFTER_NAS_QUIET in the outbox, its open sessions held online
// (HELD_STALE_AT). Its next record announces it back (ISP_AFTER_NAS_BACK, in that record's
// write). It also e-mails the corporation's noc_email of the NAS that turned quiet, and keeps the
// counts of the Prometheus gauge corpadmin_nas{corp, health}.
import { eq } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import type { Job } from "../../core/jobs";
import type { TenantDoor } from "../../core/store";
import { clientOf } from "../../db/rows";
import type { TenantDb } from "../../db/sqlite";
import { ispNas } from "../../db/tenant/schema";
import { toIso } from "../../lib/time";
import { allCorpRefs } from "../corp/service";
import { HELD_STALE_AT, recountNasSessions } from "./accounting-service";
import { nasHealth, nasView, type NasHealth, type NasRow } from "./nas-service";
import { yieldToRequests } from "../../lib/yield";

export const NAS_HEALTH_GAUGE = "corpadmin_nas";

type Counts = Record<NasHealth, number>;

/** Whether the open-session counters of the NAS rows match the sessions (read only). */
async function countsHold(db: TenantDb): Promise<boolean> {
  const counts = await clientOf(db).query<{ nas_id: string; n: number }, []>("SELECT nas_id, count(*) AS n FROM isp_radius_sessions WHERE open = 1 GROUP BY nas_id").all();
  const byNas = new Map(counts.map((c) => [c.nas_id, Number(c.n)]));
  const rows = await clientOf(db).query<{ id: string; open_sessions: number }, []>("SELECT id, open_sessions FROM isp_nas").all();
  return rows.every((r) => Number(r.open_sessions) === (byNas.get(r.id) ?? 0));
}

const turnsQuiet = (r: NasRow, now: string) => r.quiet_since === null && r.open_sessions > 0 && r.quiet_after !== null && r.quiet_after < now;

/**
 * One corporation: announces the NAS that turned quiet (re-checked under the write lock: a record
 * may have come meanwhile) and counts its NAS by health. `recount`: the open-session counters are
 * checked against the sessions first (start-up: a database from before the counters).
 */
export async function checkNasHealth(door: TenantDoor, now: string, recount: boolean): Promise<{ counts: Counts; quiet: ReturnType<typeof nasView>[] }> {
  if (recount && !(await door.read(countsHold))) await door.write((tx) => recountNasSessions(tx));
  let rows = await door.read((db) => db.select().from(ispNas).all());
  let quiet: ReturnType<typeof nasView>[] = [];
  if (rows.some((r) => turnsQuiet(r, now))) {
    quiet = await door.write(async (tx, scope) => {
      const out: ReturnType<typeof nasView>[] = [];
      for (const r of rows) {
        if (!turnsQuiet(r, now)) continue;
        const current = await tx.select().from(ispNas).where(eq(ispNas.id, r.id)).get();
        if (!current || !turnsQuiet(current, now)) continue;
        await clientOf(tx).query("UPDATE isp_nas SET quiet_since = ?2 WHERE id = ?1").run(r.id, now);
        // Not stale while the NAS, not the customer, is silent.
        await clientOf(tx).query("UPDATE isp_radius_sessions SET stale_at = ?2 WHERE nas_id = ?1 AND open = 1").run(r.id, HELD_STALE_AT);
        const view = nasView({ ...current, quiet_since: now }, now);
        scope.emit("ISP_AFTER_NAS_QUIET", r.id, view);
        out.push(view);
      }
      return out;
    });
    rows = await door.read((db) => db.select().from(ispNas).all());
  }
  const counts: Counts = { ok: 0, quiet: 0, unknown: 0 };
  for (const r of rows) counts[nasHealth(r, now)]++;
  return { counts, quiet };
}

/** The doctor's look at a corporation: its quiet NAS, and its open sessions gone stale. */
export async function ispTroubles(db: TenantDb, now: string): Promise<{ quiet: string[]; stale: number }> {
  const rows = await db.select().from(ispNas).all();
  const stale = await clientOf(db).query<{ n: number }, [string]>("SELECT count(*) AS n FROM isp_radius_sessions WHERE open = 1 AND stale_at < ?1").get(now);
  return { quiet: rows.filter((r) => nasHealth(r, now) === "quiet").map((r) => r.name), stale: Number(stale?.n ?? 0) };
}

export class NasHealthJob implements Job {
  readonly name = "nas-health";
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  /** Whether a pass has visited every corporation since the start (and checked the counters). */
  private swept = false;
  /**
   * Corporations with NAS. On SQLite every record is written by this process, so after the first
   * full pass the NAS creations and records it sees keep the set whole; where other nodes write
   * too (ctx.tenants.sharedByNodes: PostgreSQL), every pass visits every corporation.
   */
  private watched = new Set<string>();
  /** The gauge's series, per corporation with NAS, as of the last pass (this node's; a node not holding the lease reports none). */
  private counts = new Map<string, { corp: string; counts: Counts }>();

  constructor(private ctx: AppContext) {
    ctx.serviceMetrics
      .gauge(NAS_HEALTH_GAUGE, "NAS per corporation and health (ok, quiet, unknown), as of the last nas-health pass")
      .collect(() => [...this.counts.values()].flatMap((c) => (Object.keys(c.counts) as NasHealth[]).map((health) => [{ corp: c.corp, health }, c.counts[health]] as [Record<string, string>, number])));
  }

  /** A corporation that now has a NAS or accounting: visited from the next pass on. */
  watch(corpId: string): void {
    this.watched.add(corpId);
  }

  start(): void {
    this.stopped = false;
    this.swept = false;
    const tick = () => void this.ctx.jobs.track(this.name, () => this.runOnce()).catch((err) => this.ctx.logger.error("nas-health pass failed", { error: String(err) }));
    tick();
    this.timer = setInterval(tick, this.ctx.dispatchTuning.nasHealthMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
    this.counts.clear();
  }

  /** One pass; a pass under way is joined, not doubled. Rejects when a corporation could not be checked. */
  runOnce(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** E-mails the corporation's NOC address (Corporation.noc_email), when it has one, of the NAS that turned quiet. */
  private async tellNoc(corpId: string, quiet: ReturnType<typeof nasView>[]): Promise<void> {
    const to = (await this.ctx.corps.get(corpId))?.noc_email;
    if (!to) return;
    const names = quiet.map((n) => n.name).join(", ");
    const lines = quiet.map((n) => `- ${n.name} (${n.ip}): ${n.online} online sessions, last accounting record ${n.last_accounting_at ?? "never"}`);
    void this.ctx.mailer.send({
      to,
      subject: `corpadmin: NAS quiet: ${names}`,
      text: `These NAS have online sessions but sent no accounting record within two interim intervals (30 min when none is known):\n\n${lines.join("\n")}\n\nTheir sessions are kept online until they speak again. Check the NAS and its RADIUS accounting; POST /api/isp/nas/{id}/test checks its RFC 5176 port and secret.\n`,
    });
  }

  private async pass(): Promise<void> {
    const { ctx } = this;
    const full = !this.swept || ctx.tenants.sharedByNodes;
    const recount = !this.swept;
    const now = toIso(ctx.now());
    const corps = (await ctx.store.platform.read(allCorpRefs)).filter((c) => c.status === "ENABLED" || c.status === "BLOCKED");
    const counts = new Map<string, { corp: string; counts: Counts }>();
    let failed = 0;
    for (const [i, corp] of corps.entries()) {
      if (this.stopped) return;
      // On SQLite a visit never really waits: without this the first pass over 1,000 corporations
      // held every request for ≈ 5 s at start-up (h-rss, bench/tenants.ts).
      if (i % 16 === 15) await yieldToRequests();
      if (!full && !this.watched.has(corp.id)) continue;
      // Opening the door would create a missing file (reported by the doctor, not papered over here).
      if (ctx.tenants.isMissing(corp.id)) continue;
      try {
        const result = await ctx.store.visit(corp.id, (door) => checkNasHealth(door, now, recount));
        const total = result.counts.ok + result.counts.quiet + result.counts.unknown;
        if (!total) {
          this.watched.delete(corp.id);
          continue;
        }
        this.watched.add(corp.id);
        counts.set(corp.id, { corp: corp.auth_name, counts: result.counts });
        for (const nas of result.quiet) ctx.logger.warn("NAS quiet: no accounting record within its interval", { corp: corp.auth_name, nas: nas.name, ip: nas.ip, last_accounting_at: nas.last_accounting_at });
        if (result.quiet.length) await this.tellNoc(corp.id, result.quiet);
      } catch (err) {
        failed++;
        ctx.logger.warn("nas-health: a corporation could not be checked", { corp: corp.auth_name, error: String(err) });
      }
    }
    this.counts = counts;
    if (full && !failed) this.swept = true;
    if (failed) throw new Error(`${failed} corporation(s) could not be checked`);
  }
}
