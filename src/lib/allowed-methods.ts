// Which methods a path has, from the app's registered routes: a request no route matched gets 405
// with `Allow` when its path exists under other methods (issue 29), 404 when it exists under none.
// Built once, on the first unmatched request (the routes are fixed by then); never on a matched one.

interface RouteLike {
  method: string;
  path: string;
}

/** A route path (`/api/city/:id`, `/console/*`) as a pattern over request paths. */
function patternOf(path: string): RegExp {
  const body = path
    .split("/")
    .map((seg) => (seg === "*" ? ".*" : seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${body}/?$`);
}

export type AllowedMethods = (path: string) => string[];

export function allowedMethods(routes: () => RouteLike[]): AllowedMethods {
  let table: { pattern: RegExp; methods: Set<string> }[] | null = null;
  const build = () => {
    const byPath = new Map<string, Set<string>>();
    for (const r of routes()) {
      if (!/^[A-Z]+$/.test(r.method) || r.method === "ALL") continue;
      const set = byPath.get(r.path) ?? new Set<string>();
      set.add(r.method);
      // Bun answers HEAD for every GET route.
      if (r.method === "GET") set.add("HEAD");
      byPath.set(r.path, set);
    }
    return [...byPath].map(([path, methods]) => ({ pattern: patternOf(path), methods }));
  };
  return (path) => {
    table ??= build();
    const out = new Set<string>();
    for (const { pattern, methods } of table) if (pattern.test(path)) for (const m of methods) out.add(m);
    return [...out].sort();
  };
}
