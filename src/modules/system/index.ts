// Health, the OpenAPI document and the interactive docs page. The page's script is served from
// the binary itself: on-premises sites are often offline, and the plugin's default page loads
// Scalar from a CDN.
import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import { ScalarRender } from "@elysiajs/openapi/scalar";
// The package's exports do not expose the standalone bundle; a relative path reaches it, and
// `type: "file"` embeds it in the compiled binary.
import scalarBundle from "../../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "file" };
import type { AppContext } from "../../core/context";
import { registerFormats } from "../../lib/formats";
import { ProblemSchema } from "../../lib/schemas";
import { VERSION } from "../../version";
import { health } from "./service";
import { Health } from "./model";
import { precompressed } from "./precompressed";
import { encodedFileAnswer, type EncodedFile } from "../../lib/compression";
import { brotliCompressSync, constants } from "node:zlib";
import { readFileSync } from "node:fs";

export { operationsRoutes } from "./operations-routes";

const SCALAR_PATH = "/api/docs/scalar.js";

/**
 * The script in its encodings: in the binary, the build's (brotli 11 and gzip 9: 4.35 MB → ≈ 0.94
 * and 1.26 MB); from source, compressed once at the first request, faster and a little larger.
 */
let scalarFile: EncodedFile | null = null;
function scalar(): EncodedFile {
  if (scalarFile) return scalarFile;
  if (precompressed) return (scalarFile = { identity: scalarBundle, ...precompressed.scalar });
  const bytes = new Uint8Array(readFileSync(scalarBundle));
  return (scalarFile = {
    identity: scalarBundle,
    gzip: Bun.gzipSync(bytes, { level: 6 }),
    br: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }),
  });
}

// After the openapi plugin's import has replaced them (see lib/formats.ts).
registerFormats();

const DOCS_INFO = {
  title: "corpadmin",
  version: VERSION,
  description: "Multi-tenant administration and registry service for internet service providers.",
};

// Offline: no fonts from a CDN, none of Scalar's hosted services (its AI agent, MCP generation, the
// developer toolbar's share/deploy, the hosted client), no telemetry; try-it-out requests go
// straight to this service and authenticate with the document's schemes.
const SCALAR_CONFIG = {
  url: "/api/openapi.json",
  version: "latest",
  cdn: SCALAR_PATH,
  withDefaultFonts: false,
  agent: { disabled: true },
  // Its "Open API Client" opens Scalar's hosted client; each operation's "Test Request" stays local.
  hideClientButton: true,
  mcp: { disabled: true },
  showDeveloperTools: "never",
  telemetry: false,
  authentication: { preferredSecurityScheme: "bearer" },
  _integration: "elysiajs",
};

/**
 * The docs page with the console's protections (issue 29): it sends requests with a bearer token,
 * so it must not be framed or sniffed, and runs only its own script: the bundle from this origin
 * and the page's one inline element (its configuration, allowed by its hash). Scalar styles its
 * components inline at run time, hence 'unsafe-inline' for styles only.
 */
function docsPage(): { html: string; headers: Record<string, string> } {
  const html = ScalarRender(DOCS_INFO as never, SCALAR_CONFIG as never);
  const hashes = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
    (m) => `'sha256-${new Bun.CryptoHasher("sha256").update(m[1]).digest("base64")}'`,
  );
  const csp = [
    "default-src 'self'",
    `script-src 'self' ${hashes.join(" ")}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
  return {
    html,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": csp,
      "x-frame-options": "DENY",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "cache-control": "no-store",
    },
  };
}

export function docsModule() {
  const page = docsPage();
  return new Elysia({ name: "docs" })
    .get(SCALAR_PATH, ({ request }) => encodedFileAnswer(request, scalar(), { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400", "x-content-type-options": "nosniff" }), {
      detail: { hide: true },
    })
    .get("/api/docs", () => new Response(page.html, { headers: page.headers }), { detail: { hide: true } })
    .use(
      openapi({
        path: "/api/docs",
        specPath: "/api/openapi.json",
        // The page is served above, with its headers; the plugin publishes the document only.
        provider: null,
        exclude: { paths: [SCALAR_PATH, "/api/docs"] },
        documentation: { info: DOCS_INFO },
      }),
    );
}

export function healthModule(ctx: AppContext) {
  return new Elysia({ name: "health", prefix: "/api", tags: ["System"] }).get(
    "/health",
    () => health(ctx),
    { response: { 200: Health, 503: ProblemSchema }, detail: { summary: "Health check" } },
  );
}
