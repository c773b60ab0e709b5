// source-only: reads the source tree, not the running service.
// The import graph of src/ and of the console (issue 30): modules should form a one-way graph, and
// no two files import each other, directly or round a longer way. Every import counts — static,
// dynamic `import()` (a lazily loaded chunk too), re-exports and type-only imports (a type import
// still ties two files' changes together).
//
// Between modules the units are each folder under src/modules, the kernel's folders (src/core,
// src/db, src/lib) and the files directly in src/. Today's module circles are listed in
// KNOWN_CIRCLES as debt: the test fails on any other circle, on a unit joining a listed one, and on
// a listed circle that shrank or is gone (update the list, so it only ever shrinks). The kernel
// never imports a module, circle or not. Between files (src/ and console/src) there is no debt:
// any circle fails; break it by moving what both files need down to the lower one (a type to the
// model, a shared helper to a small file named for what it holds).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = join(import.meta.dir, "../..");

/** The circles of today, each sorted; to be broken (issue 30), never grown. */
const KNOWN_CIRCLES: string[][] = [];

const KERNEL = new Set(["core", "db", "lib", "config.ts"]);

/** node → the nodes it imports, with one file → file example per pair (for the messages). */
type Graph = Map<string, Map<string, string>>;

const sourceFiles = (pattern: string) => [...new Bun.Glob(pattern).scanSync(root)].sort();
const readSource = (file: string) => readFileSync(join(root, file), "utf8");

// `from "x"` (imports and re-exports, `import type` too), `import("x")`, and side-effect `import "x"`.
const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;

/** Each file → the files of `files` it imports (relative specifiers; packages are not part of the graph). */
function fileGraph(files: string[], read: (file: string) => string): Graph {
  const known = new Set(files);
  const resolveImport = (from: string, spec: string): string | null => {
    if (!spec.startsWith(".")) return null;
    const base = relative(root, resolve(root, dirname(from), spec));
    for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`]) if (known.has(candidate)) return candidate;
    return null;
  };
  const graph: Graph = new Map();
  for (const file of files) {
    for (const m of read(file).matchAll(IMPORT)) {
      const target = resolveImport(file, m[1]);
      if (!target || target === file) continue;
      if (!graph.has(file)) graph.set(file, new Map());
      graph.get(file)!.set(target, `${file} → ${target}`);
    }
  }
  return graph;
}

/** modules/<name> for a module's files, the folder for the kernel's, the file for src/*.ts. */
function unitOf(file: string): string {
  const parts = file.split("/");
  if (parts[1] === "modules") return `modules/${parts[2]}`;
  return parts[1];
}

/** The files' graph folded onto units: unit → the units it imports. */
function unitGraph(): Graph {
  const graph: Graph = new Map();
  for (const [file, targets] of fileGraph(sourceFiles("src/**/*.{ts,tsx}"), readSource)) {
    for (const [target, example] of targets) {
      const [a, b] = [unitOf(file), unitOf(target)];
      if (a === b) continue;
      if (!graph.has(a)) graph.set(a, new Map());
      if (!graph.get(a)!.has(b)) graph.get(a)!.set(b, example);
    }
  }
  return graph;
}
/** Strongly connected components of more than one unit (Tarjan), each sorted. */
function circles(graph: Graph): string[][] {
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

const key = (c: string[]) => c.join(" ↔ ");

/** A circle with the imports that close it, one per line. */
function describeCircle(graph: Graph, c: string[]): string {
  const edges = c.flatMap((a) => c.filter((b) => graph.get(a)?.has(b)).map((b) => `    ${graph.get(a)!.get(b)}`));
  return `${key(c)}\n${edges.join("\n")}`;
}

test("no import circle between modules beyond the known ones, and none of those grew", () => {
  const graph = unitGraph();
  const found = circles(graph);
  const knownKeys = new Set(KNOWN_CIRCLES.map(key));
  const foundKeys = new Set(found.map(key));
  const unexpected = found.filter((c) => !knownKeys.has(key(c))).map((c) => describeCircle(graph, c));
  const gone = KNOWN_CIRCLES.filter((c) => !foundKeys.has(key(c))).map(key);
  expect(unexpected, "a new or grown import circle: break it (a hook its user registers, a type moved to its owner)").toEqual([]);
  expect(gone, "a known circle shrank or is gone: update KNOWN_CIRCLES to what remains").toEqual([]);
});

test("no import circle between files inside src/", () => {
  const graph = fileGraph(sourceFiles("src/**/*.{ts,tsx}"), readSource);
  expect(circles(graph).map((c) => describeCircle(graph, c)), "break it: move what both files need down to the lower one").toEqual([]);
});

test("no import circle between files of the console (console/src), lazily loaded chunks included", () => {
  const graph = fileGraph(sourceFiles("console/src/**/*.{ts,tsx}"), readSource);
  expect(circles(graph).map((c) => describeCircle(graph, c)), "break it: move what both files need down to the lower one").toEqual([]);
});

test("the circle finder sees a planted circle through a type import, a re-export and a dynamic import", () => {
  const planted: Record<string, string> = {
    "src/x/a.ts": 'import type { B } from "./b";\nexport const a = 1;',
    "src/x/b.ts": 'export * from "./c";\nexport type B = string;',
    "src/x/c.tsx": 'export const C = () => import("./a").then((m) => m.a);',
    // Imports the circle without being part of it; d ↔ e is a second circle, of two.
    "src/x/d.ts": 'import "./a";\nimport {\n  e,\n} from "./e";',
    "src/x/e/index.ts": 'export { d } from "../d";\nimport { z } from "zod";',
  };
  const graph = fileGraph(Object.keys(planted).sort(), (file) => planted[file]);
  expect(circles(graph)).toEqual([
    ["src/x/a.ts", "src/x/b.ts", "src/x/c.tsx"],
    ["src/x/d.ts", "src/x/e/index.ts"],
  ]);
  expect(describeCircle(graph, ["src/x/d.ts", "src/x/e/index.ts"])).toBe("src/x/d.ts ↔ src/x/e/index.ts\n    src/x/d.ts → src/x/e/index.ts\n    src/x/e/index.ts → src/x/d.ts");
  // Without the dynamic import the first circle is gone.
  planted["src/x/c.tsx"] = "export const C = 1;";
  expect(circles(fileGraph(Object.keys(planted).sort(), (file) => planted[file]))).toEqual([["src/x/d.ts", "src/x/e/index.ts"]]);
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
