// Data is never lost: every write acknowledged before a kill -9 is present afterwards.
// source-only: runs its own processes; the same in both passes.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openTenantDb } from "../../src/db/sqlite";
import { tempDir } from "../support/helpers";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("kill -9 mid-write, many times: every acknowledged write survives, integrity ok", async () => {
  const acknowledged: string[] = [];
  const KILLS = 8;
  for (let i = 0; i < KILLS; i++) {
    const child = Bun.spawn(["bun", join(import.meta.dir, "../support/durable-writer.ts"), dir], { stdout: "pipe", stderr: "inherit" });
    const reader = child.stdout.getReader();
    let buffered = "";
    const deadline = Date.now() + 150 + Math.random() * 250;
    // Read acknowledgements until the deadline, then kill without warning.
    let started = false;
    while (Date.now() < deadline || !started) {
      const { value, done } = await Promise.race([reader.read(), Bun.sleep(50).then(() => ({ value: undefined, done: false }))]);
      if (done) break;
      if (value) {
        buffered += new TextDecoder().decode(value);
        started = true;
      }
    }
    child.kill("SIGKILL");
    await child.exited;
    // Whatever the pipe still holds was printed (so committed) before the kill.
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += new TextDecoder().decode(value);
    }
    const lines = buffered.split("\n");
    lines.pop(); // a partial last line was not fully acknowledged
    acknowledged.push(...lines.filter(Boolean));
  }
  const db = openTenantDb(join(dir, "tenant.db"));
  const present = new Set((db.$client.query("SELECT record_id FROM events").all() as { record_id: string }[]).map((r) => r.record_id));
  const lost = acknowledged.filter((id) => !present.has(id));
  console.log(`durability: ${KILLS} kills, ${acknowledged.length} acknowledged writes, ${lost.length} lost`);
  expect(acknowledged.length).toBeGreaterThan(KILLS * 10);
  expect(lost).toEqual([]);
  expect(db.$client.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  db.$client.close();
}, 120_000);
