// The brotli and gzip forms of the files the binary serves as they are (the docs page's script and
// the OpenAPI document), compressed once by the build at the highest settings (build.ts replaces
// this module with one of embedded files, as it does src/modules/console/assets.ts). Null when
// running from source: the docs module compresses the script once, at its first request, and the
// document is compressed as any other answer.
export interface Precompressed {
  br: string;
  gzip: string;
}

export const precompressed: { scalar: Precompressed; openapi: Precompressed } | null = null;
