// The realtime socket (routes.md, User group and Events): GET /api/user/socket issues a
// single-use 30 s ticket; GET /api/socket?ticket= upgrades to a WebSocket that streams the working
// corporation's event payloads the user may see (and RADIUS session messages: hub.ts), and closes
// with 4401 when the session ends.
import { Elysia } from "elysia";
import type { ServerWebSocket } from "bun";
import type { AppContext } from "../../core/context";
import { unauthorized } from "../../lib/problem";
import { authGuard } from "../../http/guard";
import { SocketHub, type SocketClient } from "./hub";
import { SocketQuery, SocketTicket, UpgradeRequired } from "./model";

export function socketModule(ctx: AppContext) {
  const hub = new SocketHub(ctx);
  // Its wake-ups and periodic check run as a job of the app (started after mounting, stopped on close).
  ctx.jobs.add(
    { name: "socket-hub", start: () => hub.start(), stop: () => hub.stop(), runOnce: () => hub.check() },
    { schedule: `on every commit with events; open sockets' sessions checked every ${ctx.dispatchTuning.socketCheckMs / 1000} s`, everyMs: ctx.dispatchTuning.socketCheckMs },
  );
  const clients = new WeakMap<object, Omit<SocketClient, "raw">>();

  return new Elysia({ name: "socket", prefix: "/api", tags: ["User"] })
    .use(authGuard(ctx))
    .get("/user/socket", ({ principal }) => hub.issue(principal), {
      auth: "token",
      response: { 200: SocketTicket },
      detail: { summary: "Socket user: a short-lived single-use ticket for the realtime socket" },
    })
    .ws("/socket", {
      query: SocketQuery,
      async upgrade(context) {
        const client = await hub.redeem(context.query.ticket, context.request);
        if (!client) throw unauthorized("The socket ticket is invalid, used or expired");
        clients.set(context.request, client);
      },
      open(ws) {
        const client = clients.get(ws.data.request);
        if (!client) return void ws.close(4401, "no ticket");
        hub.add({ ...client, raw: ws.raw as ServerWebSocket<unknown> });
      },
      close(ws) {
        hub.remove(ws.raw as ServerWebSocket<unknown>);
      },
      message() {
        // The socket only streams; what a client sends is ignored.
      },
      // Published through the GET below: OpenAPI has no method for a WebSocket route.
      detail: { hide: true },
    })
    // The same path without an Upgrade header: the document's entry for the socket, and a clear
    // answer to a client that did not ask for a WebSocket. The ticket is checked, not consumed.
    .get(
      "/socket",
      async ({ query, set }) => {
        if (!(await hub.peek(query.ticket))) throw unauthorized("The socket ticket is invalid, used or expired");
        set.status = 426;
        set.headers.upgrade = "websocket";
        return { detail: "Upgrade Required: open this URL as a WebSocket" };
      },
      {
        query: SocketQuery,
        response: { 426: UpgradeRequired },
        detail: {
          summary: "Realtime socket (WebSocket) streaming the working corporation's events",
          description:
            "Open as a WebSocket with the ticket of GET /api/user/socket (single use, 30 s). An invalid, used or expired ticket is 401 before the upgrade. " +
            "Each event arrives as a text message {type, timestamp, data}, for the areas the user's permission covers; the socket is closed with code 4401 when the session ends. " +
            "A user who may list RADIUS sessions also gets ISP_SESSION_START, ISP_SESSION_UPDATE and ISP_SESSION_STOP ({nas_id, acct_session_id, username, contract_id}) as accounting records commit, ISP_SESSION_NAS_RESTART ({nas_id}) when a NAS restart closed its sessions, and ISP_SESSION_RESYNC (data null) when some may have been missed; these are not outbox events (no webhook group).",
          security: [],
          responses: { 101: { description: "Switching Protocols (WebSocket)" } },
        } as never,
      },
    );
}
