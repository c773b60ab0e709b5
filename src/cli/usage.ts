// `corpadmin usage rebuild [--corp <auth_name or id>]`: recomputes the daily traffic rollups
// (isp_usage_daily) of every corporation, or of one, from its raw accounting records: after a
// restore, or when rollups are in doubt. Safe while the service runs (each corporation is one
// write; records arriving meanwhile wait for it, then add to the rebuilt rows).
import type { Config } from "../config";
import { createDataContext } from "../app";
import { prepareStorage } from "../core/context";
import { createLogger } from "../lib/log";
import { allCorpRefs } from "../modules/corp/service";
import { rebuildUsage } from "../modules/isp/usage-service";

export const USAGE_HELP = `Usage: corpadmin usage rebuild [--corp AUTH_NAME_OR_ID] [--data-dir DIR] [--database-url URL]

Recomputes every corporation's (or one's) daily traffic usage from its RADIUS accounting records.
`;

export async function usageCommand(config: Config, action: string | undefined, corp: string | undefined): Promise<number> {
  if (action !== "rebuild") {
    process.stderr.write(USAGE_HELP);
    return 2;
  }
  const logger = createLogger(config.logLevel);
  // The store without the app's modules: no job (dispatcher, scheduler, ...) runs in this process.
  const ctx = createDataContext(config, { ...(await prepareStorage(config, logger)), logger });
  try {
    const refs = await ctx.store.platform.read((db) => allCorpRefs(db));
    const chosen = corp ? refs.filter((r) => r.id === corp || r.auth_name === corp) : refs;
    if (corp && !chosen.length) {
      process.stderr.write(`unknown corporation '${corp}'\n`);
      return 1;
    }
    for (const ref of chosen) {
      const row = await ctx.corps.get(ref.id);
      const records = await ctx.store.tenant(ref.id).write((tx) => rebuildUsage(tx, row?.timezone ?? "UTC"));
      process.stdout.write(`${ref.auth_name}: ${records} accounting records replayed\n`);
    }
    return 0;
  } finally {
    await ctx.close();
  }
}
