// source-only: reads the source tree, not the running service.
// The import graph of src/ (issue 30): modules should form a one-way graph. Units are each folder
// under src/modules, the kernel's folders (src/core, src/db, src/lib) and the files directly in
// src/. Every import counts — static, dynamic `import()`, re-exports and type-only imports (a type
// import still ties two modules' changes together).
//
// Today's circles are listed in KNOWN_CIRCLES as debt: the test fails on any other circle, on a
// unit joining a listed one, and on a listed circle that shrank or is gone (update the list, so it
// only ever shrinks). The kernel never imports a module, circle or not.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = join(import.meta.dir, "../..");

/** The circles of today, each sorted; to be broken (issue 30), never grown. */
const KNOWN_CIRCLES: string[][] = [];

const KERNEL = new Set(["core", "db", "lib", "config.ts"]);

const files = [...new Bun.Glob("src/**/*.{ts,tsx}").scanSync(root)].sort();
const known = new Set(files);

function resolveImport(from: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  const base = relative(root, resolve(root, dirname(from), spec));
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`]) if (known.has(candidate)) return candidate;
  return null;
}

/** modules/<name> for a module's files, the folder for the kernel's, the file for src/*.ts. */
function unitOf(file: string): string {
  const parts = file.split("/");
  if (parts[1] === "modules") return `modules/${parts[2]}`;
  return parts[1];
}

/** unit → the units it imports, with one file → file example per pair (for the messages). */
function unitGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  // `from "x"` (imports and re-exports), `import("x")`, and side-effect `import "x"`.
  const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;
  for (const file of files) {
    const text = readFileSync(join(root, file), "utf8");
    for (const m of text.matchAll(IMPORT)) {
      const target = resolveImport(file, m[1]);
      if (!target) continue;
      const [a, b] = [unitOf(file), unitOf(target)];
      if (a === b) continue;
      if (!graph.has(a)) graph.set(a, new Map());
      if (!graph.get(a)!.has(b)) graph.get(a)!.set(b, `${file} → ${target}`);
    }
  }
  return graph;
}

/** Strongly connected components of more than one unit (Tarjan), each sorted. */
function circles(graph: Map<string, Map<string, string>>): string[][] {
  const nodes = new Set<string>([...graph.keys(), ...[...graph.values()].flatMap((m) => [...m.keys()])]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of [...nodes].sort()) if (!index.has(v)) visit(v);
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}

test("no import circle between modules beyond the known ones, and none of those grew", () => {
  const graph = unitGraph();
  const found = circles(graph);
  const key = (c: string[]) => c.join(" ↔ ");
  const knownKeys = new Set(KNOWN_CIRCLES.map(key));
  const foundKeys = new Set(found.map(key));
  const describe = (c: string[]) =>
    `${key(c)}\n${c
      .flatMap((a) => c.filter((b) => graph.get(a)?.has(b)).map((b) => `    ${graph.get(a)!.get(b)}`))
      .join("\n")}`;
  const unexpected = found.filter((c) => !knownKeys.has(key(c))).map(describe);
  const gone = KNOWN_CIRCLES.filter((c) => !foundKeys.has(key(c))).map(key);
  expect(unexpected, "a new or grown import circle: break it (a hook its user registers, a type moved to its owner)").toEqual([]);
  expect(gone, "a known circle shrank or is gone: update KNOWN_CIRCLES to what remains").toEqual([]);
});

test("the kernel (src/core, src/db, src/lib, src/config.ts) imports no module", () => {
  const graph = unitGraph();
  const upward = [...graph]
    .filter(([unit]) => KERNEL.has(unit))
    .flatMap(([, targets]) => [...targets].filter(([to]) => to.startsWith("modules/")).map(([, example]) => example));
  expect(upward).toEqual([]);
});

test("the graph reader sees the imports (a module that imports the kernel is an edge)", () => {
  const graph = unitGraph();
  expect(graph.get("modules/city")?.has("db")).toBe(true);
  expect(graph.size).toBeGreaterThan(20);
});
