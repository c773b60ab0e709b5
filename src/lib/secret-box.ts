// Secrets the service must use in clear later (a NAS's RADIUS shared secret, to sign RFC 5176
// requests), kept encrypted at rest: AES-256-GCM under a data key generated once into
// DATA_DIR/data.key (mode 0600, like the token key), or read from the file --data-key-file names.
// A copy of a database alone does not reveal them; the key file must be backed up with the data
// directory (cluster mode: every app node holds the same key, core/keys.ts checks it).
import { existsSync, readFileSync } from "node:fs";
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { join } from "node:path";
import { ConfigError } from "./config-error";
import { ensureKeyFile } from "./key-file";

const VERSION = "v1";

/**
 * The data key and where it came from (named in errors, never the key). A configured file must
 * exist: generating one there would hide a mistyped path behind a key no other node has.
 */
export function readDataKey(dataDir: string, keyFile: string | null, narrow = true): { key: Buffer; source: string } {
  const path = keyFile ?? join(dataDir, "data.key");
  if (keyFile && !existsSync(path)) throw new ConfigError(`--data-key-file ${path} does not exist (a 32-byte key in base64: openssl rand -base64 32)`);
  const text = keyFile ? readFileSync(path, "utf8").trim() : ensureKeyFile(path, () => randomBytes(32).toString("base64"), narrow);
  const key = Buffer.from(text, "base64");
  if (key.length !== 32) throw new ConfigError(`${path} does not hold a 32-byte base64 key`);
  return { key, source: keyFile ? `--data-key-file / CORPADMIN_DATA_KEY_FILE (${path})` : path };
}

export class SecretBox {
  private constructor(private key: Buffer) {}

  /** The box of the data key: `keyFile` when configured, else DATA_DIR/data.key (created on first use). */
  static load(dataDir: string, keyFile: string | null = null, narrow = true): SecretBox {
    return new SecretBox(readDataKey(dataDir, keyFile, narrow).key);
  }

  /** `v1:<base64 iv ‖ tag ‖ ciphertext>`; `context` (e.g. the row's purpose) must match when opening. */
  seal(plain: string, context: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv("aes-256-gcm", this.key, iv);
    c.setAAD(Buffer.from(context, "utf8"));
    const body = Buffer.concat([c.update(plain, "utf8"), c.final()]);
    return `${VERSION}:${Buffer.concat([iv, c.getAuthTag(), body]).toString("base64")}`;
  }

  /** The plain text, or null when the value was sealed under another key or context, or altered. */
  open(sealed: string, context: string): string | null {
    if (!sealed.startsWith(`${VERSION}:`)) return null;
    const raw = Buffer.from(sealed.slice(VERSION.length + 1), "base64");
    if (raw.length < 28) return null;
    try {
      const d = createDecipheriv("aes-256-gcm", this.key, raw.subarray(0, 12));
      d.setAAD(Buffer.from(context, "utf8"));
      d.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString("utf8");
    } catch {
      return null;
    }
  }
}
