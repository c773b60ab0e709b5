// source-only: reads the source tree, not the running service.
// Embedded mode evaluates no PostgreSQL code (docs/architecture.md, "The app on PostgreSQL"):
// cluster-only files are reached from the rest of src/ through `import()` where the engine is
// chosen, or `import type`, never a static value import — one would put their drizzle pg-core
// tables and copy/backup code back into every embedded process (6–8 MB of idle RSS).
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const SRC = join(ROOT, "src");

/** Cluster-only code, relative to src/: free to import each other statically. */
const isClusterOnly = (rel: string) =>
  (rel.startsWith("db/pg/") && rel !== "db/pg/url.ts") || rel.startsWith("core/pg/") || rel === "modules/ops/pg-backup.ts" || rel === "cli/copy-to-postgres.ts";

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** The src/-relative files a file imports or re-exports for their values (not `import type`). */
function valueImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/^(import|export)\s+(type\s+)?([^;]*?)\s*from\s+"(\.[^"]+)"/gm)) {
    if (m[2]) continue;
    const target = resolve(dirname(file), m[4]);
    const path = [target, `${target}.ts`, join(target, "index.ts")].find((p) => existsSync(p) && statSync(p).isFile());
    if (path) out.push(relative(SRC, path));
  }
  return out;
}

describe("architecture: PostgreSQL code is loaded only in cluster mode", () => {
  const files = walk(SRC);

  test("the rule sees the cluster-only files", () => {
    expect(files.map((f) => relative(SRC, f)).filter(isClusterOnly)).toContain("core/pg/store.ts");
    expect(valueImports(join(SRC, "core/pg/store.ts"))).toContain("core/pg/door.ts");
  });

  test("no file outside the cluster-only code imports it for its values", () => {
    const offenders: string[] = [];
    for (const file of files) {
      const rel = relative(SRC, file);
      if (isClusterOnly(rel)) continue;
      for (const target of valueImports(file)) if (isClusterOnly(target)) offenders.push(`${rel} imports ${target}`);
    }
    expect(offenders).toEqual([]);
  });
});
