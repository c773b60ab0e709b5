// A streaming writer of POSIX ustar archives (the download of a backup). The format is small
// enough to write here rather than depend on a package: per entry one 512-byte header, then the
// content padded to 512 bytes; two zero blocks end the archive. Sizes of 8 GiB or more use the
// base-256 size field that GNU tar and libarchive read.
import { statSync } from "node:fs";

const BLOCK = 512;

export interface TarEntry {
  /** Path inside the archive, `/`-separated; a directory ends with `/`. */
  name: string;
  /** The file on disk (absent for a directory). */
  path?: string;
}

function octal(value: number, width: number): string {
  // width - 1 digits and a NUL, as ustar writes them.
  return value.toString(8).padStart(width - 1, "0") + "\0";
}

export function tarHeader(name: string, size: number, mtimeSeconds: number, directory: boolean): Uint8Array {
  const bytes = Buffer.from(name, "utf8");
  if (bytes.length > 100) throw new Error(`tar: name longer than 100 bytes: ${name}`);
  const h = new Uint8Array(BLOCK);
  const put = (offset: number, text: string) => h.set(Buffer.from(text, "latin1"), offset);
  h.set(bytes, 0);
  put(100, octal(directory ? 0o700 : 0o600, 8));
  put(108, octal(0, 8));
  put(116, octal(0, 8));
  if (size < 8 ** 11) put(124, octal(size, 12));
  else {
    // base-256: high bit of the first byte set, the size big-endian in the rest of the field.
    h[124] = 0x80;
    let rest = BigInt(size);
    for (let i = 135; i > 124; i--) {
      h[i] = Number(rest & 0xffn);
      rest >>= 8n;
    }
  }
  put(136, octal(mtimeSeconds, 12));
  put(148, "        ");
  put(156, directory ? "5" : "0");
  put(257, "ustar\0");
  put(263, "00");
  put(265, "corpadmin");
  put(297, "corpadmin");
  let sum = 0;
  for (const b of h) sum += b;
  put(148, sum.toString(8).padStart(6, "0") + "\0 ");
  return h;
}

/** The archive of `entries` as a stream; files are read as the stream is consumed. */
export function tarStream(entries: TarEntry[]): ReadableStream<Uint8Array> {
  let index = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  let written = 0;
  let expected = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        if (reader) {
          const { done, value } = await reader.read();
          if (!done) {
            written += value.byteLength;
            controller.enqueue(value);
            return;
          }
          reader = null;
          // The header promised a size: a file that changed meanwhile would corrupt the archive.
          if (written !== expected) throw new Error(`tar: ${entries[index - 1].name} changed while being archived`);
          const pad = (BLOCK - (written % BLOCK)) % BLOCK;
          if (pad) controller.enqueue(new Uint8Array(pad));
        }
        if (index >= entries.length) {
          controller.enqueue(new Uint8Array(BLOCK * 2));
          controller.close();
          return;
        }
        const entry = entries[index++];
        if (!entry.path) {
          controller.enqueue(tarHeader(entry.name, 0, Math.floor(Date.now() / 1000), true));
          return;
        }
        const st = statSync(entry.path);
        controller.enqueue(tarHeader(entry.name, st.size, Math.floor(st.mtimeMs / 1000), false));
        written = 0;
        expected = st.size;
        reader = Bun.file(entry.path).stream().getReader() as ReadableStreamDefaultReader<Uint8Array>;
        return;
      }
    },
    cancel() {
      void reader?.cancel();
    },
  });
}
