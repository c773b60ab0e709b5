// Routes answered from Bun's own router, in front of Elysia's request lifecycle: the public hot
// paths whose work is a cache lookup (GET /q/{slug}) or a few indexed reads (RADIUS authorize),
// where the lifecycle costs as much as the work. Each runs the very handler its Elysia route runs
// (the one app.handle and the tests reach), wrapped in what the global hooks do for every request:
// request id, metrics and log, problems.
import type { Server } from "bun";

/**
 * A handler shared with an Elysia route; it throws (or rejects with) a Problem to refuse. It may
 * answer synchronously, as a cache hit does, and then no promise is made. `null`: the request is
 * not one it takes on (say, input only the route's schema can judge), the Elysia route answers it.
 */
export type EdgeHandler = (request: Request, params: Record<string, string>, peer: string | null) => Response | Promise<Response> | null;

export interface EdgeHooks {
  /** The request id (the caller's X-Request-Id or a new one). */
  begin(request: Request): string;
  /** Metrics and the request log, as after every response. */
  finish(request: Request, id: string, startedAt: number, route: string, status: number): void;
  /** The problem document for an error, as the app's error hook answers it. */
  error(error: unknown, request: Request): Response;
  /** The Elysia app's answer (its own hooks do the request id, metrics and log). */
  elysia(request: Request): Response | Promise<Response>;
}

type BunRoute = (request: Request & { params: Record<string, string> }, server: Server<unknown>) => Response | Promise<Response>;

export class EdgeRoutes {
  private entries: { path: string; handler: EdgeHandler }[] = [];

  /** A GET route; `path` uses the Elysia route's pattern (`/q/:slug`), which Bun's router shares. */
  get(path: string, handler: EdgeHandler): void {
    this.entries.push({ path, handler });
  }

  get size(): number {
    return this.entries.length;
  }

  /** The `routes` entries for Bun.serve; other methods and paths fall through to Elysia. */
  bunRoutes(hooks: EdgeHooks): Record<string, { GET: BunRoute }> {
    const routes: Record<string, { GET: BunRoute }> = {};
    for (const { path, handler } of this.entries) {
      routes[path] = {
        GET: (request, server) => {
          const startedAt = performance.now();
          let out: Response | Promise<Response> | null;
          try {
            out = handler(request, request.params, server.requestIP(request)?.address ?? null);
          } catch (err) {
            out = hooks.error(err, request);
          }
          // Handed to Elysia, whose own hooks take the request id: none is made here for it.
          if (out === null) return hooks.elysia(request);
          const id = hooks.begin(request);
          if (out instanceof Response) return finish(hooks, request, id, startedAt, path, out);
          return out.then(
            (response) => finish(hooks, request, id, startedAt, path, response),
            (err) => finish(hooks, request, id, startedAt, path, hooks.error(err, request)),
          );
        },
      };
    }
    return routes;
  }
}

function finish(hooks: EdgeHooks, request: Request, id: string, startedAt: number, path: string, response: Response): Response {
  response.headers.set("x-request-id", id);
  hooks.finish(request, id, startedAt, path, response.status);
  return response;
}
