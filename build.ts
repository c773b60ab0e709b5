// `bun run build`: one executable, dist/corpadmin, with the migrations and the docs page inside.
import { renderMigrationsModule } from "./scripts/embed-migrations";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BunPlugin } from "bun";
import { openapiDocument } from "./scripts/openapi-document";
import { buildConsole, consoleAssetsPlugin } from "./scripts/build-console";
import { compress } from "./scripts/precompress";

const generated = readFileSync("src/db/migrations.generated.ts", "utf8");
if (generated !== renderMigrationsModule()) {
  console.error("src/db/migrations.generated.ts is stale: run `bun run db:generate`");
  process.exit(1);
}
const document = await openapiDocument();
// The operator console, bundled from its own sources and embedded below (scripts/build-console.ts).
const consoleFiles = await buildConsole(document);
// The brotli and gzip forms of the docs page's script and of the document, embedded below
// (src/modules/system/precompressed.ts is replaced by a module naming them).
const PRECOMPRESSED = join(import.meta.dir, "dist/precompressed");
mkdirSync(PRECOMPRESSED, { recursive: true });
const embeddedForms: Record<string, { br: string; gzip: string }> = {};
for (const [name, bytes] of [
  ["scalar", new Uint8Array(readFileSync("node_modules/@scalar/api-reference/dist/browser/standalone.js"))],
  ["openapi", new TextEncoder().encode(document)],
] as const) {
  const forms = compress(bytes);
  embeddedForms[name] = { br: join(PRECOMPRESSED, `${name}.br`), gzip: join(PRECOMPRESSED, `${name}.gz`) };
  writeFileSync(embeddedForms[name].br, forms.br);
  writeFileSync(embeddedForms[name].gzip, forms.gzip);
}
const precompressedPlugin: BunPlugin = {
  name: "precompressed",
  setup(build) {
    build.onLoad({ filter: /src[\\/]modules[\\/]system[\\/]precompressed\.ts$/ }, () => {
      const lines: string[] = [];
      const entries: string[] = [];
      for (const [name, forms] of Object.entries(embeddedForms)) {
        lines.push(`import ${name}Br from ${JSON.stringify(forms.br)} with { type: "file" };`, `import ${name}Gzip from ${JSON.stringify(forms.gzip)} with { type: "file" };`);
        entries.push(`  ${name}: { br: ${name}Br, gzip: ${name}Gzip },`);
      }
      return { loader: "ts", contents: `${lines.join("\n")}\nexport const precompressed = {\n${entries.join("\n")}\n};\n` };
    });
  },
};
const result = await Bun.build({
  entrypoints: ["./src/main.ts", "./src/modules/qrcode/access-writer.worker.ts", "./src/db/checkpoint.worker.ts"],
  compile: { outfile: "./dist/corpadmin" },
  // Split chunks: the PostgreSQL code that embedded mode never imports (core/context.ts
  // prepareStorage and the other `import()`s of src/core/pg and src/db/pg) stays in its own chunks. Without
  // splitting, a dynamic import turns it and everything it reaches (≈ 440 modules) into lazy
  // wrappers: ≈ 3 MB more idle RSS than this (75 vs 78 MB, empty data directory).
  splitting: true,
  format: "esm",
  // No identifier minification: Elysia's compiled validators break under it (elysiajs/elysia#724,
  // #1711) — range checks on query numbers were skipped. The test suites run against this build.
  minify: { whitespace: true, syntax: true, identifiers: false },
  // Bytecode compiled at build time: start-up skips parsing the bundle (≈ 175 → 100 ms to the
  // first answer) and the process holds less memory than with the parsed source.
  bytecode: true,
  sourcemap: "linked",
  target: "bun",
  // The published OpenAPI document, served as it is by the binary (src/modules/system/embedded-openapi.ts).
  define: { CORPADMIN_OPENAPI_DOCUMENT: JSON.stringify(document) },
  plugins: [consoleAssetsPlugin(consoleFiles), precompressedPlugin],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log("built dist/corpadmin");
