// source-only: reads the source tree, not the running service.
// One module shape (issue 30, docs/architecture.md "Following a route"): a module folder under
// src/modules has
// - routes: `index.ts` (the module's entry, mounted by src/app.ts) and, in a large area, one file
//   per record named `<record>-routes.ts`. A route file is known by its role (it builds an Elysia
//   instance): HTTP only — schema, guard, one service call, the answer;
// - services: `service.ts` or `<record>-service.ts` (transactions, audit, events, history);
// - schemas: `model.ts` (or `<record>-model.ts`).
// The test checks the route files' names and that they neither call the audit log nor open the
// store (`tenant.read(...)`, `ctx.store.platform.write(...)`): those are the service's (the
// service records the audit entry, `ctx.audit.failureOf` for an attempt that may fail).
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";

const ROOT = join(import.meta.dir, "../..");

/** Modules without routes: parts other modules embed (the address view, memberships). */
const NO_ROUTES = new Set(["address", "membership"]);

type Habit = "audit" | "store";
const HABITS: [Habit, RegExp][] = [
  ["audit", /\.audit\.record\(/],
  ["store", /\b(?:tenant|door|store\.platform|store\.tenant\([^)]*\))\.(?:read|write|writeGrouped)\(/],
];

const isRouteFile = (text: string) => /\bnew Elysia\b/.test(text);
const files = [...new Bun.Glob("src/modules/**/*.{ts,tsx}").scanSync(ROOT)].sort();
const modules = [...new Set(files.map((f) => f.split("/")[2]))].sort();

describe("architecture: one module shape (issue 30)", () => {
  test("every module with routes has index.ts, its entry", () => {
    expect(modules.filter((m) => !NO_ROUTES.has(m) && !existsSync(join(ROOT, "src/modules", m, "index.ts")))).toEqual([]);
  });

  test("route files are index.ts or <record>-routes.ts, and every *-routes.ts builds routes", () => {
    const misnamed: string[] = [];
    for (const file of files) {
      const name = basename(file);
      const routes = isRouteFile(readFileSync(join(ROOT, file), "utf8"));
      const namedAsRoutes = name === "index.ts" || /^[a-z0-9-]+-routes\.ts$/.test(name);
      if (routes !== namedAsRoutes && !(name === "index.ts" && !routes)) misnamed.push(file);
    }
    expect(misnamed).toEqual([]);
  });

  test("route files neither call the audit log nor open the store", () => {
    const found: Record<string, Habit[]> = {};
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), "utf8");
      if (!isRouteFile(text)) continue;
      const habits = HABITS.filter(([, re]) => re.test(text)).map(([h]) => h);
      if (habits.length) found[file] = habits;
    }
    expect(found).toEqual({});
  });

  test("the detectors see a planted case", () => {
    const habits = (text: string) => HABITS.filter(([, re]) => re.test(text)).map(([h]) => h);
    expect(habits("await ctx.audit.record({ action })")).toEqual(["audit"]);
    expect(habits("tenant.write((tx, w) => x(tx, w))")).toEqual(["store"]);
    expect(habits("ctx.store.platform.read((db) => y(db))")).toEqual(["store"]);
    expect(habits("listCities(tenant, query)")).toEqual([]);
    expect(isRouteFile('new Elysia({ name: "x" })')).toBe(true);
  });
});
