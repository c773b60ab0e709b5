// The installation's check-up (routes.md, Network operations additions: DoctorCheck): what
// `corpadmin doctor [--fix] [--json]` prints and GET /api/system/doctor answers, the same checks.
// Each says ok, warn or fail, with a detail and the fix (null when there is nothing to do);
// `--fix` repairs what is safe to repair unattended (file modes), then checks again.
// CHECKS run in both modes; CLUSTER_CHECKS only on one shared database (cluster mode). The storage
// is asked for its capabilities (ctx.tenants.filesPerCorp), never its engine; the files are
// checked through src/db/files.ts.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, statfsSync, statSync } from "node:fs";
import { join } from "node:path";
import { Cron } from "croner";
import type { AppContext } from "../../core/context";
import { checkDatabaseFile, walBytes } from "../../db/files";
import { clientOf } from "../../db/rows";
import type { TenantDb } from "../../db/sqlite";
import { toIso } from "../../lib/time";
import { allCorpRefs, type CorpRef } from "../corp/service";
import { networkLayoutTroubles } from "../isp/fair-use";
import { ispTroubles } from "../isp/nas-health";
import { listBackups } from "../ops/backup-service";
import { webhookTroubles } from "../webhook/service";

export type DoctorStatus = "ok" | "warn" | "fail";

export interface DoctorCheck {
  name: string;
  status: DoctorStatus;
  detail: string;
  fix: string | null;
}

/** A check: one result, several (checks sharing one read), or none (not applicable here). */
type Check = ((ctx: AppContext, fix: boolean) => Promise<DoctorCheck | DoctorCheck[] | null>) & { checkName?: string };

/** Names a check for the report of its own failure (a check that throws is that check's fail). */
const named = (checkName: string, check: Check): Check => Object.assign(check, { checkName });

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const worst = (statuses: DoctorStatus[]): DoctorStatus => (statuses.includes("fail") ? "fail" : statuses.includes("warn") ? "warn" : "ok");
const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, "0");
const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

/** The key files corpadmin writes or reads: the token key and the data key (NAS secrets). */
function keyFiles(ctx: AppContext): string[] {
  const files = [join(ctx.config.dataDir, "secret.key"), ctx.config.dataKeyFile ?? join(ctx.config.dataDir, "data.key")];
  return files.filter((f) => existsSync(f));
}

/** Owner and modes of the data directory; secret.key and data.key must be 0600 (`--fix` sets them, and 0700 on the directory). */
const dataDirectory: Check = named("data-dir", async (ctx, fix) => {
  const dir = ctx.config.dataDir;
  const uid = process.getuid?.() ?? null;
  if (fix) {
    for (const f of keyFiles(ctx)) if (statSync(f).mode & 0o077) chmodSync(f, 0o600);
    if (statSync(dir).mode & 0o077) chmodSync(dir, 0o700);
  }
  const problems: { status: DoctorStatus; text: string; fix: string }[] = [];
  const st = statSync(dir);
  if (uid !== null && st.uid !== uid) problems.push({ status: "warn", text: `${dir} is owned by uid ${st.uid}, the service runs as uid ${uid}`, fix: `chown -R ${uid} ${dir}` });
  if (st.mode & 0o077) problems.push({ status: "warn", text: `${dir} is mode ${octal(st.mode)}: other users may read the databases`, fix: `chmod 700 ${dir} (corpadmin doctor --fix)` });
  const keys = keyFiles(ctx);
  for (const f of keys) {
    const m = statSync(f).mode;
    if (m & 0o077) problems.push({ status: "fail", text: `${f} is mode ${octal(m)}: a key other users can read`, fix: `chmod 600 ${f} (corpadmin doctor --fix)` });
    if (uid !== null && statSync(f).uid !== uid) problems.push({ status: "warn", text: `${f} is owned by uid ${statSync(f).uid}`, fix: `chown ${uid} ${f}` });
  }
  if (!problems.length) {
    return { name: "data-dir", status: "ok", detail: `${dir}: owner uid ${st.uid}, mode ${octal(st.mode)}; ${keys.map((k) => k.split("/").pop()).join(", ") || "no key file"} 0600`, fix: null };
  }
  return { name: "data-dir", status: worst(problems.map((p) => p.status)), detail: problems.map((p) => p.text).join("; "), fix: problems.map((p) => p.fix).join("; ") };
});

