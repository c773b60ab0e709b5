// The OpenAPI document exactly as the service publishes it, produced at build time: build.ts
// embeds it in the binary, which then serves it as it is instead of generating it on the first
// request (the generator's work leaves ≈ 9 MB of memory behind in the serving process).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/lib/log";

/**
 * Generated in a process that has served nothing else: Elysia completes route schemas in place
 * when it first validates a request (e.g. `additionalProperties`), so a document generated after
 * requests can differ in such details.
 */
export async function openapiDocument(env: Record<string, string> = {}): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "corpadmin-openapi-"));
  const { app, ctx } = createApp(loadConfig(new Map(), { ...env, CORPADMIN_DATA_DIR: dir }), { logger: silentLogger });
  try {
    const res = await app.handle(new Request("http://localhost/api/openapi.json"));
    if (res.status !== 200) throw new Error(`GET /api/openapi.json answered ${res.status}`);
    return await res.text();
  } finally {
    await ctx.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) process.stdout.write(await openapiDocument(process.env as Record<string, string>));
