// Runs Debian's FreeRADIUS 3.2 for real against a corpadmin app served on loopback, and speaks
// RADIUS to it with radclient. Tests skip (saying why) when FreeRADIUS is not installed.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeFreeradiusConfig, type FreeradiusOptions } from "../../src/modules/isp/freeradius";

export const FREERADIUS_MISSING: string | null = (() => {
  const missing = ["freeradius", "radclient"].filter((b) => !Bun.which(b));
  if (!existsSync("/usr/lib/freeradius/rlm_rest.so")) missing.push("rlm_rest (freeradius-rest)");
  return missing.length
    ? `FreeRADIUS is not installed (${missing.join(", ")} missing): apt-get install -y freeradius freeradius-rest freeradius-utils`
    : null;
})();

/** A UDP port nobody holds right now (FreeRADIUS binds it a moment later). */
export async function freeUdpPort(): Promise<number> {
  const sock = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
  const port = sock.port;
  sock.close();
  return port;
}

export interface FreeradiusProcess {
  log(): string;
  /** Stops the server (SIGTERM, SIGKILL after 5 s) and removes its config directory. */
  stop(): Promise<void>;
}

/**
 * Runs `freeradius -f` on the config directory `dir` and waits until it is ready to process
 * requests; as OS user `user` when given (Debian's freeradius.service runs it as freerad; the
 * test process must be root for that).
 */
export async function runFreeradius(dir: string, { user }: { user?: string } = {}): Promise<FreeradiusProcess> {
  const asUser = user ? ["setpriv", `--reuid=${user}`, `--regid=${user}`, "--init-groups"] : [];
  const proc = Bun.spawn([...asUser, "freeradius", "-f", "-l", "stdout", "-d", dir], { stdout: "pipe", stderr: "pipe" });
  let log = "";
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) log += decoder.decode(chunk, { stream: true });
  };
  const pumping = Promise.all([pump(proc.stdout), pump(proc.stderr)]);
  const deadline = Date.now() + 15_000;
  while (!log.includes("Ready to process requests")) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill();
      await pumping.catch(() => {});
      // -XC explains what the plain start would not.
      const check = Bun.spawnSync(["freeradius", "-XC", "-d", dir]);
      throw new Error(`FreeRADIUS did not start:\n${log}\n${check.stdout.toString().slice(-3000)}`);
    }
    await Bun.sleep(25);
  }
  return {
    log: () => log,
    async stop() {
      proc.kill("SIGTERM");
      const killer = setTimeout(() => proc.kill("SIGKILL"), 5000);
      await proc.exited;
      clearTimeout(killer);
      await pumping.catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RunningFreeradius extends FreeradiusProcess {
  authPort: number;
  acctPort: number;
  dir: string;
}

export async function startFreeradius(o: Omit<FreeradiusOptions, "authPort" | "acctPort" | "listenAddress">): Promise<RunningFreeradius> {
  const dir = mkdtempSync(join(tmpdir(), "corpadmin-radius-"));
  const authPort = await freeUdpPort();
  let acctPort = await freeUdpPort();
  while (acctPort === authPort) acctPort = await freeUdpPort();
  writeFreeradiusConfig(dir, { ...o, authPort, acctPort, listenAddress: "127.0.0.1" });
  return { authPort, acctPort, dir, ...(await runFreeradius(dir)) };
}

export interface RadiusReply {
  code: string | null;
  attributes: Record<string, string[]>;
  output: string;
}

/**
 * Sends one packet with radclient and returns the reply's code (Access-Accept, Access-Reject,
 * Accounting-Response; null when none came) and attributes.
 */
export async function radclient(port: number, kind: "auth" | "acct", secret: string, attrs: Record<string, string | number>, timeoutSeconds = 5): Promise<RadiusReply> {
  const lines = Object.entries(attrs)
    .map(([k, v]) => `${k} = ${typeof v === "number" || /^[A-Za-z-]+$/.test(v) && k.endsWith("-Type") ? v : JSON.stringify(v)}`)
    .join(", ");
  const proc = Bun.spawn(["radclient", "-x", "-r", "1", "-t", String(timeoutSeconds), `127.0.0.1:${port}`, kind, secret], {
    stdin: new TextEncoder().encode(lines + "\n"),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  const output = out + err;
  const received = /Received (\S+) Id \d+[^\n]*\n((?:\t[^\n]*\n)*)/.exec(output);
  const attributes: Record<string, string[]> = {};
  for (const line of received?.[2].split("\n") ?? []) {
    const m = /^\t([^ ]+) = (.*)$/.exec(line);
    if (!m) continue;
    const value = m[2].startsWith('"') ? JSON.parse(m[2]) : m[2];
    (attributes[m[1]] ??= []).push(value);
  }
  return { code: received?.[1] ?? null, attributes, output };
}
