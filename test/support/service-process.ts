// A service process of a suite's own, over its own data folder, on a free port: started, killed
// (kill -9) and started again by the crash suites (reliability/crash-under-load, scan-loss).
import { freePort } from "./ports";
import { STARTUP_MS, waitFor } from "./wait";

/**
 * `command` is what runs the service (the binary, or `bun src/main.ts`), given `serve`; `start()`
 * spawns it and resolves once /api/health answers; `call` is one request with the JSON body it answers.
 */
export function serviceProcess(command: string[], dataDir: string, what: string) {
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    CORPADMIN_DATA_DIR: dataDir,
    CORPADMIN_PORT: String(port),
    CORPADMIN_HOST: "127.0.0.1",
    CORPADMIN_LOG_LEVEL: "error",
    CORPADMIN_EGRESS_ALLOW: "127.0.0.0/8",
    CORPADMIN_AUTH_RATE_LIMIT: "100000",
  };
  const start = async () => {
    const proc = Bun.spawn([...command, "serve"], { env, stdout: "ignore", stderr: "ignore" });
    await waitFor(`${what} up`, () => fetch(`${base}/api/health`).then((r) => r.ok, () => false), STARTUP_MS);
    return proc;
  };
  const call = async (method: string, path: string, token: string | null, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(base + path, {
      method,
      headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: "manual",
    });
    return { status: res.status, body: res.headers.get("content-type")?.includes("json") ? ((await res.json()) as any) : null };
  };
  return { start, call };
}
