// `bun run test:binary`: the suites against the compiled dist/corpadmin (or CORPADMIN_TEST_BINARY)
// over real HTTP on loopback ports — what operators run is what is tested. A test file marked
// `// source-only: <why>` needs the in-process app and runs in the source pass only.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const binary = process.env.CORPADMIN_TEST_BINARY ?? join(root, "dist/corpadmin");
if (!existsSync(binary)) {
  console.error(`${binary} is missing: run \`bun run build\` first`);
  process.exit(1);
}
const files = [...new Bun.Glob("test/**/*.test.ts").scanSync(root)].sort();
const sourceOnly = files.filter((f) => /^\/\/ source-only: /m.test(readFileSync(join(root, f), "utf8")));
const run = files.filter((f) => !sourceOnly.includes(f));
console.log(`binary pass: ${run.length} test files against ${binary}; ${sourceOnly.length} source-only: ${sourceOnly.join(", ")}`);
const proc = Bun.spawnSync(["bun", "test", "--timeout", "60000", ...run.map((f) => `./${f}`)], {
  cwd: root,
  env: { ...process.env, CORPADMIN_TEST_TARGET: "binary", CORPADMIN_TEST_BINARY: binary },
  stdio: ["inherit", "inherit", "inherit"],
});
process.exit(proc.exitCode ?? 1);
