// TypeScript types for the published OpenAPI document, as an integrator generates them with
// openapi-typescript: `bun scripts/openapi-types.ts <document file or URL> > api.d.ts`.
// openapi-typescript builds its output with TypeScript 5's compiler API, which TypeScript 7 (the
// project's tsc) no longer has: the `typescript` it imports is served from the typescript5 alias.
import { plugin } from "bun";

const typescript5 = require.resolve("typescript5");
plugin({
  name: "typescript5-for-openapi-typescript",
  setup(build) {
    build.onLoad({ filter: /node_modules\/typescript\/lib\/version\.cjs$/ }, () => ({
      contents: `import ts from ${JSON.stringify(typescript5)}; export default ts;`,
      loader: "js",
    }));
  },
});

/** The generated `paths`/`components` types for a document (parsed JSON or its text). */
export async function openapiTypes(document: object | string): Promise<string> {
  const { default: openapiTS, astToString } = await import("openapi-typescript");
  const doc = typeof document === "string" ? JSON.parse(document) : document;
  return astToString(await openapiTS(doc));
}

if (import.meta.main) {
  const source = process.argv[2];
  if (!source) throw new Error("usage: bun scripts/openapi-types.ts <openapi.json file or URL>");
  const text = /^https?:/.test(source) ? await (await fetch(source)).text() : await Bun.file(source).text();
  process.stdout.write(await openapiTypes(text));
}