/** Free space where the databases are: fail under 2% or 256 MiB, warn under 10% or 1 GiB. */
const freeDisk: Check = named("disk-free", async (ctx) => {
  const s = statfsSync(ctx.config.dataDir);
  const free = Number(s.bavail) * Number(s.bsize);
  const total = Number(s.blocks) * Number(s.bsize);
  const pct = total ? (free / total) * 100 : 100;
  const text = `${(free / GiB).toFixed(1)} GiB free of ${(total / GiB).toFixed(1)} GiB (${pct.toFixed(0)}%) under ${ctx.config.dataDir}`;
  const status: DoctorStatus = pct < 2 || free < 256 * MiB ? "fail" : pct < 10 || free < GiB ? "warn" : "ok";
  return { name: "disk-free", status, detail: text, fix: status === "ok" ? null : "free space or grow the file system: SQLite refuses writes when the disk is full" };
});

/** The databases' files: the corporations' by their server directories. */
async function corpFiles(ctx: AppContext): Promise<{ corp: CorpRef; path: string }[]> {
  const corps = await ctx.store.platform.read(allCorpRefs);
  return corps.map((corp) => ({ corp, path: ctx.tenants.pathOf(corp.id) }));
}

/** WAL files: the checkpoints keep them small; a large one means a reader held them back for long. */
const walSizes: Check = named("wal-size", async (ctx) => {
  if (!ctx.tenants.filesPerCorp) return { name: "wal-size", status: "ok", detail: "cluster mode: PostgreSQL manages its WAL", fix: null };
  const files = [{ name: "platform", path: join(ctx.config.dataDir, "platform.db") }, ...(await corpFiles(ctx)).map((c) => ({ name: c.corp.auth_name, path: c.path }))];
  let total = 0;
  const large: string[] = [];
  let biggest = 0;
  for (const f of files) {
    const size = walBytes(f.path);
    total += size;
    biggest = Math.max(biggest, size);
    if (size > 64 * MiB) large.push(`${f.name} ${(size / MiB).toFixed(0)} MiB`);
  }
  const status: DoctorStatus = biggest > GiB ? "fail" : large.length ? "warn" : "ok";
  return {
    name: "wal-size",
    status,
    detail: large.length ? `large WAL files: ${large.join(", ")}` : `${plural(files.length, "database")}, ${(total / MiB).toFixed(1)} MiB of WAL in all`,
    fix: status === "ok" ? null : "a long read (a backup, a stuck request) holds checkpoints back; restart the service if it persists",
  };
});

/** With --backup-cron: the newest scheduled backup is at most two intervals old. */
const backupAge: Check = named("backup-age", async (ctx) => {
  const cron = ctx.config.backupCron;
  if (!cron) return { name: "backup-age", status: "ok", detail: "no backup schedule (--backup-cron): not checked", fix: null };
  const [a, b] = new Cron(cron, { paused: true }).nextRuns(2);
  const intervalMs = a && b ? b.getTime() - a.getTime() : 86_400_000;
  const newest = listBackups(ctx.config.backupDir).find((x) => x.scheduled);
  if (!newest) {
    return { name: "backup-age", status: "warn", detail: `no scheduled backup yet in ${ctx.config.backupDir} (schedule ${cron}, next ${a ? toIso(a.getTime()) : "never"})`, fix: "wait for the first run, or run it now: POST /api/system/jobs/scheduled-backup/run" };
  }
  const ageMs = ctx.now() - Date.parse(newest.created_at);
  const stale = ageMs > 2 * intervalMs + 3_600_000;
  return {
    name: "backup-age",
    status: stale ? "fail" : newest.verified ? "ok" : "warn",
    detail: `newest scheduled backup ${newest.name}, ${(ageMs / 3_600_000).toFixed(1)} h old (schedule ${cron}, every ${(intervalMs / 3_600_000).toFixed(1)} h)${newest.verified ? "" : "; its files do not match its manifest"}`,
    fix: stale ? "the schedule is not producing backups: see GET /api/system/jobs (scheduled-backup's last_error) and the service log" : newest.verified ? null : "take a new backup",
  };
});

/** Reads each corporation through the store (a visit); one that cannot be read is named. */
async function eachCorp<T>(ctx: AppContext, read: (db: TenantDb) => Promise<T>) {
  const out: { corp: CorpRef; value: T | null; error: string | null }[] = [];
  for (const corp of await ctx.store.platform.read(allCorpRefs)) {
    if (corp.status !== "ENABLED" && corp.status !== "BLOCKED") continue;
    // A missing file is corp-integrity's finding; opening it here would create it.
    if (ctx.tenants.isMissing(corp.id)) continue;
    try {
      out.push({ corp, value: await ctx.store.visit(corp.id, (door) => door.read(read)), error: null });
    } catch (err) {
      out.push({ corp, value: null, error: String(err) });
    }
  }
  return out;
}

