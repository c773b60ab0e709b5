// The operator console (issue 18; routes.md "Console"): GET /console and /console/{file} serve the
// single-page app and its hashed assets, and GET / redirects there. Pages, not API operations:
// hidden from the OpenAPI document. Every call the app makes is guarded as usual.
import { Elysia } from "elysia";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { embeddedConsole } from "./assets";
import { encodedFileAnswer } from "../../lib/compression";

// The app loads only its own files and talks only to this origin; nothing may frame it.
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
};

/** Where each file is: embedded in the binary, or the source checkout's last console build. */
function locate(name: string): string | null {
  if (embeddedConsole) return embeddedConsole[name] ?? null;
  // From source only (the compiled binary has no source tree): `bun run build` or
  // `bun scripts/build-console.ts` writes dist/console.
  const path = join(process.cwd(), "dist/console", name);
  return /^[A-Za-z0-9._-]+$/.test(name) && existsSync(path) ? path : null;
}

function serve(name: string, request: Request): Response {
  const path = locate(name);
  if (!path) return new Response("Not found", { status: 404, headers: { ...SECURITY_HEADERS, "content-type": "text/plain; charset=utf-8" } });
  const ext = name.slice(name.lastIndexOf(".") + 1);
  // index.html names the current hashed files: never cached; a hashed file never changes.
  const cache = name === "index.html" ? "no-store" : "public, max-age=31536000, immutable";
  // The build wrote each text file's brotli and gzip forms beside it (scripts/build-console.ts).
  const file = { identity: path, br: locate(`${name}.br`), gzip: locate(`${name}.gz`) };
  return encodedFileAnswer(request, file, { ...SECURITY_HEADERS, "content-type": TYPES[ext] ?? "application/octet-stream", "cache-control": cache });
}

/** A hashed asset by name; any other path under /console is a screen of the app. */
function page(file: string, request: Request): Response {
  return /-[a-z0-9]{8}\.(js|css|svg|png)$/.test(file) ? serve(file, request) : serve("index.html", request);
}

export function consoleModule() {
  return new Elysia({ name: "console" })
    .get("/", ({ redirect }) => redirect("/console", 302), { detail: { hide: true } })
    .get("/console", ({ request }) => serve("index.html", request), { detail: { hide: true } })
    .get("/console/*", ({ params, request }) => page(params["*"], request), { detail: { hide: true } });
}
