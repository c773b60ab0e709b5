// Brotli (quality 11) and gzip (level 9) forms of the files the binary serves as they are
// (src/lib/compression.ts). Brotli 11 is slow (≈ 12 s for the docs page's 4.35 MB script), so
// each result is kept in dist/.compressed under the SHA-256 of its input and reused by later builds.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { brotliCompressSync, constants } from "node:zlib";

const CACHE = join(resolve(import.meta.dir, ".."), "dist/.compressed");

export interface Compressed {
  br: Uint8Array;
  gzip: Uint8Array;
}

function cached(key: string, make: () => Uint8Array): Uint8Array {
  const file = join(CACHE, key);
  if (existsSync(file)) return new Uint8Array(readFileSync(file));
  const out = make();
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(file, out);
  return out;
}

export function compress(bytes: Uint8Array<ArrayBuffer>): Compressed {
  const sha = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
  return {
    br: cached(`${sha}.br11`, () =>
      brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }),
    ),
    gzip: cached(`${sha}.gz9`, () => Bun.gzipSync(bytes, { level: 9 })),
  };
}

/**
 * Writes `path.br` and `path.gz` beside a file; returns the names written (a form no smaller than
 * the file itself is not written: the file is served as it is).
 */
export function writeCompressed(path: string): string[] {
  const bytes = new Uint8Array(readFileSync(path)) as Uint8Array<ArrayBuffer>;
  const { br, gzip } = compress(bytes);
  const written: string[] = [];
  for (const [suffix, data] of [[".br", br], [".gz", gzip]] as const) {
    if (data.length >= bytes.length) continue;
    writeFileSync(path + suffix, data);
    written.push(path + suffix);
  }
  return written;
}