/** Webhooks turned off (by 410 or failures) or failing now, per corporation. */
const webhooks: Check = named("webhooks", async (ctx) => {
  const found = await eachCorp(ctx, (db) => webhookTroubles(db));
  const lines: string[] = [];
  for (const f of found) {
    if (!f.value) continue;
    if (f.value.inactive.length) lines.push(`${f.corp.auth_name}: inactive ${f.value.inactive.join(", ")}`);
    if (f.value.failing.length) lines.push(`${f.corp.auth_name}: failing ${f.value.failing.join(", ")}`);
  }
  return {
    name: "webhooks",
    status: lines.length ? "warn" : "ok",
    detail: lines.length ? lines.join("; ") : "no webhook is inactive or failing",
    fix: lines.length ? "see the webhook's delivery log (GET /api/webhook/{id}/deliveries), fix the receiver, then PUT /api/webhook/{id}/active" : null,
  };
});

/** NAS quiet now, and open sessions gone stale (no record for 3 interim intervals): one read per corporation. */
const ispChecks: Check = named("nas-quiet", async (ctx) => {
  const now = toIso(ctx.now());
  const found = await eachCorp(ctx, (db) => ispTroubles(db, now));
  const quiet = found.filter((f) => f.value?.quiet.length).map((f) => `${f.corp.auth_name}: ${f.value!.quiet.join(", ")}`);
  const stale = found.filter((f) => f.value?.stale).map((f) => `${f.corp.auth_name}: ${f.value!.stale}`);
  const unreadable = found.filter((f) => f.error).map((f) => f.corp.auth_name);
  return [
    {
      name: "nas-quiet",
      status: quiet.length ? "warn" : "ok",
      detail: quiet.length ? `NAS with online sessions and no accounting within their interval: ${quiet.join("; ")}` : "no NAS is quiet",
      fix: quiet.length ? "check the NAS's accounting (its RADIUS server and rlm_rest towards corpadmin); POST /api/isp/nas/{id}/test checks its RFC 5176 side" : null,
    },
    {
      name: "stale-sessions",
      status: stale.length ? "warn" : "ok",
      detail: stale.length ? `open sessions without a record for 3 interim intervals: ${stale.join("; ")}` : `no stale session${unreadable.length ? ` (not read: ${unreadable.join(", ")})` : ""}`,
      fix: stale.length ? "lost Stop records or accounting that no longer arrives: check the NAS's Acct-Interim-Interval and its accounting towards FreeRADIUS" : null,
    },
  ];
});

/** Fair use or a reduce/redirect policy in use, and NAS whose layout ignores the values in force. */
const networkLayouts: Check = named("network-layouts", async (ctx) => {
  const found = await eachCorp(ctx, (db) => networkLayoutTroubles(db));
  const lines = found.filter((f) => f.value?.length).map((f) => `${f.corp.auth_name}: ${f.value!.join(", ")}`);
  return {
    name: "network-layouts",
    status: lines.length ? "warn" : "ok",
    detail: lines.length
      ? `allowances or a reduce/redirect policy are set, but these layouts render no contract.effective.* variable, so throttle, reduce and redirect never reach their NAS: ${lines.join("; ")}`
      : "every NAS layout renders the values in force, or no allowance and no reduce/redirect policy is set",
    fix: lines.length ? "render the rate and pool attributes from {{contract.effective.max_upload}}, {{contract.effective.max_download}} and {{contract.effective.pool_name_ipv4}} (README, Fair use and suspension)" : null,
  };
});

/** The egress policy must keep loopback and cloud metadata out of webhooks' and collectors' reach. */
const egressPolicy: Check = named("egress-policy", async (ctx) => {
  const problems: string[] = [];
  if (ctx.egress.allows("169.254.169.254")) problems.push("169.254.169.254 (cloud metadata) is allowed");
  if (ctx.egress.allows("127.0.0.1") || ctx.egress.allows("::1")) problems.push("loopback is allowed: webhooks and metric endpoints can reach services on this host");
  if (ctx.config.egressAllow.some((c) => /^(0\.0\.0\.0|::)\/0$/.test(c.trim()))) problems.push("the allow list opens every address");
  return {
    name: "egress-policy",
    status: problems.length ? "warn" : "ok",
    detail: problems.length ? problems.join("; ") : `loopback, link-local and cloud metadata refused${ctx.config.egressDeny.length ? `; denied: ${ctx.config.egressDeny.join(", ")}` : ""}`,
    fix: problems.length ? "narrow --egress-allow / CORPADMIN_EGRESS_ALLOW to the addresses receivers need" : null,
  };
});

