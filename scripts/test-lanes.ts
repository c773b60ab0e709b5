// `bun run test`'s suites in three lanes at once: the source pass (without the browser files), the
// build + browser journeys + binary pass, and the PostgreSQL pass. One after another they took
// 30 minutes on CI's two cores while using a third of them (most of a test waits on fsync, a
// child process or a timer); side by side the run takes the longest lane. Each lane's lines are
// printed as they come, prefixed with its name, and every failing test is listed again at the end.
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const files = [...new Bun.Glob("test/**/*.test.ts").scanSync(root)].sort();
/** Chromium-driven files: the longest of the source pass, given their own lane. */
const browser = files.filter((f) => f.startsWith("test/modules/console/") || f === "test/modules/system/docs-page.test.ts");
const source = files.filter((f) => !browser.includes(f));
const paths = (list: string[]) => list.map((f) => `./${f}`);

interface Lane {
  name: string;
  steps: string[][];
}
const lanes: Lane[] = [
  { name: "source", steps: [["bun", "test", "--timeout", "60000", ...paths(source)]] },
  {
    name: "binary",
    steps: [
      ["bun", "run", "build"],
      ["bun", "test", "--timeout", "60000", ...paths(browser)],
      ["bun", "scripts/test-binary.ts"],
    ],
  },
  { name: "pg", steps: [["bun", "scripts/test-pg.ts"]] },
];

async function pipe(stream: ReadableStream<Uint8Array>, prefix: string, keep: string[]) {
  let rest = "";
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
    rest = lines.pop()!;
    for (const line of lines) {
      process.stdout.write(`${prefix} ${line}\n`);
      if (/^\(fail\)|^ *\d+ (pass|fail)$|^Ran \d+ tests|^error:/.test(line)) keep.push(line);
    }
  }
  if (rest) process.stdout.write(`${prefix} ${rest}\n`);
}

async function runLane(lane: Lane): Promise<{ lane: string; ok: boolean; seconds: number; summary: string[] }> {
  const started = performance.now();
  const summary: string[] = [];
  for (const step of lane.steps) {
    const proc = Bun.spawn(step, { cwd: root, stdout: "pipe", stderr: "pipe", env: process.env });
    const prefix = `[${lane.name}]`;
    await Promise.all([pipe(proc.stdout, prefix, summary), pipe(proc.stderr, prefix, summary)]);
    const code = await proc.exited;
    if (code !== 0) {
      summary.push(`step failed (exit ${code}): ${step.slice(0, 3).join(" ")}`);
      return { lane: lane.name, ok: false, seconds: (performance.now() - started) / 1000, summary };
    }
  }
  return { lane: lane.name, ok: true, seconds: (performance.now() - started) / 1000, summary };
}

const results = await Promise.all(lanes.map(runLane));
console.log("\n==== test lanes ====");
for (const r of results) {
  console.log(`${r.ok ? "ok  " : "FAIL"} ${r.lane} (${r.seconds.toFixed(0)} s)`);
  for (const line of r.summary) console.log(`     ${line}`);
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
