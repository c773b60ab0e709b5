// `corpadmin serve`: the HTTP API, the event dispatcher and the scheduler in one process.
import { createApp } from "../app";
import { prepareStorage } from "../core/context";
import { redactedDatabaseUrl } from "../db/pg/url";
import type { Config } from "../config";
import { MAX_BODY_BYTES } from "../lib/http";
import { createLogger } from "../lib/log";
import { VERSION } from "../version";

type Built = ReturnType<typeof createApp>;

/** Starts the HTTP server of a built app: Elysia's routes plus the edge routes in front of them. */
export function listen({ app, serveRoutes }: Pick<Built, "app" | "serveRoutes">, port: number, hostname: string): void {
  // Elysia hands `serve.routes` to Bun's router over its own, so these paths skip its lifecycle.
  app.config.serve = { ...app.config.serve, routes: { ...app.config.serve?.routes, ...serveRoutes() } };
  // Bun's own cap answers 413 with an empty body before the app runs; keep it above the app's
  // limit so that the app answers with a problem document.
  app.listen({ port, hostname, maxRequestBodySize: MAX_BODY_BYTES * 4 });
}

export async function serve(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const built = createApp(config, { ...(await prepareStorage(config, logger)), logger });
  const { app, ctx } = built;
  listen(built, config.port, config.host);
  const port = app.server?.port;
  const engine = config.databaseUrl ? { engine: "postgres", database_url: redactedDatabaseUrl(config.databaseUrl) } : { engine: "sqlite" };
  ctx.logger.info("corpadmin listening", { version: VERSION, host: config.host, port, data_dir: config.dataDir, ...engine });

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
