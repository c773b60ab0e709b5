// corpadmin app nodes as processes of their own, for the cluster tests (issue 19): `corpadmin
// serve` — the compiled binary in the binary pass (CORPADMIN_TEST_TARGET=binary, as helpers.ts),
// else `bun src/main.ts serve` — each with its own data directory and free loopback port, sharing
// the database URL, the token secret and the data key (DATA_DIR/data.key, written before the
// start) as an operator's nodes do. stdout/stderr go to a log file per node. Every node is stopped
// by its PID: by `stop()`/`kill()`, when the test process exits, and by a watchdog process when
// the test process is killed outright.
// `connectionOwner` tells which process opened a loopback connection (by its port, through
// /proc), so a test's HTTP receiver can tell which node sent a webhook or collected a metric.
import { appendFileSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { TARGET } from "./helpers";
import { freePort } from "./ports";

const ROOT = join(import.meta.dir, "../..");
const BINARY = resolve(process.env.CORPADMIN_TEST_BINARY ?? join(ROOT, "dist/corpadmin"));

export interface AppNode {
  readonly name: string;
  /** http://127.0.0.1:<port> */
  readonly base: string;
  readonly pid: number;
  readonly dir: string;
  /** The node's stdout and stderr. */
  readonly logFile: string;
  /** False once kill() or stop() ended it. */
  readonly alive: boolean;
  /** How it ended when the test did not end it ("exited with code 1"); null while it runs or after kill()/stop(). */
  readonly died: string | null;
  /** The last lines of its log. */
  logTail(lines?: number): string;
  /** Its log's JSON lines (`corpadmin serve` logs JSON lines) of `level` or above. */
  logEntries(level?: "info" | "warn" | "error"): Record<string, unknown>[];
  /** SIGKILL, then waits (bounded) until the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (`serve` drains and exits 0), SIGKILL after 10 s. */
  stop(): Promise<void>;
}

/** What every node of one cluster shares: the token secret and the data key. */
export interface NodeSecrets {
  tokenSecret: string;
  dataKey: string;
}

export function nodeSecrets(): NodeSecrets {
  return { tokenSecret: randomBytes(32).toString("hex"), dataKey: randomBytes(32).toString("base64") };
}

/** The command that runs `corpadmin serve` in this pass. */
export function serveCommand(): string[] {
  if (TARGET === "binary") {
    if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`bun run build\` first`);
    return [BINARY, "serve"];
  }
  return [process.execPath, join(ROOT, "src/main.ts"), "serve"];
}

/** When the process started (clock ticks since boot): with the PID it names one process. */
function startTime(pid: number): string | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return null;
  }
}

