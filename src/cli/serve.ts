// `corpadmin serve`: the HTTP API, the event dispatcher and the scheduler in one process.
import { createApp } from "../app";
import type { Config } from "../config";
import { MAX_BODY_BYTES } from "../lib/http";
import { VERSION } from "../version";

export async function serve(config: Config): Promise<void> {
  const { app, ctx } = createApp(config);
  // Bun's own cap answers 413 with an empty body before the app runs; keep it above the app's
  // limit so that the app answers with a problem document.
  app.listen({ port: config.port, hostname: config.host, maxRequestBodySize: MAX_BODY_BYTES * 4 });
  const port = app.server?.port;
  ctx.logger.info("corpadmin listening", { version: VERSION, host: config.host, port, data_dir: config.dataDir });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.logger.info("shutting down", { signal });
    // Stop accepting, let in-flight requests finish, then stop background work and close databases.
    await app.server?.stop(false);
    await ctx.close();
    ctx.logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}
