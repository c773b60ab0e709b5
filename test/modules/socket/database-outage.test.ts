// The realtime socket when the database goes away (cluster mode, issue 19: a failover): the hub's
// periodic check reads the sessions of open sockets (the node keeps live ones: one dropped first),
// and a rejection there once ended the whole `corpadmin serve` process (exit 1, found by
// test/cluster/two-nodes.test.ts). A node as a process
// of its own (test/support/app-node.ts: the binary in the binary pass) over a throwaway
// PostgreSQL that is stopped while a socket is open; the node must outlive the hub's next checks.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN } from "../../support/helpers";
import { nodeSecrets, startAppNode, type AppNode } from "../../support/app-node";
import { startPostgres, type TestPostgres } from "../../support/postgres";
import { waitFor } from "../../support/wait";

/** The hub checks open sockets every 5 s (dispatchTuning.socketCheckMs). */
const CHECK_MS = 5_000;

let pg: TestPostgres;
let node: AppNode;
beforeAll(async () => {
  pg = await startPostgres();
  node = await startAppNode("outage", { databaseUrl: pg.appUrl, secrets: nodeSecrets() });
}, 60_000);
afterAll(async () => {
  await node?.stop();
  await pg?.stop();
});

async function post(path: string, body: unknown, token?: string) {
  const res = await fetch(node.base + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as any;
}

describe("GET /api/socket: the database unreachable", () => {
  test("the node outlives the socket checks made while nothing answers", async () => {
    await post("/api/start", { user: ADMIN, corp: { auth_name: "acme", company_name: "ACME" } });
    const { access_token: token } = await post("/api/login", { corp: "acme", login: ADMIN.login, password: ADMIN.password });
    const ticket = await fetch(`${node.base}/api/user/socket`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json() as Promise<{ ticket: string }>);
    const ws = new WebSocket(`${node.base.replace("http", "ws")}/api/socket?ticket=${ticket.ticket}`);
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onclose = (e) => reject(new Error(`socket refused (${e.code})`));
    });
    try {
      // The node keeps live sessions (PostgreSQL: core/sessions.ts), so the hub's check would not
      // read this one; a password change keeping the caller's session drops it, and the next check
      // reads it from the database.
      const userId = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString()).sub as string;
      const changed = await fetch(`${node.base}/api/user/${userId}/password`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ current_password: ADMIN.password, new_password: "admin-password-2" }),
      });
      expect(changed.status).toBe(204);
      await pg.stop();
      // Two checks of the hub's while nothing answers.
      const end = performance.now() + 2 * CHECK_MS + 1_000;
      while (performance.now() < end && !node.died) await Bun.sleep(100);
      expect(node.died).toBeNull();
      // The session read fails ("socket check failed"); had a check read it again in the moment
      // before the server stopped, the events' catch-up fails instead. A loaded machine can run
      // the checks late: waited for, and the node still alive after it.
      await waitFor("a failed socket check logged", () => node.logEntries("warn").some((e) => e.msg === "socket check failed" || e.msg === "socket stream failed"));
      expect(node.died).toBeNull();
    } finally {
      ws.close();
    }
  }, 60_000);
});
