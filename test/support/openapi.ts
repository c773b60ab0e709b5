// Reads the operations of a running app's OpenAPI document, with how each one is guarded.
import type { TestApp } from "./helpers";

export interface Guard {
  guard: string;
  self: string | null;
  key: boolean;
  tenant: boolean;
}

export interface Operation {
  method: string;
  path: string;
  guard: Guard | null;
  params: { name: string; uuid: boolean }[];
  hasBody: boolean;
  /** Required query parameters (without them the request is 400 before any lookup). */
  requiredQuery: string[];
  /** Every declared query parameter. */
  query: string[];
}

export async function operationsOf(t: TestApp): Promise<Operation[]> {
  const doc = (await t.req("GET", "/api/openapi.json")).body;
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      const params = ((op.parameters ?? []) as any[])
        .filter((p) => p.in === "path")
        .map((p) => ({ name: p.name as string, uuid: p.schema?.format === "uuid" }));
      // Path parameters without a declared schema still appear in the path template.
      for (const m of path.matchAll(/\{([^}]+)\}/g)) if (!params.some((p) => p.name === m[1])) params.push({ name: m[1], uuid: false });
      const requiredQuery = ((op.parameters ?? []) as any[]).filter((p) => p.in === "query" && p.required).map((p) => p.name as string);
      const query = ((op.parameters ?? []) as any[]).filter((p) => p.in === "query").map((p) => p.name as string);
      ops.push({ method: method.toUpperCase(), path, guard: op["x-corpadmin-guard"] ?? null, params, hasBody: !!op.requestBody, requiredQuery, query });
    }
  }
  return ops;
}

export function fill(path: string, values: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_, name) => encodeURIComponent(values[name] ?? "x"));
}
