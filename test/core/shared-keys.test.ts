// Cluster mode (issue 19): app nodes over one PostgreSQL database must hold the same token and data
// keys; the first node records their fingerprints and a node whose key differs refuses to start.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { makeApp, startAndLogin, tempDir, type TestApp } from "../support/helpers";
import { oneDatabase, type OneDatabase } from "../support/one-database";

let db: OneDatabase;
let a: TestApp;
const apps: TestApp[] = [];

beforeAll(async () => {
  db = await oneDatabase();
  a = await makeApp({ env: db.env });
  apps.push(a);
});
afterAll(async () => {
  for (const app of apps.reverse()) await app.close();
  await db.close();
});

async function refusal(env: Record<string, string>): Promise<string> {
  try {
    apps.push(await makeApp({ env: { ...db.env, ...env } }));
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("the node started");
}

describe("GET /api/user/{id}: app nodes over one database share their keys", () => {
  test("same keys: a token node A issued works on node B", async () => {
    const admin = await startAndLogin(a);
    const b = await makeApp({ env: db.env });
    apps.push(b);
    const res = await b.req("GET", `/api/user/${admin.userId}`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(admin.userId);
    const rows = await db.sql`SELECT key, value FROM settings WHERE key LIKE 'keys:fingerprint:%' ORDER BY key`;
    expect(rows.map((r: { key: string }) => r.key)).toEqual(["keys:fingerprint:data", "keys:fingerprint:token"]);
    for (const r of rows as { value: string }[]) expect(r.value).toMatch(/^[0-9a-f]{64}$/);
  });

  test("another token key: the node refuses to start, naming the setting and never the key", async () => {
    const secret = "another-token-key-" + randomBytes(8).toString("hex");
    const message = await refusal({ CORPADMIN_TOKEN_SECRET: secret });
    expect(message).toContain("token signing key");
    expect(message).toContain("CORPADMIN_TOKEN_SECRET");
    expect(message).not.toContain(secret);
    expect(message).not.toContain("data key");
  });

  test("another data key: the node refuses to start, naming the file", async () => {
    const key = randomBytes(32).toString("base64");
    const file = join(tempDir(), "other-data.key");
    writeFileSync(file, key + "\n", { mode: 0o600 });
    const message = await refusal({ CORPADMIN_DATA_KEY_FILE: file });
    expect(message).toContain("data key");
    expect(message).toContain(file);
    expect(message).not.toContain(key);
    // A node left to generate its own DATA_DIR/data.key is refused the same way.
    const generated = await refusal({ CORPADMIN_DATA_KEY_FILE: "" });
    expect(generated).toContain("data.key");
  });

  test("a missing --data-key-file stops the start instead of generating a key", async () => {
    const message = await refusal({ CORPADMIN_DATA_KEY_FILE: "/nonexistent/data.key" });
    expect(message).toContain("--data-key-file /nonexistent/data.key does not exist");
  });

  test("node A still answers after the refusals", async () => {
    expect((await a.req("GET", "/api/health")).status).toBe(200);
  });
});
