// Reading a body whose length is not known up front (chunked requests, a remote endpoint's answer)
// with a limit: at most `limit` bytes are ever kept, and the rest is never read.

/** The body's bytes, or null when it is longer than `limit` bytes (the stream is then cancelled). */
export async function readBounded(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array | null> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
