// The audit log as the audit suites read it: an app whose log lines are kept, its audit_log rows
// (platform database) and its `audit` JSON lines.
import { createLogger, type LogLevel } from "../../src/lib/log";
import { makeApp } from "./helpers";

export interface AuditRow {
  id: string;
  at: string;
  action: string;
  outcome: string;
  actor_user_id: string | null;
  corp_id: string | null;
  target: string | null;
  ip: string | null;
  reason: string | null;
  request_id: string | null;
}

/** An app whose log lines at `level` and above are kept (in-process only: the logger is an option). */
export async function auditedApp(opts: NonNullable<Parameters<typeof makeApp>[0]> = {}, level: LogLevel = "info") {
  const lines: string[] = [];
  const t = await makeApp({ ...opts, options: { ...opts.options, logger: createLogger(level, (line) => lines.push(line)) } });
  return {
    t,
    /** Every log line, as written. */
    lines,
    rows: () => t.sql().query("SELECT * FROM audit_log ORDER BY id").all() as AuditRow[],
    logged: () => lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "audit"),
  };
}
