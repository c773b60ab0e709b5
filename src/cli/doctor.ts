// `corpadmin doctor [--fix] [--json]`: the checks of GET /api/system/doctor
// (src/modules/system/doctor.ts) run against the configured data directory (and database in
// cluster mode), with or without the service running. Exit 0 all ok, 1 a warning, 2 a failure.
import { kernelQueries } from "../app";
import type { Config } from "../config";
import { createContext, prepareStorage } from "../core/context";
import { createLogger } from "../lib/log";
import { exitStatus, formatChecks, runDoctor } from "../modules/system/doctor";

export const DOCTOR_HELP = `Usage: corpadmin doctor [--fix] [--json] [--data-dir DIR] [--database-url URL]

Checks the installation: data directory owner and modes (secret.key and data.key 0600), free disk,
WAL sizes, the last scheduled backup's age (with --backup-cron), webhooks inactive or failing, quiet
NAS, stale sessions, the egress policy, FreeRADIUS's reach of /api/isp/radius/authorize at
--public-url, PRAGMA quick_check of every database, NTP when systemd reports it; in cluster mode the
clock against the database's. Each check prints ok, warn or fail, and the fix.
  --fix   repair what is safe: the modes of the key files (0600) and of the data directory (0700)
  --json  print {"checks": [{name, status, detail, fix}]}
Exit status: 0 every check ok, 1 a warning, 2 a failure.
`;

export async function doctor(config: Config, options: { fix: boolean; json: boolean }): Promise<number> {
  // Quiet: a check's findings are the output; the service's own log lines are not.
  const logger = createLogger("error");
  // The keys are read as they are: their modes are a finding, repaired only with --fix.
  const ctx = createContext(config, kernelQueries, { logger, keepKeyModes: true, ...(await prepareStorage(config, logger)) });
  try {
    const checks = await runDoctor(ctx, { fix: options.fix });
    process.stdout.write(options.json ? `${JSON.stringify({ checks }, null, 2)}\n` : formatChecks(checks));
    return exitStatus(checks);
  } finally {
    await ctx.close();
  }
}
