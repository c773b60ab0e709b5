// The console's typing guard (issue 32): no `any` in console/src; the generated client is exempt.
// Rows of run-time paths are `Record<string, unknown>`, read through asText/asNumber/asImage.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const SRC = join(import.meta.dir, "../../../console/src");

/** The code without comments and string literals (where "any" is a word, not a type). */
function codeOnly(text: string): string {
  return text.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`/g, (m) => m.replace(/[^\n]/g, " "));
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.tsx?$/.test(e.name) && e.name !== "api.gen.ts" ? [path] : [];
  });
}

function anyLines(): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const path of sources(SRC)) {
    const text = readFileSync(path, "utf8");
    const lines = text.split("\n");
    codeOnly(text)
      .split("\n")
      .forEach((code, i) => {
        if (/(?<![\w$.])any(?![\w$])/.test(code)) (found[relative(SRC, path)] ??= []).push(lines[i].trim());
      });
  }
  return found;
}

test("console/src has no `any` (the generated client aside)", () => {
  expect(anyLines()).toEqual({});
});

test("the scan finds an `any` type and ignores the word in comments and strings", () => {
  const code = codeOnly(`const a: any = 1; // any\nconst s = "any";\nconst t = 'step: any';\nlet x = f<any>();`);
  expect(code.split("\n").map((l) => /(?<![\w$.])any(?![\w$])/.test(l))).toEqual([true, false, false, true]);
});
