// No app of the test's own: `corpadmin serve` (the binary in the binary pass) as a process under
// the systemd unit's sandbox, the same in both passes.
// Issue 29 defect 4: the unit's raised sandbox must not break the service. systemd is not PID 1
// on CI machines, so test/support/unit-sandbox.ts installs what the unit asks the kernel for —
// its SystemCallFilter= (allowed groups minus denied ones, EPERM otherwise) and
// RestrictAddressFamilies= (no netlink) — and, as root, a /proc mounted as ProcSubset=pid and
// ProtectProc=invisible mount it; then the service starts, takes a login (password hashing
// threads), writes, sends a webhook (DNS-free loopback HTTP out), renders a QR code image
// (worker), exports CSV and takes a backup, with no error logged.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { nodeSecrets, startAppNode, type AppNode } from "../../support/app-node";
import { ADMIN } from "../../support/helpers";
import { LOOPBACK_ALLOWED, receiver, waitFor } from "../../support/webhooks";

const root = join(import.meta.dir, "../../..");
const missing = ["systemd-analyze", "unshare"].filter((b) => !Bun.which(b));
if (!["/usr/lib/x86_64-linux-gnu/libseccomp.so.2", "/lib/x86_64-linux-gnu/libseccomp.so.2", "/usr/lib/aarch64-linux-gnu/libseccomp.so.2"].some(existsSync)) missing.push("libseccomp2");
const why = missing.length ? `the unit's sandbox cannot be reproduced here (${missing.join(", ")} missing): apt-get install -y systemd libseccomp2 util-linux` : null;
if (why) console.warn(`skipping: ${why}`);
const asRoot = process.getuid?.() === 0;
if (!asRoot) console.warn("not root: the service runs under the unit's system call filter, without its /proc subset (mounting one needs root)");

/** The processes below `pid`, deepest last. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const walk = (p: number) => {
    let children: number[] = [];
    try {
      children = readdirSync(`/proc/${p}/task`).flatMap((tid) => readFileSync(`/proc/${p}/task/${tid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number));
    } catch {
      return;
    }
    for (const c of children) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

describe.skipIf(why !== null)("corpadmin serve under the systemd unit's sandbox", () => {
  let node: AppNode;
  const hooks = receiver();

  beforeAll(async () => {
    const procSubset = asRoot ? ["unshare", "--mount", "--propagation", "private", "sh", "-c", 'mount -t proc -o subset=pid,hidepid=invisible proc /proc && exec "$@"', "sh"] : [];
    node = await startAppNode("sandboxed", {
      databaseUrl: "",
      secrets: nodeSecrets(),
      env: { ...LOOPBACK_ALLOWED, CORPADMIN_LOG_LEVEL: "warn" },
      wrap: [...procSubset, process.execPath, join(root, "test/support/unit-sandbox.ts")],
    });
  });
  afterAll(async () => {
    await node?.stop();
    hooks.stop();
  });

  const call = async (method: string, path: string, body?: unknown, token?: string) => {
    const res = await fetch(node.base + path, {
      method,
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, type: res.headers.get("content-type") ?? "", bytes: new Uint8Array(await res.arrayBuffer()) };
  };
  const json = (r: { bytes: Uint8Array }) => JSON.parse(new TextDecoder().decode(r.bytes));

  test("the filter is on the serving process, and the /proc it sees has no system-wide files", () => {
    expect(node.logTail()).toContain("a netlink socket is refused");
    const serving = descendants(node.pid).at(-1)!;
    expect(readFileSync(`/proc/${serving}/status`, "utf8")).toMatch(/^Seccomp:\s+2$/m);
    if (asRoot) {
      const mounts = readFileSync(`/proc/${serving}/mountinfo`, "utf8");
      expect(mounts).toMatch(/ \/proc .*subset=pid/);
    }
  });

  test("login, writes, a webhook sent, a QR code image, a CSV export and a backup; no error logged", async () => {
    const start = await call("POST", "/api/start", { user: ADMIN, corp: { auth_name: "acme", company_name: "ACME", timezone: "UTC" } });
    expect(start.status).toBe(200);
    const login = await call("POST", "/api/login", { corp: "acme", login: ADMIN.login, password: ADMIN.password });
    expect(login.status).toBe(200);
    const token = json(login).access_token as string;
    const hook = await call("POST", "/api/webhook", { name: "sandbox", target: hooks.url(), email: "ops@example.net", groups: ["CITY_AFTER_INSERT"] }, token);
    expect(hook.status).toBe(200);
    expect((await call("POST", "/api/city", { name: "Sandbox", state: "SP", country: "BR" }, token)).status).toBe(200);
    await waitFor("the webhook delivery", () => hooks.requests.length > 0);
    expect(hooks.requests[0].body).toContain("Sandbox");
    const person = await call("POST", "/api/person", { name: "Ana", display_name: "Ana" }, token);
    expect(person.status).toBe(200);
    const csv = await call("GET", "/api/person?format=csv", undefined, token);
    expect(csv.status).toBe(200);
    expect(new TextDecoder().decode(csv.bytes)).toContain("Ana");
    const code = await call("POST", "/api/qrcode", { name: "sandbox", kind: "static", content: "https://example.net" }, token);
    expect(code.status).toBe(200);
    const png = await call("GET", `/api/qrcode/${json(code).id}/image?format=png`, undefined, token);
    expect(png.status).toBe(200);
    expect([...png.bytes.slice(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
    const backup = await call("POST", "/api/backup", undefined, token);
    expect(backup.status).toBe(200);
    expect(node.logEntries("error")).toEqual([]);
  });
});