/** FreeRADIUS's rlm_rest reaches authorize at the public URL: without a credential it must answer 401. */
const radiusReachable: Check = named("radius-reachable", async (ctx) => {
  const url = `${ctx.config.publicUrl}/api/isp/radius/authorize?username=doctor&nas_ip=0.0.0.0`;
  try {
    const res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(3_000) });
    await res.body?.cancel();
    if (res.status === 401) return { name: "radius-reachable", status: "ok", detail: `${url} answered 401 without a credential, as rlm_rest expects`, fix: null };
    return { name: "radius-reachable", status: "warn", detail: `${url} answered ${res.status}, not corpadmin's 401 (a proxy in between?)`, fix: "point --public-url at corpadmin itself, and rlm_rest's connect_uri at the same address" };
  } catch (err) {
    return {
      name: "radius-reachable",
      status: "fail",
      detail: `${url}: ${(err as Error).name === "TimeoutError" ? "no answer within 3 s" : (err as Error).message}`,
      fix: "start the service, or set --public-url to the address FreeRADIUS uses to reach it",
    };
  }
});

/** PRAGMA quick_check of the platform's and every corporation's file, opened read-only apart from the service. */
const corpIntegrity: Check = named("corp-integrity", async (ctx) => {
  if (!ctx.tenants.filesPerCorp) return { name: "corp-integrity", status: "ok", detail: "cluster mode: no SQLite files", fix: null };
  const bad: string[] = [];
  const files = [{ name: "platform", path: join(ctx.config.dataDir, "platform.db") }, ...(await corpFiles(ctx)).map((c) => ({ name: c.corp.auth_name, path: c.path }))];
  for (const f of files) {
    if (!existsSync(f.path)) {
      bad.push(`${f.name}: ${f.path} is missing`);
      continue;
    }
    try {
      const lines = checkDatabaseFile(f.path, "quick");
      if (lines.length !== 1 || lines[0] !== "ok") bad.push(`${f.name}: ${lines.slice(0, 3).join("; ")}`);
    } catch (err) {
      bad.push(`${f.name}: ${(err as Error).message}`);
    }
  }
  return {
    name: "corp-integrity",
    status: bad.length ? "fail" : "ok",
    detail: bad.length ? `PRAGMA quick_check failed: ${bad.join("; ")}` : `PRAGMA quick_check ok on ${plural(files.length, "database")}`,
    fix: bad.length ? "restore the named corporation from the newest backup (corpadmin restore), or recover it with sqlite3 .recover" : null,
  };
});

/** NTP synchronization, when systemd reports it (timedatectl); not listed without it. */
const ntpSync: Check = named("ntp-sync", async () => {
  const r = spawnSync("timedatectl", ["show", "--property=NTPSynchronized", "--value"], { encoding: "utf8", timeout: 2_000 });
  const value = r.status === 0 ? r.stdout.trim() : "";
  if (value !== "yes" && value !== "no") return null;
  return value === "yes"
    ? { name: "ntp-sync", status: "ok", detail: "the system clock is synchronized (systemd-timesyncd or another NTP client)", fix: null }
    : { name: "ntp-sync", status: "warn", detail: "the system clock is not synchronized: tokens, TOTP codes and RADIUS records are dated by it", fix: "timedatectl set-ntp true" };
});

/** Every mode. */
export const CHECKS: Check[] = [dataDirectory, freeDisk, walSizes, backupAge, webhooks, ispChecks, networkLayouts, egressPolicy, radiusReachable, corpIntegrity, ntpSync];

/** Cluster mode: the app's clock against the database's (leases, sessions and records are dated by both). */
const clockSkew: Check = named("clock-skew", async (ctx) => {
  const before = Date.now();
  const dbMs = await ctx.store.platform.read(async (db) => Number((await clientOf(db).query<{ ms: number }, []>("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms").get())?.ms));
  const after = Date.now();
  const skew = Math.abs(dbMs - (before + after) / 2);
  const status: DoctorStatus = skew > 5_000 ? "fail" : skew > 1_000 ? "warn" : "ok";
  return {
    name: "clock-skew",
    status,
    detail: `this node's clock is ${skew.toFixed(0)} ms from the database's (±${((after - before) / 2).toFixed(0)} ms)`,
    fix: status === "ok" ? null : "synchronize every node and database machine with NTP (timedatectl set-ntp true)",
  };
});

