// Content coding of answers (issue 29 defect 6). Two kinds:
// - Files that never change while the process runs (the console's files, the docs page's script,
//   the binary's OpenAPI document) are compressed once, at build time, and served as they are:
//   `encodedFileAnswer` picks the variant the request accepts.
// - JSON answers (and problem documents, and CSV exports) are compressed as they are sent, when
//   the client asks and the body is at least COMPRESS_MIN_BYTES: `compressAnswer`, called once for
//   every answer of the Elysia app (src/app.ts). Edge routes (RADIUS authorize, /q/{slug}) are
//   not wrapped and never pay for it.
import { Readable } from "node:stream";
import { brotliCompressSync, constants, createBrotliCompress, createGzip, gzipSync } from "node:zlib";

export type Coding = "br" | "gzip";

/**
 * Below this many bytes an answer stays identity. Measured (bench/compression.ts, its threshold
 * lines): one contract, ≈ 2 KB and the largest record read one at a time, costs 50–100 µs to
 * compress (about as much as the whole read) to save ≈ 1.3 KB that arrives in the same round trip
 * either way; a page of 25 contracts (50 KB) shrinks to ≈ 3 KB for 0.2–0.4 ms. Single records stay
 * identity; pages and documents are compressed.
 */
export const COMPRESS_MIN_BYTES = 4096;
/**
 * Brotli quality and gzip level of answers compressed as they are sent, measured on 200 contracts
 * (355 KB, a loaded 2-core machine): brotli 1 → 14.0 KB in ≈ 0.4 ms, as small as gzip 6 (14.7 KB
 * in ≈ 2 ms) for a fifth of its CPU; brotli 4 → 12.4 KB in ≈ 2.1 ms, 12 % smaller for five times
 * the CPU. gzip 3 (17.1 KB in ≈ 1 ms) for the clients that take only gzip.
 */
const BROTLI_QUALITY = 1;
const GZIP_LEVEL = 3;

/**
 * The JSON text of an answer built by lib/http.ts checkedJsonText, kept on the Response: Elysia
 * hands that very object on (no headers left to merge), so the size is known without reading the
 * body back, and a small answer passes untouched (reading and rebuilding it cost ≈ 20 µs).
 */
const BODY_TEXT = Symbol("body text");
type Tagged = Response & { [BODY_TEXT]?: string };

/** A JSON answer whose text the compression step may read instead of the body. */
export function jsonTextResponse(text: string, headers: Record<string, string>): Response {
  const response = new Response(text, { headers }) as Tagged;
  response[BODY_TEXT] = text;
  return response;
}

/** Media types compressed on the fly; anything else (files, images, event streams) is left alone. */
const COMPRESSIBLE = /^(application\/(json|problem\+json)|text\/csv)\b/;

/**
 * The codings an Accept-Encoding header accepts (RFC 9110 §12.5.3), best first: by q, brotli
 * before gzip on a tie; empty for identity only. `q=0` refuses a coding, and `*` stands for every
 * coding the header does not name.
 */
export function acceptedCodings(header: string | null): Coding[] {
  if (!header) return [];
  let br = -1;
  let gzip = -1;
  let any = -1;
  for (const part of header.split(",")) {
    const [name, ...params] = part.split(";");
    const coding = name.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split("=");
      if (k.trim().toLowerCase() === "q") q = Number(v);
    }
    if (!Number.isFinite(q)) q = 0;
    if (coding === "br") br = Math.max(br, q);
    else if (coding === "gzip" || coding === "x-gzip") gzip = Math.max(gzip, q);
    else if (coding === "*") any = Math.max(any, q);
  }
  if (br < 0) br = any;
  if (gzip < 0) gzip = any;
  const out: Coding[] = [];
  if (br > 0) out.push("br");
  if (gzip > 0) out.push("gzip");
  return gzip > br ? out.reverse() : out;
}

/** A file in its encodings: a path (embedded or on disk) or bytes held in memory. */
export type FileBody = string | Uint8Array;
export interface EncodedFile {
  identity: FileBody;
  br?: FileBody | null;
  gzip?: FileBody | null;
}

/**
 * A file answer in the coding the request accepts (brotli, then gzip, else identity), with
 * `Vary: Accept-Encoding`; the length is the chosen variant's (Bun sets it from the file or bytes).
 */