const live = new Set<{ proc: ReturnType<typeof Bun.spawn> }>();
let root: string | null = null;
/** One directory per test process for every node's data and log, and one watchdog over it. */
function nodesRoot(): string {
  if (root) return root;
  const dir = mkdtempSync(join(tmpdir(), "corpadmin-nodes-"));
  root = dir;
  process.on("exit", () => {
    for (const n of live) n.proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  // A test process killed outright runs no exit hook: this waits for it to go, then kills each
  // node of the pids file that still has the start time recorded there, and removes the directory.
  // In a session of its own and deaf to SIGTERM/SIGHUP/SIGINT (a runner's timeout signals the group).
  Bun.spawn(
    [
      "setsid",
      "sh",
      "-c",
      `trap '' HUP INT TERM
      while kill -0 "$1" 2>/dev/null; do sleep 1; done
      [ -f "$2/pids" ] && while read -r pid start; do
        [ "$(sed 's/.*) //' /proc/$pid/stat 2>/dev/null | cut -d' ' -f20)" = "$start" ] && kill -KILL "$pid"
      done < "$2/pids"
      rm -rf "$2"`,
      "watchdog",
      String(process.pid),
      dir,
    ],
    { stdin: "ignore", stdout: "ignore", stderr: "ignore" },
  ).unref();
  return dir;
}

/**
 * Starts one node and waits (bounded) until GET /api/health answers 200 with `engine`. `env` is
 * laid over the defaults (loopback port, data dir, log level info, secrets, the database URL).
 */
export async function startAppNode(
  name: string,
  /** `wrap`: a command the serve command is run under (`[...wrap, ...serveCommand()]`), e.g. a sandbox. */
  o: { databaseUrl: string; secrets: NodeSecrets; env?: Record<string, string>; timeoutMs?: number; wrap?: string[] },
): Promise<AppNode> {
  const dir = join(nodesRoot(), name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, "data.key"), o.secrets.dataKey + "\n", { mode: 0o600 });
  const logFile = join(dir, "serve.log");
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    CORPADMIN_HOST: "127.0.0.1",
    CORPADMIN_PORT: String(port),
    CORPADMIN_DATA_DIR: dir,
    CORPADMIN_DATABASE_URL: o.databaseUrl,
    CORPADMIN_TOKEN_SECRET: o.secrets.tokenSecret,
    CORPADMIN_LOG_LEVEL: "info",
    ...o.env,
  };
  const fd = openSync(logFile, "a");
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn([...(o.wrap ?? []), ...serveCommand()], { cwd: dir, env, stdin: "ignore", stdout: fd, stderr: fd });
  } finally {
    closeSync(fd);
  }
  const entry = { proc };
  live.add(entry);
  appendFileSync(join(nodesRoot(), "pids"), `${proc.pid} ${startTime(proc.pid)}\n`);
  const logTail = (lines = 30) => {
    try {
      return readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
    } catch {
      return "(no log)";
    }
  };
  const RANK = { debug: 0, info: 1, warn: 2, error: 3 } as Record<string, number>;
  const logEntries = (level: "info" | "warn" | "error" = "info") => {
    let text = "";
    try {
      text = readFileSync(logFile, "utf8");
    } catch {
      return [];
    }
    const out: Record<string, unknown>[] = [];
    for (const line of text.split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if ((RANK[String(entry.level)] ?? 0) >= RANK[level]) out.push(entry);
      } catch {
        // a line cut by the kill
      }
    }
    return out;
  };
  const gone = async (ms: number) => Promise.race([proc.exited.then(() => true), Bun.sleep(ms).then(() => false)]);

  const deadline = performance.now() + (o.timeoutMs ?? 60_000);
  for (;;) {
    const health = await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(2_000) }).then(
      async (r) => (r.ok ? ((await r.json()) as { engine: string }) : null),
      () => null,
    );
    if (health) break;
    if (proc.exitCode !== null || proc.signalCode !== null || performance.now() > deadline) {
      proc.kill("SIGKILL");
      live.delete(entry);
      const why = proc.exitCode !== null ? `exited (${proc.exitCode})` : `no 200 on GET /api/health within ${(o.timeoutMs ?? 60_000) / 1000} s`;
      throw new Error(`app node ${name} (${serveCommand().join(" ")}): ${why}\n--- its log ---\n${logTail()}`);
    }
    await Bun.sleep(100);
  }

  let alive = true;
  return {
    name,
    base,
    pid: proc.pid,
    dir,
    logFile,
    get alive() {
      return alive;
    },
    get died() {
      if (!alive || (proc.exitCode === null && proc.signalCode === null)) return null;
      return proc.signalCode !== null ? `killed by ${proc.signalCode}` : `exited with code ${proc.exitCode}`;
    },
    logTail,
    logEntries,
    async kill() {
      alive = false;
      proc.kill("SIGKILL");
      if (!(await gone(10_000))) throw new Error(`app node ${name} (pid ${proc.pid}) still runs 10 s after SIGKILL`);
      live.delete(entry);
    },
    async stop() {
      if (!alive) return;
      alive = false;
      proc.kill("SIGTERM");
      if (!(await gone(10_000))) {
        proc.kill("SIGKILL");
        await proc.exited;
      }
      live.delete(entry);
    },
  };
}

/** Little-endian hex port of /proc/net/tcp's "0100007F:1F90". */
const portOf = (addr: string) => parseInt(addr.slice(addr.indexOf(":") + 1), 16);

/**
 * Which of `pids` holds the client end of a loopback TCP connection from `clientPort` to
 * `serverPort` (a receiver's `server.requestIP(req).port` and its own port), found through
 * /proc/net/tcp{,6} (the socket's inode) and /proc/<pid>/fd; null when none does (or the
 * connection is already gone). Call it while the request is being handled.
 */
export function connectionOwner(clientPort: number, serverPort: number, pids: readonly number[]): number | null {
  let inode: string | null = null;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && portOf(f[1]) === clientPort && portOf(f[2]) === serverPort) {
        inode = f[9];
        break;
      }
    }
    if (inode) break;
  }
  if (!inode || inode === "0") return null;
  const target = `socket:[${inode}]`;
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === target) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return null;
}