/**
 * The role this node connects as is held to row-level security (the start's fail-closed check,
 * db/pg/isolation.ts, run again: a role altered or a policy dropped since the start shows here).
 * Imported when it runs, so embedded mode evaluates no PostgreSQL code.
 */
const roleIsolation: Check = named("role-isolation", async (ctx) => {
  const { roleIsolationProblems } = await import("../../db/pg/isolation");
  const { SQL } = await import("bun");
  const sql = new SQL({ url: ctx.config.databaseUrl!, max: 1 });
  try {
    const problems = await roleIsolationProblems(sql);
    if (!problems.length) return { name: "role-isolation", status: "ok", detail: "the role is neither superuser nor BYPASSRLS, and every tenant table forces row-level security with its policy", fix: null };
    return { name: "role-isolation", status: "fail", detail: problems.map((p) => p.message).join("; "), fix: [...new Set(problems.map((p) => p.fix))].join("; ") };
  } finally {
    await sql.close();
  }
});

/**
 * Cluster mode: whether the person search has its trigram indexes (pg_trgm, made by the migrator
 * where the extension exists or the role may create it, db/pg/migrate.ts) and may use them under
 * row-level security (LEAKPROOF_SQL, a superuser's), or scans the persons.
 * A scan answers the same rows, slower as a corporation grows: a warning, not a failure.
 */
const searchIndex: Check = named("search-index", async (ctx) => {
  const { LEAKPROOF_SQL, trigramState, TRIGRAM_INDEXES } = await import("../../db/pg/migrate");
  const { SQL } = await import("bun");
  const sql = new SQL({ url: ctx.config.databaseUrl!, max: 1 });
  try {
    const state = await trigramState(sql);
    const wanted = TRIGRAM_INDEXES.map((i) => i.name);
    const missing = wanted.filter((n) => !state.indexes.includes(n));
    if (state.installed && !missing.length && state.leakproof) return { name: "search-index", status: "ok", detail: `pg_trgm is installed: person search uses its indexes (${wanted.join(", ")})`, fix: null };
    if (state.installed && !missing.length)
      return {
        name: "search-index",
        status: "warn",
        detail: "pg_trgm and its indexes are there, but row-level security keeps person search from using them (its condition's functions are not declared LEAKPROOF): it scans",
        fix: `as a superuser, in this database: ${LEAKPROOF_SQL}`,
      };
    if (state.installed)
      return { name: "search-index", status: "warn", detail: `pg_trgm is installed but ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} missing: person search scans`, fix: "restart a node: its migration step creates the missing indexes" };
    if (state.available)
      return {
        name: "search-index",
        status: "warn",
        detail: "pg_trgm is available on the server but not installed, and this role may not create it: person search scans every person of a corporation",
        fix: `as a superuser, in this database: CREATE EXTENSION pg_trgm; ${LEAKPROOF_SQL} then restart a node: it creates the indexes`,
      };
    return {
      name: "search-index",
      status: "warn",
      detail: "the server has no pg_trgm extension: person search scans every person of a corporation",
      fix: "install PostgreSQL's contrib extensions on the database server (Debian: postgresql-contrib, included in postgresql-15), then restart a node",
    };
  } finally {
    await sql.close();
  }
});

/** Only where one database holds every corporation (cluster mode, PostgreSQL). */
export const CLUSTER_CHECKS: Check[] = [clockSkew, roleIsolation, searchIndex];

/** Runs every check (`fix`: repairs modes first); each check's own failure is reported as its fail. */
export async function runDoctor(ctx: AppContext, options: { fix?: boolean } = {}): Promise<DoctorCheck[]> {
  const checks = [...CHECKS, ...(ctx.tenants.filesPerCorp ? [] : CLUSTER_CHECKS)];
  const out: DoctorCheck[] = [];
  for (const check of checks) {
    try {
      const result = await check(ctx, !!options.fix);
      if (result) out.push(...[result].flat());
    } catch (err) {
      out.push({ name: check.checkName ?? "check", status: "fail", detail: `the check failed: ${(err as Error).message}`, fix: null });
    }
  }
  return out;
}

/** corpadmin doctor's exit status: 0 all ok, 1 a warning, 2 a failure. */
export const exitStatus = (checks: DoctorCheck[]) => ({ ok: 0, warn: 1, fail: 2 })[worst(checks.map((c) => c.status))];

/** The human form: one line per check, its fix under it. */
export function formatChecks(checks: DoctorCheck[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  return checks
    .map((c) => `${c.status.toUpperCase().padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}${c.fix ? `\n${" ".repeat(width + 8)}fix: ${c.fix}` : ""}`)
    .join("\n")
    .concat("\n");
}