export function encodedFileAnswer(request: Request, file: EncodedFile, headers: Record<string, string>): Response {
  const coding = acceptedCodings(request.headers.get("accept-encoding")).find((c) => file[c]);
  const out: Record<string, string> = { ...headers, vary: "Accept-Encoding" };
  if (coding) out["content-encoding"] = coding;
  const body = coding ? file[coding]! : file.identity;
  return new Response(typeof body === "string" ? Bun.file(body) : body, { headers: out });
}

/** One whole body compressed as answers are (exported for bench/compression.ts). */
export function compressBytes(bytes: Uint8Array, coding: Coding): Uint8Array {
  if (coding === "gzip") return gzipSync(bytes, { level: GZIP_LEVEL });
  return brotliCompressSync(bytes, {
    params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  });
}

function encoder(coding: Coding) {
  return coding === "gzip"
    ? createGzip({ level: GZIP_LEVEL })
    : createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } });
}

function encodedHeaders(response: Response, coding: Coding | null): Headers {
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  headers.append("vary", "Accept-Encoding");
  if (coding) headers.set("content-encoding", coding);
  return headers;
}

/**
 * The app's answer compressed for the request: untouched unless the client accepts br or gzip,
 * the body is JSON, a problem document or CSV with no coding yet, and it is at least
 * COMPRESS_MIN_BYTES. A whole body is compressed at once (its length known); a streamed one
 * (a CSV export) is read until it ends or passes the threshold, then compressed as it streams.
 */
export function compressAnswer(request: Request, answer: Response | Promise<Response>): Response | Promise<Response> {
  const coding = acceptedCodings(request.headers.get("accept-encoding"))[0];
  if (coding === undefined || request.method === "HEAD") return answer;
  return answer instanceof Promise ? answer.then((r) => encodeAnswer(r, coding)) : encodeAnswer(answer, coding);
}

function encodeAnswer(response: Response, coding: Coding): Response | Promise<Response> {
  // Not a Response: a websocket upgrade, which Elysia answers with nothing.
  if (!(response instanceof Response) || response.body === null || response.status === 204 || response.status === 304 || response.status === 206) return response;
  const headers = response.headers;
  if (headers.has("content-encoding") || !COMPRESSIBLE.test(headers.get("content-type") ?? "")) return response;
  const text = (response as Tagged)[BODY_TEXT];
  // UTF-8 takes at least a byte per UTF-16 unit: a text this short may still pass the threshold
  // in bytes, and stays identity; a longer one surely passes it.
  if (text !== undefined) return text.length < COMPRESS_MIN_BYTES ? response : encoded(response, compressBytes(new TextEncoder().encode(text), coding), coding);
  return headers.get("content-type")!.startsWith("text/csv") ? encodeStream(response, coding) : encodeWhole(response, coding);
}

function encoded(response: Response, body: Uint8Array, coding: Coding): Response {
  return new Response(body, { status: response.status, statusText: response.statusText, headers: encodedHeaders(response, coding) });
}

async function encodeWhole(response: Response, coding: Coding): Promise<Response> {
  const bytes = await response.bytes();
  if (bytes.length < COMPRESS_MIN_BYTES) return new Response(bytes, { status: response.status, statusText: response.statusText, headers: response.headers });
  return encoded(response, compressBytes(bytes, coding), coding);
}

async function encodeStream(response: Response, coding: Coding): Promise<Response> {
  const reader = response.body!.getReader();
  const head: Uint8Array[] = [];
  let size = 0;
  while (size < COMPRESS_MIN_BYTES) {
    const { done, value } = await reader.read();
    if (done) {
      const whole = Buffer.concat(head);
      return new Response(whole, { status: response.status, statusText: response.statusText, headers: response.headers });
    }
    head.push(value);
    size += value.length;
  }
  // What was read first, then the rest as the client reads it, through one compressor.
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of head) controller.enqueue(chunk);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  const plain = Readable.fromWeb(source as never);
  const compressed = plain.pipe(encoder(coding));
  // pipe() does not pass an error on: a failure while the export reads a page ends the answer
  // (the client sees a cut body) instead of leaving it open.
  plain.on("error", (err) => compressed.destroy(err));
  return new Response(Readable.toWeb(compressed) as ReadableStream, { status: response.status, statusText: response.statusText, headers: encodedHeaders(response, coding) });
}
