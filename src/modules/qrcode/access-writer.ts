// The messages between the scan recorder and its writer thread (access-writer.worker.ts), which
// holds the commit (and its fsync) off the event loop, and where the writer's module is found.
/** A scan as the recorder hands it over; the writer adds the visitor key (visitorKey) of those that are not bots'. */
export type AccessRow = [id: string, qrcodeId: string, at: string, ip: string, userAgent: string | null, referer: string | null, bot: 0 | 1];

/**
 * A 53-bit hash of (ip, user agent): the unique-visitor key (qr_accesses.visitor). Computed by the
 * writer thread rather than on the event loop (≈ 0.5–1 µs a scan: the text, the hash, two BigInts).
 */
export function visitorKey(ip: string, userAgent: string | null): number {
  return Number(BigInt.asUintN(53, BigInt(Bun.hash(`${ip}\u0000${userAgent ?? ""}`))));
}

export interface WriteBatch {
  corpId: string;
  path: string;
  /** Set when some rows may already be stored (sent again after a failure): those are skipped. */
  recheck: boolean;
  /** UTF-8 JSON text of AccessRows, comma separated (without the brackets), per buffer: views of the recorder's shared memory. */
  chunks: Uint8Array[];
}

/** main → worker */
export interface WriteMessage {
  seq: number;
  batches: WriteBatch[];
  /** Shutdown: close the connections kept open once these batches are written. */
  close?: boolean;
}

/** worker → main: the batches that could not be written (the rest are committed). */
export interface DoneMessage {
  seq: number;
  failed: { corpId: string; error: string; missing: boolean }[];
}

/**
 * Where the writer's module is: beside this file when run from source; inside the compiled binary
 * it is an entrypoint of its own (build.ts), embedded under /$bunfs/root/ at its path below src/.
 */
export function writerUrl(): URL {
  const compiled = Bun.main.startsWith("/$bunfs/") || Bun.main.includes("~BUN");
  return compiled ? new URL("./modules/qrcode/access-writer.worker.ts", `file://${Bun.main}`) : new URL("./access-writer.worker.ts", import.meta.url);
}
