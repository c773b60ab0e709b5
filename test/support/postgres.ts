// A throwaway PostgreSQL server for tests (issue 19, cluster mode): initdb in a temp dir, a free
// loopback port, fsync off, its unix socket in the temp dir; stopped by its PID by `stop()`, when
// the test process exits without calling it, and by a watchdog when that process is killed. A missing PostgreSQL is
// an error that says how to install it, never a skip (`bun run test` installs postgresql-15 first: scripts/ensure-postgres.ts).
import { afterAll } from "bun:test";
import { SQL } from "bun";
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports";

export const PG_BIN = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";

/** The role tests connect as when they must be held to row-level security (not superuser, no BYPASSRLS). */
export const APP_ROLE = "corpadmin";

export interface TestPostgres {
  /** The superuser's URL (postgres) of the server's `corpadmin` database. */
  readonly url: string;
  /** The URL of the same database as APP_ROLE, which owns nothing special and bypasses nothing. */
  readonly appUrl: string;
  readonly port: number;
  /** The server's PID (a new one after restart()). */
  readonly pid: number;
  /** A URL of a new, empty database owned by APP_ROLE (a test that wants its own tables). */
  createDatabase(name: string): Promise<{ url: string; appUrl: string }>;
  /**
   * Stops the server (fast shutdown: every session ends) and starts it again on the same port and
   * data, `downMs` after it stopped (a database outage: connections are refused meanwhile).
   */
  restart(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const asRoot = userInfo().uid === 0;
/** initdb and postgres refuse to run as root: as root, they run as the `postgres` OS user. */
const cmd = (argv: string[]): string[] => (asRoot ? ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", ...argv] : argv);

const running = new Set<{ pid: number; dir: string }>();
let exitHook = false;
function stopAllOnExit(): void {
  if (exitHook) return;
  exitHook = true;
  // Synchronous: SIGQUIT is PostgreSQL's immediate shutdown (the data is thrown away anyway).
  process.on("exit", () => {
    for (const s of running) {
      try {
        process.kill(s.pid, "SIGQUIT");
      } catch {
        // already gone
      }
      rmSync(s.dir, { recursive: true, force: true });
    }
  });
}

/**
 * `durable`: fsync, synchronous_commit and full-page writes on, as production runs it (the bench's
 * cluster mode measures durable commits); tests leave them off. `settings`: more server settings
 * (bench/upsert-profile.ts loads pg_stat_statements with them).
 */
export async function startPostgres({ durable = false, settings: more = {} }: { durable?: boolean; settings?: Record<string, string> } = {}): Promise<TestPostgres> {
  if (!existsSync(join(PG_BIN, "initdb")) || !existsSync(join(PG_BIN, "postgres"))) {
    throw new Error(
      `PostgreSQL 15 is not installed (no ${PG_BIN}/initdb): the cluster-mode tests need it. ` +
        "Install it with `apt-get install postgresql-15` (`bun run test` does), or point PG_BIN at its bin directory.",
    );
  }
  const dir = mkdtempSync(join(tmpdir(), "corpadmin-pg-"));
  const data = join(dir, "data");
  if (asRoot) {
    const id = (flag: string) => Number(Bun.spawnSync(["id", flag, "postgres"]).stdout.toString());
    const uid = id("-u");
    if (!uid) throw new Error("running as root needs the `postgres` OS user (the postgresql-15 package creates it)");
    chownSync(dir, uid, id("-g"));
  }
  const init = Bun.spawnSync(cmd([`${PG_BIN}/initdb`, "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]), {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (init.exitCode !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr.toString()}`);
  }
  const port = freePort();
  const settings: Record<string, string> = {
    listen_addresses: "127.0.0.1",
    port: String(port),
    unix_socket_directories: dir,
    fsync: durable ? "on" : "off",
    synchronous_commit: durable ? "on" : "off",
    full_page_writes: durable ? "on" : "off",
    max_connections: "200",
    shared_buffers: durable ? "128MB" : "32MB",
    log_min_messages: "warning",
    ...more,
  };
  const spawn = () =>
    Bun.spawn(cmd([`${PG_BIN}/postgres`, "-D", data, ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`])]), {
      stdout: "ignore",
      stderr: "pipe",
    });
  let proc = spawn();
  const entry = { pid: proc.pid, dir };
  running.add(entry);
  stopAllOnExit();
  // A test process killed outright (SIGKILL, a runner's timeout) runs no exit hook: a watchdog
  // process stops this server and removes its directory once the test process is gone (the PID
  // from postmaster.pid: a restarted server has a new one). PIDs wrap within a run (pid_max 32768),
  // so the test process is known by its PID and start time, and the postmaster is signalled only
  // while its command line still names this data directory.
  const watchdog = Bun.spawn(
    [
      "sh",
      "-c",
      `started() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20; }
      me=$(started "$1")
      while [ -n "$me" ] && [ "$(started "$1")" = "$me" ]; do sleep 1; done
      pm=$(head -1 "$2/postmaster.pid" 2>/dev/null)
      [ -n "$pm" ] && tr '\\0' ' ' < "/proc/$pm/cmdline" 2>/dev/null | grep -qF -- "$2" && kill -QUIT "$pm"
      sleep 2; rm -rf "$3"`,
      "watchdog",
      String(process.pid),
      data,
      dir,
    ],
    { stdin: "ignore", stdout: "ignore", stderr: "ignore" },
  );
  watchdog.unref();

  const halt = async () => {
    if (proc.exitCode === null) {
      proc.kill("SIGINT"); // fast shutdown
      const done = await Promise.race([proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
      if (!done) {
        proc.kill("SIGKILL");
        await proc.exited;
      }
    }
  };
  const stop = async () => {
    if (!running.delete(entry)) return;
    watchdog.kill();
    await halt();
    rmSync(dir, { recursive: true, force: true });
  };

  const url = (db: string, user: string) => `postgres://${user}@127.0.0.1:${port}/${db}`;
  const ready = async () => {
    for (let i = 0; i < 300; i++) {
      if (proc.exitCode !== null) throw new Error(`postgres exited: ${await new Response(proc.stderr as ReadableStream).text()}`);
      if (Bun.spawnSync([`${PG_BIN}/pg_isready`, "-q", "-h", "127.0.0.1", "-p", String(port)]).exitCode === 0) return;
      await Bun.sleep(100);
    }
    throw new Error("postgres did not accept connections in 30 s");
  };
  try {
    await ready();
    const admin = new SQL(url("postgres", "postgres"));
    try {
      await admin.unsafe(`CREATE ROLE ${APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS`);
      await admin.unsafe(`CREATE DATABASE corpadmin OWNER ${APP_ROLE}`);
    } finally {
      await admin.close();
    }
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    url: url("corpadmin", "postgres"),
    appUrl: url("corpadmin", APP_ROLE),
    port,
    get pid() {
      return proc.pid;
    },
    async createDatabase(name: string) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      const admin = new SQL(url("postgres", "postgres"));
      try {
        await admin.unsafe(`CREATE DATABASE ${name} OWNER ${APP_ROLE}`);
      } finally {
        await admin.close();
      }
      return { url: url(name, "postgres"), appUrl: url(name, APP_ROLE) };
    },
    async restart(downMs = 0) {
      await halt();
      if (downMs > 0) await Bun.sleep(downMs);
      proc = spawn();
      entry.pid = proc.pid;
      await ready();
    },
    stop,
  };
}

/**
 * The opening of a suite over its own server, at a test file's top: `const pg = await
 * throwawayPostgres();`. Connections made with `pg.connect` are closed after the file's tests,
 * then the server is stopped.
 */
export async function throwawayPostgres(): Promise<TestPostgres & { connect(url: string, max?: number): SQL }> {
  const pg = await startPostgres();
  const clients: SQL[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await pg.stop();
  });
  return Object.assign(pg, {
    connect(url: string, max?: number): SQL {
      const client = max === undefined ? new SQL(url) : new SQL({ url, max });
      clients.push(client);
      return client;
    },
  });
}
