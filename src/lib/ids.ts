import { randomBytes } from "node:crypto";

/** Record ids are UUID v7: time-ordered, so "creation order" is plain `ORDER BY id`. */
export const newId = (): string => Bun.randomUUIDv7();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** Random base62 text without modulo bias. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const sha256Hex = (text: string | Uint8Array): string =>
  new Bun.CryptoHasher("sha256").update(text).digest("hex");
