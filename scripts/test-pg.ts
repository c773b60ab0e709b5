// `bun run test:pg`: the suites that pass on PostgreSQL (cluster mode, issue 19), listed in
// test/pg-backend.txt, run in-process with CORPADMIN_TEST_BACKEND=pg: one throwaway PostgreSQL
// server per test process and a database per app (test/support/backend.ts). A file joins the list
// once it passes there; the list says why the others do not.
import { readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const files = readFileSync(join(root, "test/pg-backend.txt"), "utf8")
  .split("\n")
  .map((l) => l.replace(/#.*/, "").trim())
  .filter(Boolean);
console.log(`PostgreSQL pass: ${files.length} test files (test/pg-backend.txt)`);
const proc = Bun.spawnSync(["bun", "test", "--timeout", "60000", ...files.map((f) => `./${f}`)], {
  cwd: root,
  env: { ...process.env, CORPADMIN_TEST_BACKEND: "pg" },
  stdio: ["inherit", "inherit", "inherit"],
});
process.exit(proc.exitCode ?? 1);
